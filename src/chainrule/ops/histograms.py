"""``histogram`` and ``histogramdd``: counts (or summed weights, or densities) of the elements
(points) falling in each bin, with the bin edges, as PyTorch's CPU kernel computes them.

Edges of ``bins`` equal-width bins are ``linspace(min, max, bins + 1)`` in the input's dtype
(PyTorch's kernel: the first half of the edges stepped from ``min``, the second half back from
``max``); ``min``/``max`` are the input's (a range of width 0 widened by 0.5 each side, an empty
input's range is [0, 1]). An element falls in the bin whose left edge is the last one not above
it, the last bin also holding its right edge; elements outside the range and NaNs are skipped.
PyTorch has no derivative for them: where the input (or the weight) requires grad, the results
are recorded by ``NotImplemented`` nodes, whose backward raises PyTorch's error naming the ATen
op (``histogram``, ``_histogramdd_from_bin_cts``, ``_histogramdd_from_bin_tensors``,
``_histogramdd_bin_edges``; edges given as tensors are not recorded, as PyTorch's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _return_types
from .._tensor import Tensor, wrap
from ._registry import op, tensor_method
from .pointwise import _not_implemented_node
from .reduction import _type_name

__all__ = ["histogram", "histogramdd"]


def _no_derivative(aten_name: str) -> tuple[Any, Any]:
    """Ops recording ``value`` (computed from ``self``, and ``weight`` for the second) under a
    ``NotImplemented`` node whose backward raises ``derivative for aten::<aten_name> ...``."""

    @op("NotImplemented", tensor_params=("value",))
    def record(self, value):
        return np.array(value, copy=True)

    @op("NotImplemented", inputs=("self", "weight"), tensor_params=("value",))
    def record_weighted(self, weight, value):
        return np.array(value, copy=True)

    _not_implemented_node(record, aten_name)
    _not_implemented_node(record_weighted, aten_name)
    return record, record_weighted


_HISTOGRAM = _no_derivative("histogram")
_FROM_BIN_CTS = _no_derivative("_histogramdd_from_bin_cts")
_FROM_BIN_TENSORS = _no_derivative("_histogramdd_from_bin_tensors")
_BIN_EDGES = _no_derivative("_histogramdd_bin_edges")


def _recorded(
    records: tuple[Any, Any], input: Tensor, weight: Tensor | None, value: np.ndarray
) -> Tensor:
    """``value`` as a Tensor, recorded by ``records`` where ``input`` or ``weight`` requires
    grad."""
    if weight is not None and (input.requires_grad or weight.requires_grad):
        return records[1](input, weight, wrap(value))
    if input.requires_grad:
        return records[0](input, wrap(value))
    return wrap(value)


def _cpp_double(value: float) -> str:
    return f"{value:g}"


def _linspace(start: float, end: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """PyTorch's CPU linspace in ``dtype``: ``start + step * i`` for the first half,
    ``end - step * (steps - 1 - i)`` for the rest, ``step`` rounded to ``dtype`` and each edge
    a fused multiply-add (one rounding; emulated in a wider type)."""
    kind = dtype.type
    first, last = kind(start), kind(end)
    if steps == 1:
        return np.array([first], dtype)
    step = (last - first) / kind(steps - 1)
    wide = np.float64 if dtype == np.float32 else np.longdouble
    index = np.arange(steps)
    halfway = steps // 2
    with np.errstate(over="ignore", invalid="ignore"):
        low = wide(first) + wide(step) * index.astype(wide)
        high = wide(last) - wide(step) * (steps - 1 - index).astype(wide)
    return np.where(index < halfway, low, high).astype(dtype)


def _bin_index(values: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's bin, and whether it is counted (inside the edges' range, not NaN)."""
    with np.errstate(invalid="ignore"):
        inside = (values >= edges[0]) & (values <= edges[-1])
    position = np.searchsorted(edges, values, side="right") - 1
    position = np.clip(position, 0, max(edges.size - 2, 0))
    return position, inside


def _check_dtype(a: np.ndarray) -> None:
    if a.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_type_name(a)}'")


def _range_edges(
    points: np.ndarray, dim: int, bins: int, given: tuple | None, name: str
) -> np.ndarray:
    if bins <= 0:
        raise RuntimeError(f"{name}(): bins must be > 0, but got {bins} for dimension {dim}")
    column = points[:, dim]
    if given is not None:
        low, high = float(given[0]), float(given[1])
    elif column.size == 0:
        low, high = 0.0, 1.0
    else:
        low, high = float(column.min()), float(column.max())
        if np.isnan(column).any():
            low = high = math.nan
    if not low <= high and not (math.isnan(low) or math.isnan(high)):
        raise RuntimeError(
            f"torch.histogramdd: min should not exceed max, but got min {_cpp_double(low)} max "
            f"{_cpp_double(high)} for dimension {dim}"
        )
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(
            f"torch.histogramdd: dimension {dim}'s range [{_cpp_double(low)}, "
            f"{_cpp_double(high)}] is not finite"
        )
    if low == high:
        low, high = low - 0.5, high + 0.5
    return _linspace(low, high, bins + 1, points.dtype)


def _histogramdd(
    points: np.ndarray, edges: list[np.ndarray], weight: np.ndarray | None, density: bool
) -> np.ndarray:
    shape = tuple(max(e.size - 1, 0) for e in edges)
    hist = np.zeros(shape, points.dtype)
    if points.shape[0] and all(e.size >= 2 for e in edges):
        keep = np.ones(points.shape[0], bool)
        index = []
        for dim, e in enumerate(edges):
            position, inside = _bin_index(points[:, dim], e)
            keep &= inside
            index.append(position)
        picked = tuple(i[keep] for i in index)
        amounts = np.ones(int(keep.sum()), points.dtype) if weight is None else weight[keep]
        # (in order, in the input's dtype; PyTorch sums one partial histogram per thread, so
        # the last bits of its weighted sums depend on the number of threads)
        np.add.at(hist, picked, amounts)
    if density:
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.sum(dtype=hist.dtype)
            for dim, e in enumerate(edges):
                view = [1] * len(edges)
                view[dim] = -1
                hist = hist / np.diff(e).reshape(view)
    return np.ascontiguousarray(hist.astype(points.dtype, copy=False))


def _check_weight(points: np.ndarray, weight: Tensor | None, batch_shape: tuple) -> Any:
    if weight is None:
        return None
    w = weight._data
    if tuple(w.shape) != tuple(batch_shape):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(batch_shape) + [points.shape[-1]]} and weight with shape {list(w.shape)}"
        )
    if w.dtype != points.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
            f"should have the same dtype, but got input({_short(points)}), and "
            f"weight({_short(w)})"
        )
    return w.reshape(-1)


def _short(a: np.ndarray) -> str:
    return {"float32": "float", "float64": "double"}.get(a.dtype.name, a.dtype.name)


def _tensor_edges(points: np.ndarray, dim: int, bins: Tensor) -> np.ndarray:
    e = bins._data
    if e.ndim != 1:
        raise RuntimeError(
            "torch.histogramdd: bins tensor should have one dimension, but got "
            f"{e.ndim} dimensions in the bins tensor for dimension {dim}"
        )
    if e.dtype != points.dtype:
        raise RuntimeError(
            "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
            f"got input with dtype {_short(points)} and bins for dimension {dim} with dtype "
            f"{_short(e)}"
        )
    return np.array(e)


@tensor_method
def histogram(
    input: Tensor,
    bins: int | Tensor = 100,
    *,
    range: Sequence[float] | None = None,  # noqa: A002
    weight: Tensor | None = None,
    density: bool = False,
) -> Any:
    """The histogram of ``input``'s elements: ``(hist, bin_edges)``.

    ``bins`` is a number of equal-width bins over ``range`` (default: the elements' minimum
    and maximum) or a 1-D tensor of increasing edges. ``weight`` (``input``'s shape) sums
    weights instead of counting; ``density`` divides by the total and the bin widths.

    Example:
        >>> import chainrule as torch
        >>> torch.histogram(torch.tensor([1., 2, 1]), bins=4, range=(0., 3.)).hist
        tensor([0., 2., 1., 0.])
    """
    a = input._data
    _check_dtype(a)
    points = a.reshape(-1, 1)
    w = _check_weight(
        points,
        weight,
        points.shape[:-1]
        if weight is None or weight._data.size != points.shape[0]
        else tuple(weight._data.shape),
    )
    if isinstance(bins, Tensor):
        edges = _tensor_edges(points, 0, bins)
    else:
        edges = _range_edges(
            points, 0, int(bins), None if range is None else tuple(range), "torch.histogram"
        )
    hist = _histogramdd(points, [edges], w, density)
    return _return_types.histogram(
        (_recorded(_HISTOGRAM, input, weight, hist), _recorded(_HISTOGRAM, input, weight, edges))
    )


def histogramdd(
    input: Tensor,
    bins: int | Sequence[int] | Sequence[Tensor] = 10,
    *,
    range: Sequence[float] | None = None,
    weight: Tensor | None = None,  # noqa: A002
    density: bool = False,
) -> Any:
    """The ``D``-dimensional histogram of the points in ``input``'s last dimension (size
    ``D``): ``(hist, bin_edges)``, ``bin_edges`` a tuple of ``D`` 1-D tensors.

    ``bins``: one count for every dimension, a count per dimension, or a sequence of ``D``
    1-D edge tensors; ``range``: ``[min_0, max_0, min_1, max_1, ...]``.

    Example:
        >>> import chainrule as torch
        >>> torch.histogramdd(torch.tensor([[0., 0.], [1., 1.], [2., 2.]]), bins=2).hist
        tensor([[1., 0.],
                [0., 2.]])
    """
    a = input._data
    _check_dtype(a)
    if a.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = a.shape[-1]
    points = a.reshape(-1, dims)
    if isinstance(bins, int | np.integer):
        bins = [int(bins)] * dims
    bins = list(bins)
    if len(bins) != dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    w = _check_weight(points, weight, a.shape[:-1])
    edges = []
    for dim, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges.append(_tensor_edges(points, dim, b))
        else:
            given = None if range is None else (range[2 * dim], range[2 * dim + 1])
            edges.append(_range_edges(points, dim, int(b), given, "torch.histogramdd"))
    hist = _histogramdd(points, edges, w, density)
    from_tensors = any(isinstance(b, Tensor) for b in bins)
    recorded_edges = tuple(
        wrap(e) if isinstance(b, Tensor) else _recorded(_BIN_EDGES, input, None, e)
        for b, e in zip(bins, edges, strict=True)
    )
    record = _FROM_BIN_TENSORS if from_tensors else _FROM_BIN_CTS
    return _return_types.histogramdd((_recorded(record, input, weight, hist), recorded_edges))
