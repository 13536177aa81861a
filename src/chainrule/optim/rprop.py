"""Rprop: resilient backpropagation, per-element step sizes driven by gradient signs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.grad_mode import is_grad_enabled
from ..ops.creation import as_tensor, full_like
from .optimizer import (
    Optimizer,
    check_tensor_lr,
    refuse_capturable,
    scalar_tensor,
    signed_grad,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop, step for step as ``torch.optim.Rprop``::

        s = sign(g * g_prev) -> etaplus (> 0), etaminus (< 0), 1 (0)
        step_size = clamp(step_size * s, *step_sizes);  g = 0 where s == etaminus
        p -= sign(g) * step_size;  g_prev = g

    Each element's step size starts at ``lr`` (which may be a tensor); with
    ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
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
        lr = to_scalar(group["lr"])
        if (any(not self.state.get(p) for p in params) and isinstance(lr, Tensor)
                and lr.requires_grad and is_grad_enabled()):
            # the step sizes start as ``full_like(grad, lr)``: PyTorch's error
            raise TypeError(
                "full_like(): argument 'fill_value' (position 2) must be Number, not Tensor"
            )
        refuse_capturable(group)

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """PyTorch's ``_single_tensor_rprop`` for one parameter, on tensors."""
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["prev"] = wrap(np.zeros_like(p._data))
            state["step_size"] = full_like(signed_grad(p, False), to_scalar(group["lr"]))
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        grad = signed_grad(p, group["maximize"])
        prev, step_size = state["prev"], state["step_size"]
        state["step"] += 1
        sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        # PyTorch compares in the parameter's type (etaminus rounded to it first), which
        # chainrule's eq with a Python number does not do for bfloat16 yet
        grad[sign.eq(as_tensor(etaminus, dtype=sign.dtype))] = 0
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
