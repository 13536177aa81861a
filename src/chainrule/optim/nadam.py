"""NAdam: Adam with Nesterov momentum and a momentum schedule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from .optimizer import (
    Optimizer,
    check_tensor_lr,
    number_argument,
    refuse_capturable,
    scalar_tensor,
    signed_grad,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam, step for step as ``torch.optim.NAdam``::

        mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));  prod *= mu_t
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2
        denom = sqrt(v / (1 - beta2^t)) + eps
        p -= lr * (1 - mu_t) / (1 - prod) * g / denom
             + lr * mu_{t+1} / (1 - prod * mu_{t+1}) * m / denom

    ``decoupled_weight_decay`` (NAdamW) shrinks ``p`` by ``lr * weight_decay`` instead of
    adding ``weight_decay * p`` to the gradient. ``lr`` may be a tensor; with
    ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
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
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_group_defaults({
            "maximize": False,
            "foreach": None,
            "capturable": False,
            "differentiable": False,
            "decoupled_weight_decay": False,
        })
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if p_state and not isinstance(p_state.get("mu_product"), Tensor):
                    p_state["mu_product"] = scalar_tensor(p_state["mu_product"])

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_each_parameter(closure)

    def _check_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        refuse_capturable(group, "params, mu_products and state_steps")

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """PyTorch's ``_single_tensor_nadam`` for one parameter, on tensors."""
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["mu_product"] = scalar_tensor(1.0)
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        momentum_decay = group["momentum_decay"]
        grad = signed_grad(p, group["maximize"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        mu_product, step_t = state["mu_product"], state["step"]
        step_t += 1
        step = step_t.item()
        bias_correction2 = 1 - beta2**step
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        if group["differentiable"]:
            # every factor enters as a tensor operation, so autograd sees it
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            p.addcdiv_(grad, denom)
            p.addcdiv_(exp_avg, denom)
        else:
            product = mu_product.item()
            denom.add_(eps)
            first = -lr * (1.0 - mu) / (1.0 - product)
            second = (-lr * mu_next) / (1.0 - product * mu_next)
            p.addcdiv_(grad, denom, value=number_argument(first, "addcdiv_", "value"))
            p.addcdiv_(exp_avg, denom, value=number_argument(second, "addcdiv_", "value"))
