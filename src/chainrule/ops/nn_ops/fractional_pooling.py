"""Fractional max pooling (Graham, 2014): windows of ``kernel_size`` at pseudo-random
positions chosen by one sample in [0, 1) per plane and dimension (``_random_samples``), so the
output has any size (``fractional_max_pool2d/3d``, nodes ``FractionalMaxPool2DBackward0`` and
``FractionalMaxPool3DBackward0``). The maxima are read by a gather op and their gradient
scattered back, each the other's derivative (as max pooling's, ``pooling.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from ..creation import rand
from ._common import ntuple, scalar_name, size_list
from .pooling import _channels_last, _declare_max_pool, _laid_out, _ScatterPlan

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
]

_GATHER = {
    2: _declare_max_pool("FractionalMaxPool2DBackward0", "fractional_max_pool2d_gather", 2),
    3: _declare_max_pool("FractionalMaxPool3DBackward0", "fractional_max_pool3d_gather", 3),
}


def _starts(sample: np.ndarray, input_size: int, output_size: int, pool_size: int) -> np.ndarray:
    """PyTorch's ``generate_intervals``: window starts ``int((i + u) a) - int(u a)`` with
    ``a = (input - pool) / (output - 1)`` in the input's precision, the last at
    ``input - pool`` (one per sample ``u``: shape ``(planes, output)``)."""
    dtype = sample.dtype
    starts = np.empty(sample.shape + (output_size,), np.int64)
    if output_size > 1:
        alpha = dtype.type(input_size - pool_size) / dtype.type(output_size - 1)
        i = np.arange(output_size - 1).astype(dtype)
        first = ((i[None, :] + sample[:, None]) * alpha).astype(np.int64)
        starts[:, :-1] = first - (sample * alpha).astype(np.int64)[:, None]
    starts[:, -1] = input_size - pool_size
    return starts


def _indices(
    x: np.ndarray, samples: np.ndarray, kernel: tuple[int, ...], out: tuple[int, ...]
) -> np.ndarray:
    """The flat spatial index of each window's maximum (the first one; NaN wins)."""
    nd = len(kernel)
    spatial = x.shape[-nd:]
    planes = int(np.prod(x.shape[:-nd]))
    flat = x.reshape(planes, -1)
    u = samples.reshape(planes, nd)
    # the samples name the dimensions from the last: (W, H) in 2-D, (T, H, W) in 3-D
    order = list(range(nd))[::-1] if nd == 2 else list(range(nd))
    starts = [_starts(u[:, order[d]], spatial[d], out[d], kernel[d]) for d in range(nd)]
    best = np.full((planes,) + out, -1, np.int64)
    best_val = np.full((planes,) + out, -np.inf, np.float64)
    strides = [int(np.prod(spatial[d + 1 :])) for d in range(nd)]
    grids = np.meshgrid(*[np.arange(o) for o in out], indexing="ij")
    for offsets in np.ndindex(*kernel):
        index = np.zeros((planes,) + out, np.int64)
        for d in range(nd):
            pos = starts[d][:, grids[d]] + offsets[d]
            index = index + pos * strides[d]
        values = np.take_along_axis(flat, index.reshape(planes, -1), axis=1).reshape(index.shape)
        values = values.astype(np.float64)
        better = (values > best_val) | (np.isnan(values) & ~np.isnan(best_val)) | (best < 0)
        best = np.where(better, index, best)
        best_val = np.where(better, values, best_val)
    return best.reshape(x.shape[:-nd] + out)


def _fractional(
    nd: int,
    input: Tensor,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    random_samples: Tensor | None,
) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    x = input._data
    kernel = ntuple(kernel_size, nd, "kernel_size")
    if output_size is None:
        ratio = (output_ratio,) * nd if isinstance(output_ratio, float | int) else output_ratio
        out = tuple(int(x.shape[-nd + d] * float(ratio[d])) for d in range(nd))
    else:
        out = ntuple(output_size, nd, "output_size")
    if random_samples is None:  # (PyTorch's Python draws them before the kernel's checks)
        batch = 1 if x.ndim == nd + 1 else input.size(0)
        channels = input.size(-nd - 1)
        if x.dtype.kind != "f":
            raise NotImplementedError(
                f"\"check_uniform_bounds\" not implemented for '{scalar_name(x.dtype)}'"
            )
        random_samples = rand(batch, channels, nd, dtype=input.dtype)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {size_list(x.shape)}"
        )
    # (PyTorch's kernels: out + pool - 1 <= in in 2-D, < in in 3-D, and their wording)
    where = f"{name}()" if nd == 2 else f"{name}_out()"
    for d in range(nd):
        reach = out[d] + kernel[d] - 1
        if reach > x.shape[-nd + d] or (nd == 3 and reach == x.shape[-nd + d]):
            what = ("height", "width") if nd == 2 else ("time", "height", "width")
            raise RuntimeError(
                f"{where}: pool {what[d]} {kernel[d]} too large relative to input "
                f"{what[d]} {x.shape[-nd + d]}"
            )
    if x.dtype.kind not in "fV":  # (float16 and bfloat16 too, as PyTorch's CPU kernels)
        raise NotImplementedError(
            f"\"{name}_out_frame\" not implemented for '{scalar_name(x.dtype)}'"
        )
    batch = x.shape[0] if x.ndim == nd + 2 else 1
    channels = x.shape[-nd - 1]
    samples = random_samples._data.astype(x.dtype, copy=False)
    indices = _indices(x, samples.reshape(batch * channels, nd), kernel, out)
    indices = _laid_out(indices, _channels_last(x))
    result1 = wrap(indices)
    return _GATHER[nd][0](input, result1, _ScatterPlan(False, None), 0), result1


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple:
    """``fractional_max_pool2d`` with the indices of the maxima."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple:
    """``fractional_max_pool3d`` with the indices of the maxima."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """2-D fractional max pooling to ``output_size`` (or ``output_ratio`` of the input's)."""
    out, indices = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, indices) if return_indices else out


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """3-D fractional max pooling to ``output_size`` (or ``output_ratio`` of the input's)."""
    out, indices = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, indices) if return_indices else out


PRIMITIVES: dict[str, Any] = {}
for _gather, _scatter in _GATHER.values():
    PRIMITIVES[_gather.op.forward.__name__] = _gather
    PRIMITIVES[_scatter.op.forward.__name__] = _scatter
