"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import wrap
from ..autograd.grad_mode import no_grad
from ..ops.inplace import bump_version
from .optimizer import Optimizer, grads_of

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD, step for step as ``torch.optim.SGD``::

        g = grad (+ weight_decay * p);  buf = momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov) or buf;  p -= lr * g

    Example:
        >>> import chainrule as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0]))
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.8000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening,
            "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
            "foreach": foreach, "differentiable": differentiable, "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            dampening, weight_decay = group["dampening"], group["weight_decay"]
            for p, grad in grads_of(group):
                g = -grad if group["maximize"] else grad
                if weight_decay != 0:
                    g = g + weight_decay * p._data
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = wrap(g.copy())
                        state["momentum_buffer"] = buf
                    else:
                        b = buf._data
                        b *= momentum
                        b += (1 - dampening) * g
                        bump_version(buf)
                    g = g + momentum * buf._data if group["nesterov"] else buf._data
                p._data += -lr * g
                bump_version(p)
        return loss
