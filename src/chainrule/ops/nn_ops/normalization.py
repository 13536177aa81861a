"""Batch, layer and group normalisation.

Each forward computes ``xhat = (x - mean) * invstd`` over its statistics' dimensions, then scales
and shifts. The derivatives recompute the statistics from the saved input with ``ops`` ops (two
reductions) instead of saving them: the same formula then runs on arrays and, with
``create_graph=True``, on Tensors, where the statistics' own dependence on ``x`` is what makes the
second derivative right. With ``g = grad * weight`` and means over the statistics' dimensions:

    dx = invstd * (g - mean(g) - xhat * mean(g * xhat))
    dweight = sum(grad * xhat),  dbias = sum(grad)   (over every dimension but the channel's)

In evaluation mode batch norm uses the running statistics, constants: ``dx = g * invstd``.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import _dtype
from ..._dtype import REDUCED_FLOATS as _REDUCED_FLOATS
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from ...autograd.graph import MUTATION_WATCH, clone_saved_before_write
from .._registry import exact_on_arrays, op
from ..inplace import bump_version
from ..pointwise import (
    _half_type,
    _is_half,
    _to_half,
    _to_single,
    derivative_in_float32,
    half_in_float32,
)
from ._common import accumulation_dtype, scalar_name, size_list
from .pooling import _channels_last, _laid_out

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm"]


def _array(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _in_single(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype in _REDUCED_FLOATS else x


def _stats(ops: Any, x: Any, dims: tuple[int, ...], count: int, eps: float) -> tuple[Any, Any]:
    """``x - mean`` and ``1 / sqrt(var + eps)`` (biased variance) over ``dims``, with ``ops``."""
    centred = x - ops.sum(x, dims, True) / count
    var = ops.sum(centred * centred, dims, True) / count
    return centred, 1 / ops.sqrt(var + eps)


def _row_stats(ops: Any, x: Any, dims: tuple[int, ...], count: int,
               eps: float) -> tuple[Any, Any]:
    """:func:`_stats` as layer and group norm need them. PyTorch computes their moments with
    Welford's recurrence, so the mean of a constant row is exact (a two-pass mean can be an ulp
    off: ``[1e30] * 3`` in float64 would normalise to -1, not 0), and a row whose values are so
    far apart that their difference overflows gets NaN statistics (``[-3e38, 0, 3e38]`` in
    float32). Here: two passes; rows whose deviations are within a few ulps of their mean (the
    constant ones) get the exact mean, added as a constant so that the recorded mean's
    derivative is unchanged; NaN where a row's range overflows. The checks read the small
    per-row results, so ordinary inputs pay nothing more."""
    mean = ops.sum(x, dims, True) / count
    centred = x - mean
    var = ops.sum(centred * centred, dims, True) / count
    var_data = _array(var)
    mean_data = _array(mean)
    with np.errstate(over="ignore", invalid="ignore"):
        tiny = 4 * _dtype.finfo(mean_data.dtype).eps * np.abs(mean_data)
        suspect = (var_data > 0) & (var_data <= tiny * tiny)
    if suspect.any():
        data = _array(x)
        exact = _exact_mean(data, dims, count, mean_data)
        mean = mean + np.where(suspect, exact - mean_data, 0).astype(mean_data.dtype)
        centred = x - mean
        var = ops.sum(centred * centred, dims, True) / count
        var_data = _array(var)
    if np.isinf(var_data).any():  # only then can a row's range overflow
        data = _array(x)
        with np.errstate(over="ignore", invalid="ignore"):
            high = np.max(data, axis=dims, keepdims=True)
            low = np.min(data, axis=dims, keepdims=True)
            overflows = np.isinf(high - low) & np.isfinite(low) & np.isfinite(high)
        if overflows.any():
            centred = ops.where(overflows, math.nan, centred)
    return centred, 1 / ops.sqrt(var + eps)


def _array(x: Any) -> np.ndarray:
    return x._data if hasattr(x, "_data") else x


def _exact_mean(a: np.ndarray, dims: tuple[int, ...], count: int,
                mean: np.ndarray) -> np.ndarray:
    """The mean over ``dims`` (kept), exact for constant rows: summed in float64 for narrower
    dtypes; for float64, ``mean`` with constant rows set to their value."""
    if a.dtype != np.float64:
        with np.errstate(invalid="ignore"):
            return (np.sum(a, axis=dims, keepdims=True, dtype=np.float64) / count).astype(a.dtype)
    low = np.min(a, axis=dims, keepdims=True)
    return np.where(low == np.max(a, axis=dims, keepdims=True), low, mean)


def _numpy() -> Any:
    """The derivative namespace over arrays (set once every op exists)."""
    from .. import _opnode

    return _opnode.NUMPY_NS


def _exact_statistics_in_float16(recompute: Any) -> Any:
    """Decorate a normalisation's derivative that reads its saved statistics ``result1`` and
    ``result2``: with a float16 gradient it runs in float32 (rounded to float16 once) with the
    statistics recomputed in float32 from the input by ``recompute(arguments)`` (a dict of the
    derivative's arguments, the input as a float32 array), instead of the saved ones, which
    PyTorch keeps in float16: its float16 backward kernels read those and land hundreds of
    ulps off the exact gradient (tests/test_numerics_reductions.py ``test_half_against_exact``).
    """

    def decorate(derivative: Any) -> Any:
        names = list(inspect.signature(derivative).parameters)[2:]
        first, second = names.index("result1"), names.index("result2")

        @functools.wraps(derivative)
        def run(ops: Any, grad: Any, *args: Any) -> Any:
            if not _is_half(grad):
                return derivative(ops, grad, *args)
            values = [_to_single(a) for a in args]
            named = dict(zip(names, values, strict=True))
            named["input"] = _array(named["input"])
            stats = recompute(named)
            if stats is not None:
                recorded = type(grad) is not np.ndarray
                values[first], values[second] = (wrap(v) if recorded else v for v in stats)
            return _to_half(derivative(ops, _to_single(grad), *values), _half_type(grad))

        return run

    return decorate


def _normalised_grad(ops: Any, g: Any, xhat: Any, invstd: Any, dims: tuple[int, ...],
                     count: int) -> Any:
    mean_g = ops.sum(g, dims, True) / count
    mean_gx = ops.sum(g * xhat, dims, True) / count
    return invstd * (g - mean_g - xhat * mean_gx)


def _channel_view(shape: Sequence[int]) -> tuple[int, ...]:
    """``(1, C, 1, ...)``: how a per-channel vector broadcasts against ``shape``."""
    return (1, shape[1]) + (1,) * (len(shape) - 2)


def _batch_dims(ndim: int) -> tuple[int, ...]:
    return (0,) + tuple(range(2, ndim))


# ----------------------------------------------------------------------------------------------
# Batch norm
#
# As PyTorch's CPU kernels (batch_norm_kernel.cpp): the statistics are kept in the parameters'
# dtype (``param``: the input's, or float32 for a float16 input whose weight or running
# statistics are float32); the output is ``x * alpha + beta`` with ``alpha = invstd * weight``
# and ``beta = bias - mean * alpha`` per channel, each a fused multiply-add rounded once to the
# compute dtype (float32 for float16). NativeBatchNormBackward0 saves the input, weight, running
# statistics and the outputs ``result1``/``result2`` (the batch mean and inverse standard
# deviation; empty in evaluation mode), and its backward reads them.


def _fma(a: Any, b: Any, c: Any, dtype: np.dtype) -> np.ndarray:
    """``a * b + c`` rounded once to ``dtype`` (float32 or narrower; computed in float64, whose
    product of two float32 values is exact), as a fused multiply-add."""
    with np.errstate(invalid="ignore", over="ignore"):
        exact = np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)
    return exact.astype(dtype)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in _REDUCED_FLOATS else np.dtype(dtype)


def _batch_norm_terms(mean: np.ndarray, invstd: np.ndarray, weight: np.ndarray | None,
                      bias: np.ndarray | None, work: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's per-channel ``alpha = invstd * weight``, ``beta = bias - mean * alpha``."""
    invstd = invstd.astype(work, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        alpha = invstd if weight is None else invstd * weight.astype(work, copy=False)
        bias = np.zeros((), work) if bias is None else bias.astype(work, copy=False)
        if work == np.float64:
            beta = bias - mean * alpha
        else:
            beta = _fma(-mean.astype(work, copy=False), alpha, bias, work)
    return alpha, beta


def _eval_invstd(running_var: np.ndarray, eps: float, work: np.dtype) -> np.ndarray:
    """``1 / sqrt(running_var + eps)`` in the compute dtype, as the kernels compute it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        var = running_var.astype(work, copy=False)
        return np.asarray(1, work) / np.sqrt(var + np.asarray(eps, work))


@op("NativeBatchNormBackward0", inputs=("input", "weight", "bias"),
    tensor_params=("running_mean", "running_var"), saved_outputs=("result1", "result2"),
    not_differentiable=("running_mean", "running_var"))
def native_batch_norm(input, result1, result2, weight=None, bias=None, running_mean=None,
                      running_var=None, training=True, eps=1e-5, precise=None):
    """``x * alpha + beta`` per channel (dim 1), from the batch statistics ``result1``,
    ``result2`` in training, from the running ones otherwise; row-major output unless the input
    is channels-last."""
    work = _compute_dtype(input.dtype)
    if training:
        # (precise: arrays, or tensors when a compiled graph passes them)
        mean, invstd = (result1, result2) if precise is None else (_array(p) for p in precise)
    else:
        mean, invstd = running_mean, _eval_invstd(running_var, eps, work)
    view = _channel_view(input.shape)
    channels_last = _channels_last(input)
    if not (input.flags.c_contiguous or channels_last):
        # PyTorch's kernel for other layouts: ((x - mean) * invstd) * weight + bias, element
        # by element in the parameters' dtype.
        param = mean.dtype
        with np.errstate(invalid="ignore", over="ignore"):
            out = (input.astype(param) - mean.reshape(view)) * invstd.astype(param).reshape(view)
            if weight is not None:
                out = out * weight.reshape(view)
            if bias is not None:
                out = out + bias.reshape(view)
        return _laid_out(out.astype(input.dtype, copy=False), False)
    alpha, beta = _batch_norm_terms(mean.astype(work, copy=False), invstd, weight, bias, work)
    if work == np.float64:
        out = input * alpha.reshape(view) + beta.reshape(view)
    else:
        out = _fma(input, alpha.reshape(view), beta.reshape(view), work)
    return _laid_out(out.astype(input.dtype, copy=False), channels_last)


def _batch_norm_backward(grad: np.ndarray, x: np.ndarray, weight: np.ndarray | None,
                         mean: np.ndarray, invstd: np.ndarray, training: bool,
                         want: str) -> np.ndarray:
    """PyTorch's CPU backward kernel for one of ``input``, ``weight``, ``bias``: per channel
    ``sum = sum(dy)``, ``dotp = sum((x - mean) * dy)`` (accumulated in float64), then
    ``dx = (dy - sum / N - (x - mean) * dotp * invstd ** 2 / N) * invstd * w`` (training),
    ``dx = dy * invstd * w`` (evaluation), ``dweight = dotp * invstd``, ``dbias = sum``."""
    work = _compute_dtype(x.dtype)
    dims = _batch_dims(x.ndim)
    if want == "bias":
        return np.sum(grad.astype(work, copy=False), axis=dims, dtype=np.float64).astype(
            grad.dtype)
    view = _channel_view(x.shape)
    count = x.size // x.shape[1] if x.shape[1] else 0
    mean = mean.astype(work, copy=False).reshape(view)
    invstd = invstd.astype(work, copy=False)
    dy = grad.astype(work, copy=False)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        centred = x.astype(work, copy=False) - mean
        if want == "weight" or training:
            dotp = np.sum(centred * dy, axis=dims, dtype=np.float64).astype(work)
        if want == "weight":
            return (dotp * invstd).astype(grad.dtype)
        if not training:
            dx = dy * invstd.reshape(view)
        else:
            total = np.sum(dy, axis=dims, dtype=np.float64).astype(work)
            k = (dotp * invstd * invstd / np.asarray(count, work)).reshape(view)
            grad_mean = (total / np.asarray(count, work)).reshape(view)
            dx = (dy - grad_mean - centred * k) * invstd.reshape(view)
        if weight is not None:
            dx = dx * weight.astype(work, copy=False).reshape(view)
        return _laid_out(dx.astype(grad.dtype, copy=False), _channels_last(x))


def _batch_norm_recorded(ops: Any, grad: Any, input: Any, weight: Any, running_mean: Any,
                         running_var: Any, result1: Any, result2: Any, training: bool,
                         eps: float) -> tuple[Any, Any, Any]:
    """For the recorded backward: ``x - mean`` and ``invstd`` (per-channel views) whose
    derivatives in ``x`` are PyTorch's double backward's, and the weight view (or None)."""
    shape = tuple(input.shape)
    view = _channel_view(shape)
    dims = _batch_dims(len(shape))
    if training:
        count = math.prod(shape) // shape[1]
        mean, invstd = _stats_with_grad(input, ops.reshape(result1, view),
                                        ops.reshape(result2, view), dims, count)
    else:
        mean = ops.reshape(running_mean, view)
        invstd = 1 / ops.sqrt(ops.reshape(running_var, view) + eps)
    w = None if weight is None else ops.reshape(weight, view)
    return input - mean, invstd, w


@native_batch_norm.derivative("input")
@exact_on_arrays
@_exact_statistics_in_float16(lambda args: _batch_recompute(args))
def _(ops, grad, input, weight, running_mean, running_var, result1, result2, training, eps):
    if type(input) is np.ndarray:
        mean, invstd = (result1, result2) if training else (
            running_mean, _eval_invstd(running_var, eps, _compute_dtype(input.dtype)))
        return _batch_norm_backward(grad, input, weight, mean, invstd, training, "input")
    centred, invstd, w = _batch_norm_recorded(ops, grad, input, weight, running_mean,
                                              running_var, result1, result2, training, eps)
    scale = invstd if w is None else invstd * w
    if not training:
        return grad * scale
    shape = tuple(input.shape)
    dims = _batch_dims(len(shape))
    count = math.prod(shape) // shape[1]
    k = ops.sum(centred * grad, dims, True) * (invstd * invstd) / count
    return (grad - ops.sum(grad, dims, True) / count - centred * k) * scale


@native_batch_norm.derivative("weight")
@exact_on_arrays
@_exact_statistics_in_float16(lambda args: _batch_recompute(args))
def _(ops, grad, input, weight, running_mean, running_var, result1, result2, training, eps):
    if type(input) is np.ndarray:
        mean, invstd = (result1, result2) if training else (
            running_mean, _eval_invstd(running_var, eps, _compute_dtype(input.dtype)))
        return _batch_norm_backward(grad, input, weight, mean, invstd, training, "weight")
    centred, invstd, _ = _batch_norm_recorded(ops, grad, input, weight, running_mean,
                                              running_var, result1, result2, training, eps)
    return ops.sum(grad * centred * invstd, _batch_dims(len(input.shape)), False)


@native_batch_norm.derivative("bias")
@exact_on_arrays
@derivative_in_float32
def _(ops, grad, input, weight, running_mean, running_var, result1, result2, training, eps):
    if type(grad) is np.ndarray:
        return _batch_norm_backward(grad, grad, None, result1, result2, training, "bias")
    return ops.sum(grad, _batch_dims(len(grad.shape)), False)


def _batch_recompute(args: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """Float32 batch statistics of the (float32) input, for the float16 backward."""
    if not args["training"]:
        return None
    x = args["input"]
    mean, invstd = _batch_statistics(x, np.dtype(np.float32), args["eps"])[3:]
    return mean, invstd


def _param_dtype(x: np.ndarray, params: Sequence[Tensor | None]) -> np.dtype:
    """The dtype PyTorch keeps batch-norm statistics in, checking the parameters' dtypes with
    its messages (float16 input: float32 parameters are allowed, all or none)."""
    first = next((t._data.dtype for t in params if t is not None), None)
    if first is not None and first != x.dtype:  # PyTorch's "mixed type"
        for t in params:
            if t is not None and t._data.dtype != np.float32:
                raise RuntimeError(
                    "mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x.dtype not in _REDUCED_FLOATS:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return np.dtype(np.float32)
    for t in params:
        if t is not None and t._data.dtype != x.dtype:
            raise RuntimeError(
                f"expected scalar type {scalar_name(x.dtype)} but found "
                f"{scalar_name(t._data.dtype)}"
            )
    return x.dtype


def _batch_statistics(x: np.ndarray, param: np.dtype, eps: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The batch mean and ``invstd = 1 / sqrt(var + eps)`` (biased) in ``param`` (what PyTorch
    saves), the sum of squared deviations, the mean and invstd in the compute dtype (what the
    running statistics are updated from, and what a float16 input is normalised with), as
    PyTorch's kernel computes them: float32 input summed in float64 (its mean rounded to
    float32 before the deviations are taken), float16 in float32 (the unrounded mean), float64
    in float64."""
    dims = _batch_dims(x.ndim)
    count = x.size // x.shape[1]
    view = _channel_view(x.shape)
    if not (x.flags.c_contiguous or _channels_last(x)):
        # PyTorch's path for other layouts: the mean reduced in the input's dtype (float32 for
        # float16), the squared deviations from it averaged in float64 (so a batch
        # [3e38, 1, 2] has a finite variance, 2e76, whose inverse root is a float32 subnormal,
        # and [3e38] * 3 an infinite mean).
        with np.errstate(over="ignore", invalid="ignore"):
            mean_w = _in_single(x).mean(axis=dims)
            deviation = x.astype(np.float64) - np.expand_dims(mean_w, dims)
            var = np.mean(np.square(deviation), axis=dims)
            precise = (1 / np.sqrt(var + eps)).astype(mean_w.dtype)
            invstd = (1 / np.sqrt(var + eps)).astype(param)
        return mean_w.astype(param), invstd, var * count, mean_w, precise
    with np.errstate(over="ignore", invalid="ignore"):
        if x.dtype in _REDUCED_FLOATS:
            xf = x.astype(np.float32)
            mean_w = np.sum(xf, axis=dims, dtype=np.float32) / np.float32(count)
            centred = xf - mean_w.reshape(view)
            var_sum = np.sum(centred * centred, axis=dims, dtype=np.float32)
        else:
            acc = np.float64
            mean_w = (np.sum(x, axis=dims, dtype=acc) / count).astype(x.dtype)
            centred = x - mean_w.reshape(view)
            var_sum = np.sum(centred * centred, axis=dims, dtype=acc)
        mean = mean_w.astype(param)
        # The sum of squares stays in float32 for float16 input (PyTorch's accumulate type).
        var_sum = var_sum.astype(_compute_dtype(param))
        var = var_sum / np.asarray(count, var_sum.dtype)
        acc = np.float32 if x.dtype in _REDUCED_FLOATS else np.float64
        precise = (1 / np.sqrt(var.astype(acc) + eps)).astype(mean_w.dtype)
        invstd = (1 / np.sqrt(var.astype(acc) + eps)).astype(param)
    return mean, invstd, var_sum, mean_w, precise


def _update_running(running_mean: np.ndarray | None, running_var: np.ndarray | None,
                    mean: np.ndarray, var_sum: np.ndarray, count: int, momentum: float) -> None:
    """PyTorch's in-kernel update (no version bump, as PyTorch's): ``m * mean + (1 - m) *
    running`` with the momentum in the statistics' dtype, the unbiased variance
    ``var_sum / (count - 1)``. (Not a write ``allow_mutation_on_saved_tensors`` sees: PyTorch's
    ``native_batch_norm`` does not declare it, so the statistics the node saved are not cloned.)"""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if running_mean is not None:
            data = running_mean
            if data.dtype is _dtype.BFLOAT16:
                _bfloat16_running_update(data, mean, momentum)
            elif data.dtype in _REDUCED_FLOATS:  # in float32, from the float32 mean
                m32 = np.float32(momentum)
                data[...] = m32 * mean + (1 - m32) * data.astype(np.float32)
            else:  # the momentum in the statistics' dtype
                m = np.asarray(momentum, data.dtype)
                data[...] = m * mean.astype(data.dtype) + (1 - m) * data
        if running_var is not None:
            data = running_var
            if data.dtype is _dtype.BFLOAT16:
                _bfloat16_running_update(data, var_sum / np.float32(count - 1), momentum)
            elif data.dtype in _REDUCED_FLOATS:  # in float32, from the float32 sum of squares
                m32 = np.float32(momentum)
                unbiased = var_sum / np.float32(count - 1)
                data[...] = m32 * unbiased + (1 - m32) * data.astype(np.float32)
            else:  # the momentum in the statistics' dtype, the sum in float64
                m = np.asarray(momentum, data.dtype)
                unbiased = var_sum.astype(data.dtype) / np.asarray(count - 1, data.dtype)
                data[...] = (m.astype(np.float64) * unbiased.astype(np.float64)
                             + ((1 - m) * data).astype(np.float64)).astype(data.dtype)


def _bfloat16_running_update(data: np.ndarray, value: np.ndarray, momentum: float) -> None:
    """``m * value + (1 - m) * running`` in bfloat16 arithmetic, as PyTorch's bfloat16 kernel
    updates its running statistics: the momentum, ``1 - m``, ``value``, each product and the sum
    rounded to bfloat16 (unlike its float16 kernel, which works in float32). Running means
    match PyTorch's to the bit; running variances within one bfloat16 ulp."""

    def rounded(a: Any) -> np.ndarray:
        return np.asarray(a, np.float32).astype(data.dtype).astype(np.float32)

    m = rounded(momentum)
    data[...] = rounded(m * rounded(value)) + rounded(rounded(1 - m) * data.astype(np.float32))


def _empty_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    """What PyTorch's ``batch_norm`` returns for an input with no elements (before any check):
    a copy, times the first weight, plus the first bias (so the gradient chain holds), running
    statistics left as they are (batch statistics of nothing would make them NaN)."""
    from ..copying import clone

    out = clone(input)
    if weight is not None:
        out = out * weight[0]
    if bias is not None:
        out = out + bias[0]
    return out


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dimensions.

    In training the batch statistics are used and the running ones updated in place
    (``running = (1 - momentum) * running + momentum * batch``, unbiased variance); otherwise the
    running statistics are used.
    """
    x = input._data
    if training:  # Python's _verify_batch_size, before anything else
        if x.ndim == 0:
            raise IndexError("tuple index out of range")
        size_prods = math.prod(x.shape[:1] + x.shape[2:])
        if size_prods == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size "
                f"{input.shape}"
            )
    if x.size == 0:
        return _empty_batch_norm(input, weight, bias)
    channels = x.shape[1] if x.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None:
            if t._data.size != channels:
                raise RuntimeError(
                    f"{name} should contain {channels} elements not {t._data.size}")
        elif not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._data.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t._data.size}")
    if training and (running_mean is None) != (running_var is None):
        raise ValueError(
            "running_mean and running_var must either both be None or neither be None")
    if x.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"batch_norm\" not implemented for '{scalar_name(x.dtype)}'")
    param = _param_dtype(x, (weight, bias, running_mean, running_var))
    if not training:
        empty = wrap(np.empty(0, param))
        return native_batch_norm(input, empty, wrap(np.empty(0, param)), weight, bias,
                                 running_mean, running_var, False, eps)
    mean, invstd, var_sum, batch_mean, batch_invstd = _batch_statistics(x, param, eps)
    # A float16 input is normalised with the float32 statistics (PyTorch's kernel uses the
    # saved ones, rounded to float16 when the parameters are: hundreds of ulps off the exact
    # result; see tests/test_nn_batch_norm.py).
    precise = (batch_mean, batch_invstd) if x.dtype in _REDUCED_FLOATS else None
    out = native_batch_norm(input, wrap(mean), wrap(invstd), weight, bias, running_mean,
                            running_var, True, eps, precise)
    # After the op: PyTorch saves (and packs) the running statistics before its kernel
    # updates them.
    _update_running(None if running_mean is None else running_mean._data,
                    None if running_var is None else running_var._data, batch_mean, var_sum,
                    x.size // channels, momentum)
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dimensions.

    As PyTorch computes it: batch norm of the input folded to ``(1, N * C, ...)``, with the
    per-channel weight, bias and running statistics repeated for every sample.
    """
    from ..shape import reshape

    shape = input._data.shape
    n, c = shape[0], shape[1]
    folded = reshape(input, (1, n * c) + tuple(shape[2:]))
    # (repeated as PyTorch's composite does when one requires grad: native_batch_norm refuses it)
    stats = [None if t is None else t.repeat(n) if t._requires_grad else wrap(np.tile(t._data, n))
             for t in (running_mean, running_var)]
    repeated = [None if t is None else t.repeat(n) for t in (weight, bias)]
    out = batch_norm(folded, stats[0], stats[1], repeated[0], repeated[1], use_input_stats,
                     momentum, eps)
    if use_input_stats:
        with no_grad():
            for running, update in zip((running_mean, running_var), stats, strict=True):
                if running is not None:
                    if MUTATION_WATCH:
                        clone_saved_before_write(running)  # (PyTorch's copy_)
                    running._data[...] = update._data.reshape(n, c).mean(axis=0)
                    bump_version(running)
    return reshape(out, shape)


# ----------------------------------------------------------------------------------------------
# Layer norm
#
# As PyTorch: NativeLayerNormBackward0 saves the input, weight and bias and the forward's
# outputs ``result1`` (the mean) and ``result2`` (the inverse standard deviation), in the
# input's dtype and shaped ``input.shape[:axis] + (1,) * len(normalized_shape)``, and its
# backward reads the statistics it saved (``_stats_with_grad`` below for the recorded one).


def _row_moments(x: np.ndarray, dims: tuple[int, ...], count: int,
                 eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The mean and ``1 / sqrt(var + eps)`` (biased variance) over ``dims`` (kept), with
    :func:`_row_stats`'s care: exact means of constant rows, NaN statistics for rows whose
    range overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.sum(x, axis=dims, keepdims=True) / np.asarray(count, x.dtype)
        centred = x - mean
        var = np.sum(centred * centred, axis=dims, keepdims=True) / np.asarray(count, x.dtype)
        tiny = 4 * _dtype.finfo(x.dtype).eps * np.abs(mean)
        suspect = (var > 0) & (var <= tiny * tiny)
        if suspect.any():
            mean = np.where(suspect, _exact_mean(x, dims, count, mean), mean)
            centred = x - mean
            var = np.sum(centred * centred, axis=dims, keepdims=True) / np.asarray(count,
                                                                                 x.dtype)
        rstd = 1 / np.sqrt(var + np.asarray(eps, x.dtype))
        if np.isinf(var).any():
            high = np.max(x, axis=dims, keepdims=True)
            low = np.min(x, axis=dims, keepdims=True)
            overflows = np.isinf(high - low) & np.isfinite(low) & np.isfinite(high)
            if overflows.any():
                mean = np.where(overflows, np.nan, mean)
                rstd = np.where(overflows, np.nan, rstd)
    return mean.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)


def _stats_with_grad(x: Tensor, mean: Tensor, rstd: Tensor, dims: tuple[int, ...],
                     count: int) -> tuple[Tensor, Tensor]:
    """The saved statistics, made differentiable in ``x`` as PyTorch's double backward
    differentiates them: their values are the saved ones, their derivatives
    ``dmean/dx = 1 / count`` and ``drstd/dx = -rstd ** 3 * (x - mean) / count`` at the saved
    values (each a recorded term whose value is exactly 0)."""
    from ..pointwise import mul as _mul
    from ..reduction import _sum_dim

    m = _sum_dim(x, dims, True) / count
    # (detached: group norm's saved statistics are outputs of the node being differentiated)
    saved_mean, saved_rstd = mean.detach(), rstd.detach()
    mean = saved_mean + (m - m.detach())
    # sum(((x - mean) * rstd) ** 2) * -rstd / (2 count): its derivative is the one above, and
    # the normalised deviations cannot overflow where the squared deviations would.
    scaled = (x - saved_mean) * saved_rstd
    q = _sum_dim(_mul(scaled, scaled), dims, True) * (-saved_rstd / (2 * count))
    return mean, saved_rstd + (q - q.detach())


def _layer_norm_dims(ndim: int, normalized_shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(range(ndim - len(normalized_shape), ndim))


@op("NativeLayerNormBackward0", inputs=("input", "weight", "bias"),
    saved_outputs=("result1", "result2"))
def native_layer_norm(input, normalized_shape, result1, result2, weight=None, bias=None,
                      eps=1e-5, precise=None):
    """``(x - mean) * rstd * weight + bias`` over the last ``len(normalized_shape)``
    dimensions, with the statistics ``result1``, ``result2`` computed by :func:`layer_norm`
    (``precise``: their float32 values for a float16 input, which PyTorch normalises with
    before it rounds the saved ones; arrays, or tensors when a compiled graph passes them).
    The result is row-major whatever the input's layout."""
    mean, rstd = (result1, result2) if precise is None else (_array(p) for p in precise)
    work = mean.dtype
    x = np.ascontiguousarray(input).astype(work, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        out = (x - mean) * rstd
        if weight is not None:
            out *= weight.astype(work, copy=False)
        if bias is not None:
            out += bias.astype(work, copy=False)
    return out.astype(input.dtype, copy=False)


def _layer_norm_backward(grad: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray,
                         weight: np.ndarray | None, dims: tuple[int, ...],
                         count: int) -> np.ndarray:
    """PyTorch's CPU kernel (in float32 for float16): with ``g = grad * weight``,
    ``ds = sum(g * x)``, ``db = sum(g)`` over each row, ``b = (db * mean - ds) * rstd ** 3 / N``,
    ``c = -b * mean - db * rstd / N``: ``dx = rstd * g + b * x + c``."""
    work = accumulation_dtype(x.dtype)
    g = grad.astype(work, copy=False)
    if weight is not None:
        g = g * weight.astype(work, copy=False)
    x = x.astype(work, copy=False)
    mean, a = mean.astype(work, copy=False), rstd.astype(work, copy=False)
    scale = np.asarray(1 / count, work)
    with np.errstate(invalid="ignore", over="ignore"):
        ds = np.sum(g * x, axis=dims, keepdims=True)
        db = np.sum(g, axis=dims, keepdims=True)
        b = (db * mean - ds) * a * a * a * scale
        c = -b * mean - db * a * scale
        return (a * g + b * x + c).astype(grad.dtype, copy=False)


def _layer_recompute(args: dict) -> tuple[np.ndarray, np.ndarray]:
    """Float32 row statistics of the (float32) input, for the float16 backward."""
    x, shape = args["input"], args["normalized_shape"]
    return _row_moments(x, _layer_norm_dims(x.ndim, shape), math.prod(shape), args["eps"])


@native_layer_norm.derivative("input")
@_exact_statistics_in_float16(_layer_recompute)
def _(ops, grad, input, normalized_shape, weight, bias, result1, result2, eps):
    dims = _layer_norm_dims(len(input.shape), normalized_shape)
    count = math.prod(normalized_shape)
    if type(input) is np.ndarray:
        return _layer_norm_backward(grad, input, result1, result2, weight, dims, count)
    mean, rstd = _stats_with_grad(input, result1, result2, dims, count)
    g = grad if weight is None else grad * weight
    ds = ops.sum(g * input, dims, True)
    db = ops.sum(g, dims, True)
    b = (db * mean - ds) * (rstd * rstd * rstd) / count
    c = -b * mean - db * rstd / count
    return rstd * g + b * input + c


@native_layer_norm.derivative("weight")
@_exact_statistics_in_float16(_layer_recompute)
def _(ops, grad, input, normalized_shape, weight, bias, result1, result2, eps):
    ndim = len(input.shape)
    dims = _layer_norm_dims(ndim, normalized_shape)
    batch = tuple(range(ndim - len(normalized_shape)))
    if type(input) is np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            return np.sum(grad * ((input - result1) * result2), axis=batch)
    mean, rstd = _stats_with_grad(input, result1, result2, dims, math.prod(normalized_shape))
    product = grad * ((input - mean) * rstd)
    return ops.sum(product, batch, False) if batch else product


@native_layer_norm.derivative("bias")
@derivative_in_float32
def _(ops, grad, input, normalized_shape, weight, bias, result1, result2, eps):
    batch = tuple(range(len(grad.shape) - len(normalized_shape)))
    return ops.sum(grad, batch, False) if batch else grad


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dimensions of each sample."""
    shape = tuple(int(s) for s in ([normalized_shape] if isinstance(normalized_shape, int)
                                    else normalized_shape))
    x = input._data
    x_shape = x.shape
    if not shape or x_shape[len(x_shape) - len(shape):] != shape or len(shape) > len(x_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{size_list(x_shape)}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t._data.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {size_list(t._data.shape)} and normalized_shape = {size_list(shape)}"
            )
    dims = _layer_norm_dims(x.ndim, shape)
    mean, rstd = _row_moments(_in_single(x), dims, math.prod(shape), eps)
    precise = None
    if x.dtype in _REDUCED_FLOATS:
        precise = (mean, rstd)
        with np.errstate(over="ignore"):
            mean, rstd = mean.astype(x.dtype), rstd.astype(x.dtype)
    return native_layer_norm(input, shape, wrap(mean), wrap(rstd), weight, bias, eps, precise)


# ----------------------------------------------------------------------------------------------
# Group norm


@op("NativeGroupNormBackward0", inputs=("input", "weight", "bias"),
    saved_outputs=("result1", "result2"), node_outputs=("result1", "result2"))
@half_in_float32
def native_group_norm(input, weight=None, bias=None, N=0, C=0, HxW=0, group=1, eps=1e-5,
                      result1=None, result2=None, precise=None):
    """Normalise each group of ``C / group`` channels of each sample with the statistics
    ``result1`` (mean) and ``result2`` (rstd), of shape ``(N, group)``, computed by
    :func:`group_norm` (``precise``: their float32 values for a float16 input), then scale/shift:
    as PyTorch's kernel, ``(x - mean) * rstd`` without weight and bias, else ``x * scale +
    shift`` per sample and channel with ``scale = rstd * weight``, ``shift = bias - scale *
    mean`` (fused multiply-adds)."""
    mean, rstd = (result1, result2) if precise is None else precise
    shape = input.shape
    work = input.dtype
    per_channel = (N, group, C // group if group else 0)
    mean = np.broadcast_to(mean[:, :, None], per_channel).reshape(N, C)
    scale = np.broadcast_to(rstd[:, :, None], per_channel).reshape(N, C)
    view = (N, C) + (1,) * (len(shape) - 2)
    with np.errstate(invalid="ignore", over="ignore"):
        if weight is None and bias is None:  # PyTorch's kernel: (x - mean) * rstd
            out = (input - mean.reshape(view)) * scale.reshape(view)
            return _laid_out(out.astype(input.dtype, copy=False), _channels_last(input))
        if weight is not None:
            scale = scale * weight
        shift = np.zeros((), work) if bias is None else bias
        if work == np.float64:
            shift = shift - scale * mean
            out = input * scale.reshape(view) + shift.reshape(view)
        else:
            shift = _fma(-scale, mean, shift, work)
            out = _fma(input, scale.reshape(view), shift.reshape(view), work)
    return _laid_out(out.astype(input.dtype, copy=False), _channels_last(input))


def _group_xhat(ops: Any, input: Any, group: int, eps: float, mean: Any,
                rstd: Any) -> tuple[Any, Any]:
    """The normalised input grouped as ``(N, group, -1)``, and rstd as ``(N, group, 1)``,
    from the saved statistics (made differentiable in the input when the backward is
    recorded, as PyTorch's double backward differentiates them)."""
    shape = tuple(input.shape)
    stats_shape = (shape[0], group, 1)
    if type(input) is not np.ndarray:
        grouped = ops.reshape(input, (shape[0], group, -1))
        count = math.prod(shape) // (shape[0] * group)
        mean, inv = _stats_with_grad(grouped, ops.reshape(mean, stats_shape),
                                     ops.reshape(rstd, stats_shape), (2,), count)
        return (grouped - mean) * inv, inv
    grouped = input.reshape(shape[0], group, -1)
    inv = rstd.reshape(stats_shape)
    with np.errstate(invalid="ignore", over="ignore"):
        return (grouped - mean.reshape(stats_shape)) * inv, inv


def _group_recompute(args: dict) -> tuple[np.ndarray, np.ndarray]:
    """Float32 group statistics of the (float32) input, for the float16 backward."""
    x, group = args["input"], args["group"]
    grouped = x.reshape(x.shape[0], group, -1)
    mean, rstd = _row_moments(grouped, (2,), grouped.shape[2], args["eps"])
    return mean[:, :, 0], rstd[:, :, 0]


@native_group_norm.derivative("input")
@_exact_statistics_in_float16(_group_recompute)
def _(ops, grad, input, weight, N, C, HxW, group, eps, result1, result2):
    shape = tuple(input.shape)
    xhat, inv = _group_xhat(ops, input, group, eps, result1, result2)
    g = grad if weight is None else grad * ops.reshape(weight, _channel_view(shape))
    g = ops.reshape(g, (shape[0], group, -1))
    return ops.reshape(_normalised_grad(ops, g, xhat, inv, (2,), xhat.shape[2]), shape)


@native_group_norm.derivative("weight")
@_exact_statistics_in_float16(_group_recompute)
def _(ops, grad, input, N, C, HxW, group, eps, result1, result2):
    shape = tuple(input.shape)
    xhat, _ = _group_xhat(ops, input, group, eps, result1, result2)
    return ops.sum(grad * ops.reshape(xhat, shape), _batch_dims(len(shape)), False)


@native_group_norm.op.derivative_of_node_outputs
def _(ops, grads, input, group, result1, result2):
    # d mean / dx = 1 / count, d rstd / dx = -rstd ** 3 (x - mean) / count, per group
    shape = tuple(input.shape)
    stats_shape = (shape[0], group, 1)
    grouped = ops.reshape(input, (shape[0], group, -1))
    count = grouped.shape[2]
    dmean, drstd = (ops.reshape(g, stats_shape) for g in grads)
    mean, rstd = ops.reshape(result1, stats_shape), ops.reshape(result2, stats_shape)
    total = dmean / count - drstd * rstd * rstd * rstd * (grouped - mean) / count
    return ops.reshape(total, shape)


@native_group_norm.derivative("bias")
@derivative_in_float32
def _(ops, grad):
    return ops.sum(grad, _batch_dims(len(grad.shape)), False)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels of each sample."""
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {len(shape)}"
        )
    if shape[1] % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {size_list(shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t._data.ndim != 1 or t._data.shape[0] != shape[1]):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {size_list(t._data.shape)} and input of shape "
                f"{size_list(shape)}"
            )
    x = input._data
    grouped = _in_single(x).reshape(shape[0], num_groups, -1)
    mean, rstd = _row_moments(grouped, (2,), grouped.shape[2], eps)
    mean, rstd = mean[:, :, 0], rstd[:, :, 0]
    precise = None
    if x.dtype in _REDUCED_FLOATS:
        precise = (mean, rstd)
        with np.errstate(over="ignore"):
            mean, rstd = mean.astype(x.dtype), rstd.astype(x.dtype)
    return native_group_norm(input, weight, bias, shape[0], shape[1], math.prod(shape[2:]),
                             num_groups, eps, wrap(mean), wrap(rstd), precise)
