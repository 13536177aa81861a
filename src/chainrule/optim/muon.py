"""Muon: momentum SGD whose update for a matrix parameter is orthogonalized by Newton-Schulz
iterations (run in bfloat16, as PyTorch runs them), for 2-d parameters only."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import zeros_like
from ..ops.linalg import addmm
from .optimizer import Optimizer, check_tensor_lr, to_scalar, with_grad

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(
    grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float
) -> Tensor:
    """An approximately orthogonal matrix with ``grad``'s singular vectors: ``grad`` scaled to
    norm 1 (in bfloat16), then ``ns_steps`` of ``X <- a X + (b G + c G @ G) @ X`` with
    ``G = X @ X.T``, on the wide orientation of the matrix."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    ortho = grad.bfloat16()
    if tall:
        ortho = ortho.T
    ortho.div_(ortho.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = ortho @ ortho.T
        gram_update = addmm(gram, gram, gram, beta=b, alpha=c)
        ortho = addmm(ortho, gram_update, ortho, beta=a)
    return ortho.T if tall else ortho


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: Any) -> float:
    """The learning rate scaled for the matrix's shape (A rows, B columns): ``"original"``
    ``sqrt(max(1, A / B))``, ``"match_rms_adamw"`` ``0.2 * sqrt(max(A, B))``."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon as ``torch.optim.Muon`` steps it, for each 2-d parameter ``p`` with gradient ``g``::

        buf = lerp(buf, g, 1 - momentum)
        u = lerp(g, buf, momentum) if nesterov else buf
        u = newton_schulz(u)              # bfloat16, ns_steps iterations
        p *= 1 - lr * weight_decay
        p -= adjusted_lr * u

    Example:
        >>> import chainrule as torch
        >>> w = torch.nn.Parameter(torch.ones(2, 3))
        >>> opt = torch.optim.Muon([w], lr=0.02)
        >>> (w * w).sum().backward(); opt.step()
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                params = with_grad(group)
                for p in params:  # PyTorch checks a group's parameters before moving any
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                for p in params:
                    self._update(group, p)
        return loss

    def _update(self, group: dict[str, Any], p: Tensor) -> None:
        grad = cast(Tensor, p.grad)  # (with_grad chose p for its gradient)
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = zeros_like(grad)
        buf = state["momentum_buffer"]
        momentum = group["momentum"]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _zeropower_via_newtonschulz(
            update, group["ns_coefficients"], group["ns_steps"], group["eps"]
        )
        lr = to_scalar(group["lr"])
        adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update, alpha=-adjusted_lr)
