"""Pooling over the last two dimensions: max (with indices), average and adaptive pooling.

No loops over pixels or samples: windows are strided views (``sliding_window_view``) or strided
slices, and the only Python loops run over the offsets inside one window (4 for a 2x2 pool).

Max pooling is split the way its gradient needs it: the window arg-max is found first (a NumPy
computation, with PyTorch's tie and NaN rules), then the op ``max_pool2d_gather`` reads the values
at those indices. Its derivative scatters the gradient back to the same indices, and the
derivative of that scatter is the gather again, so gradients of any order exist (as PyTorch's
``MaxPool2DWithIndicesBackwardBackward0``). Average pooling and its adjoint are the same kind of
pair; adaptive average pooling is two small averaging matrices, ``P_h @ x @ P_w.T``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from .._registry import op
from ..reduction import mean
from ..shape import squeeze, unsqueeze
from ._common import accumulation_dtype, ntuple, scalar_name, size_list
from .convolution import _windows

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
]


# ----------------------------------------------------------------------------------------------
# Geometry and PyTorch's checks (in PyTorch's order, with its messages)


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (rounds toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _out_size(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    """PyTorch's ``pooling_output_shape``, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _trunc_div((kernel - 1) * dilation + 1, 2):
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad}, "
            f"kernel_size={kernel} and dilation={dilation}"
        )
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil else 0)
    out = numerator // stride + 1
    if ceil and (out - 1) * stride >= size + pad:  # the last window must start inside
        out -= 1
    return out


def _pair(value: Any, name: str, op: str, what: str) -> tuple[int, ...]:
    """A pooling argument as ``(h, w)``: an int, or a sequence of one or two ints (an empty
    sequence is returned as is: an omitted stride)."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int | np.integer):
        return (int(value), int(value))
    values = tuple(int(v) for v in value)
    if len(values) not in (1, 2) and not (name == "stride" and not values):
        raise RuntimeError(f"{op}: {name} must {what}")
    return values * 2 if len(values) == 1 else values


def _pool2d_shape_check(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
                        pad: Sequence[int], dilation: Sequence[int],
                        out: Sequence[int]) -> None:
    """PyTorch's ``pool2d_shape_check``."""
    (kh, kw), (dh, dw), (ph, pw), (dlh, dlw) = kernel, stride, pad, dilation
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if dw <= 0 or dh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {dh} dW: {dw}")
    if dlh <= 0 or dlw <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {dlh} dilationW: {dlw}"
        )
    if 0 in x.shape[-3:] or x.ndim not in (3, 4):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{size_list(x.shape)}"
        )
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
            f"padH = {ph}, kW = {kw}, kH = {kh}"
        )
    if out[0] < 1 or out[1] < 1:
        c, h, w = x.shape[-3:]
        raise RuntimeError(
            f"Given input size: ({c}x{h}x{w}). Calculated output size: ({c}x{out[0]}x{out[1]}). "
            "Output size is too small"
        )


def _max_geometry(x: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                  ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    """Normalised ``kernel, stride, padding, dilation, out_size`` of ``max_pool2d``, checked as
    PyTorch's ``max_pool2d_with_indices`` checks them."""
    name = "max_pool2d"
    kernel = _pair(kernel_size, "kernel_size", name,
                   "either be a single int, or a tuple of two ints")
    stride_t = () if stride is None else _pair(
        stride, "stride", name, "either be omitted, a single int, or a tuple of two ints")
    stride_t = stride_t or kernel
    pad = _pair(padding, "padding", name, "either be a single int, or a tuple of two ints")
    dil = _pair(dilation, "dilation", name, "be either a single int, or a tuple of two ints")
    if x.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    out = tuple(_out_size(s, k, st, p, d, ceil_mode)
                for s, k, st, p, d in zip(x.shape[-2:], kernel, stride_t, pad, dil, strict=True))
    _pool2d_shape_check(x, kernel, stride_t, pad, dil, out)
    if x.dtype == np.bool_:
        raise NotImplementedError("\"max_pool2d\" not implemented for 'Bool'")
    return kernel, stride_t, pad, dil, out


def _pad_last2(x: np.ndarray, pad: Sequence[int], out: Sequence[int], kernel: Sequence[int],
               stride: Sequence[int], dilation: Sequence[int], fill: Any) -> np.ndarray:
    """``x`` padded with ``fill`` by ``pad`` on both sides, plus what ceil mode reads past it."""
    widths = []
    for size, p, o, k, s, d in zip(x.shape[-2:], pad, out, kernel, stride, dilation, strict=True):
        need = (o - 1) * s + d * (k - 1) + 1
        widths.append((p, max(need - size - p, p)))
    if not any(lo or hi for lo, hi in widths):
        return x
    shape = x.shape[:-2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[-2:], widths,
                                                                      strict=True))
    padded = np.full(shape, fill, x.dtype)
    (top, _), (left, _) = widths
    padded[..., top:top + x.shape[-2], left:left + x.shape[-1]] = x
    return padded


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _channels_last(x: np.ndarray) -> bool:
    """PyTorch's ``suggest_memory_format(x) == channels_last`` for a 4-D ``x``
    (``is_channels_last_strides_2d``: C innermost, then W, H, N; ambiguous cases are NCHW)."""
    if x.ndim != 4 or x.strides[1] == 0:
        return False
    least = 0
    for d in (1, 3, 2, 0):
        if x.shape[d] == 0 or x.strides[d] < least:
            return False
        if d == 0 and least == x.strides[1]:
            return False
        least = x.strides[d] * (x.shape[d] if x.shape[d] > 1 else 1)
    return True


def _laid_out(values: np.ndarray, channels_last: bool) -> np.ndarray:
    """``values`` in PyTorch's pooling output layout: channels-last when the input was,
    row-major otherwise."""
    if not channels_last:
        if values.strides == np.empty(values.shape, values.dtype).strides:
            return values
        # Row-major with PyTorch's strides for size-1 dimensions too (NumPy deems an array
        # contiguous whatever strides its size-1 dimensions have).
        out = np.empty(values.shape, values.dtype)
        out[...] = values
        return out
    n, c, h, w = values.shape
    out = np.empty((n, h, w, c), values.dtype).transpose(0, 3, 1, 2)
    out[...] = values
    return out


def _planes(x: np.ndarray) -> np.ndarray:
    """``x`` as ``(planes, H, W)`` (a view when possible; any number of planes, even 0)."""
    return x.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:])


# ----------------------------------------------------------------------------------------------
# Max pooling: indices, then a gather op whose adjoint is a scatter


def _window_argmax(win: np.ndarray) -> np.ndarray:
    """Flat position of each window's maximum in ``(..., kh, kw)`` windows, PyTorch's rules:
    the first maximum wins, and a NaN replaces the running maximum (so the last NaN wins)."""
    kh, kw = win.shape[-2:]
    best = win[..., 0, 0].copy()
    arg = np.zeros(best.shape, np.int64)
    is_float = win.dtype.kind == "f"
    for t, (i, j) in enumerate(itertools.product(range(kh), range(kw))):
        if t == 0:
            continue
        value = win[..., i, j]
        better = value > best
        if is_float:
            better |= np.isnan(value)
        np.copyto(best, value, where=better)
        arg[better] = t
    return arg


def _taps(out: int, stride: int, pad: int, dilation: int) -> tuple[np.ndarray, np.ndarray]:
    """Along one dimension: each window's start, and the position PyTorch's kernel starts
    from: the window's first tap that is not in the leading padding (past the input for a
    window over padding only)."""
    start = np.arange(out) * stride - pad
    skip = np.where(start < 0, -(start // dilation), 0)  # ceil(-start / dilation) taps
    return start, start + skip * dilation


def _max_pool_indices(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
                      pad: Sequence[int], dilation: Sequence[int],
                      out: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's max-pooling indices into the flattened ``H * W`` plane, and the same indices
    with -1 for windows that cover padding only (what the gather and scatter use).

    As PyTorch's CPU kernel: the running maximum starts at the lowest value with the window's
    first in-bounds tap as its index; a tap of the input (never padding) replaces it when
    greater or NaN. So a window of padding only gives ``-inf`` (the lowest integer), with the
    index PyTorch reports for it: its clamped start, which lies outside the input (or on an
    unrelated element: PyTorch's backward then adds that window's gradient there; we add none).
    """
    height, width = x.shape[-2:]
    lowest = _lowest(x.dtype)
    planes = _planes(x)[:, None]
    padded = _pad_last2(planes, pad, out, kernel, stride, dilation, lowest)
    win = _windows(padded, kernel, stride, dilation, out)[:, 0]  # (R, Ho, Wo, kh, kw)
    row_start, row0 = _taps(out[0], stride[0], pad[0], dilation[0])
    col_start, col0 = _taps(out[1], stride[1], pad[1], dilation[1])
    # Padding holds the lowest value, so it never beats the running maximum's start (a NaN
    # maximum is never beaten either): only taps of the input can move the index.
    best = np.full(win.shape[:3], lowest, x.dtype)
    arg = np.full(win.shape[:3], -1, np.int64)
    is_float = x.dtype.kind == "f"
    for t, (i, j) in enumerate(itertools.product(range(kernel[0]), range(kernel[1]))):
        value = win[..., i, j]
        better = value > best
        if is_float:
            better |= np.isnan(value)
        np.copyto(best, value, where=better)
        arg[better] = t
    ki, kj = np.divmod(arg, kernel[1])
    found = arg >= 0
    rows = np.where(found, row_start[:, None] + ki * dilation[0], row0[:, None])
    cols = np.where(found, col_start[None, :] + kj * dilation[1], col0[None, :])
    indices = rows * width + cols
    padding_only = ((row0 >= height)[:, None] | (col0 >= width)[None, :]) & ~found
    gather_at = np.where(padding_only, -1, indices) if padding_only.any() else indices
    shape = x.shape[:-2] + tuple(out)
    return indices.reshape(shape), gather_at.reshape(shape)


def _gather_planes(self: np.ndarray, indices: np.ndarray, fill: Any) -> np.ndarray:
    planes = math.prod(indices.shape[:-2])
    flat = self.reshape(planes, self.shape[-2] * self.shape[-1])
    idx = indices.reshape(planes, indices.shape[-2] * indices.shape[-1])
    outside = idx < 0
    if not outside.any():
        picked = np.take_along_axis(flat, idx, axis=1)
    else:
        picked = np.take_along_axis(flat, np.where(outside, 0, idx), axis=1)
        picked[outside] = fill
    # In the indices' layout, which is the output's (channels-last for a channels-last input).
    return _laid_out(picked.reshape(indices.shape), _channels_last(indices))


def _scatter_planes(grad: np.ndarray, input_size: Sequence[int], indices: np.ndarray,
                    unique: bool) -> np.ndarray:
    planes = math.prod(indices.shape[:-2])
    plane = input_size[-2] * input_size[-1]
    idx = indices.reshape(planes, indices.shape[-2] * indices.shape[-1])
    g = grad.reshape(idx.shape)
    outside = idx < 0  # windows over padding only send nothing back
    if outside.any():
        g = np.where(outside, 0, g)
        idx = np.where(outside, 0, idx)
        unique = False
    if unique:  # windows do not overlap: every input position is written at most once
        out = np.zeros((planes, plane), grad.dtype)
        np.put_along_axis(out, idx, g, axis=1)
        return out.reshape(tuple(input_size))
    flat = (idx + (np.arange(planes) * plane)[:, None]).ravel()
    summed = np.bincount(flat, weights=g.ravel(), minlength=planes * plane)
    return summed.astype(grad.dtype, copy=False).reshape(tuple(input_size))


def _declare_max_pool(node: str, name: str) -> tuple[Any, Any]:
    """The gather op (named ``node``) and its scatter adjoint, each the other's derivative.

    ``unique`` says the windows do not overlap, so the scatter can write instead of add;
    ``fill`` is the value of an index of -1 (a window over padding only).
    """

    def gather(self, indices, unique=False, fill=0):
        """The values of ``self`` at the flat ``H * W`` ``indices`` of each plane."""
        return _gather_planes(self, indices, fill)

    gather.__name__ = name
    gather_op = op(node, tensor_params=("indices",))(gather)

    def scatter(grad, input_size, indices, unique=False):
        """Zeros of ``input_size`` with ``grad`` added at ``indices`` (the gather's adjoint)."""
        return _scatter_planes(grad, input_size, indices, unique)

    scatter.__name__ = name + "_backward"
    scatter_op = op(node.replace("Backward0", "BackwardBackward0"), inputs=("grad",),
                    tensor_params=("indices",))(scatter)

    # Both are in the derivative namespaces (PRIMITIVES below) under these names.
    @gather_op.derivative("self")
    def _(F, grad, self_shape, indices, unique):
        return getattr(F, name + "_backward")(grad, self_shape, indices, unique)

    @scatter_op.derivative("grad")
    def _(F, grad, indices, unique):
        return getattr(F, name)(grad, indices, unique)

    return gather_op, scatter_op


max_pool2d_gather, max_pool2d_scatter = _declare_max_pool(
    "MaxPool2DWithIndicesBackward0", "max_pool2d_gather"
)
adaptive_max_pool2d_gather, adaptive_max_pool2d_scatter = _declare_max_pool(
    "AdaptiveMaxPool2DBackward0", "adaptive_max_pool2d_gather"
)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """Max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; also the flat ``H * W`` indices."""
    x = input._data
    kernel, stride_t, pad, dil, out = _max_geometry(x, kernel_size, stride, padding, dilation,
                                                    ceil_mode)
    indices, gather_at = _max_pool_indices(x, kernel, stride_t, pad, dil, out)
    channels_last = _channels_last(x)
    indices, gather_at = (_laid_out(indices, channels_last), _laid_out(gather_at, channels_last))
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dil, strict=True)]
    unique = all(s >= span for s, span in zip(stride_t, spans, strict=True))
    return (max_pool2d_gather(input, wrap(gather_at), unique, _lowest(x.dtype)),
            wrap(indices))


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """Max pooling over the last two dimensions (``return_indices`` adds the flat indices).

    Example:
        >>> import chainrule as torch
        >>> x = torch.arange(16.).view(1, 1, 4, 4)
        >>> torch.nn.functional.max_pool2d(x, 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


def _check_dims_1d(op_name: str, x: np.ndarray) -> None:
    """PyTorch's ``checkDimRange(op, self, 2, 4)`` of the 1-D pooling functions."""
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for {op_name})"
        )


def _one(value: Any, name: str, op_name: str) -> int:
    """PyTorch's ``check1d``: an int or a sequence of one int."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int | np.integer):
        return int(value)
    values = tuple(value)
    if len(values) != 1:
        raise RuntimeError(
            f"{op_name}() argument '{name}' should contain one int (got {len(values)})"
        )
    return int(values[0])


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """1-D max pooling (run as 2-D on an unsqueezed input, as PyTorch does) with indices."""
    _check_dims_1d("max_pool1d", input._data)
    if stride is None or (not isinstance(stride, int | np.integer) and len(stride) == 0):
        stride = kernel_size
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = _one(stride, "stride", "max_pool1d")
    p = _one(padding, "padding", "max_pool1d")
    d = _one(dilation, "dilation", "max_pool1d")
    out, indices = max_pool2d_with_indices(unsqueeze(input, -2), (1, k), (1, s), (0, p), (1, d),
                                           ceil_mode)
    return squeeze(out, -2), squeeze(indices, -2)


def _check_max_pool1d(x: np.ndarray, kernel_size: Any, stride: Any, padding: Any,
                      dilation: Any, ceil_mode: bool) -> None:
    """The checks of PyTorch's ``max_pool1d`` (the function without indices)."""
    if not ((x.ndim == 2 and 0 not in x.shape) or (x.ndim == 3 and 0 not in x.shape[1:])):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{size_list(x.shape)}"
        )

    def values(value: Any) -> tuple[int, ...]:
        if isinstance(value, Tensor):
            value = value.tolist()
        return (int(value),) if isinstance(value, int | np.integer) else tuple(value)

    kernel, pad, dil = values(kernel_size), values(padding), values(dilation)
    strides = () if stride is None else values(stride)
    messages = (
        (kernel, "kernel_size must be an int, list of ints or tuple of ints"),
        (strides, "stride must be None, an int, list of ints, or tuple of ints"),
        (pad, "padding must be an int, list of ints, or tuple of ints"),
        (dil, "dilation must be an int, list of ints or tuple of ints"),
    )
    for given, text in messages:
        if len(given) != 1 and not (given is strides and not given):
            raise RuntimeError(f"max_pool1d() {text} of size 1 but got size {len(given)}")
    k, p, d = kernel[0], pad[0], dil[0]
    s = strides[0] if strides else k
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(
            f"max_pool1d() padding should be at most half of kernel size, but got padding={p} "
            f"and kernel_size={k}"
        )
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    width = _out_size(x.shape[-1], k, s, p, d, ceil_mode)
    if width <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {width}")


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    x = input._data
    _check_max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)
    if x.dtype.kind != "f" and not input.requires_grad:
        # PyTorch's kernel without indices is for floating types only.
        raise NotImplementedError(
            f"\"max_pool1d_impl\" not implemented for '{scalar_name(x.dtype)}'"
        )
    out, _ = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out


# ----------------------------------------------------------------------------------------------
# Average pooling and its adjoint


def _divisor(sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int],
             pad: Sequence[int], out: Sequence[int], count_include_pad: bool,
             divisor_override: int | None) -> Any:
    if divisor_override:
        return divisor_override
    counts = []
    for size, k, s, p, o in zip(sizes, kernel, stride, pad, out, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        with_pad = end - start
        real = np.minimum(end, size) - np.maximum(start, 0)
        counts.append(with_pad if count_include_pad else real)
    return np.multiply.outer(counts[0], counts[1])


def _avg_geometry(x_shape: Sequence[int], kernel_size: Any, stride: Any, padding: Any,
                  ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    kernel = ntuple(kernel_size, 2, "kernel_size")
    stride_t = tuple(stride) if stride else kernel
    pad = ntuple(padding, 2, "padding")
    out = tuple(_out_size(s, k, st, p, 1, ceil_mode)
                for s, k, st, p in zip(x_shape[-2:], kernel, stride_t, pad, strict=True))
    return kernel, stride_t, pad, out


def _average(total: np.ndarray, divisor: Any, dtype: np.dtype) -> np.ndarray:
    """``total / divisor`` in ``dtype``: float16 divides in float32 and rounds once; integers
    divide as C++ does (toward zero)."""
    divisor = np.asarray(divisor)
    if dtype.kind == "f":
        return (total / divisor.astype(total.dtype)).astype(dtype, copy=False)
    quotient = np.abs(total) // divisor
    return np.where(total < 0, -quotient, quotient).astype(dtype, copy=False)


@op("AvgPool2DBackward0")
def avg_pool2d_op(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override):
    """Average of every window over the last two dimensions (float16 is summed in float32)."""
    kernel, stride, pad, out = _avg_geometry(self.shape, kernel_size, stride, padding, ceil_mode)
    padded = _pad_last2(self, pad, out, kernel, stride, (1, 1), 0)
    total = np.zeros(self.shape[:-2] + out, accumulation_dtype(self.dtype))
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        total += padded[..., i:i + stride[0] * (out[0] - 1) + 1:stride[0],
                        j:j + stride[1] * (out[1] - 1) + 1:stride[1]]
    divisor = _divisor(self.shape[-2:], kernel, stride, pad, out, count_include_pad,
                       divisor_override)
    return _laid_out(_average(total, divisor, self.dtype), _channels_last(self))


@avg_pool2d_op.derivative("self")
def _(F, grad, self_shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
      divisor_override):
    return F.avg_pool2d_backward(grad, self_shape, kernel_size, stride, padding, ceil_mode,
                                 count_include_pad, divisor_override)


@op("AvgPool2DBackwardBackward0", inputs=("grad",))
def avg_pool2d_backward(grad, input_size, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """The adjoint of average pooling: each output's gradient spread over its window."""
    kernel, stride, pad, out = _avg_geometry(input_size, kernel_size, stride, padding, ceil_mode)
    divisor = _divisor(input_size[-2:], kernel, stride, pad, out, count_include_pad,
                       divisor_override)
    work = accumulation_dtype(grad.dtype)
    g = grad.astype(work, copy=False) / np.asarray(divisor, dtype=work)
    padded_shape = []
    for size, p, o, k, s in zip(input_size[-2:], pad, out, kernel, stride, strict=True):
        padded_shape.append(max(size + 2 * p, (o - 1) * s + k))
    buffer = np.zeros(tuple(input_size[:-2]) + tuple(padded_shape), work)
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        buffer[..., i:i + stride[0] * (out[0] - 1) + 1:stride[0],
               j:j + stride[1] * (out[1] - 1) + 1:stride[1]] += g
    height, width = input_size[-2:]
    inner = buffer[..., pad[0]:pad[0] + height, pad[1]:pad[1] + width]
    return np.ascontiguousarray(inner, dtype=grad.dtype)


@avg_pool2d_backward.derivative("grad")
def _(F, grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return F.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def _dim_out_of_range(x: np.ndarray, dim: int) -> IndexError:
    if x.ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(
        f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], but got "
        f"{dim})"
    )


def _not_implemented(name: str, dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{name}\" not implemented for '{scalar_name(dtype)}'")


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    x = input._data
    name = "avg_pool2d"
    kernel = _pair(kernel_size, "kernel_size", name,
                   "either be a single int, or a tuple of two ints")
    stride_t = () if stride is None else _pair(
        stride, "stride", name, "either be omitted, a single int, or a tuple of two ints")
    stride_t = stride_t or kernel
    pad = _pair(padding, "padding", name, "either be a single int, or a tuple of two ints")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.ndim < 3:
        raise _dim_out_of_range(x, -3)
    out = tuple(_out_size(s, k, st, p, 1, ceil_mode)
                for s, k, st, p in zip(x.shape[-2:], kernel, stride_t, pad, strict=True))
    _pool2d_shape_check(x, kernel, stride_t, pad, (1, 1), out)
    if x.dtype.kind != "f" and x.dtype != np.int64:
        raise _not_implemented(name, x.dtype)
    return avg_pool2d_op(input, kernel, stride_t, pad, ceil_mode, count_include_pad,
                         divisor_override)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling (2-D on an unsqueezed input, as PyTorch does)."""
    _check_dims_1d("avg_pool1d", input._data)
    if stride is None or (not isinstance(stride, int | np.integer) and len(stride) == 0):
        stride = kernel_size
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = _one(stride, "stride", "avg_pool1d")
    p = _one(padding, "padding", "avg_pool1d")
    out = avg_pool2d(unsqueeze(input, -2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return squeeze(out, -2)


# ----------------------------------------------------------------------------------------------
# Adaptive pooling


def _bins(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive bins: ``[floor(i * size / out), ceil((i + 1) * size / out))``."""
    i = np.arange(out)
    return (i * size) // out, ((i + 1) * size + out - 1) // out


def _bin_matrix(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """The 0/1 matrix ``(out, size)`` of PyTorch's adaptive bins and each bin's length."""
    start, end = _bins(size, out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return inside, end - start


def _output_size(output_size: Any, shape: Sequence[int]) -> tuple[int, ...]:
    """``output_size`` as a tuple; ``None`` entries take the input's size (PyTorch's
    ``_list_with_default``)."""
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    if isinstance(output_size, int | np.integer):
        return int(output_size), int(output_size)
    sizes = tuple(output_size)
    if len(shape) <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    return tuple(int(s) if s is not None else int(d)
                 for s, d in zip(sizes, shape[len(shape) - len(sizes):], strict=True))


@op("AdaptiveAvgPool2DBackward0")
def adaptive_avg_pool2d_op(self, output_size):
    """Averages over PyTorch's adaptive bins of the last two dims: each bin summed (``B_h @ x
    @ B_w.T`` with 0/1 matrices), then divided by its height and its width, as PyTorch's
    kernel does (float16 computed in float32 and rounded once)."""
    b_h, k_h = _bin_matrix(self.shape[-2], output_size[0])
    b_w, k_w = _bin_matrix(self.shape[-1], output_size[1])
    work = accumulation_dtype(self.dtype)
    total = np.matmul(np.matmul(b_h.astype(work), self.astype(work, copy=False)),
                      b_w.T.astype(work))
    out = (total / k_h[:, None].astype(work) / k_w.astype(work)).astype(self.dtype, copy=False)
    return _laid_out(out, _channels_last(self))


@adaptive_avg_pool2d_op.derivative("self")
def _(F, grad, self_shape):
    return F.adaptive_avg_pool2d_backward(grad, self_shape)


@op("AdaptiveAvgPool2DBackwardBackward0", inputs=("grad",))
def adaptive_avg_pool2d_backward(grad, input_size):
    """The adjoint of adaptive average pooling: each output's gradient divided by its bin's
    height and width, then spread over the bin (``B_h.T @ g @ B_w``)."""
    b_h, k_h = _bin_matrix(input_size[-2], grad.shape[-2])
    b_w, k_w = _bin_matrix(input_size[-1], grad.shape[-1])
    work = accumulation_dtype(grad.dtype)
    share = grad.astype(work, copy=False) / k_h[:, None].astype(work) / k_w.astype(work)
    spread = np.matmul(np.matmul(b_h.T.astype(work), share), b_w.astype(work))
    return spread.astype(grad.dtype, copy=False)


@adaptive_avg_pool2d_backward.derivative("grad")
def _(F, grad, grad_shape):
    return F.adaptive_avg_pool2d(grad, tuple(grad_shape[-2:]))


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed output size (``None`` keeps that input size)."""
    x = input._data
    size = _output_size(output_size, x.shape)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if size[0] < 0 or size[1] < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            f"received {{{size[0]}, {size[1]}}}"
        )
    if size == (1, 1):
        out = mean(input, (-1, -2), keepdim=True)  # what PyTorch runs (MeanBackward1)
        # PyTorch then sets the result's strides (no graph node): channels-last for a
        # channels-last input, else the mean's, which are row-major there.
        out._data = _laid_out(out._data, _channels_last(x))
        return out
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {size_list(x.shape)}"
        )
    for dim in (x.ndim - 2, x.ndim - 1):
        if x.shape[dim] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {size_list(x.shape)} with dimension {dim} "
                "being empty"
            )
    if x.dtype.kind != "f":
        raise _not_implemented("adaptive_avg_pool2d", x.dtype)
    return adaptive_avg_pool2d_op(input, size)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """1-D adaptive average pooling (2-D on an unsqueezed input, as PyTorch does)."""
    _check_dims_1d("adaptive_avg_pool1d", input._data)
    size = _one(output_size, "output_size", "adaptive_avg_pool1d")
    return squeeze(adaptive_avg_pool2d(unsqueeze(input, -2), (1, size)), -2)


def _adaptive_max_indices(x: np.ndarray, out: tuple[int, int]) -> np.ndarray:
    height, width = x.shape[-2:]
    planes = _planes(x)
    if 0 in out or planes.shape[0] == 0:
        return np.zeros(x.shape[:-2] + out, np.int64)
    h_start, h_end = _bins(height, out[0])
    w_start, w_end = _bins(width, out[1])
    kh, kw = int((h_end - h_start).max()), int((w_end - w_start).max())
    padded = np.full((planes.shape[0], height + kh, width + kw), _lowest(x.dtype), x.dtype)
    padded[:, :height, :width] = planes
    win = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(1, 2))
    win = win[:, h_start[:, None], w_start[None, :]]  # (R, Ho, Wo, kh, kw), a copy
    outside = ((np.arange(kh) >= (h_end - h_start)[:, None])[:, None, :, None]
               | (np.arange(kw) >= (w_end - w_start)[:, None])[None, :, None, :])
    win[:, outside] = _lowest(x.dtype)
    arg = _window_argmax(win)
    ki, kj = np.divmod(arg, kw)
    rows = h_start[:, None] + ki
    cols = w_start[None, :] + kj
    return (rows * width + cols).reshape(x.shape[:-2] + out)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling and the flat ``H * W`` indices of the maxima."""
    x = input._data
    size = _output_size(output_size, x.shape)
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {size_list(x.shape)}"
        )
    for dim in range(1, x.ndim):
        if x.shape[dim] == 0:
            raise RuntimeError(
                "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {size_list(x.shape)} with dimension {dim} "
                "being empty"
            )
    if len(size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    if min(size) < 0:
        shape = x.shape[:-2] + size
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {size_list(shape)}"
        )
    if x.dtype.kind != "f":
        raise _not_implemented("adaptive_max_pool2d", x.dtype)
    indices = wrap(_laid_out(_adaptive_max_indices(x, size), _channels_last(x)))
    return adaptive_max_pool2d_gather(input, indices), indices


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed output size."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """1-D adaptive max pooling with indices."""
    _check_dims_1d("adaptive_max_pool1d", input._data)
    size = _one(output_size, "output_size", "adaptive_max_pool1d")
    out, indices = adaptive_max_pool2d_with_indices(unsqueeze(input, -2), (1, size))
    return squeeze(out, -2), squeeze(indices, -2)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """1-D adaptive max pooling."""
    out, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


PRIMITIVES: dict[str, Any] = {
    "max_pool2d_gather": max_pool2d_gather,
    "max_pool2d_gather_backward": max_pool2d_scatter,
    "adaptive_max_pool2d_gather": adaptive_max_pool2d_gather,
    "adaptive_max_pool2d_gather_backward": adaptive_max_pool2d_scatter,
    "avg_pool2d": avg_pool2d_op,
    "avg_pool2d_backward": avg_pool2d_backward,
    "adaptive_avg_pool2d": adaptive_avg_pool2d_op,
    "adaptive_avg_pool2d_backward": adaptive_avg_pool2d_backward,
}
