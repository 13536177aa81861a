"""RMSprop, optionally centred and with momentum."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import wrap
from ..autograd.grad_mode import no_grad
from ..ops.inplace import bump_version
from .optimizer import Optimizer, grads_of, lerp_, scalar_tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, step for step as ``torch.optim.RMSprop``::

        v = alpha * v + (1 - alpha) * g^2;  avg = sqrt(v [- mean(g)^2 if centered]) + eps
        p -= lr * g / avg    (or, with momentum: buf = momentum * buf + g / avg; p -= lr * buf)
    """

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            momentum, weight_decay = group["momentum"], group["weight_decay"]
            for p, grad in grads_of(group):
                state = self.state[p]
                if not state:
                    state["step"] = scalar_tensor(0.0)
                    state["square_avg"] = wrap(np.zeros_like(p._data))
                    if momentum > 0:
                        state["momentum_buffer"] = wrap(np.zeros_like(p._data))
                    if group["centered"]:
                        state["grad_avg"] = wrap(np.zeros_like(p._data))
                g = -grad if group["maximize"] else grad
                state["step"]._data += 1
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                square_avg = state["square_avg"]._data
                square_avg *= alpha
                square_avg += (1 - alpha) * g * g
                if group["centered"]:
                    grad_avg = state["grad_avg"]._data
                    lerp_(grad_avg, g, 1 - alpha)
                    avg = np.sqrt(square_avg + -1 * grad_avg * grad_avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps
                if momentum > 0:
                    buf = state["momentum_buffer"]._data
                    buf *= momentum
                    buf += g / avg
                    p._data += -lr * buf
                else:
                    p._data += -lr * g / avg
                bump_version(p)
                for value in state.values():
                    bump_version(value)
        return loss
