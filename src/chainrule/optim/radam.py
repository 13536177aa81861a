"""RAdam: Adam with the variance of the adaptive learning rate rectified."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from .optimizer import (
    Optimizer,
    check_tensor_lr,
    refuse_capturable,
    scalar_tensor,
    signed_grad,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam, step for step as ``torch.optim.RAdam``::

        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        p -= lr * m / (1 - beta1^t) * [r_t * sqrt(1 - beta2^t) / (sqrt(v) + eps)
                                       if rho_t > 5 else 1]

    with ``r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.
    ``decoupled_weight_decay`` shrinks ``p`` by ``lr * weight_decay`` instead of adding
    ``weight_decay * p`` to the gradient. ``lr`` may be a tensor; with
    ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_group_defaults({
            "foreach": None,
            "maximize": False,
            "differentiable": False,
            "decoupled_weight_decay": False,
            "capturable": False,
        })

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_each_parameter(closure)

    def _check_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        refuse_capturable(group)

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """PyTorch's ``_single_tensor_radam`` for one parameter, on tensors."""
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        grad = signed_grad(p, group["maximize"])
        exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
        step_t += 1
        step = step_t.item()
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            root = exp_avg_sq.sqrt()
            root = root.add(eps) if group["differentiable"] else root.add_(eps)
            adaptive_lr = (bias_correction2**0.5) / root
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            p.add_(corrected * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)
