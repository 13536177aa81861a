"""Adam (and AMSGrad), with L2 or decoupled (AdamW) weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..ops.inplace import bump_version
from ..ops.pointwise import maximum
from .optimizer import (
    Optimizer,
    array_hyper,
    check_fused,
    grads_of,
    holds_reduced_float,
    lerp_,
    number_argument,
    scalar_tensor,
    step_as_tensor,
    to_scalar,
    use_grad_for_differentiable,
)

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam, step for step as ``torch.optim.Adam``::

        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    ``amsgrad`` uses the running maximum of ``v``; ``decoupled_weight_decay`` (AdamW) shrinks
    ``p`` by ``lr * weight_decay`` instead of adding ``weight_decay * p`` to the gradient.
    ``lr`` and ``betas`` may be tensors; with ``differentiable=True`` the step is recorded by
    autograd (PyTorch's differentiable formulas, which round differently).
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True"
                )
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not (isinstance(betas[0], float) and isinstance(betas[1], float)
                or isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor)):
            raise ValueError("betas must be either both floats or both Tensors")
        for index, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if not capturable and foreach:
                    raise ValueError(
                        f"betas[{index}] as a Tensor is not supported for capturable=False and "
                        "foreach=True"
                    )
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{index}] must be 1-element")
        betas = tuple(map(to_scalar, betas))  # type: ignore[assignment]
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)
        check_fused(fused, differentiable, foreach)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            step_as_tensor(self.state, group["params"])

    def _init_state(self, group: dict[str, Any], p: Tensor) -> dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0.0)
            state["exp_avg"] = wrap(np.zeros_like(p._data))
            state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = wrap(np.zeros_like(p._data))
        if group["differentiable"] and state["step"].requires_grad:
            raise RuntimeError(
                "`requires_grad` is not supported for `step` in differentiable mode"
            )
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
        beta1, beta2 = (array_hyper(to_scalar(b)) for b in group["betas"])
        lr, eps = array_hyper(to_scalar(group["lr"])), group["eps"]
        weight_decay = group["weight_decay"]
        amsgrad = group["amsgrad"]
        for p, grad in grads_of(group, self.state):
            state = self._init_state(group, p)
            g = -grad if group["maximize"] else grad
            step_t = state["step"]
            step_t._data += 1
            step = float(step_t._data)
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p._data *= 1 - lr * weight_decay
                else:
                    g = g + weight_decay * p._data
            exp_avg = state["exp_avg"]._data
            exp_avg_sq = state["exp_avg_sq"]._data
            lerp_(exp_avg, g, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * g * g
            step_size = lr / (1 - beta1**step)
            bias_correction2_sqrt = (1 - beta2**step) ** 0.5
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]._data
                np.maximum(max_sq, exp_avg_sq, out=max_sq)
                denom = np.sqrt(max_sq) / bias_correction2_sqrt
            else:
                denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt
            denom += eps
            p._data += -step_size * exp_avg / denom
            bump_version(p)
            for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                if key in state:
                    bump_version(state[key])

    def _tensor_step(self, group: dict[str, Any]) -> None:
        """PyTorch's ``_single_tensor_adam`` with ``differentiable=True``, on tensors."""
        beta1, beta2 = (to_scalar(b) for b in group["betas"])
        lr, eps = to_scalar(group["lr"]), group["eps"]
        weight_decay = group["weight_decay"]
        amsgrad = group["amsgrad"]
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self._init_state(group, p)
            grad = -p.grad if group["maximize"] else p.grad
            exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
            step_t += 1
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * weight_decay)
                elif isinstance(weight_decay, Tensor) and weight_decay.requires_grad:
                    grad = grad.addcmul_(p.clone(), weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            if isinstance(beta2, Tensor) and beta2.requires_grad:
                exp_avg_sq.lerp_(grad.square(), 1 - beta2)
            else:
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            if not (group["differentiable"] or group["capturable"]):
                _number_step(p, exp_avg, exp_avg_sq, state, step_t.item(), group)
                continue
            step = step_t.clone() if _needs_grad(beta1) else step_t
            bias_correction1 = 1 - beta1**step
            step = step_t.clone() if _needs_grad(beta2) else step_t
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            step_size_neg = step_size.neg()
            bias_correction2_sqrt = bias_correction2.sqrt()
            if amsgrad:
                max_exp_avg_sq = state["max_exp_avg_sq"]
                max_exp_avg_sq.copy_(maximum(max_exp_avg_sq.clone(), exp_avg_sq))
                denom = (max_exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                    eps / step_size_neg)
            else:
                denom = (exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                    eps / step_size_neg)
            p.addcdiv_(exp_avg.clone(), denom)


def _number_step(p: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, state: dict[str, Any],
                 step: float, group: dict[str, Any]) -> None:
    """The end of PyTorch's ``_single_tensor_adam`` neither differentiable nor capturable: the
    bias corrections and step size as Python numbers (the tensor step of float16 and bfloat16
    parameters)."""
    beta1, beta2 = (to_scalar(b) for b in group["betas"])
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = to_scalar(group["lr"]) / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    second = exp_avg_sq
    if group["amsgrad"]:
        second = state["max_exp_avg_sq"]
        second.copy_(maximum(second, exp_avg_sq))
    denom = (second.sqrt() / bias_correction2_sqrt).add_(group["eps"])
    p.addcdiv_(exp_avg, denom, value=-number_argument(step_size, "addcdiv_", "value"))


def _needs_grad(value: Any) -> bool:
    return isinstance(value, Tensor) and value.requires_grad
