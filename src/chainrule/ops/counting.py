"""Counting and binning: ``unique``, ``unique_consecutive``, ``bincount``, ``histc``,
``bucketize`` and ``searchsorted``.

None has a gradient. As in PyTorch, ``unique`` and ``unique_consecutive`` of a tensor that
requires grad still record a node (``Unique2Backward0``, ``UniqueDimBackward0``,
``UniqueConsecutiveBackward0``) whose backward raises ``NotImplementedError``, ``bincount``
with weights that require grad records a ``NotImplemented`` node, and the others record
nothing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtype import SCALAR_TYPE_NAMES, float32, from_numpy_dtype, result_type
from .._meta import refuse_data_dependent
from .._tensor import Tensor, wrap, wrap_dim
from ._dispatch import wrapped_int
from ._registry import op, tensor_method
from .pointwise import _edges_of_inputs_needing_grad, _not_implemented_node
from .scalar_conversion import check_scalar_fits

__all__ = ["unique", "unique_consecutive", "bincount", "histc", "bucketize", "searchsorted"]

_INT64 = np.dtype(np.int64)


def _type(a: np.ndarray) -> str:
    return SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]


def _unique_flat(self: np.ndarray, consecutive: bool) -> tuple:
    flat = self.reshape(-1)
    n = flat.size
    if consecutive:
        order = np.arange(n)
        ordered = flat
    else:
        order = np.argsort(flat, kind="stable")  # (NaN last; each NaN is its own value)
        ordered = flat[order]
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = ordered[1:] != ordered[:-1]
    starts = np.flatnonzero(new)
    values = ordered[starts]
    group = np.cumsum(new) - 1
    inverse = np.empty(n, dtype=_INT64)
    inverse[order] = group
    counts = np.diff(np.append(starts, n)).astype(_INT64)
    return values, inverse.reshape(self.shape), counts


def _unique_along(self: np.ndarray, dim: int, consecutive: bool) -> tuple:
    moved = np.moveaxis(self, dim, 0)
    rows = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))
    n = rows.shape[0]
    if consecutive:
        order = np.arange(n)
    else:
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
    ordered = rows[order]
    new = np.ones(n, dtype=bool)
    if n:
        new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    starts = np.flatnonzero(new)
    # (laid out along ``dim`` first, as PyTorch's result)
    values = np.moveaxis(np.ascontiguousarray(moved[order[starts]]), 0, dim)
    inverse = np.empty(n, dtype=_INT64)
    inverse[order] = np.cumsum(new) - 1
    counts = np.diff(np.append(starts, n)).astype(_INT64)
    return values, inverse, counts


@op("Unique2Backward0", num_outputs=3, nondiff_outputs=2)
def _unique2(self):
    values, inverse, counts = _unique_flat(self, consecutive=False)
    return values, inverse, counts


@op("UniqueDimBackward0", num_outputs=3, nondiff_outputs=2)
def _unique_dim(self, dim):
    return _unique_along(self, dim, consecutive=False)


@op("UniqueConsecutiveBackward0", num_outputs=3, nondiff_outputs=2)
def _unique_consecutive(self, dim):
    if dim is None:
        return _unique_flat(self, consecutive=True)
    return _unique_along(self, dim, consecutive=True)


@op("UniqueBackward0", num_outputs=2, nondiff_outputs=1)
def _unique_values_inverse(self):
    values, inverse, _ = _unique_flat(self, consecutive=False)
    return values, inverse


@_unique_values_inverse.derivative("self")
def _(ops, grads):
    raise NotImplementedError("the derivative for '_unique' is not implemented.")


@_unique2.derivative("self")
def _(ops, grads):
    raise NotImplementedError("the derivative for '_unique2' is not implemented.")


@_unique_dim.derivative("self")
def _(ops, grads):
    raise NotImplementedError("the derivative for 'unique_dim' is not implemented.")


@_unique_consecutive.derivative("self")
def _(ops, grads):
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


def _refuse_complex(input: Tensor, kernel: str) -> None:
    """PyTorch's error for unique of complex values (its kernels sort them): ``"unique"``
    over all elements, ``"unique_dim"`` along a dim, before the dim is looked at."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type(input._data)}'")


def _check_unique_dim(input: Tensor, dim: int) -> int:
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, input.dim())
    shape = tuple(input.shape)
    empty = sum(s == 0 for s in shape)
    if shape[d] == 0 and empty > 1:
        raise RuntimeError(
            "Number of zero sized dimensions is more than one, so unique cannot be applied "
        )
    if shape[d] != 0 and empty:
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    return d


def _returned(
    values: Tensor, inverse: Tensor, counts: Tensor, return_inverse: bool, return_counts: bool
) -> Any:
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


@tensor_method
def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
) -> Any:
    """The distinct elements (or, with ``dim``, slices) of ``input`` in ascending order; with
    ``return_inverse`` where each element went, with ``return_counts`` how often each occurs.
    Each NaN is distinct."""
    _refuse_complex(input, "unique" if dim is None else "unique_dim")
    if dim is None:
        values, inverse, counts = _unique2(input)
    else:
        values, inverse, counts = _unique_dim(input, _check_unique_dim(input, dim))
    return _returned(values, inverse, counts, return_inverse, return_counts)


def _no_indices() -> Tensor:
    return wrap(np.empty(0, dtype=_INT64))


def _unique(input: Tensor, sorted: bool = True, return_inverse: bool = False) -> Any:
    """``torch._unique``: the distinct elements in ascending order and, with
    ``return_inverse``, where each element went (else an empty int64 tensor), as PyTorch's
    private op (node ``UniqueBackward0``)."""
    values, inverse = _unique_values_inverse(input)
    return values, inverse if return_inverse else _no_indices()


def unique_all(
    input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False
) -> Any:
    """``torch._unique2``: ``(values, inverse, counts)``, an empty int64 tensor for each of
    inverse and counts not asked for (node ``Unique2Backward0``)."""
    values, inverse, counts = _unique2(input)
    return (
        values,
        inverse if return_inverse else _no_indices(),
        counts if return_counts else _no_indices(),
    )


def unique_dim(
    input: Tensor,
    dim: int,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
) -> Any:
    """``torch._VF.unique_dim``: ``(values, inverse, counts)`` of the slices along ``dim``,
    all three computed whatever is asked, as PyTorch's CPU kernel (node
    ``UniqueDimBackward0``)."""
    _refuse_complex(input, "unique_dim")
    return _unique_dim(input, _check_unique_dim(input, dim))


@tensor_method
def unique_consecutive(
    input: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> Any:
    """``input`` with each run of equal consecutive elements (or slices along ``dim``)
    collapsed to one."""
    # (PyTorch runs its kernel for all elements on a 1-D tensor with dim=0: its error names it)
    flat = dim is None or (dim == 0 and input.dim() == 1)
    _refuse_complex(input, "unique" if flat else "unique_dim")
    if dim is not None:
        dim = _check_unique_dim(input, dim)
    values, inverse, counts = _unique_consecutive(input, dim)
    return _returned(values, inverse, counts, return_inverse, return_counts)


@op("NotImplemented", inputs=("weights",), tensor_params=("self",))
def _bincount(self, weights, minlength, double):
    length = max(int(self.max()) + 1 if self.size else 0, minlength)
    dtype = np.dtype(np.float64) if double else weights.dtype
    return np.bincount(self, weights=weights.astype(np.float64), minlength=length).astype(dtype)


_not_implemented_node(_bincount, "bincount")


@tensor_method
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer ``input`` (or
    the sum of the ``weights`` at its positions)."""
    refuse_data_dependent("bincount", input, weights)
    a = input._data
    if a.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_type(a)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None or not a.size:  # (empty input: int64 zeros, even with weights)
        length = max(int(a.max()) + 1 if a.size else 0, minlength)
        return wrap(np.bincount(a, minlength=length).astype(_INT64))
    double = weights.dtype != float32  # (float32 weights sum in float32, others in float64)
    return _edges_of_inputs_needing_grad(_bincount(input, weights, minlength, double))


@op("HistcBackward0", differentiable=False)
def _histc(self, bins, low, high):
    dtype = self.dtype.type
    low, high = dtype(low), dtype(high)  # (PyTorch computes in the input's dtype)
    x = self[(self >= low) & (self <= high)]
    pos = ((x - low) * dtype(bins) / (high - low)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return np.bincount(pos, minlength=bins).astype(self.dtype)


@tensor_method
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``input`` in ``bins`` equal bins from ``min`` to ``max`` (the data's
    range when both are 0); elements outside are ignored."""
    a = input._data
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not input.dtype.is_floating_point:
        # PyTorch's order: the data's range taken when the bounds are equal (complex values
        # have none), equal bounds widened by 1, the bin edges made in the input's type (a
        # bound it cannot hold, or bool, refused), then the kernel
        if a.dtype.kind == "c" and low == high and a.size:
            raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_type(a)}'")
        if a.dtype.kind in "iu":
            if low == high and a.size:
                low, high = float(np.min(a)), float(np.max(a))
            if low == high:
                low, high = low - 1, high + 1
            check_scalar_fits(low, a.dtype)
            check_scalar_fits(high, a.dtype)
        kernel = "linspace_cpu" if a.dtype == np.bool_ else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type(a)}'")
    from_data = low == high and a.size
    if from_data:
        low, high = float(np.min(a)), float(np.max(a))
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(
            f"torch.histc: range of [{_fmt(low, from_data)}, {_fmt(high, from_data)}] is not finite"
        )
    return _histc(input, bins, low, high)


def _fmt(x: float, from_data: Any = False) -> str:
    """A bound as PyTorch's message prints it (C's ``%g``): a NaN with its sign bit (a NaN
    PyTorch's min/max of the data found prints as ``-nan``)."""
    if math.isnan(x):
        return "-nan" if from_data or math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


def _bounds(sequence: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """PyTorch's binary search, comparison for comparison (NaN included): it moves right
    while ``!(element >= v)`` (``right``: ``!(element > v)``), per row."""
    n = sequence.shape[-1]
    low = np.zeros(values.shape, dtype=_INT64)
    high = np.full(values.shape, n, dtype=_INT64)
    seq = np.broadcast_to(sequence, values.shape[:-1] + (n,)) if sequence.ndim > 1 else sequence
    while True:
        active = low < high
        if not active.any():
            return low
        mid = (low + high) // 2
        probe = np.minimum(mid, n - 1)
        if seq.ndim > 1:
            at = np.take_along_axis(seq, probe, axis=-1)
        else:
            at = seq[probe]
        go_right = ~(at > values) if right else ~(at >= values)
        low = np.where(active & go_right, mid + 1, low)
        high = np.where(active & ~go_right, mid, high)


def _searchsorted_values(
    sequence: Tensor, values: Any, right: bool, out_int32: bool, sorter: Tensor | None
) -> Tensor:
    seq = sequence._data
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter._data.astype(np.int64), axis=-1)
    scalar = not isinstance(values, Tensor)
    vals = _number_values(values, sequence) if scalar else values._data
    if seq.ndim > 1 and vals.ndim == 0:
        raise RuntimeError(
            "torch.searchsorted(): input value can be a scalar only when "
            "boundaries tensor dimension is 1, but we got boundaries tensor "
            f"dim({seq.ndim}) and input value's dim(0) numel(1)"
        )
    common = np.result_type(seq, vals)
    flat = vals.reshape(-1) if seq.ndim == 1 else vals
    out = _bounds(seq.astype(common), flat.astype(common), right).reshape(vals.shape)
    return wrap(out.astype(np.int32 if out_int32 else np.int64))


def _number_values(value: Any, sequence: Tensor) -> np.ndarray:
    """A number ``input`` of searchsorted/bucketize as PyTorch reads it: a wrapped number,
    converted to the type it promotes to with the boundaries, as ``boundaries + value`` would
    (an int wraps into an integer type: -1 into uint8 is 255; a float with integer boundaries
    is float32; 70000 into float16 is inf)."""
    target = result_type(sequence, value).np
    if type(value) is int and target.kind in "iu":
        return wrapped_int(value, target)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(value).astype(target)


def bucketize(
    input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False
) -> Tensor:
    """The bucket of each element of ``input`` among the sorted 1-D ``boundaries``:
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``<= x <``)."""
    if boundaries.dim() != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})"
        )
    return _searchsorted_values(boundaries, input, right, out_int32, None)


def searchsorted(
    sorted_sequence: Tensor,
    input: Any,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: Tensor | None = None,
) -> Tensor:
    """Where each element of ``input`` would be inserted into the last dimension of
    ``sorted_sequence`` to keep it sorted (``right``/``side="right"``: after equal ones)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(
                f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
            )
        if right and side == "left":
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites,"
                " got side of left while right was True"
            )
        right = side == "right"
    seq = sorted_sequence
    if (
        seq.dim() > 1
        and isinstance(input, Tensor)
        and (input.dim() != seq.dim() or tuple(input.shape[:-1]) != tuple(seq.shape[:-1]))
    ):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(input.shape)}"
        )
    return _searchsorted_values(seq, input, right, out_int32, sorter)
