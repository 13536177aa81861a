"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..ops.creation import as_tensor
from .optimizer import (
    Optimizer,
    check_tensor_lr,
    refuse_capturable,
    scalar_tensor,
    signed_grad,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD, step for step as ``torch.optim.ASGD``::

        p *= 1 - lambd * eta;  p -= eta * g
        ax = p if mu == 1 else ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t)^alpha;  mu = 1 / max(1, t - t0)

    ``state['ax']`` is the running average of the iterates. ``lr`` may be a tensor; with
    ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if p_state:
                    for key in ("step", "eta", "mu"):
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = scalar_tensor(float(p_state[key]))

    @use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_each_parameter(closure)

    def _check_group(self, group: dict[str, Any], params: list[Tensor]) -> None:
        refuse_capturable(group, "params, mus, etas, and state_steps")
        if group["foreach"] and group["differentiable"]:
            raise AssertionError("_foreach ops don't support autograd")

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        """PyTorch's ``_single_tensor_asgd`` for one parameter, on tensors."""
        state = self.state[p]
        lr = to_scalar(group["lr"])
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["eta"] = scalar_tensor(float(lr.detach() if isinstance(lr, Tensor) else lr))
            state["mu"] = scalar_tensor(1.0)
            state["ax"] = wrap(np.zeros_like(p._data))
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        weight_decay = group["weight_decay"]
        grad = signed_grad(p, group["maximize"])
        mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
        step_t += 1
        if group["foreach"]:
            _update_as_foreach(p, grad, state, lr, lambd, alpha, t0, weight_decay)
            return
        if weight_decay != 0:
            grad = grad.add(p, alpha=weight_decay)
        eta_value = eta.item()
        p.mul_(1 - lambd * eta_value)
        p.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            # PyTorch multiplies a float16/bfloat16 difference by the float32 ``mu`` unrounded;
            # chainrule's mul by a 0-d tensor rounds it to the half type first, its mul by the
            # number does not (the same value in float32 and float64)
            ax.add_(p.sub(ax).mul_(mu if group["differentiable"] else mu.item()))
        else:
            ax.copy_(p)
        step = step_t.item()
        eta.copy_(as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(as_tensor(1 / max(1, step - t0)))


def _update_as_foreach(
    p: Tensor,
    grad: Tensor,
    state: dict[str, Any],
    lr: Any,
    lambd: float,
    alpha: float,
    t0: float,
    weight_decay: float,
) -> None:
    """PyTorch's ``_multi_tensor_asgd`` (``foreach=True``) for one parameter whose step was
    counted: the same update arranged otherwise, ``p -= eta * (g + weight_decay * p + lambd *
    p)`` and ``ax += mu * (p - ax)`` even when ``mu`` is 1, and the new ``eta`` computed from the
    float32 step tensor, so rounded in float32 (up to ~1e-7 relative from the single-tensor
    path's, which float64 parameters show)."""
    mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
    if weight_decay != 0:
        intermediate = grad.add(p, alpha=weight_decay)
        intermediate.add_(p, alpha=lambd)
    else:
        intermediate = grad.add(p, alpha=lambd)
    p.addcmul_(intermediate, eta, value=-1)
    ax.addcmul_(p.sub(ax), mu)
    step = step_t.item()
    eta.copy_(_foreach_eta(lr, lambd, alpha, step_t))
    mu.copy_(as_tensor(1 / max(1, step - t0)))


def _foreach_eta(lr: Any, lambd: float, alpha: float, step_t: Tensor) -> Tensor:
    """``lr / ((1 + lambd * lr * step_t) ** alpha)`` on PyTorch's float32 ``step_t``: each
    operation rounds to float32, the power computed in float64 then rounded, and a number
    divided by a tensor is the float32 reciprocal times the number (matched bit for bit on
    5,000 random cases)."""
    if isinstance(lr, Tensor):  # PyTorch's tensor arithmetic, which chainrule's follows
        return as_tensor(lr / ((1 + lambd * lr * step_t) ** alpha))
    f32 = np.float32
    base = f32(1) + f32(f32(lambd * lr) * step_t._data)
    powered = f32(np.float64(base) ** alpha)
    return as_tensor(np.asarray(f32(f32(1) / powered) * f32(lr)))
