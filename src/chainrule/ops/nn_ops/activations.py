"""Activation functions beyond relu/sigmoid/tanh/softmax (which live in ``pointwise`` and
``activation``): each an op named as PyTorch names its node, or PyTorch's own composition.

Derivatives are written with ``F`` so they are differentiable again.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._backend import special
from ..._tensor import Tensor, wrap_dim
from .._registry import op
from ..activation import softmax
from ..pointwise import abs as abs_
from ..pointwise import neg, tanh
from ..shape import reshape

__all__ = [
    "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "softplus", "hardtanh", "relu6",
    "logsigmoid", "hardswish", "hardsigmoid", "mish", "softsign", "tanhshrink", "softmin",
    "threshold", "glu", "prelu", "hardshrink", "softshrink",
]

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _like(value: Any, x: np.ndarray) -> np.ndarray:
    return np.asarray(value, dtype=x.dtype)


# ----------------------------------------------------------------------------------------------
# gelu / silu / mish


@op("GeluBackward0")
def _gelu(self, approximate="none"):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (self + 0.044715 * self ** 3)
        return (0.5 * self * (1 + np.tanh(inner))).astype(self.dtype, copy=False)
    return (0.5 * self * (1 + special.erf(self * _SQRT_HALF))).astype(self.dtype, copy=False)


@_gelu.derivative("self")
def _(F, grad, self, approximate):
    if approximate == "tanh":
        # d/dx 0.5 x (1 + tanh(u)), u = k (x + c x^3): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
        t = F.tanh(_SQRT_2_OVER_PI * (self + 0.044715 * self * self * self))
        du = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * du)
    # Phi(x) + x phi(x)
    cdf = 0.5 * (1 + F.erf(self * _SQRT_HALF))
    pdf = F.exp(-0.5 * self * self) * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (``approximate='tanh'``: the tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate)


@op("SiluBackward0")
def _silu(self):
    return (self * special.expit(self)).astype(self.dtype, copy=False)


@_silu.derivative("self")
def _(F, grad, self):
    s = F.sigmoid(self)
    return grad * (s * (1 + self * (1 - s)))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    return _maybe_inplace(input, _silu(input), inplace)


def _softplus_array(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0, x).astype(x.dtype, copy=False)


@op("MishBackward0")
def _mish(self):
    return (self * np.tanh(_softplus_array(self))).astype(self.dtype, copy=False)


@_mish.derivative("self")
def _(F, grad, self):
    t = F.tanh(F.log1p(F.exp(-F.abs(self))) + F.clamp(self, 0, None))
    return grad * (t + self * F.sigmoid(self) * (1 - t * t))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _maybe_inplace(input, _mish(input), inplace)


# ----------------------------------------------------------------------------------------------
# The ELU family


def _elu_array(self: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    negative = alpha * np.expm1(np.minimum(self, 0) * input_scale)
    return (scale * np.where(self > 0, self, negative)).astype(self.dtype, copy=False)


@op("EluBackward0")
def _elu(self, alpha=1.0, scale=1.0, input_scale=1.0):
    return _elu_array(self, alpha, scale, input_scale)


@_elu.derivative("self")
def _(F, grad, self, alpha, scale, input_scale):
    negative = (scale * alpha * input_scale) * F.exp(F.clamp(self, None, 0) * input_scale)
    return grad * F.where(self > 0, scale, negative)


_NEGATIVE_SLOPE_ELU = (
    "In-place elu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead."
)


@op("EluBackward1")
def _elu_inplace(self, alpha=1.0, scale=1.0, input_scale=1.0):
    return _elu_array(self, alpha, scale, input_scale)


@_elu_inplace.derivative("self")
def _(F, grad, result, alpha, scale, input_scale):
    # The in-place kernel keeps only its output: for x <= 0, dy/dx = input_scale * (y + a * s).
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_ELU)
    return grad * F.where(result > 0, scale, input_scale * (result + alpha * scale))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if inplace:
        return _maybe_inplace(input, _elu_inplace(input, alpha, 1.0, 1.0), True)
    return _elu(input, alpha, 1.0, 1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with the self-normalising constants (``EluBackward0``, as in PyTorch)."""
    if inplace:
        return _maybe_inplace(input, _elu_inplace(input, _SELU_ALPHA, _SELU_SCALE, 1.0), True)
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def _celu_array(self: np.ndarray, alpha: float) -> np.ndarray:
    negative = alpha * np.expm1(np.minimum(self, 0) / alpha)
    return np.where(self > 0, self, negative).astype(self.dtype, copy=False)


@op("CeluBackward0")
def _celu(self, alpha=1.0):
    return _celu_array(self, alpha)


@_celu.derivative("self")
def _(F, grad, self, alpha):
    return grad * F.where(self > 0, 1.0, F.exp(F.clamp(self, None, 0) / alpha))


@op("CeluBackward1")
def _celu_inplace(self, alpha=1.0):
    return _celu_array(self, alpha)


@_celu_inplace.derivative("self")
def _(F, grad, result, alpha):
    # An ELU with input_scale 1 / alpha: for x <= 0, dy/dx = (y + alpha) / alpha.
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_ELU)
    return grad * F.where(result > 0, 1.0, (result + alpha) / alpha)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return _maybe_inplace(input, _celu_inplace(input, alpha), True)
    return _celu(input, alpha)


# ----------------------------------------------------------------------------------------------
# Piecewise-linear functions


def _leaky_relu_array(self: np.ndarray, negative_slope: float) -> np.ndarray:
    return np.where(self > 0, self, self * _like(negative_slope, self))


@op("LeakyReluBackward0")
def _leaky_relu(self, negative_slope=0.01):
    return _leaky_relu_array(self, negative_slope)


@_leaky_relu.derivative("self")
def _(F, grad, self, negative_slope):
    return F.leaky_relu_backward(grad, self, negative_slope)


@op("LeakyReluBackward1")
def _leaky_relu_inplace(self, negative_slope=0.01):
    return _leaky_relu_array(self, negative_slope)


@_leaky_relu_inplace.derivative("self")
def _(F, grad, result, negative_slope):
    if negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )
    return F.leaky_relu_backward(grad, result, negative_slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    if inplace:
        return _maybe_inplace(input, _leaky_relu_inplace(input, negative_slope), True)
    return _leaky_relu(input, negative_slope)


@op("HardtanhBackward0")
def _hardtanh(self, min_val=-1.0, max_val=1.0):
    return np.clip(self, _like(min_val, self), _like(max_val, self))


@_hardtanh.derivative("self")
def _(F, grad, self, min_val, max_val):
    return F.hardtanh_backward(grad, self, min_val, max_val)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(input, _hardtanh(input, min_val, max_val), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)`` (a hardtanh, as in PyTorch)."""
    return hardtanh(input, 0.0, 6.0, inplace)


@op("HardsigmoidBackward0")
def _hardsigmoid(self):
    return (np.clip(self + 3, 0, 6) / 6).astype(self.dtype, copy=False)


# PyTorch's hardsigmoid_backward multiplies by 1/6 rounded to float32, in every dtype (float64
# too): 0.1666666716337204, not 1/6.
_ONE_SIXTH_AS_FLOAT32 = float(np.float32(1 / 6))


@_hardsigmoid.derivative("self")
def _(F, grad, self):
    return F.where((self > -3) & (self < 3), grad * _ONE_SIXTH_AS_FLOAT32, 0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    return _maybe_inplace(input, _hardsigmoid(input), inplace)


@op("HardswishBackward0")
def _hardswish(self):
    return (self * np.clip(self + 3, 0, 6) / 6).astype(self.dtype, copy=False)


@_hardswish.derivative("self")
def _(F, grad, self):
    middle = grad * (self / 3 + 0.5)
    return F.where(self < -3, 0, F.where(self <= 3, middle, grad))


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    return _maybe_inplace(input, _hardswish(input), inplace)


def _threshold_array(self: np.ndarray, threshold: float, value: float) -> np.ndarray:
    return np.where(self > threshold, self, _like(value, self))


@op("ThresholdBackward0")
def _threshold(self, threshold, value):
    return _threshold_array(self, threshold, value)


@_threshold.derivative("self")
def _(F, grad, self, threshold):
    return F.threshold_backward(grad, self, threshold)


@op("ThresholdBackward1")
def _threshold_inplace(self, threshold, value):
    return _threshold_array(self, threshold, value)


@_threshold_inplace.derivative("self")
def _(F, grad, self, threshold):
    # PyTorch's in-place kernel saves a copy of its input, so the derivative is the same.
    return F.threshold_backward(grad, self, threshold)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    if inplace:
        return _maybe_inplace(input, _threshold_inplace(input, threshold, value), True)
    return _threshold(input, threshold, value)


@op("HardshrinkBackward0")
def _hardshrink(self, lambd=0.5):
    return np.where((self >= -lambd) & (self <= lambd), _like(0, self), self)


@_hardshrink.derivative("self")
def _(F, grad, self, lambd):
    return F.hardshrink_backward(grad, self, lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    return _hardshrink(input, lambd)


@op("SoftshrinkBackward0")
def _softshrink(self, lambd=0.5):
    shrunk = self - np.sign(self) * _like(lambd, self)
    return np.where(np.abs(self) > lambd, shrunk, _like(0, self))


@_softshrink.derivative("self")
def _(F, grad, self, lambd):
    return F.where((self >= -lambd) & (self <= lambd), 0, grad)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - sign(x) * lambd`` where ``|x| > lambd``, else 0."""
    if lambd < 0:
        raise RuntimeError(
            f"lambda must be greater or equal to 0, but found to be {lambd}."
        )
    return _softshrink(input, lambd)


# ----------------------------------------------------------------------------------------------
# Smooth functions


@op("SoftplusBackward0")
def _softplus(self, beta=1.0, threshold=20.0):
    scaled = self * beta
    soft = _softplus_array(scaled) / beta
    return np.where(scaled > threshold, self, soft).astype(self.dtype, copy=False)


@_softplus.derivative("self")
def _(F, grad, self, beta, threshold):
    scaled = self * beta
    return F.where(scaled > threshold, grad, grad * F.sigmoid(scaled))


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``)."""
    return _softplus(input, beta, threshold)


@op("LogSigmoidBackward0")
def _logsigmoid(self):
    return (np.minimum(self, 0) - np.log1p(np.exp(-np.abs(self)))).astype(self.dtype, copy=False)


@_logsigmoid.derivative("self")
def _(F, grad, self):
    return grad * F.sigmoid(-self)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably."""
    return _logsigmoid(input)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` (PyTorch's composition: abs, add, div)."""
    return input / (abs_(input) + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)``."""
    return input - tanh(input)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``dim``."""
    return softmax(neg(input), dim, _stacklevel, dtype)


# ----------------------------------------------------------------------------------------------
# Gated and parametric


@op("GluBackward0")
def _glu(self, dim=-1):
    a, b = np.split(self, 2, axis=dim)
    return (a * special.expit(b)).astype(self.dtype, copy=False)


@_glu.derivative("self")
def _(F, grad, self, dim):
    half = self.shape[dim] // 2
    a = F.slice(self, dim, 0, half, 1)
    s = F.sigmoid(F.slice(self, dim, half, None, 1))
    return F.cat([grad * s, grad * a * s * (1 - s)], dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where ``a, b`` are the halves of ``input`` along ``dim``."""
    shape = input._data.shape
    if not shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, len(shape))
    if shape[d] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {shape[d]}"
        )
    return _glu(input, d)


@op("PreluKernelBackward0", inputs=("self", "weight"))
def _prelu_kernel(self, weight):
    return np.where(self > 0, self, weight * self).astype(self.dtype, copy=False)


@_prelu_kernel.derivative("self")
def _(F, grad, self, weight):
    return F.where(self > 0, grad, weight * grad)


@_prelu_kernel.derivative("weight")
def _(F, grad, self):
    return F.where(self > 0, 0, self * grad)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` for ``x > 0``, else ``weight * x`` (one weight, or one per channel of dim 1)."""
    shape = input._data.shape
    count = weight._data.size
    if count != 1:
        channels = shape[1] if len(shape) >= 2 else 1
        if count != channels:
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers ="
                f" {count} and channel size = {channels}."
            )
        if len(shape) >= 2:
            weight = reshape(weight, (channels,) + (1,) * (len(shape) - 2))
    return _prelu_kernel(input, weight)


def _maybe_inplace(input: Tensor, result: Tensor, inplace: bool) -> Tensor:
    """``inplace=True``: write ``result`` into ``input`` as an in-place op does (version bump,
    ``input`` takes the op's node as its history; PyTorch's error for a leaf that requires
    grad). Where PyTorch's in-place kernel has its own node (``LeakyReluBackward1``, which
    keeps the output instead of the input), ``result`` comes from that op."""
    if not inplace:
        return result
    from ..inplace import check_inplace, commit

    check_inplace(input)
    return commit(input, result)


PRIMITIVES: dict[str, Any] = {}
