"""Activation functions beyond relu/sigmoid/tanh/softmax (which live in ``pointwise`` and
``activation``): each an op named as PyTorch names its node, or PyTorch's own composition.

Derivatives are written with ``ops`` so they are differentiable again.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ... import _dtype
from ..._backend import special
from ..._tensor import Tensor, wrap, wrap_dim
from ...autograd.grad_mode import GRAD, mode_get
from .._registry import op, refuses_complex, tensor_method
from ..activation import softmax
from ..inplace import inplace_call
from ..pointwise import abs as abs_
from ..pointwise import fast_path_in_float32, half_in_float32, neg, tanh
from ..scalar_conversion import check_number_argument, fill_value_for
from ..shape import reshape

__all__ = [
    "gelu", "silu", "elu", "selu", "celu", "leaky_relu", "softplus", "hardtanh", "relu6",
    "logsigmoid", "hardswish", "hardsigmoid", "mish", "softsign", "tanhshrink", "softmin",
    "threshold", "glu", "prelu", "hardshrink", "softshrink",
]

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# PyTorch's hardtanh (and relu6) clamp, whose complex error is worded differently.
_CLAMP_COMPLEX = "clamp is not supported for complex types"


def _like(value: Any, x: np.ndarray) -> np.ndarray:
    return np.asarray(value, dtype=x.dtype)


def _floating_kernel(kernel: str) -> Any:
    """Decorate an op's forward (right below ``@op``) whose PyTorch CPU kernel exists for
    floating and complex types only: an integer or bool ``self`` gets PyTorch's
    ``"<kernel>" not implemented for '<type>'`` before NumPy computes something."""

    def decorate(forward: Any) -> Any:
        @functools.wraps(forward)
        def run(self: Any, *args: Any) -> Any:
            if self.dtype.kind in "biu":
                raise _dtype.no_kernel(kernel, self.dtype)
            return forward(self, *args)

        return run

    return decorate


# ----------------------------------------------------------------------------------------------
# gelu / silu / mish


@op("GeluBackward0")
@_floating_kernel("GeluKernelImpl")
@half_in_float32
@refuses_complex("GeluKernelImpl")
def _gelu(self, approximate="none"):
    # PyTorch's native CPU kernel (for float32 its default path is oneDNN's, which differs in
    # the last bit and overflows at +-3e38: see tests/test_numerics_activations.py).
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (self + 0.044715 * (self * self * self))
        return 0.5 * self * (1 + np.tanh(inner))
    return self * 0.5 * (1 + special.erf(self * _SQRT_HALF))


@_gelu.derivative("self")
def _(ops, grad, self, approximate):
    return ops.gelu_backward(grad, self, approximate)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` (``approximate='tanh'``: the tanh approximation)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate)


@op("SiluBackward0")
@_floating_kernel("silu_cpu")
@half_in_float32
def _silu(self):
    return self / (1 + np.exp(-self))


@_silu.derivative("self")
@fast_path_in_float32
def _(ops, grad, self):
    # PyTorch's infinitely_differentiable_silu_backward (its fused kernel, used when the
    # backward is not recorded, computes the same in float32 for float16).
    s = ops.sigmoid(self)
    return grad * s * (1.0 + self * (1.0 - s))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    return _maybe_inplace(input, inplace, _silu)


@op("MishBackward0")
@_floating_kernel("mish_cpu")
@half_in_float32
@refuses_complex("mish_cpu")
def _mish(self):
    return self * np.tanh(np.log1p(np.exp(self)))


@_mish.derivative("self")
@fast_path_in_float32
def _(ops, grad, self):
    # PyTorch's infinitely_differentiable_mish_backward (see silu's).
    sigmoid = ops.sigmoid(self)
    tanh_softplus = ops.tanh(ops.log1p(ops.exp(self)))
    return grad * (tanh_softplus + self * sigmoid * (1.0 - tanh_softplus * tanh_softplus))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _maybe_inplace(input, inplace, _mish)


# ----------------------------------------------------------------------------------------------
# The ELU family


@half_in_float32
def _elu_array(self: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    # PyTorch's kernel: the exponential side for x <= 0 (and NaN), the linear side above.
    negative = np.expm1(self * input_scale) * (alpha * scale)
    return np.where(self > 0, self * scale, negative).astype(self.dtype, copy=False)


@op("EluBackward0")
@_floating_kernel("elu_cpu")
@refuses_complex("elu_cpu")
def _elu(self, alpha=1.0, scale=1.0, input_scale=1.0):
    return _elu_array(self, alpha, scale, input_scale)


@_elu.derivative("self")
def _(ops, grad, self, alpha, scale, input_scale):
    return ops.elu_backward(grad, self, alpha, scale, input_scale, False)


_NEGATIVE_SLOPE_ELU = (
    "In-place elu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead."
)


@op("EluBackward1")
@_floating_kernel("elu_cpu")
@refuses_complex("elu_cpu")
def _elu_inplace(self, alpha=1.0, scale=1.0, input_scale=1.0):
    return _elu_array(self, alpha, scale, input_scale)


@_elu_inplace.derivative("self")
def _(ops, grad, result, alpha, scale, input_scale):
    # The in-place kernel keeps only its output: for x <= 0, dy/dx = input_scale * (y + a * s).
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_ELU)
    return ops.elu_backward(grad, result, alpha, scale, input_scale, True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if inplace:
        return _maybe_inplace(input, True, _elu_inplace, alpha, 1, 1)
    # PyTorch passes the scales as the integers 1 (grad_fn._saved_scale shows 1, not 1.0).
    return _elu(input, alpha, 1, 1)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU with the self-normalising constants (``EluBackward0``, as in PyTorch)."""
    if inplace:
        return _maybe_inplace(input, True, _elu_inplace, _SELU_ALPHA, _SELU_SCALE, 1)
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1)


# celu(x, alpha) is PyTorch's elu(x, alpha, 1, 1 / alpha), with a node of its own.


@op("CeluBackward0")
@_floating_kernel("elu_cpu")
@refuses_complex("elu_cpu")
def _celu(self, alpha=1.0):
    return _elu_array(self, alpha, 1.0, 1.0 / alpha)


def _celu_input_scale(alpha: float) -> float:
    # PyTorch's derivative formulas pass 1.0 / alpha.toFloat(): alpha rounded to float32 first
    # (the forward divides in double).
    return 1.0 / float(np.float32(alpha))


@_celu.derivative("self")
def _(ops, grad, self, alpha):
    return ops.elu_backward(grad, self, alpha, 1.0, _celu_input_scale(alpha), False)


@op("CeluBackward1")
@_floating_kernel("elu_cpu")
@refuses_complex("elu_cpu")
def _celu_inplace(self, alpha=1.0):
    return _elu_array(self, alpha, 1.0, 1.0 / alpha)


@_celu_inplace.derivative("self")
def _(ops, grad, result, alpha):
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_ELU)
    return ops.elu_backward(grad, result, alpha, 1.0, _celu_input_scale(alpha), True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    if inplace:
        return _maybe_inplace(input, True, _celu_inplace, alpha)
    return _celu(input, alpha)


# ----------------------------------------------------------------------------------------------
# Piecewise-linear functions


@half_in_float32
def _leaky_relu_array(self: np.ndarray, negative_slope: float) -> np.ndarray:
    return np.where(self > 0, self, self * negative_slope).astype(self.dtype, copy=False)


@op("LeakyReluBackward0")
@refuses_complex("leaky_relu_cpu")
def _leaky_relu(self, negative_slope=0.01):
    return _leaky_relu_array(self, negative_slope)


@_leaky_relu.derivative("self")
def _(ops, grad, self, negative_slope):
    return ops.leaky_relu_backward(grad, self, negative_slope)


@op("LeakyReluBackward1")
@refuses_complex("leaky_relu_cpu")
def _leaky_relu_inplace(self, negative_slope=0.01):
    return _leaky_relu_array(self, negative_slope)


_NEGATIVE_SLOPE_LEAKY_RELU = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is "
    "not supported. This is caused by calling in-place forward function with a negative "
    "slope, please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope"
)


@_leaky_relu_inplace.derivative("self")
def _(ops, grad, result, negative_slope):
    if negative_slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_LEAKY_RELU)
    return ops.leaky_relu_backward(grad, result, negative_slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    dtype = input._data.dtype
    if dtype.kind in "iub":
        name = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(dtype)]
        raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for '{name}'")
    if dtype == np.float32:  # (read as a float; the half types compute in float32)
        check_number_argument(negative_slope, dtype)
    if inplace:
        return _maybe_inplace(input, True, _leaky_relu_inplace, negative_slope)
    return _leaky_relu(input, negative_slope)


@op("HardtanhBackward0")
@refuses_complex("clamp", _CLAMP_COMPLEX)
def _hardtanh(self, min_val=-1.0, max_val=1.0):
    if self.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return np.clip(self, _like(min_val, self), _like(max_val, self))


@_hardtanh.derivative("self")
def _(ops, grad, self, min_val, max_val):
    return ops.hardtanh_backward(grad, self, min_val, max_val)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """``x`` clipped to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    dtype = input._data.dtype
    if dtype.kind == "u" and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if dtype != np.float64:  # (the limits are read as Scalars of the input's type)
        check_number_argument(min_val, dtype)
        check_number_argument(max_val, dtype)
    return _maybe_inplace(input, inplace, _hardtanh, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)`` (a hardtanh, as in PyTorch)."""
    return hardtanh(input, 0, 6, inplace)  # PyTorch's integers (grad_fn._saved_max_val 6)


@op("HardsigmoidBackward0")
@_floating_kernel("hardsigmoid_cpu")
@half_in_float32
@refuses_complex("hardsigmoid_cpu")
def _hardsigmoid(self):
    return (np.minimum(np.maximum(self + 3, 0), 6) / 6).astype(self.dtype, copy=False)


@_hardsigmoid.derivative("self")
def _(ops, grad, self):
    return ops.hardsigmoid_backward(grad, self)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    return _maybe_inplace(input, inplace, _hardsigmoid)


@op("HardswishBackward0")
@_floating_kernel("hardswish_cpu")
@half_in_float32
@refuses_complex("hardswish_cpu")
def _hardswish(self):
    return (self * np.minimum(np.maximum(self + 3, 0), 6) / 6).astype(self.dtype, copy=False)


@_hardswish.derivative("self")
def _(ops, grad, self):
    return ops.hardswish_backward(grad, self)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    return _maybe_inplace(input, inplace, _hardswish)


def _threshold_array(self: np.ndarray, threshold: float, value: float) -> np.ndarray:
    # ``value`` where self <= threshold: a NaN input stays NaN, as in PyTorch.
    return np.where(self <= threshold, _like(value, self), self)


@op("ThresholdBackward0")
@refuses_complex("threshold_cpu")
def _threshold(self, threshold, value):
    return _threshold_array(self, threshold, value)


@_threshold.derivative("self")
def _(ops, grad, self, threshold):
    return ops.threshold_backward(grad, self, threshold)


@op("ThresholdBackward1")
@refuses_complex("threshold_cpu")
def _threshold_inplace(self, threshold, value):
    return _threshold_array(self, threshold, value)


@_threshold_inplace.derivative("self")
def _(ops, grad, self, threshold):
    # PyTorch's in-place kernel saves a copy of its input, so the derivative is the same.
    return ops.threshold_backward(grad, self, threshold)


def _threshold_numbers(input: Tensor, threshold: Any, value: Any) -> tuple[Any, Any]:
    """``threshold`` and ``value`` read as Scalars of the input's type, as PyTorch's kernel
    reads them: checked (uint8 with 1000 raises "value cannot be converted to type uint8_t
    without overflow"), a negative int wrapped for an unsigned type (-1 is 255); float16
    compares with the threshold in float32 (no check there)."""
    dtype = input._data.dtype if isinstance(input, Tensor) else None
    if dtype is None or dtype == np.float64:
        return threshold, value
    if dtype.kind == "b":
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    if dtype.itemsize == 2 and dtype.kind not in "iu":
        check_number_argument(threshold, np.dtype(np.float32))
    else:
        threshold = fill_value_for(check_number_argument(threshold, dtype), dtype)
    return threshold, fill_value_for(check_number_argument(value, dtype), dtype)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where ``x > threshold``, else ``value``."""
    threshold, value = _threshold_numbers(input, threshold, value)
    if inplace:
        return _maybe_inplace(input, True, _threshold_inplace, threshold, value)
    return _threshold(input, threshold, value)


@op("HardshrinkBackward0")
@refuses_complex("hardshrink_cpu")
def _hardshrink(self, lambd=0.5):
    return np.where((self >= -lambd) & (self <= lambd), _like(0, self), self)


@_hardshrink.derivative("self")
def _(ops, grad, self, lambd):
    return ops.hardshrink_backward(grad, self, lambd)


@tensor_method
def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    dtype = input._data.dtype
    if dtype.kind in "iub":
        name = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(dtype)]
        raise NotImplementedError(f"\"hardshrink_cpu\" not implemented for '{name}'")
    if dtype.kind == "f" and dtype.itemsize <= 4:
        check_number_argument(lambd, dtype)  # (read as a Scalar of the input's type)
    return _hardshrink(input, lambd)


@op("SoftshrinkBackward0")
@_floating_kernel("softshrink_check")
@half_in_float32
@refuses_complex("softshrink_check")
def _softshrink(self, lambd=0.5):
    # PyTorch's kernel: NaN stays NaN (the comparisons alone would give 0).
    out = np.where(self > lambd, self - lambd, np.where(self < -lambd, self + lambd, 0))
    return np.where(np.isnan(self), self, out).astype(self.dtype, copy=False)


@_softshrink.derivative("self")
def _(ops, grad, self, lambd):
    return ops.softshrink_backward(grad, self, lambd)


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
@_floating_kernel("softplus_cpu")
@half_in_float32
@refuses_complex("softplus_cpu")
def _softplus(self, beta=1.0, threshold=20.0):
    scaled = self * beta
    soft = np.log1p(np.exp(scaled)) / beta
    return np.where(scaled > threshold, self, soft).astype(self.dtype, copy=False)


@_softplus.derivative("self")
def _(ops, grad, self, beta, threshold):
    return ops.softplus_backward(grad, self, beta, threshold)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``)."""
    return _softplus(input, beta, threshold)


@op("LogSigmoidBackward0", tensor_params=("buffer",))
@half_in_float32
@refuses_complex("log_sigmoid_cpu")
def _logsigmoid(self, buffer):
    # PyTorch's log_sigmoid_forward also returns ``buffer`` = exp(-|x|), which its node saves
    # (and its backward reads); the output is computed from x itself, and allocated contiguous
    # whatever the input's layout, as PyTorch's.
    out = np.subtract(np.minimum(self, 0), np.log1p(np.exp(-np.abs(self))), order="C")
    return out.astype(self.dtype, copy=False)


@_logsigmoid.derivative("self")
def _(ops, grad, self, buffer):
    return ops.log_sigmoid_backward(grad, self, buffer)


def _log_sigmoid_buffer(x: np.ndarray) -> np.ndarray:
    """``exp(-|x|)`` as PyTorch's kernel stores it: computed in float32 for float16, contiguous."""
    wide = x.astype(np.float32) if x.dtype == np.float16 else x
    return np.exp(np.negative(np.abs(wide), order="C")).astype(x.dtype, copy=False)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably."""
    if isinstance(input, Tensor) and input._data.dtype.kind in "biu":
        raise _dtype.no_kernel("log_sigmoid_cpu", input._data.dtype)
    buffer = None
    if isinstance(input, Tensor) and input.requires_grad and mode_get() & GRAD:
        buffer = wrap(_log_sigmoid_buffer(input._data))  # only a recorded node reads it
    return _logsigmoid(input, buffer)


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
@_floating_kernel("glu_cpu")
@half_in_float32
@refuses_complex("glu_cpu")
def _glu(self, dim=-1):
    a, b = np.split(self, 2, axis=dim)
    return (a * special.expit(b)).astype(self.dtype, copy=False)


@_glu.derivative("self")
def _(ops, grad, self, dim):
    return ops.glu_backward(grad, self, dim)


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
@_floating_kernel("prelu_cpu")
@refuses_complex("prelu_cpu")
def _prelu_kernel(self, weight):
    return np.where(self > 0, self, weight * self).astype(self.dtype, copy=False)


@_prelu_kernel.derivative("self")
def _(ops, grad, self, weight):
    return ops.where(self > 0, grad, weight * grad)


@_prelu_kernel.derivative("weight")
def _(ops, grad, self):
    return ops.where(self > 0, 0, self * grad)


@tensor_method
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


def _maybe_inplace(input: Tensor, inplace: bool, op: Any, *args: Any) -> Tensor:
    """``op(input, *args)``; with ``inplace=True`` written into ``input`` as an in-place op
    (version bump, ``input`` takes the op's node as its history, PyTorch's error for a leaf
    that requires grad, and under ``saved_tensors_hooks`` the node packs what PyTorch's
    in-place node packs). Where PyTorch's in-place kernel has its own node
    (``LeakyReluBackward1``, which keeps the output instead of the input), ``op`` is that op."""
    if not inplace:
        return op(input, *args)
    return inplace_call(input, op, *args)


PRIMITIVES: dict[str, Any] = {}
