"""Adam (and AMSGrad), with L2 or decoupled (AdamW) weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import wrap
from ..autograd.grad_mode import no_grad
from ..ops.inplace import bump_version
from .optimizer import Optimizer, grads_of, lerp_, scalar_tensor

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam, step for step as ``torch.optim.Adam``::

        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g^2
        p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    ``amsgrad`` uses the running maximum of ``v``; ``decoupled_weight_decay`` (AdamW) shrinks
    ``p`` by ``lr * weight_decay`` instead of adding ``weight_decay * p`` to the gradient.
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
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
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
            "capturable": capturable, "differentiable": differentiable, "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            amsgrad = group["amsgrad"]
            for p, grad in grads_of(group):
                state = self.state[p]
                if not state:
                    state["step"] = scalar_tensor(0.0)
                    state["exp_avg"] = wrap(np.zeros_like(p._data))
                    state["exp_avg_sq"] = wrap(np.zeros_like(p._data))
                    if amsgrad:
                        state["max_exp_avg_sq"] = wrap(np.zeros_like(p._data))
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
        return loss
