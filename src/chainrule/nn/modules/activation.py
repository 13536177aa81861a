"""Activation layers: thin modules over the ``nn.functional`` activations."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops import activation as softmax_ops
from ...ops import pointwise
from ...ops.creation import empty
from ...ops.nn_ops import activations as ops
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh",
    "Sigmoid", "Softplus", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "Hardtanh",
    "Hardswish", "Hardsigmoid", "LogSigmoid", "Softsign", "Tanhshrink", "Threshold", "GLU",
    "PReLU", "Hardshrink", "Softshrink",
]


class _Inplace(Module):
    """An activation with an ``inplace`` flag (shown in the repr only when True)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(x, 0)``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops._maybe_inplace(input, self.inplace, pointwise.relu)


class ReLU6(_Inplace):
    """``min(max(x, 0), 6)``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.relu6(input, self.inplace)


class SELU(_Inplace):
    """Scaled ELU with the self-normalising constants."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.selu(input, self.inplace)


class SiLU(_Inplace):
    """``x * sigmoid(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.silu(input, self.inplace)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.mish(input, self.inplace)


class Hardswish(_Inplace):
    """``x * relu6(x + 3) / 6``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.hardswish(input, self.inplace)


class Hardsigmoid(_Inplace):
    """``relu6(x + 3) / 6``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.hardsigmoid(input, self.inplace)


class LeakyReLU(Module):
    """``x`` for positive ``x``, else ``negative_slope * x``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return ops.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class ELU(Module):
    """``x`` for positive ``x``, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return ops.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """``x * Phi(x)`` (``approximate='tanh'`` for the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return ops.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input: Tensor) -> Tensor:
        return pointwise.tanh(input)


class Sigmoid(Module):
    """The logistic function."""

    def forward(self, input: Tensor) -> Tensor:
        return pointwise.sigmoid(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.tanhshrink(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return ops.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """``x`` clipped to ``[min_val, max_val]``."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
                 ) -> None:
        super().__init__()
        if max_val <= min_val:
            raise AssertionError("max_val must be greater than min_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return ops.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return ops.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """``x - sign(x) * lambd`` where ``|x| > lambd``, else 0."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.softshrink(input, self.lambd)


class _SoftmaxBase(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x))`` along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return softmax_ops.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    """``log(softmax(x))`` along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return softmax_ops.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    """``softmax(-x)`` along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of ``(N, C, H, W)`` or ``(C, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return softmax_ops.softmax(input, -3, _stacklevel=5)


class GLU(Module):
    """``a * sigmoid(b)`` for the two halves of ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return ops.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """``x`` for positive ``x``, else ``weight * x`` with a learnt ``weight`` (one, or one per
    channel), initialised to ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope set to ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return ops.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
