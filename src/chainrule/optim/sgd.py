"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..ops.inplace import bump_version
from .optimizer import (
    Optimizer,
    array_hyper,
    check_fused,
    check_tensor_lr,
    grads_of,
    holds_reduced_float,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD, step for step as ``torch.optim.SGD``::

        g = grad (+ weight_decay * p);  buf = momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov) or buf;  p -= lr * g

    ``lr`` (and ``weight_decay``) may be tensors; with ``differentiable=True`` the step is
    recorded by autograd.

    Example:
        >>> import chainrule as torch
        >>> w = torch.nn.Parameter(torch.tensor([1.0]))
        >>> opt = torch.optim.SGD([w], lr=0.1)
        >>> (w * w).sum().backward(); opt.step(); w
        Parameter containing:
        tensor([0.8000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Tensor = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_tensor_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, differentiable, foreach)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            if group["differentiable"] or holds_reduced_float(group):
                self._tensor_step(group)
            else:
                self._array_step(group)
        return loss

    def _array_step(self, group: dict[str, Any]) -> None:
        lr, momentum = array_hyper(to_scalar(group["lr"])), group["momentum"]
        dampening = group["dampening"]
        weight_decay = array_hyper(group["weight_decay"])
        for p, grad in grads_of(group, self.state):
            g = -grad if group["maximize"] else grad
            if weight_decay != 0:
                g = g + weight_decay * p._data
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    # np.array, not g.copy(): for a 0-dim parameter g is a NumPy scalar,
                    # whose copy could not be updated in place on the next steps.
                    buf = wrap(np.array(g))
                    state["momentum_buffer"] = buf
                else:
                    b = buf._data
                    b *= momentum
                    b += (1 - dampening) * g
                    bump_version(buf)
                g = g + momentum * buf._data if group["nesterov"] else buf._data
            p._data += -lr * g
            bump_version(p)

    def _tensor_step(self, group: dict[str, Any]) -> None:
        """PyTorch's ``_single_tensor_sgd`` on tensors, recorded by autograd."""
        lr = to_scalar(group["lr"])
        momentum, dampening = group["momentum"], group["dampening"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            grad = -p.grad if group["maximize"] else p.grad
            if weight_decay != 0:
                if isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                    grad = grad.addcmul_(p.clone(), weight_decay)
                else:
                    grad = grad.add(p, alpha=_number(weight_decay))
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = grad.detach().clone()
                    state["momentum_buffer"] = buf
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
            if isinstance(lr, Tensor) and lr.requires_grad:
                p.addcmul_(grad, lr, value=-1)
            else:
                p.add_(grad, alpha=-_number(lr))


def _number(value: Any) -> Any:
    """A tensor hyper-parameter as the Python number PyTorch's ``alpha=`` turns it into."""
    return value.item() if isinstance(value, Tensor) else value
