"""Adadelta: steps scaled by running averages of squared gradients and squared updates."""

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

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta, step for step as ``torch.optim.Adadelta``::

        v = rho * v + (1 - rho) * g^2;  delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta^2;  p -= lr * delta

    ``lr`` may be a tensor; with ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable,
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
        number_argument(to_scalar(group["lr"]), "add_", "alpha")
        refuse_capturable(group, xla=False)

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """PyTorch's ``_single_tensor_adadelta`` for one parameter, on tensors."""
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["square_avg"] = wrap(np.zeros_like(p._data))
            state["acc_delta"] = wrap(np.zeros_like(p._data))
        lr, rho, eps = to_scalar(group["lr"]), group["rho"], group["eps"]
        weight_decay = group["weight_decay"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        state["step"] += 1
        grad = signed_grad(p, group["maximize"])
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if group["differentiable"]:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-number_argument(lr, "add_", "alpha"))
