"""Adagrad: per-element learning rates from the sum of squared gradients."""

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
    number_argument,
    scalar_tensor,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, step for step as ``torch.optim.Adagrad``::

        clr = lr / (1 + (t - 1) * lr_decay);  s += g^2;  p -= clr * g / (sqrt(s) + eps)

    ``lr`` may be a tensor; with ``differentiable=True`` the step is recorded by autograd.
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_tensor_lr(lr)
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
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        check_fused(fused, differentiable, foreach)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = scalar_tensor(0.0)
                state["sum"] = wrap(np.full_like(p._data, group["initial_accumulator_value"]))

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        """The state of ``p``, made on its first step when ``p`` came with a group added after
        construction; as PyTorch, its accumulator starts at the optimizer's default
        ``initial_accumulator_value``, not the group's."""
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            initial = self.defaults["initial_accumulator_value"]
            state["sum"] = wrap(np.full_like(p._data, initial))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        # PyTorch converts every state's ``step`` when the first is not a tensor.
        values = list(self.state.values())
        if values and not isinstance(values[0].get("step"), Tensor):
            for value in values:
                if "step" in value:
                    value["step"] = scalar_tensor(float(value["step"]))

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
        lr, lr_decay, eps = array_hyper(to_scalar(group["lr"])), group["lr_decay"], group["eps"]
        weight_decay = group["weight_decay"]
        for p, grad in grads_of(group, self.state):
            state = self._state_of(p)
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

    def _tensor_step(self, group: dict[str, Any]) -> None:
        """PyTorch's ``_single_tensor_adagrad`` with ``differentiable=True``, on tensors."""
        lr, lr_decay, eps = to_scalar(group["lr"]), group["lr_decay"], group["eps"]
        weight_decay = group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._state_of(p)
            state_sum, step_t = state["sum"], state["step"]
            step_t += 1
            step = step_t.item()
            grad = -p.grad if group["maximize"] else p.grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            clr = lr / (1 + (step - 1) * lr_decay)
            # PyTorch passes ``-clr`` as a number (``value=``), which a tensor needing grad
            # cannot be.
            neg_clr = -number_argument(clr, "addcdiv_", "value")
            state_sum.addcmul_(grad, grad, value=1)
            std = state_sum.sqrt() + eps
            p.addcdiv_(grad, std, value=neg_clr)
