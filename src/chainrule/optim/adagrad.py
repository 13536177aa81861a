"""Adagrad: per-element learning rates from the sum of squared gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import wrap
from ..autograd.grad_mode import no_grad
from ..ops.inplace import bump_version
from .optimizer import Optimizer, grads_of, scalar_tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, step for step as ``torch.optim.Adagrad``::

        clr = lr / (1 + (t - 1) * lr_decay);  s += g^2;  p -= clr * g / (sqrt(s) + eps)
    """

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}"
            )
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = scalar_tensor(0.0)
                state["sum"] = wrap(np.full_like(p._data, group["initial_accumulator_value"]))

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            weight_decay = group["weight_decay"]
            for p, grad in grads_of(group):
                state = self.state[p]
                state["step"]._data += 1
                step = float(state["step"]._data)
                g = -grad if group["maximize"] else grad
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                clr = lr / (1 + (step - 1) * lr_decay)
                total = state["sum"]._data
                total += 1 * g * g
                std = np.sqrt(total)
                std += eps
                p._data += -clr * g / std
                bump_version(p)
                bump_version(state["sum"])
        return loss
