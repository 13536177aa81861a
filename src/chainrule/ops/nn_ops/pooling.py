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
from ._common import ntuple
from .convolution import _windows

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
    "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
]


# ----------------------------------------------------------------------------------------------
# Geometry


def _out_size(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil: bool) -> int:
    """PyTorch's ``pooling_output_shape``."""
    span = dilation * (kernel - 1) + 1
    numerator = size + 2 * pad - span + (stride - 1 if ceil else 0)
    out = numerator // stride + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _stride(stride: Any, kernel: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's default: the stride is the kernel size when not given (None or empty)."""
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        return kernel
    return ntuple(stride, 2, "stride")


def _geometry(x: np.ndarray, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool) -> tuple[tuple[int, ...], ...]:
    """Normalised ``kernel, stride, padding, dilation, out_size`` with PyTorch's checks."""
    kernel = ntuple(kernel_size, 2, "kernel_size")
    stride_t = _stride(stride, kernel)
    pad = ntuple(padding, 2, "padding")
    dil = ntuple(dilation, 2, "dilation")
    if x.ndim not in (3, 4) or 0 in x.shape[-3:]:
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {kernel[0]} kW: {kernel[1]}"
        )
    if any(s <= 0 for s in stride_t):
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {stride_t[0]} dW: {stride_t[1]}"
        )
    if any(d <= 0 for d in dil):
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {dil[0]} "
            f"dilationW: {dil[1]}"
        )
    for p, k, d in zip(pad, kernel, dil, strict=True):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
    sizes = x.shape[-2:]
    out = tuple(_out_size(s, k, st, p, d, ceil_mode)
                for s, k, st, p, d in zip(sizes, kernel, stride_t, pad, dil, strict=True))
    if any(o < 1 for o in out):
        c = x.shape[-3]
        raise RuntimeError(
            f"Given input size: ({c}x{sizes[0]}x{sizes[1]}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}). Output size is too small"
        )
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


def _max_pool_indices(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
                      pad: Sequence[int], dilation: Sequence[int],
                      out: Sequence[int]) -> np.ndarray:
    """Indices into the flattened ``H * W`` plane of each window's maximum."""
    lead = x.shape[:-2]
    height, width = x.shape[-2:]
    planes = x.reshape((-1, 1) + x.shape[-2:])
    padded = _pad_last2(planes, pad, out, kernel, stride, dilation, _lowest(x.dtype))
    win = _windows(padded, kernel, stride, dilation, out)  # (R, 1, Ho, Wo, kh, kw)
    arg = _window_argmax(win[:, 0])
    ki, kj = np.divmod(arg, kernel[1])
    rows = (np.arange(out[0]) * stride[0] - pad[0])[:, None] + ki * dilation[0]
    cols = (np.arange(out[1]) * stride[1] - pad[1])[None, :] + kj * dilation[1]
    return (rows * width + cols).reshape(lead + tuple(out))


def _gather_planes(self: np.ndarray, indices: np.ndarray) -> np.ndarray:
    planes = math.prod(indices.shape[:-2])
    flat = self.reshape(planes, -1)
    picked = np.take_along_axis(flat, indices.reshape(planes, -1), axis=1)
    return picked.reshape(indices.shape)


def _scatter_planes(grad: np.ndarray, input_size: Sequence[int], indices: np.ndarray,
                    unique: bool) -> np.ndarray:
    planes = math.prod(indices.shape[:-2])
    plane = input_size[-2] * input_size[-1]
    idx = indices.reshape(planes, -1)
    g = grad.reshape(planes, -1)
    if unique:  # windows do not overlap: every input position is written at most once
        out = np.zeros((planes, plane), grad.dtype)
        np.put_along_axis(out, idx, g, axis=1)
        return out.reshape(tuple(input_size))
    flat = (idx + (np.arange(planes) * plane)[:, None]).ravel()
    summed = np.bincount(flat, weights=g.ravel(), minlength=planes * plane)
    return summed.astype(grad.dtype, copy=False).reshape(tuple(input_size))


def _declare_max_pool(node: str, name: str) -> tuple[Any, Any]:
    """The gather op (named ``node``) and its scatter adjoint, each the other's derivative.

    ``unique`` says the windows do not overlap, so the scatter can write instead of add.
    """

    def gather(self, indices, unique=False):
        """The values of ``self`` at the flat ``H * W`` ``indices`` of each plane."""
        return _gather_planes(self, indices)

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
    kernel, stride_t, pad, dil, out = _geometry(x, kernel_size, stride, padding, dilation,
                                                ceil_mode)
    indices = wrap(_max_pool_indices(x, kernel, stride_t, pad, dil, out))
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dil, strict=True)]
    unique = all(s >= span for s, span in zip(stride_t, spans, strict=True))
    return max_pool2d_gather(input, indices, unique), indices


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


def _one_d(value: Any, fill: int) -> tuple[int, int]:
    if value is None:
        return None  # type: ignore[return-value]
    v = ntuple(value, 1)[0]
    return (fill, v)


def _check_1d(name: str, input: Tensor) -> None:
    if input._data.ndim not in (2, 3):
        raise RuntimeError(
            f"{name}() Expected 2D or 3D input tensor, but got {list(input._data.shape)}"
        )


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """1-D max pooling (run as 2-D on an unsqueezed input, as PyTorch does) with indices."""
    _check_1d("max_pool1d", input)
    stride = kernel_size if stride is None or stride == () else stride
    out, indices = max_pool2d_with_indices(
        unsqueeze(input, -2), _one_d(kernel_size, 1), _one_d(stride, 1), _one_d(padding, 0),
        _one_d(dilation, 1), ceil_mode,
    )
    return squeeze(out, -2), squeeze(indices, -2)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""
    out, indices = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
    return (out, indices) if return_indices else out


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
    stride_t = _stride(stride, kernel)
    pad = ntuple(padding, 2, "padding")
    out = tuple(_out_size(s, k, st, p, 1, ceil_mode)
                for s, k, st, p in zip(x_shape[-2:], kernel, stride_t, pad, strict=True))
    return kernel, stride_t, pad, out


@op("AvgPool2DBackward0")
def avg_pool2d_op(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                  divisor_override):
    """Average of every window over the last two dimensions."""
    kernel, stride, pad, out = _avg_geometry(self.shape, kernel_size, stride, padding, ceil_mode)
    padded = _pad_last2(self, pad, out, kernel, stride, (1, 1), 0)
    total = np.zeros(self.shape[:-2] + out, self.dtype)
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        total += padded[..., i:i + stride[0] * (out[0] - 1) + 1:stride[0],
                        j:j + stride[1] * (out[1] - 1) + 1:stride[1]]
    divisor = _divisor(self.shape[-2:], kernel, stride, pad, out, count_include_pad,
                       divisor_override)
    total /= np.asarray(divisor, dtype=self.dtype)
    return total


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
    g = grad / np.asarray(divisor, dtype=grad.dtype)
    padded_shape = []
    for size, p, o, k, s in zip(input_size[-2:], pad, out, kernel, stride, strict=True):
        padded_shape.append(max(size + 2 * p, (o - 1) * s + k))
    buffer = np.zeros(tuple(input_size[:-2]) + tuple(padded_shape), grad.dtype)
    for i, j in itertools.product(range(kernel[0]), range(kernel[1])):
        buffer[..., i:i + stride[0] * (out[0] - 1) + 1:stride[0],
               j:j + stride[1] * (out[1] - 1) + 1:stride[1]] += g
    height, width = input_size[-2:]
    return np.ascontiguousarray(buffer[..., pad[0]:pad[0] + height, pad[1]:pad[1] + width])


@avg_pool2d_backward.derivative("grad")
def _(F, grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return F.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    x = input._data
    _geometry(x, kernel_size, stride, padding, 1, ceil_mode)  # checks only
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride_t, pad, _ = _avg_geometry(x.shape, kernel_size, stride, padding, ceil_mode)
    return avg_pool2d_op(input, kernel, stride_t, pad, ceil_mode, count_include_pad,
                         divisor_override)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling (2-D on an unsqueezed input, as PyTorch does)."""
    _check_1d("avg_pool1d", input)
    stride = kernel_size if stride is None or stride == () else stride
    out = avg_pool2d(unsqueeze(input, -2), _one_d(kernel_size, 1), _one_d(stride, 1),
                     _one_d(padding, 0), ceil_mode, count_include_pad)
    return squeeze(out, -2)


# ----------------------------------------------------------------------------------------------
# Adaptive pooling


def _bins(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive bins: ``[floor(i * size / out), ceil((i + 1) * size / out))``."""
    i = np.arange(out)
    return (i * size) // out, ((i + 1) * size + out - 1) // out


def _averaging_matrix(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    start, end = _bins(size, out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _output_size(output_size: Any, shape: Sequence[int]) -> tuple[int, int]:
    if isinstance(output_size, int | np.integer):
        return int(output_size), int(output_size)
    sizes = tuple(output_size)
    if len(sizes) == 1:
        sizes = sizes * 2
    return tuple(s if s is not None else shape[-2 + k]  # type: ignore[return-value]
                 for k, s in enumerate(sizes))


@op("AdaptiveAvgPool2DBackward0")
def adaptive_avg_pool2d_op(self, output_size):
    """``P_h @ x @ P_w.T``: averages over PyTorch's adaptive bins of the last two dims."""
    p_h = _averaging_matrix(self.shape[-2], output_size[0], self.dtype)
    p_w = _averaging_matrix(self.shape[-1], output_size[1], self.dtype)
    return np.matmul(np.matmul(p_h, self), p_w.T)


@adaptive_avg_pool2d_op.derivative("self")
def _(F, grad, self_shape):
    return F.adaptive_avg_pool2d_backward(grad, self_shape)


@op("AdaptiveAvgPool2DBackwardBackward0", inputs=("grad",))
def adaptive_avg_pool2d_backward(grad, input_size):
    """The adjoint of adaptive average pooling: ``P_h.T @ g @ P_w``."""
    p_h = _averaging_matrix(input_size[-2], grad.shape[-2], grad.dtype)
    p_w = _averaging_matrix(input_size[-1], grad.shape[-1], grad.dtype)
    return np.matmul(np.matmul(p_h.T, grad), p_w)


@adaptive_avg_pool2d_backward.derivative("grad")
def _(F, grad, grad_shape):
    return F.adaptive_avg_pool2d(grad, tuple(grad_shape[-2:]))


def _check_adaptive(name: str, x: np.ndarray, dims: int) -> None:
    if x.ndim not in (dims + 1, dims + 2) or 0 in x.shape[-dims:]:
        raise RuntimeError(
            f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got {list(x.shape)}"
        )


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed output size (``None`` keeps that input size)."""
    _check_adaptive("adaptive_avg_pool2d", input._data, 2)
    size = _output_size(output_size, input._data.shape)
    if size == (1, 1):
        return mean(input, (-1, -2), keepdim=True)  # what PyTorch runs (MeanBackward1)
    return adaptive_avg_pool2d_op(input, size)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """1-D adaptive average pooling (2-D on an unsqueezed input, as PyTorch does)."""
    _check_adaptive("adaptive_avg_pool1d", input._data, 1)
    size = ntuple(output_size, 1)[0]
    return squeeze(adaptive_avg_pool2d_op(unsqueeze(input, -2), (1, size)), -2)


def _adaptive_max_indices(x: np.ndarray, out: tuple[int, int]) -> np.ndarray:
    height, width = x.shape[-2:]
    h_start, h_end = _bins(height, out[0])
    w_start, w_end = _bins(width, out[1])
    kh, kw = int((h_end - h_start).max()), int((w_end - w_start).max())
    planes = x.reshape((-1,) + x.shape[-2:])
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
    _check_adaptive("adaptive_max_pool2d", input._data, 2)
    size = _output_size(output_size, input._data.shape)
    indices = wrap(_adaptive_max_indices(input._data, size))
    return adaptive_max_pool2d_gather(input, indices), indices


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed output size."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> tuple[Tensor, Tensor]:
    """1-D adaptive max pooling with indices."""
    _check_adaptive("adaptive_max_pool1d", input._data, 1)
    size = ntuple(output_size, 1)[0]
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
