"""Pooling over the last two or three dimensions: max (with indices), average and adaptive
pooling; the 1-D functions run the 2-D ones on an unsqueezed input, as PyTorch does.

One implementation serves 2-D and 3-D (``nd``, the number of pooled dimensions). No loops over
pixels or samples: windows are strided views (``sliding_window_view``) or strided slices, and
the only Python loops run over the offsets inside one window (4 for a 2x2 pool).

Max pooling is split the way its gradient needs it: the window arg-max is found first (a NumPy
computation, with PyTorch's tie and NaN rules), then a gather op reads the values at those
indices. Its derivative scatters the gradient back to the same indices, and the derivative of
that scatter is the gather again, so gradients of any order exist (as PyTorch's
``MaxPool2DWithIndicesBackwardBackward0``). Average pooling and its adjoint are the same kind of
pair. As PyTorch's nodes, the max-pooling ones save ``self`` and the indices (``result1``), the
average-pooling ones ``self``.

Sums follow PyTorch's CPU kernels: forwards accumulate each window in order in float32 (float16
input) or the input's dtype; backwards add each output's share into the input's gradient in
the gradient's own dtype, output after output (so float16 gradients round at every addition,
as PyTorch's do).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._meta import MetaArray, meta_like
from ..._tensor import Tensor, wrap
from .._registry import op, zero_derivative
from ..reduction import mean
from ..shape import squeeze, unsqueeze
from ._common import accumulation_dtype, scalar_name, size_list
from .convolution import _windows

__all__ = [
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
]

_COUNT_WORDS = {2: "two", 3: "three"}


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


def _out_sizes(
    shape: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    dilation: Sequence[int],
    ceil: bool,
) -> tuple[int, ...]:
    nd = len(kernel)
    return tuple(
        _out_size(s, k, st, p, d, ceil)
        for s, k, st, p, d in zip(shape[-nd:], kernel, stride, pad, dilation, strict=True)
    )


def _sizes(value: Any, nd: int, name: str, op_name: str, what: str) -> tuple[int, ...]:
    """A pooling argument as ``nd`` ints: an int, or a sequence of one or ``nd`` ints (an
    empty sequence is returned as is: an omitted stride)."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int | np.integer):
        return (int(value),) * nd
    values = tuple(int(v) for v in value)
    if len(values) not in (1, nd) and not (name == "stride" and not values):
        raise RuntimeError(f"{op_name}: {name} must {what}")
    return values * nd if len(values) == 1 else values


def _pool2d_shape_check(
    x: np.ndarray,
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
) -> None:
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


def _pool3d_shape_check(
    x: np.ndarray,
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
    fn_name: str,
    check_input_size: bool = False,
) -> None:
    """PyTorch's ``pool3d_shape_check``."""
    (kt, kh, kw), (dt, dh, dw), (pt, ph, pw), (dlt, dlh, dlw) = kernel, stride, pad, dilation
    if kt <= 0 or kw <= 0 or kh <= 0:
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} kW: {kw}"
        )
    if dt <= 0 or dw <= 0 or dh <= 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dT: {dt} dH: {dh} dW: {dw}"
        )
    if dlt <= 0 or dlw <= 0 or dlh <= 0:
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationT: {dlt} dilationH: {dlh} "
            f"dilationW: {dlw}"
        )
    for i, size in enumerate(x.shape):
        if not (x.ndim == 5 and i == 0) and size <= 0:
            # (PyTorch prints the dimension's length, not its index)
            raise RuntimeError(
                f"{fn_name}: Expected input's non-batch dimensions to have positive length, but "
                f"input has a shape of {size_list(x.shape)} and non-batch dimension {size} has "
                "length zero!"
            )
    t, h, w = x.shape[-3:]
    if check_input_size and not (t >= kt and h >= kh and w >= kw):
        raise RuntimeError(
            f"input image (T: {t} H: {h} W: {w}) smaller than kernel size (kT: {kt} kH: {kh} "
            f"kW: {kw})"
        )
    if not (kt // 2 >= pt and kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError(
            f"pad should be smaller than or equal to half of kernel size, but got kT: {kt} "
            f"kW: {kw} kH: {kh} padT: {pt} padW: {pw} padH: {ph}"
        )
    if min(out) < 1:
        c = x.shape[-4]
        raise RuntimeError(
            f"Given input size: ({c}x{t}x{h}x{w}). Calculated output size: "
            f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small"
        )


def _pad_spatial(
    x: np.ndarray,
    pad: Sequence[int],
    out: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    fill: Any,
) -> np.ndarray:
    """``x`` padded with ``fill`` by ``pad`` on both sides of its last ``len(pad)`` dimensions,
    plus what ceil mode reads past it."""
    nd = len(pad)
    widths = []
    for size, p, o, k, s, d in zip(x.shape[-nd:], pad, out, kernel, stride, dilation, strict=True):
        need = (o - 1) * s + d * (k - 1) + 1
        widths.append((p, max(need - size - p, p)))
    if not any(lo or hi for lo, hi in widths):
        return x
    shape = x.shape[:-nd] + tuple(
        s + lo + hi for s, (lo, hi) in zip(x.shape[-nd:], widths, strict=True)
    )
    padded = np.full(shape, fill, x.dtype)
    inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[-nd:], widths, strict=True))
    padded[(Ellipsis,) + inner] = x
    return padded


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind in "fV" else np.iinfo(dtype).min


def _channels_last(x: np.ndarray) -> bool:
    """PyTorch's ``suggest_memory_format(x)`` is channels-last for a 4-D ``x`` (channels_last)
    or a 5-D one (channels_last_3d): C innermost, then the spatial dimensions from the last,
    then N (``is_channels_last_strides_2d/3d``; ambiguous cases are not)."""
    if x.ndim not in (4, 5) or x.strides[1] == 0:
        return False
    least = 0
    for d in (1, *range(x.ndim - 1, 1, -1), 0):
        if x.shape[d] == 0 or x.strides[d] < least:
            return False
        if d == 0 and least == x.strides[1]:
            return False
        least = x.strides[d] * (x.shape[d] if x.shape[d] > 1 else 1)
    return True


def _laid_out(values: np.ndarray, channels_last: bool) -> np.ndarray:
    """``values`` in PyTorch's layout for a pooling output: channels-last when asked (the
    input was), row-major otherwise."""
    if not channels_last:
        if values.strides == np.empty(values.shape, values.dtype).strides:
            return values
        # Row-major with PyTorch's strides for size-1 dimensions too (NumPy deems an array
        # contiguous whatever strides its size-1 dimensions have).
        out = np.empty(values.shape, values.dtype)
        out[...] = values
        return out
    order = (0, *range(2, values.ndim), 1)
    out = np.empty(tuple(values.shape[d] for d in order), values.dtype)
    out = out.transpose(np.argsort(order))
    out[...] = values
    return out


def _planes(x: np.ndarray, nd: int) -> np.ndarray:
    """``x`` as ``(planes, *spatial)`` (a view when possible; any number of planes, even 0)."""
    return x.reshape((math.prod(x.shape[:-nd]),) + x.shape[-nd:])


def _flat_index(coordinates: Sequence[np.ndarray], sizes: Sequence[int]) -> np.ndarray:
    """Row-major flat index of broadcastable coordinate arrays into ``sizes``."""
    index = coordinates[0]
    for c, size in zip(coordinates[1:], sizes[1:], strict=True):
        index = index * size + c
    return index


def _along(axis: int, nd: int, values: np.ndarray) -> np.ndarray:
    """A 1-D array shaped to broadcast along spatial ``axis`` of ``nd``."""
    shape = [1] * nd
    shape[axis] = -1
    return values.reshape(shape)


# ----------------------------------------------------------------------------------------------
# Max pooling: indices, then a gather op whose adjoint is a scatter


class _ScatterPlan:
    """How a max-pooling gradient goes back: ``unique`` says the windows do not overlap (the
    scatter can write instead of add); ``outside`` marks the windows over padding only (None
    when there are none), which send nothing back."""

    __slots__ = ("unique", "outside")

    def __init__(self, unique: bool, outside: np.ndarray | None) -> None:
        self.unique = unique
        self.outside = outside

    def __repr__(self) -> str:
        return f"_ScatterPlan(unique={self.unique})"


_NO_PLAN = _ScatterPlan(False, None)


def _window_argmax(win: np.ndarray, nd: int) -> np.ndarray:
    """Flat position of each window's maximum in ``(..., *kernel)`` windows, PyTorch's rules:
    the first maximum wins, and a NaN replaces the running maximum (so the last NaN wins)."""
    kernel = win.shape[-nd:]
    best = win[(Ellipsis,) + (0,) * nd].copy()
    arg = np.zeros(best.shape, np.int64)
    is_float = win.dtype.kind in "fV"
    for t, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        if t == 0:
            continue
        value = win[(Ellipsis,) + offset]
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


def _max_pool_indices(
    x: np.ndarray,
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
) -> tuple[np.ndarray, np.ndarray | None]:
    """PyTorch's max-pooling indices into the flattened spatial dimensions, and the mask of
    windows that cover padding only (None when there are none).

    As PyTorch's CPU kernel: the running maximum starts at the lowest value with the window's
    first in-bounds tap as its index; a tap of the input (never padding) replaces it when
    greater or NaN. So a window of padding only gives ``-inf`` (the lowest integer), with the
    index PyTorch reports for it: its clamped start, which lies outside the input (or on an
    unrelated element: PyTorch's backward then adds that window's gradient there; we add none).
    """
    nd = len(kernel)
    sizes = x.shape[-nd:]
    lowest = _lowest(x.dtype)
    planes = _planes(x, nd)[:, None]
    padded = _pad_spatial(planes, pad, out, kernel, stride, dilation, lowest)
    win = _windows(padded, kernel, stride, dilation, out)[:, 0]  # (R, *out, *kernel)
    # Padding holds the lowest value, so it never beats the running maximum's start (a NaN
    # maximum is never beaten either): only taps of the input can move the index.
    best = np.full(win.shape[: 1 + nd], lowest, x.dtype)
    arg = np.full(win.shape[: 1 + nd], -1, np.int64)
    is_float = x.dtype.kind in "fV"
    for t, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        value = win[(Ellipsis,) + offset]
        better = value > best
        if is_float:
            better |= np.isnan(value)
        np.copyto(best, value, where=better)
        arg[better] = t
    found = arg >= 0
    taps = np.unravel_index(np.maximum(arg, 0), tuple(kernel))
    coordinates = []
    padding_only = np.zeros((1,) * nd, bool)
    for axis in range(nd):
        start, first = _taps(out[axis], stride[axis], pad[axis], dilation[axis])
        start, first = _along(axis, nd, start), _along(axis, nd, first)
        coordinates.append(np.where(found, start + taps[axis] * dilation[axis], first))
        padding_only = padding_only | (first >= sizes[axis])
    indices = _flat_index(coordinates, sizes)
    shape = x.shape[:-nd] + tuple(out)
    outside = padding_only & ~found
    return indices.reshape(shape), outside.reshape(shape) if outside.any() else None


def _gather_planes(
    self: np.ndarray, indices: np.ndarray, plan: _ScatterPlan, fill: Any, nd: int
) -> np.ndarray:
    """The values of ``self`` at the flat spatial ``indices`` of each plane (``fill`` for the
    windows over padding only), in the indices' layout (channels-last for such an input)."""
    planes = math.prod(indices.shape[:-nd])
    flat = self.reshape(planes, math.prod(self.shape[-nd:]))
    idx = indices.reshape(planes, math.prod(indices.shape[-nd:]))
    outside = plan.outside
    if outside is None:
        picked = np.take_along_axis(flat, idx, axis=1)
    else:
        outside = outside.reshape(idx.shape)
        picked = np.take_along_axis(flat, np.where(outside, 0, idx), axis=1)
        picked[outside] = fill
    return _laid_out(picked.reshape(indices.shape), _channels_last(indices))


def _scatter_planes(
    grad: np.ndarray, input_size: Sequence[int], indices: np.ndarray, plan: _ScatterPlan, nd: int
) -> np.ndarray:
    """Zeros of ``input_size`` with ``grad`` added at ``indices``: output after output, in the
    gradient's dtype (PyTorch's ``grad_input[index] += grad_output``), in the indices' layout."""
    planes = math.prod(indices.shape[:-nd])
    plane = math.prod(input_size[-nd:])
    idx = np.ascontiguousarray(indices).reshape(planes, math.prod(indices.shape[-nd:]))
    g = np.ascontiguousarray(grad).reshape(idx.shape)
    unique = plan.unique
    if plan.outside is not None:  # windows over padding only send nothing back
        keep = ~np.ascontiguousarray(plan.outside).reshape(idx.shape)
        g = np.where(keep, g, 0).astype(grad.dtype, copy=False)
        idx = np.where(keep, idx, 0)
        unique = False
    out = np.zeros((planes, plane), grad.dtype)
    if unique:  # windows do not overlap: every input position is written at most once
        np.put_along_axis(out, idx, g, axis=1)
    else:
        np.add.at(out.reshape(-1), (idx + (np.arange(planes) * plane)[:, None]).ravel(), g.ravel())
    return _laid_out(out.reshape(tuple(input_size)), _channels_last(indices))


def _refuse_empty_grad(name: str, shape: tuple[int, ...]) -> None:
    """PyTorch's refusal, in the backward of an adaptive pooling, of an empty output (size 0
    in a dimension after the first; the forward accepts it)."""
    for dim in range(1, len(shape)):
        if shape[dim] == 0:
            raise RuntimeError(
                f"{name}_backward(): Expected grad_output to have non-zero size for non-batch "
                f"dimensions, but grad_output has sizes {size_list(shape)} with dimension {dim} "
                "being empty"
            )


def _declare_max_pool(node: str, name: str, nd: int) -> tuple[Any, Any]:
    """The gather op (named ``node``) and its scatter adjoint, each the other's derivative.
    As PyTorch's node, the gather saves ``self`` (its backward reads only the shape) and the
    indices ``result1``."""

    def gather(self, result1, plan=_NO_PLAN, fill=0):
        """The values of ``self`` at the flat spatial indices ``result1`` of each plane."""
        return _gather_planes(self, result1, plan, fill, nd)

    gather.__name__ = name
    gather_op = op(node, saved_outputs=("result1",))(gather)

    def scatter(grad, self, indices, plan=_NO_PLAN):
        """Zeros of ``self``'s shape with ``grad`` added at ``indices`` (the gather's
        adjoint). As PyTorch's ``max_pool2d_with_indices_backward``, it takes ``self``
        (reading only its shape): under ``create_graph`` the gradient is connected to it."""
        if node.startswith("Adaptive"):
            _refuse_empty_grad(f"adaptive_max_pool{nd}d", grad.shape)
        return _scatter_planes(grad, self.shape, indices, plan, nd)

    scatter.__name__ = name + "_backward"
    scatter_op = op(
        node.replace("Backward0", "BackwardBackward0"),
        inputs=("grad", "self"),
        tensor_params=("indices",),
    )(scatter)

    # Both are in the derivative namespaces (PRIMITIVES below) under these names.
    @gather_op.derivative("self")
    def _(ops, grad, self, result1, plan):
        return getattr(ops, name + "_backward")(grad, self, result1, plan)

    @scatter_op.derivative("grad")
    def _(ops, grad, indices, plan):
        return getattr(ops, name)(grad, indices, plan)

    scatter_op.derivative("self")(zero_derivative)

    return gather_op, scatter_op


max_pool2d_gather, max_pool2d_scatter = _declare_max_pool(
    "MaxPool2DWithIndicesBackward0", "max_pool2d_gather", 2
)
max_pool3d_gather, max_pool3d_scatter = _declare_max_pool(
    "MaxPool3DWithIndicesBackward0", "max_pool3d_gather", 3
)
adaptive_max_pool2d_gather, adaptive_max_pool2d_scatter = _declare_max_pool(
    "AdaptiveMaxPool2DBackward0", "adaptive_max_pool2d_gather", 2
)
adaptive_max_pool3d_gather, adaptive_max_pool3d_scatter = _declare_max_pool(
    "AdaptiveMaxPool3DBackward0", "adaptive_max_pool3d_gather", 3
)
_MAX_GATHER = {2: max_pool2d_gather, 3: max_pool3d_gather}
_ADAPTIVE_MAX_GATHER = {2: adaptive_max_pool2d_gather, 3: adaptive_max_pool3d_gather}


def _max_pool_geometry(
    x: np.ndarray,
    nd: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> tuple[tuple[int, ...], ...]:
    """Normalised ``kernel, stride, padding, dilation, out_size`` of ``max_pool{nd}d``,
    checked as PyTorch's ``max_pool{nd}d_with_indices`` checks them."""
    name = f"max_pool{nd}d"
    count = _COUNT_WORDS[nd]
    kernel = _sizes(
        kernel_size, nd, "kernel_size", name, f"either be a single int, or a tuple of {count} ints"
    )
    stride_t = (
        ()
        if stride is None
        else _sizes(
            stride,
            nd,
            "stride",
            name,
            f"either be omitted, a single int, or a tuple of {count} ints",
        )
    )
    stride_t = stride_t or kernel
    pad = _sizes(
        padding, nd, "padding", name, f"either be a single int, or a tuple of {count} ints"
    )
    dil = _sizes(
        dilation, nd, "dilation", name, f"be either a single int, or a tuple of {count} ints"
    )
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
        )
    out = _out_sizes(x.shape, kernel, stride_t, pad, dil, ceil_mode)
    if nd == 2:
        _pool2d_shape_check(x, kernel, stride_t, pad, dil, out)
    else:
        _pool3d_shape_check(
            x, kernel, stride_t, pad, dil, out, "max_pool3d_with_indices_out_cpu_template()"
        )
    if x.dtype == np.bool_:
        raise NotImplementedError(f"\"max_pool{nd}d\" not implemented for 'Bool'")
    return kernel, stride_t, pad, dil, out


def _max_pool_with_indices(
    input: Tensor,
    nd: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
) -> tuple[Tensor, Tensor]:
    x = input._data
    kernel, stride_t, pad, dil, out = _max_pool_geometry(
        x, nd, kernel_size, stride, padding, dilation, ceil_mode
    )
    indices, outside = _max_pool_indices(x, kernel, stride_t, pad, dil, out)
    channels_last = _channels_last(x)
    indices = _laid_out(indices, channels_last)
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dil, strict=True)]
    unique = all(s >= span for s, span in zip(stride_t, spans, strict=True))
    plan = _ScatterPlan(unique, outside)
    # (of a meta input: the indices are a meta tensor too, computed on its stand-in zeros)
    result1 = wrap(meta_like(indices) if type(x) is MetaArray else indices)
    return _MAX_GATHER[nd](input, result1, plan, _lowest(x.dtype)), result1


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """Max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; also the flat ``H * W`` indices."""
    return _max_pool_with_indices(input, 2, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """Max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``; also the flat ``D * H * W``
    indices."""
    return _max_pool_with_indices(input, 3, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max pooling over the last two dimensions (``return_indices`` adds the flat indices).

    Example:
        >>> import chainrule as torch
        >>> x = torch.arange(16.).view(1, 1, 4, 4)
        >>> torch.nn.functional.max_pool2d(x, 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    out, indices = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, indices) if return_indices else out


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """Max pooling over the last three dimensions (``return_indices`` adds the flat indices)."""
    out, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
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


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """1-D max pooling (run as 2-D on an unsqueezed input, as PyTorch does) with indices."""
    _check_dims_1d("max_pool1d", input._data)
    if stride is None or (not isinstance(stride, int | np.integer) and len(stride) == 0):
        stride = kernel_size
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = _one(stride, "stride", "max_pool1d")
    p = _one(padding, "padding", "max_pool1d")
    d = _one(dilation, "dilation", "max_pool1d")
    out, indices = max_pool2d_with_indices(
        unsqueeze(input, -2), (1, k), (1, s), (0, p), (1, d), ceil_mode
    )
    return squeeze(out, -2), squeeze(indices, -2)


def _check_max_pool1d(
    x: np.ndarray, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> None:
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


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    x = input._data
    _check_max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode)
    if x.dtype.kind not in "fV" and not input.requires_grad:
        # PyTorch's kernel without indices is for floating types only.
        raise NotImplementedError(
            f"\"max_pool1d_impl\" not implemented for '{scalar_name(x.dtype)}'"
        )
    out, _ = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out


# ----------------------------------------------------------------------------------------------
# Average pooling and its adjoint


def _divisor(
    sizes: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    out: Sequence[int],
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:
    """Each window's divisor: its size within the padded input, or within the input alone
    (``count_include_pad=False``), or ``divisor_override``."""
    if divisor_override:
        return divisor_override
    divisor: Any = None
    for size, k, s, p, o in zip(sizes, kernel, stride, pad, out, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        count = end - start if count_include_pad else np.minimum(end, size) - np.maximum(start, 0)
        divisor = count if divisor is None else np.multiply.outer(divisor, count)
    return divisor


def _avg_geometry(
    x_shape: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    ceil_mode: bool,
) -> tuple[tuple[int, ...], ...]:
    stride = tuple(stride) or tuple(kernel)
    out = _out_sizes(x_shape, kernel, stride, pad, (1,) * len(kernel), ceil_mode)
    return tuple(kernel), stride, tuple(pad), out


def _average(total: np.ndarray, divisor: Any, dtype: np.dtype) -> np.ndarray:
    """``total / divisor`` in ``dtype``: float16 divides in float32 and rounds once; integers
    divide as C++ does (toward zero)."""
    divisor = np.asarray(divisor)
    if dtype.kind in "fV":
        return (total / divisor.astype(total.dtype)).astype(dtype, copy=False)
    quotient = np.abs(total) // divisor
    return np.where(total < 0, -quotient, quotient).astype(dtype, copy=False)


def _strided(offset: Sequence[int], stride: Sequence[int], out: Sequence[int]) -> tuple:
    """The slices picking tap ``offset`` of every window."""
    return (Ellipsis,) + tuple(
        slice(t, t + s * (o - 1) + 1, s) for t, s, o in zip(offset, stride, out, strict=True)
    )


def _declare_avg_pool(nd: int) -> tuple[Any, Any]:
    """``avg_pool{nd}d`` (node ``AvgPool{nd}DBackward0``, saving ``self``) and its adjoint."""
    name = f"avg_pool{nd}d"

    def forward(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        """Average of every window over the last dimensions: each window summed tap after tap
        (float16 in float32), then divided."""
        kernel, stride, pad, out = _avg_geometry(
            self.shape, kernel_size, stride, padding, ceil_mode
        )
        padded = _pad_spatial(self, pad, out, kernel, stride, (1,) * nd, 0)
        total = np.zeros(self.shape[:-nd] + out, accumulation_dtype(self.dtype))
        for offset in itertools.product(*(range(k) for k in kernel)):
            total += padded[_strided(offset, stride, out)]
        divisor = _divisor(
            self.shape[-nd:], kernel, stride, pad, out, count_include_pad, divisor_override
        )
        # PyTorch keeps a channels-last layout in 2-D; its 3-D output is row-major.
        return _laid_out(_average(total, divisor, self.dtype), nd == 2 and _channels_last(self))

    forward.__name__ = name
    forward_op = op(f"AvgPool{nd}DBackward0", half_native=True)(forward)

    def backward(
        grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    ):
        """The adjoint of average pooling, as PyTorch's kernel: each output's gradient divided
        by its divisor (in the gradient's dtype), then added to every input of its window,
        output after output, in the gradient's dtype. It takes ``self`` (reading only its
        shape), as PyTorch's ``avg_pool2d_backward``."""
        input_size = self.shape
        kernel, stride, pad, out = _avg_geometry(
            input_size, kernel_size, stride, padding, ceil_mode
        )
        divisor = _divisor(
            input_size[-nd:], kernel, stride, pad, out, count_include_pad, divisor_override
        )
        share = grad / np.asarray(divisor).astype(grad.dtype)
        padded_shape = tuple(
            max(size + 2 * p, (o - 1) * s + k)
            for size, p, o, k, s in zip(input_size[-nd:], pad, out, kernel, stride, strict=True)
        )
        buffer = np.zeros(tuple(input_size[:-nd]) + padded_shape, grad.dtype)
        # An input receives from the windows holding it in the order of their outputs, which
        # is the order of decreasing taps.
        for offset in itertools.product(*(range(k - 1, -1, -1) for k in kernel)):
            buffer[_strided(offset, stride, out)] += share
        inner = (Ellipsis,) + tuple(
            slice(p, p + size) for p, size in zip(pad, input_size[-nd:], strict=True)
        )
        return np.ascontiguousarray(buffer[inner])

    backward.__name__ = name + "_backward"
    backward_op = op(f"AvgPool{nd}DBackwardBackward0", inputs=("grad", "self"), half_native=True)(
        backward
    )
    backward_op.derivative("self")(zero_derivative)

    @forward_op.derivative("self")
    def _(
        ops,
        grad,
        self,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    ):
        return getattr(ops, name + "_backward")(
            grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        )

    @backward_op.derivative("grad")
    def _(ops, grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
        return getattr(ops, name)(
            grad, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        )

    return forward_op, backward_op


avg_pool2d_op, avg_pool2d_backward = _declare_avg_pool(2)
avg_pool3d_op, avg_pool3d_backward = _declare_avg_pool(3)


def _dim_out_of_range(x: np.ndarray, dim: int) -> IndexError:
    if x.ndim == 0:
        return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return IndexError(
        f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], but got "
        f"{dim})"
    )


def _not_implemented(name: str, dtype: np.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{name}\" not implemented for '{scalar_name(dtype)}'")


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling over ``(N, C, H, W)`` or ``(C, H, W)``."""
    x = input._data
    name = "avg_pool2d"
    kernel = _sizes(
        kernel_size, 2, "kernel_size", name, "either be a single int, or a tuple of two ints"
    )
    stride_t = (
        ()
        if stride is None
        else _sizes(
            stride, 2, "stride", name, "either be omitted, a single int, or a tuple of two ints"
        )
    )
    stride_t = stride_t or kernel
    pad = _sizes(padding, 2, "padding", name, "either be a single int, or a tuple of two ints")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.ndim < 3:
        raise _dim_out_of_range(x, -3)
    out = _out_sizes(x.shape, kernel, stride_t, pad, (1, 1), ceil_mode)
    _pool2d_shape_check(x, kernel, stride_t, pad, (1, 1), out)
    if x.dtype.kind not in "fV" and x.dtype != np.int64:
        raise _not_implemented(name, x.dtype)
    return avg_pool2d_op(
        input, kernel, stride_t, pad, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """Average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``."""
    x = input._data
    name = "avg_pool3d"
    kernel = _sizes(
        kernel_size, 3, "kernel_size", name, "be a single int, or a tuple of three ints"
    )
    stride_t = (
        ()
        if stride is None
        else _sizes(stride, 3, "stride", name, "be omitted, a single int, or a tuple of three ints")
    )
    stride_t = stride_t or kernel
    pad = _sizes(padding, 3, "padding", name, "be a single int, or a tuple of three ints")
    if x.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = _out_sizes(x.shape, kernel, stride_t, pad, (1, 1, 1), ceil_mode)
    _pool3d_shape_check(
        x, kernel, stride_t, pad, (1, 1, 1), out, "avg_pool3d()", check_input_size=True
    )
    if x.dtype not in (np.float32, np.float64, np.int64):
        raise _not_implemented("avg_pool3d_out_frame", x.dtype)
    return avg_pool3d_op(
        input, kernel, stride_t, pad, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
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


def _bin_taps(sizes: Sequence[int], out: Sequence[int]) -> tuple[list, np.ndarray, tuple]:
    """For every output of an adaptive pooling and every tap of the longest bin (row-major in
    both): the tap's coordinates (clipped inside the input), whether it lies in the output's
    bin, and the longest bin's shape. Coordinates are shaped ``(*out, *longest)``."""
    nd = len(sizes)
    starts, lengths = [], []
    for size, o in zip(sizes, out, strict=True):
        start, end = _bins(size, o)
        starts.append(start)
        lengths.append(end - start)
    longest = tuple(int(length.max()) if length.size else 1 for length in lengths)
    coordinates = []
    inside = np.ones((1,) * (2 * nd), bool)
    for axis in range(nd):
        shape = [1] * (2 * nd)
        shape[axis] = -1
        tap_shape = [1] * (2 * nd)
        tap_shape[nd + axis] = -1
        start = starts[axis].reshape(shape)
        taps = np.arange(longest[axis]).reshape(tap_shape)
        coordinates.append(np.minimum(start + taps, sizes[axis] - 1))
        inside = inside & (taps < lengths[axis].reshape(shape))
    return coordinates, inside, longest


def _bin_lengths(sizes: Sequence[int], out: Sequence[int]) -> list[np.ndarray]:
    nd = len(sizes)
    result = []
    for axis, (size, o) in enumerate(zip(sizes, out, strict=True)):
        start, end = _bins(size, o)
        result.append(_along(axis, nd, end - start))
    return result


def _output_size(output_size: Any, shape: Sequence[int], nd: int) -> tuple[int, ...]:
    """``output_size`` as a tuple; ``None`` entries take the input's size (PyTorch's
    ``_list_with_default``)."""
    if isinstance(output_size, Tensor):
        output_size = output_size.tolist()
    if isinstance(output_size, int | np.integer):
        return (int(output_size),) * nd
    sizes = tuple(output_size)
    if len(shape) <= len(sizes):
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    return tuple(
        int(s) if s is not None else int(d)
        for s, d in zip(sizes, shape[len(shape) - len(sizes) :], strict=True)
    )


def _declare_adaptive_avg_pool(nd: int) -> tuple[Any, Any]:
    """``adaptive_avg_pool{nd}d`` (node ``AdaptiveAvgPool{nd}DBackward0``, saving ``self``) and
    its adjoint."""
    name = f"adaptive_avg_pool{nd}d"

    def forward(self, output_size):
        """Averages over PyTorch's adaptive bins, as its kernel: each bin summed in order
        (float16 in float32 in 2-D, in float16 in 3-D), then divided by the bin's length
        along each dimension in turn."""
        out = tuple(output_size)
        sizes = self.shape[-nd:]
        work = accumulation_dtype(self.dtype) if nd == 2 else self.dtype
        planes = _planes(self, nd).astype(work, copy=False)
        coordinates, inside, longest = _bin_taps(sizes, out)
        full = out + longest
        coordinates = [np.broadcast_to(c, full) for c in coordinates]
        inside = np.broadcast_to(inside, full)
        total = np.zeros((planes.shape[0],) + out, work)
        for tap in itertools.product(*(range(k) for k in longest)):
            at = (Ellipsis,) + tap
            values = planes[(slice(None),) + tuple(c[at] for c in coordinates)]
            mask = inside[at]
            total += values if mask.all() else np.where(mask, values, 0)
        for length in _bin_lengths(sizes, out):
            total = total / length.astype(work)
        result = total.astype(self.dtype, copy=False).reshape(self.shape[:-nd] + out)
        # PyTorch keeps a channels-last layout in 2-D; its 3-D output is row-major.
        return _laid_out(result, nd == 2 and _channels_last(self))

    forward.__name__ = name
    forward_op = op(f"AdaptiveAvgPool{nd}DBackward0", half_native=True)(forward)

    def backward(grad, self):
        """The adjoint, as PyTorch's kernel: each output's gradient divided by its bin's
        lengths (in the gradient's dtype), then added to every input of its bin, output after
        output, in the gradient's dtype. It takes ``self`` (reading only its shape), as
        PyTorch's ``adaptive_avg_pool2d_backward``."""
        _refuse_empty_grad(name, grad.shape)
        input_size = self.shape
        sizes = tuple(input_size[-nd:])
        out = grad.shape[-nd:]
        share = grad
        for length in _bin_lengths(sizes, out):
            share = share / length.astype(grad.dtype)
        coordinates, inside, longest = _bin_taps(sizes, out)
        flat = _flat_index(coordinates, sizes)  # (*out, *longest)
        plane = math.prod(sizes)
        # Taps outside their bin go to a dump slot past the plane.
        flat = np.where(inside, flat, plane)
        planes = math.prod(input_size[:-nd])
        target = np.zeros((planes, plane + 1), grad.dtype)
        rows = np.arange(planes).reshape((planes,) + (1,) * (2 * nd)) * (plane + 1)
        shares = np.ascontiguousarray(share).reshape((planes,) + out + (1,) * nd)
        values = np.broadcast_to(shares, (planes,) + out + longest)
        np.add.at(target.reshape(-1), (rows + flat).ravel(), values.ravel())
        return target[:, :plane].reshape(tuple(input_size))

    backward.__name__ = name + "_backward"
    backward_op = op(
        f"AdaptiveAvgPool{nd}DBackwardBackward0", inputs=("grad", "self"), half_native=True
    )(backward)
    backward_op.derivative("self")(zero_derivative)

    @forward_op.derivative("self")
    def _(ops, grad, self):
        return getattr(ops, name + "_backward")(grad, self)

    @backward_op.derivative("grad")
    def _(ops, grad, grad_shape):
        return getattr(ops, name)(grad, tuple(grad_shape[-nd:]))

    return forward_op, backward_op


adaptive_avg_pool2d_op, adaptive_avg_pool2d_backward = _declare_adaptive_avg_pool(2)
adaptive_avg_pool3d_op, adaptive_avg_pool3d_backward = _declare_adaptive_avg_pool(3)


@op("AsStridedBackward1")
def _restride(self, size, stride, storage_offset=None):
    """``self`` (of shape ``size``, every spatial size 1) with the channels-last strides
    ``stride``: PyTorch's in-place ``as_strided_`` on the mean of an adaptive pooling to 1."""
    return _laid_out(self, True)


@_restride.derivative("self")
def _(ops, grad, size, stride, storage_offset):
    return grad  # the same elements in another layout


def _adaptive_mean(input: Tensor, nd: int) -> Tensor:
    """An output of ones: what PyTorch runs (``mean``, MeanBackward1); for a channels-last
    input its strides are then set in place (``as_strided_``: AsStridedBackward1, a version
    bump), else the mean's (row-major) are kept."""
    from ..inplace import bump_version

    x = input._data
    out = mean(input, tuple(range(-1, -nd - 1, -1)), keepdim=True)
    if not _channels_last(x):
        out._data = _laid_out(out._data, False)  # PyTorch's mean is row-major here
        return out
    n, c = x.shape[:2]
    out = _restride(out, (n, c) + (1,) * nd, (c, 1) + (c,) * nd)
    bump_version(out)
    return out


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a fixed output size (``None`` keeps that input size)."""
    x = input._data
    size = _output_size(output_size, x.shape, 2)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if size[0] < 0 or size[1] < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            f"received {{{size[0]}, {size[1]}}}"
        )
    if size == (1, 1):
        return _adaptive_mean(input, 2)
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
    if x.dtype.kind not in "fV":
        raise _not_implemented("adaptive_avg_pool2d", x.dtype)
    return adaptive_avg_pool2d_op(input, size)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of the last three dimensions to a fixed output size (``None`` keeps
    that input size)."""
    x = input._data
    size = _output_size(output_size, x.shape, 3)
    if len(size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if min(size) < 0:
        raise RuntimeError(
            "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
            f"received {{{size[0]}, {size[1]},{size[2]}}}"
        )
    if size == (1, 1, 1):
        return _adaptive_mean(input, 3)
    for dim in range(1, x.ndim):
        if x.shape[dim] == 0:
            raise RuntimeError(
                "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {size_list(x.shape)} with dimension {dim} "
                "being empty"
            )
    if x.ndim not in (4, 5):
        raise RuntimeError(
            f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {size_list(x.shape)}"
        )
    if x.dtype.kind not in "fV":
        raise _not_implemented("adaptive_avg_pool3d_cpu", x.dtype)
    return adaptive_avg_pool3d_op(input, size)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """1-D adaptive average pooling (2-D on an unsqueezed input, as PyTorch does)."""
    _check_dims_1d("adaptive_avg_pool1d", input._data)
    size = _one(output_size, "output_size", "adaptive_avg_pool1d")
    return squeeze(adaptive_avg_pool2d(unsqueeze(input, -2), (1, size)), -2)


def _adaptive_max_indices(x: np.ndarray, out: tuple[int, ...]) -> np.ndarray:
    """Flat indices of each adaptive bin's maximum (PyTorch's tie and NaN rules)."""
    nd = len(out)
    sizes = x.shape[-nd:]
    planes = _planes(x, nd)
    if 0 in out or planes.shape[0] == 0:
        return np.zeros(x.shape[:-nd] + out, np.int64)
    coordinates, inside, longest = _bin_taps(sizes, out)
    win = planes[(slice(None),) + tuple(coordinates)]  # (R, *out, *longest), a copy
    win[:, ~np.broadcast_to(inside, out + longest)] = _lowest(x.dtype)
    arg = _window_argmax(win, nd)
    taps = np.unravel_index(arg, longest)
    starts = [_bins(size, o)[0] for size, o in zip(sizes, out, strict=True)]
    position = [_along(a, nd, starts[a]) + taps[a] for a in range(nd)]
    return _flat_index(position, sizes).reshape(x.shape[:-nd] + out)


def _adaptive_max_pool(input: Tensor, output_size: Any, nd: int) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling over the last ``nd`` dimensions and the flat indices of the maxima
    (PyTorch's checks, in its order)."""
    x = input._data
    name = f"adaptive_max_pool{nd}d"
    size = _output_size(output_size, x.shape, nd)
    if x.ndim not in (nd + 1, nd + 2):
        got = f"{nd + 1}D or {nd + 2}D tensor, but got: {size_list(x.shape)}"
        raise RuntimeError(f"{name}(): Expected {got}")
    for dim in range(1, x.ndim):
        if x.shape[dim] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {size_list(x.shape)} with dimension {dim} being empty"
            )
    if len(size) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    if min(size) < 0:
        shape = x.shape[:-nd] + size
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(size)}: {size_list(shape)}"
        )
    if x.dtype.kind not in "fV":
        raise _not_implemented(name if nd == 2 else name + "_cpu", x.dtype)
    # PyTorch keeps a channels-last layout in 2-D; its 3-D outputs are row-major.
    indices = wrap(_laid_out(_adaptive_max_indices(x, size), nd == 2 and _channels_last(x)))
    return _ADAPTIVE_MAX_GATHER[nd](input, indices), indices


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling and the flat ``H * W`` indices of the maxima."""
    return _adaptive_max_pool(input, output_size, 2)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """Adaptive max pooling of the last three dimensions and the flat ``D * H * W`` indices of
    the maxima."""
    return _adaptive_max_pool(input, output_size, 3)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a fixed output size."""
    out, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of the last three dimensions to a fixed output size."""
    out, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, indices) if return_indices else out


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = True
) -> tuple[Tensor, Tensor]:
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
    "max_pool3d_gather": max_pool3d_gather,
    "max_pool3d_gather_backward": max_pool3d_scatter,
    "adaptive_max_pool2d_gather": adaptive_max_pool2d_gather,
    "adaptive_max_pool2d_gather_backward": adaptive_max_pool2d_scatter,
    "adaptive_max_pool3d_gather": adaptive_max_pool3d_gather,
    "adaptive_max_pool3d_gather_backward": adaptive_max_pool3d_scatter,
    "avg_pool2d": avg_pool2d_op,
    "avg_pool2d_backward": avg_pool2d_backward,
    "avg_pool3d": avg_pool3d_op,
    "avg_pool3d_backward": avg_pool3d_backward,
    "adaptive_avg_pool2d": adaptive_avg_pool2d_op,
    "adaptive_avg_pool2d_backward": adaptive_avg_pool2d_backward,
    "adaptive_avg_pool3d": adaptive_avg_pool3d_op,
    "adaptive_avg_pool3d_backward": adaptive_avg_pool3d_backward,
}
