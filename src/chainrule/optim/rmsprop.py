"""RMSprop, optionally centred and with momentum."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..ops.inplace import bump_version
from .optimizer import (
    Optimizer,
    array_hyper,
    check_tensor_lr,
    grads_of,
    holds_reduced_float,
    lerp_,
    number_argument,
    scalar_tensor,
    step_as_tensor,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, step for step as ``torch.optim.RMSprop``::

        v = alpha * v + (1 - alpha) * g^2;  avg = sqrt(v [- mean(g)^2 if centered]) + eps
        p -= lr * g / avg    (or, with momentum: buf = momentum * buf + g / avg; p -= lr * buf)

    ``lr`` may be a tensor; with ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_tensor_lr(lr)
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

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            step_as_tensor(self.state, group["params"])

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["square_avg"] = wrap(np.zeros_like(p._data))
            if group["momentum"] > 0:
                state["momentum_buffer"] = wrap(np.zeros_like(p._data))
            if group["centered"]:
                state["grad_avg"] = wrap(np.zeros_like(p._data))
        return state

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        self._refuse_capturable_groups()
        for group in self.param_groups:
            if group["differentiable"] or holds_reduced_float(group):
                self._tensor_step(group)
            else:
                self._array_step(group)
        return loss

    def _array_step(self, group: dict[str, Any]) -> None:
        lr, alpha, eps = array_hyper(to_scalar(group["lr"])), group["alpha"], group["eps"]
        momentum, weight_decay = group["momentum"], group["weight_decay"]
        for p, grad in grads_of(group, self.state):
            state = self._init_state(group, p)
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

    def _tensor_step(self, group: dict[str, Any]) -> None:
        """PyTorch's ``_single_tensor_rmsprop`` with ``differentiable=True``, on tensors."""
        lr, alpha, eps = to_scalar(group["lr"]), group["alpha"], group["eps"]
        momentum, weight_decay = group["momentum"], group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._init_state(group, p)
            grad = -p.grad if group["maximize"] else p.grad
            square_avg = state["square_avg"]
            state["step"] += 1
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            if group["centered"]:
                grad_avg = state["grad_avg"]
                grad_avg.lerp_(grad, 1 - alpha)
                avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg.add(eps)
            # PyTorch passes ``-lr`` as a number (``alpha=``, ``value=``), which a tensor
            # needing grad cannot be.
            neg_lr = -number_argument(lr, "add_" if momentum > 0 else "addcdiv_",
                                      "alpha" if momentum > 0 else "value")
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).addcdiv_(grad, avg)
                p.add_(buf, alpha=neg_lr)
            else:
                p.addcdiv_(grad, avg, value=neg_lr)
