"""Adamax: Adam with the infinity norm of past gradients in place of the second moment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..ops.pointwise import maximum
from ..ops.shape import cat
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

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax, step for step as ``torch.optim.Adamax``::

        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        p -= lr / (1 - beta1^t) * m / u

    ``lr`` may be a tensor; with ``differentiable=True`` the step is recorded by autograd.

    Example:
        >>> import chainrule as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0]))
        >>> opt = torch.optim.Adamax([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
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
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_group_defaults({
            "foreach": None,
            "maximize": False,
            "differentiable": False,
            "capturable": False,
        })

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_each_parameter(closure)

    def _check_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        # PyTorch passes the learning rate as a number
        number_argument(to_scalar(group["lr"]), "addcdiv_", "value")
        refuse_capturable(group)

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """PyTorch's ``_single_tensor_adamax`` for one parameter, on tensors."""
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_inf"] = wrap(np.zeros_like(p._data))
        beta1, beta2 = group["betas"]
        lr, eps, weight_decay = to_scalar(group["lr"]), group["eps"], group["weight_decay"]
        grad = signed_grad(p, group["maximize"])
        exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        if group["differentiable"]:
            norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0),
                            grad.abs().add_(eps).unsqueeze_(0)], 0)
            exp_inf.copy_(norm_buf.amax(0, keepdim=False))
        else:
            exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(eps)))
        clr = lr / (1 - beta1 ** step_t.item())
        p.addcdiv_(exp_avg, exp_inf, value=-number_argument(clr, "addcdiv_", "value"))
