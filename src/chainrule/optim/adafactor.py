"""Adafactor: Adam-like steps from a factored second moment (a row and a column average for
matrices), a learning rate relative to the parameter's scale, and update clipping."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._finfo import finfo
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import no_grad
from .optimizer import (
    Optimizer,
    add_scaled_,
    check_tensor_lr,
    scalar_tensor,
    signed_grad,
    to_scalar,
    with_grad,
)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor as ``torch.optim.Adafactor`` steps it: with ``t`` the step,
    ``beta2_t = 1 - t ** beta2_decay``, ``rho = min(lr, 1 / sqrt(t))`` and
    ``alpha = max(eps2, RMS(p)) * rho``::

        p *= 1 - lr * weight_decay
        matrices: R = lerp(R, mean(g^2, -1), 1 - beta2_t); C = lerp(C, mean(g^2, -2), ...)
                  v = R @ C / max(mean(R, -2), eps1)
        others:   v = lerp(v, g^2, 1 - beta2_t)
        u = g / sqrt(max(v, eps1^2));  p -= alpha * u / max(1, RMS(u) / d)

    ``eps1`` defaults to the dtype's machine epsilon.

    Example:
        >>> import chainrule as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
        >>> opt = torch.optim.Adafactor([w])
        >>> (w * w).sum().backward(); opt.step()
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore_group_defaults({
            "foreach": None,
            "maximize": False,
        })

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                for p in with_grad(group):
                    self._update(group, p)
        return loss

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        state = self.state[p]
        grad = signed_grad(p, group["maximize"])
        if not state:
            state["step"] = scalar_tensor(0.0)
            if grad.dim() > 1:
                row_shape = (*grad.shape[:-1], 1)
                col_shape = (*grad.shape[:-2], 1, grad.shape[-1])
                state["row_var"] = wrap(np.zeros(row_shape, grad._data.dtype))
                state["col_var"] = wrap(np.zeros(col_shape, grad._data.dtype))
            else:
                state["variance"] = wrap(np.zeros_like(grad._data))
        lr = to_scalar(group["lr"])  # (a tensor: the rates below are tensors of its dtype)
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = finfo(p.dtype).eps
        step_t = state["step"]
        step_t += 1
        step = step_t.item()
        one_minus_beta2 = step ** group["beta2_decay"]
        limit = 1 / math.sqrt(step)
        rho = lr.clamp(max=limit) if isinstance(lr, Tensor) else min(lr, limit)
        alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2)
            col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad.square(), one_minus_beta2)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denominator = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * group["d"]))
        add_scaled_(p, update, -alpha / denominator)


