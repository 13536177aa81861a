"""First derivatives of the activations, as ops of their own (as in PyTorch).

PyTorch computes an activation's derivative with a fused kernel (``threshold_backward``,
``tanh_backward``, ``gelu_backward`` ...) recorded as a node of its own
(``ThresholdBackwardBackward0`` ...) whose inputs are the gradient *and* the saved input, with
PyTorch's double-backward formula as its derivative. These ops reproduce that: the forward ops'
derivatives call them through ``ops`` (``ops.threshold_backward(grad, result, 0)``), so with
``create_graph=True`` the first derivative is connected to the graph even when the incoming
gradient is a constant, and differentiating it again gives PyTorch's numbers.

Each kernel follows PyTorch's scalar CPU code branch for branch: the same answers at 0, at the
kinks, at +-inf and NaN (a NaN input passes the gradient through ``relu``, ``hardtanh`` ...), and
float16 computed in float32 and rounded once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._backend import special
from .._registry import KEEP, op, recorded_as, zero_derivative
from ..pointwise import half_in_float32

_SQRT_HALF = math.sqrt(0.5)

__all__: list[str] = []


# The integer type of each float's width: zeroing by a bit mask is exact (a kept element's
# bits are untouched, a dropped one becomes +0.0, an infinite or NaN gradient too) and
# branch-free, 7 times faster than np.where on a random mask (relu's backward, every step).
_SAME_WIDTH_INT = {np.dtype(np.float16): np.int16, np.dtype(np.float32): np.int32,
                   np.dtype(np.float64): np.int64}


def _zero_where(values: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """``values`` with +0.0 where ``drop`` (a bool array) is set."""
    ints = _SAME_WIDTH_INT.get(values.dtype)
    if ints is None or np.shape(drop) != np.shape(values):
        return np.where(drop, 0, values).astype(values.dtype, copy=False)
    # keep: all ones, drop: 0 (np.asarray: 0-d operands give a NumPy scalar, not an array)
    out = np.asarray(np.subtract(np.asarray(drop).view(np.uint8), 1, dtype=ints))
    np.bitwise_and(np.asarray(values).view(ints), out, out=out)  # (one buffer: the result)
    return out.view(values.dtype)


@op("ThresholdBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def threshold_backward(grad_output, self, threshold):
    """0 where ``self <= threshold``, else ``grad_output`` (so a NaN input passes the gradient
    through, as in PyTorch, and an infinite gradient is not turned into NaN)."""
    return _zero_where(grad_output, np.less_equal(self, threshold))


@threshold_backward.derivative("grad_output")
def _(ops, grad, self, threshold):
    return ops.threshold_backward(grad, self, threshold)


threshold_backward.derivative("self")(zero_derivative)


@op("LeakyReluBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
@half_in_float32
def leaky_relu_backward(grad_output, self, negative_slope):
    """``grad_output`` where ``self > 0``, else ``negative_slope * grad_output`` (NaN inputs
    take the negative side, as in PyTorch)."""
    return np.where(self > 0, grad_output, grad_output * negative_slope).astype(
        grad_output.dtype, copy=False)


@leaky_relu_backward.derivative("grad_output")
def _(ops, grad, self, negative_slope):
    return ops.leaky_relu_backward(grad, self, negative_slope)


leaky_relu_backward.derivative("self")(zero_derivative)


@op("HardtanhBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def hardtanh_backward(grad_output, self, min_val, max_val):
    """0 where ``self <= min_val`` or ``self >= max_val``, else ``grad_output`` (a NaN input
    passes the gradient through, as in PyTorch)."""
    outside = (self <= min_val) | (self >= max_val)
    return np.where(outside, 0, grad_output).astype(grad_output.dtype, copy=False)


@hardtanh_backward.derivative("grad_output")
def _(ops, grad, self, min_val, max_val):
    return ops.hardtanh_backward(grad, self, min_val, max_val)


hardtanh_backward.derivative("self")(zero_derivative)


@op("HardshrinkBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def hardshrink_backward(grad_output, self, lambd):
    """0 where ``-lambd <= self <= lambd``, else ``grad_output`` (NaN passes it through)."""
    inside = (self >= -lambd) & (self <= lambd)
    return np.where(inside, 0, grad_output).astype(grad_output.dtype, copy=False)


@hardshrink_backward.derivative("grad_output")
def _(ops, grad, self, lambd):
    return ops.hardshrink_backward(grad, self, lambd)


hardshrink_backward.derivative("self")(zero_derivative)


# softshrink's first derivative is hardshrink's (0 inside ``[-lambd, lambd]``), under its own
# node, whose derivative is again a softshrink_backward.
softshrink_backward = recorded_as(hardshrink_backward, "SoftshrinkBackwardBackward0")


@softshrink_backward.derivative("grad_output")
def _(ops, grad, self, lambd):
    return ops.softshrink_backward(grad, self, lambd)


# ----------------------------------------------------------------------------------------------
# Fused first derivatives of the smooth activations (PyTorch's tanh_backward, sigmoid_backward):
# one kernel each, computed in float32 for float16 and rounded once.


@op("TanhBackwardBackward0", inputs=("grad_output", "output"), promote=KEEP)
@half_in_float32
def tanh_backward(grad_output, output):
    """``grad_output * (1 - output**2)``: the derivative of ``tanh`` from its output (of its
    conjugate, for complex values, as PyTorch's)."""
    if output.dtype.kind == "c":
        return grad_output * np.conj(1 - output * output)
    return grad_output * (1 - output * output)


@tanh_backward.derivative("grad_output")
def _(ops, grad, output):
    return ops.tanh_backward(grad, output)


@tanh_backward.derivative("output")
def _(ops, grad, grad_output, output):
    return grad * (-2 * output * grad_output)


@op("SigmoidBackwardBackward0", inputs=("grad_output", "output"), promote=KEEP)
def sigmoid_backward(grad_output, output):
    """``grad_output * (1 - output) * output``: the derivative of ``sigmoid`` from its output.
    float16 rounds each step to float16, as PyTorch's kernel (bfloat16 computes in float32 and
    rounds once, as the dispatch does). Complex values take the conjugate of the derivative,
    as PyTorch's."""
    if output.dtype.kind == "c":
        return grad_output * np.conj((1 - output) * output)
    return grad_output * (1 - output) * output


@sigmoid_backward.derivative("grad_output")
def _(ops, grad, output):
    return ops.sigmoid_backward(grad, output)


@sigmoid_backward.derivative("output")
def _(ops, grad, grad_output, output):
    return grad * grad_output * (-2 * output + 1)


# ----------------------------------------------------------------------------------------------
# Fused first derivatives of gelu, elu, softplus, logsigmoid, hardswish and hardsigmoid: PyTorch's
# CPU kernels (same branches, so the same answers at 0, +-inf and NaN), with its double-backward
# formulas as their derivatives.

_GELU_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5  # sqrt(2 / pi)
_GELU_KAPPA = 0.044715
_GELU_PDF = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5  # 1 / sqrt(2 pi)


@op("GeluBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
@half_in_float32
def gelu_backward(grad_output, self, approximate="none"):
    """``grad_output * gelu'(self)`` (exact, or of the tanh approximation)."""
    x = self
    if approximate == "tanh":
        x_sq = x * x
        tanh_inner = np.tanh(_GELU_BETA * (x + _GELU_KAPPA * (x_sq * x)))
        left = 0.5 * x
        right = 1 + tanh_inner
        left_derivative = 0.5 * right
        tanh_derivative = 1 - tanh_inner * tanh_inner
        inner_derivative = _GELU_BETA * (1 + 3 * _GELU_KAPPA * x_sq)
        return grad_output * (left_derivative + left * tanh_derivative * inner_derivative)
    cdf = 0.5 * (1 + special.erf(x * _SQRT_HALF))
    pdf = _GELU_PDF * np.exp(x * x * -0.5)
    return grad_output * (cdf + x * pdf)


@gelu_backward.derivative("grad_output")
def _(ops, grad, self, approximate):
    return ops.gelu_backward(grad, self, approximate)


@gelu_backward.derivative("self")
def _(ops, grad, grad_output, self, approximate):
    # PyTorch's gelu_double_backward.
    if approximate == "tanh":
        inner = _GELU_BETA * (self + _GELU_KAPPA * ops.pow(self, 3))
        tanh_inner = ops.tanh(inner)
        sech_inner = 1 / ops.cosh(inner)
        f = 0.5 * self
        g = 1 - tanh_inner * tanh_inner
        h = _GELU_BETA * (1 + 3 * _GELU_KAPPA * self * self)
        f_prime_gh = 0.5 * g * h
        g_prime = (2 * sech_inner) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime
        h_prime = 6 * _GELU_KAPPA * self * _GELU_BETA
        h_prime_fg = f * g * h_prime
        return grad * grad_output * (f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg)
    self_sq = self * self
    pdf = _GELU_PDF * ops.exp(-0.5 * self_sq)
    return grad * grad_output * (2 * pdf - self_sq * pdf)


@op("EluBackwardBackward0", inputs=("grad_output", "self_or_result"), promote=KEEP)
@half_in_float32
def elu_backward(grad_output, self_or_result, alpha, scale, input_scale, is_result):
    """The derivative of ``elu`` from its input (or, ``is_result``, from its output)."""
    x = self_or_result
    negative_coefficient = alpha * scale
    if is_result:
        negative = grad_output * input_scale * (x + negative_coefficient)
    else:
        negative = grad_output * input_scale * negative_coefficient * np.exp(x * input_scale)
    return np.where(x <= 0, negative, grad_output * scale).astype(grad_output.dtype, copy=False)


@elu_backward.derivative("grad_output")
def _(ops, grad, self_or_result, alpha, scale, input_scale, is_result):
    return ops.elu_backward(grad, self_or_result, alpha, scale, input_scale, is_result)


@elu_backward.derivative("self_or_result")
def _(ops, grad, grad_output, self_or_result, alpha, scale, input_scale, is_result):
    # PyTorch's elu_double_backward: nothing at 0 (the kink), nothing on the linear side.
    negative = self_or_result < 0
    if is_result:
        return grad * grad_output * input_scale * negative
    scaled = grad * grad_output * input_scale
    return ops.elu_backward(scaled, self_or_result, alpha, scale, input_scale, False) * negative


@op("SoftplusBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
@half_in_float32
def softplus_backward(grad_output, self, beta, threshold):
    """``grad_output * sigmoid(beta * self)``, or ``grad_output`` above ``threshold``."""
    scaled = self * beta
    z = np.exp(scaled)
    return np.where(scaled > threshold, grad_output, grad_output * z / (z + 1))


@softplus_backward.derivative("grad_output")
def _(ops, grad, self, beta, threshold):
    return ops.softplus_backward(grad, self, beta, threshold)


@softplus_backward.derivative("self")
def _(ops, grad, grad_output, self, beta, threshold):
    x = self * beta
    return ops.sigmoid_backward(grad * grad_output, ops.sigmoid(x)) * (x < threshold) * beta


@op("LogSigmoidBackwardBackward0", inputs=("grad_output", "self"), tensor_params=("buffer",),
    promote=KEEP)
@half_in_float32
def log_sigmoid_backward(grad_output, self, buffer):
    """``grad_output * sigmoid(-self)`` from ``buffer`` = ``exp(-|self|)``, the forward's
    second output, as PyTorch's kernel computes it."""
    # (max_deriv - sign * z) * grad_output with z = buffer / (1 + buffer): 1 - z below 0, z
    # above (NaN stays NaN). Written with where so that no integer array promotes the result
    # past the input's dtype.
    z = buffer / (1 + buffer)
    return np.where(self < 0, 1 - z, z) * grad_output


@log_sigmoid_backward.derivative("grad_output")
def _(ops, grad, self, buffer):
    return ops.log_sigmoid_backward(grad, self, buffer)


@log_sigmoid_backward.derivative("self")
def _(ops, grad, grad_output, self):
    z = ops.sigmoid(self)
    return grad * grad_output * (z - 1) * z


@op("HardswishBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
@half_in_float32
def hardswish_backward(grad_output, self):
    """0 up to -3, ``grad_output * (self / 3 + 0.5)`` strictly between -3 and 3,
    ``grad_output`` from 3 on (and at NaN): PyTorch's choice at the kinks (0 at -3, 1 at 3)."""
    middle = np.where(self < 3, grad_output * (self / 3 + 0.5), grad_output)
    return np.where(self <= -3, 0, middle).astype(grad_output.dtype, copy=False)


@hardswish_backward.derivative("grad_output")
def _(ops, grad, self):
    return ops.hardswish_backward(grad, self)


@hardswish_backward.derivative("self")
def _(ops, grad, grad_output, self):
    return ops.where((self > -3.0) & (self < 3.0), grad * grad_output / 3.0, 0)


# PyTorch's hardsigmoid kernel multiplies by 1/6 rounded to float32, whatever the dtype.
_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


@op("HardsigmoidBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
@half_in_float32
def hardsigmoid_backward(grad_output, self):
    """``grad_output / 6`` strictly between -3 and 3, else 0 (NaN too). PyTorch has no
    derivative for it: differentiating it again raises, as there."""
    inside = (self > -3) & (self < 3)
    return np.where(inside, grad_output * _ONE_SIXTH, 0).astype(grad_output.dtype, copy=False)


@hardsigmoid_backward.derivative("grad_output")
def _(ops, grad, self):
    return ops.hardsigmoid_backward(grad, self)


@op("GluBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def glu_backward(grad_output, self, dim):
    """The derivative of ``glu`` as PyTorch's kernel computes it: ``s = sigmoid(b)`` in the
    input's dtype (for float16 rounded to float16 first), then ``s * grad`` for the first half
    and ``(1 - s) * s * grad * a`` for the second (in float32 for float16, rounded once)."""
    a, b = np.split(self, 2, axis=dim)
    s = special.expit(b)
    first = s * grad_output
    if self.dtype == np.float16:
        f32 = np.float32
        second = ((1 - s.astype(f32)) * s.astype(f32) * grad_output.astype(f32)
                  * a.astype(f32)).astype(np.float16)
    else:
        second = (1 - s) * s * grad_output * a
    return np.concatenate([first, second], axis=dim)


def _glu_halves(ops, x, dim):
    half = x.shape[dim] // 2
    return ops.slice(x, dim, 0, half, 1), ops.slice(x, dim, half, 2 * half, 1)


@glu_backward.derivative("grad_output")
def _(ops, grad, self, dim):
    # PyTorch's glu_double_backward_grad_output: grad * glu_backward(ones), halves summed.
    a, b = _glu_halves(ops, self, dim)
    s = ops.sigmoid(b)
    first, second = _glu_halves(ops, grad * ops.cat([s, (1 - s) * s * a], dim), dim)
    return first + second


@glu_backward.derivative("self")
def _(ops, grad, grad_output, self, dim):
    # PyTorch's glu_double_backward.
    a, b = _glu_halves(ops, self, dim)
    sig = ops.sigmoid(b)
    one_sub_sig = 1 - sig
    sig_one_sub_sig = sig * one_sub_sig
    grad_first, grad_second = _glu_halves(ops, grad, dim)
    first = grad_second * grad_output * sig_one_sub_sig
    second_order = sig_one_sub_sig * one_sub_sig - sig * sig_one_sub_sig
    second = (grad_second * a * grad_output * second_order
              + grad_first * grad_output * sig_one_sub_sig)
    return ops.cat([first, second], dim)


PRIMITIVES: dict[str, Any] = {
    "tanh_backward": tanh_backward,
    "sigmoid_backward": sigmoid_backward,
    "gelu_backward": gelu_backward,
    "elu_backward": elu_backward,
    "softplus_backward": softplus_backward,
    "log_sigmoid_backward": log_sigmoid_backward,
    "hardswish_backward": hardswish_backward,
    "hardsigmoid_backward": hardsigmoid_backward,
    "softshrink_backward": softshrink_backward,
    "glu_backward": glu_backward,
    "threshold_backward": threshold_backward,
    "leaky_relu_backward": leaky_relu_backward,
    "hardtanh_backward": hardtanh_backward,
    "hardshrink_backward": hardshrink_backward,
}
