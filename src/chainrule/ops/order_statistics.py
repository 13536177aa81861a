"""Order statistics beside ``median`` (ops/reduction.py): ``nanmedian`` (the lower median of
the values that are not NaN) and ``mode`` (the most frequent value along a dimension).

Gradients are PyTorch's: over all elements, ``nanmedian``'s gradient is shared equally among
the elements equal to the result (among the NaNs when every value is NaN); along a dimension,
``nanmedian`` and ``mode`` send it to the returned index.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .. import _return_types as return_types
from .._tensor import Tensor, wrap, wrap_dim
from ._registry import op, tensor_method
from .reduction import (
    _UNSET,
    _check_dims_not_empty,
    _evenly_distribute,
    _int_dim,
    _take_along,
    _value_selecting_backward,
)
from .selection import DepthLimitReached, introsort_order

__all__ = ["nanmedian", "mode"]


def _rows(a: np.ndarray, dim: int) -> np.ndarray:
    """The slices along ``dim`` as the rows of a 2-D array (a copy when needed)."""
    return np.moveaxis(a, dim, -1).reshape(-1, a.shape[dim])


def _from_rows(index: np.ndarray, shape: tuple[int, ...], dim: int, keepdim: bool) -> np.ndarray:
    """One index per row back in the reduced shape."""
    reduced = shape[:dim] + shape[dim + 1 :]
    out = index.reshape(reduced)
    return np.expand_dims(out, dim) if keepdim else out


# ----------------------------------------------------------------------------------------------
# nanmedian


@op("NanmedianBackward0")
def _nanmedian_all(self):
    flat = self.reshape(-1)
    if self.dtype.kind in "fV":
        flat = flat[~np.isnan(flat)]
    if flat.size == 0:
        if self.dtype.kind in "fVcb":  # (NaN in the input's type, True for bool)
            return np.asarray(np.nan, self.dtype)
        return np.asarray(np.iinfo(self.dtype).min, self.dtype)
    return np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2]


@_nanmedian_all.derivative("self")
def _(ops, grad, self, result):
    return _evenly_distribute(ops, grad, self, result)


@op("NanmedianBackward1", tensor_params=("indices",))
def _nanmedian_dim(self, dim, keepdim, indices):
    return _take_along(self, dim, keepdim, indices)


@_nanmedian_dim.derivative("self")
def _(ops, grad, self_shape, dim, keepdim, indices):
    return _value_selecting_backward(ops, grad, self_shape, dim, keepdim, indices)


def _nanmedian_indices(a: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    """Index of the lower median of the values that are not NaN along ``dim``: the middle
    position of a stable sort (NaN last), so among equal values by position. (A slice of NaN
    only gets its first index; PyTorch's depends on its selection algorithm there.)"""
    rows = _rows(a, dim)
    if rows.dtype.kind == "V":  # (NumPy's sort of bfloat16 does not put NaN last)
        rows = rows.astype(np.float32)
    order = np.argsort(rows, axis=-1, kind="stable")
    count = (
        (~np.isnan(rows)).sum(axis=-1)
        if a.dtype.kind in "fV"
        else np.full(rows.shape[0], rows.shape[1])
    )
    position = np.maximum(count - 1, 0) // 2
    index = np.take_along_axis(order, position[:, None], axis=-1)[:, 0]
    index = np.where(count == 0, 0, index)
    return _from_rows(index, a.shape, dim, keepdim)


@tensor_method
def nanmedian(input: Tensor, dim: Any = _UNSET, keepdim: bool = False) -> Any:
    """The lower median of the elements that are not NaN (NaN when all are), or
    ``(values, indices)`` along ``dim``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1., float("nan"), 3., 2.]).nanmedian()
        tensor(2.)
    """
    a = input._data
    if dim is _UNSET:
        if a.size and (a.dtype == np.bool_ or a.dtype.kind == "c"):
            raise _dtype.no_kernel("median_cpu", a.dtype)
        return _nanmedian_all(input)  # (NaN in the input's type when empty, any type)
    d = wrap_dim(_int_dim("nanmedian", dim), a.ndim)
    if a.ndim:
        _check_dims_not_empty("median", a, (d,))
    if a.dtype == np.bool_ or a.dtype.kind == "c":
        raise _dtype.no_kernel("median_out", a.dtype)
    if a.ndim == 0:
        indices = np.zeros((), np.int64)
    else:
        indices = _nanmedian_indices(a, d, keepdim)
    index_tensor = wrap(np.asarray(indices, np.int64))
    values = _nanmedian_dim(input, d, keepdim, index_tensor)
    return return_types.nanmedian((values, index_tensor))


# ----------------------------------------------------------------------------------------------
# mode


@op("ModeBackward0", tensor_params=("indices",))
def _mode_values(self, dim, keepdim, indices):
    return _take_along(self, dim, keepdim, indices)


@_mode_values.derivative("self")
def _(ops, grad, self_shape, dim, keepdim, indices):
    return _value_selecting_backward(ops, grad, self_shape, dim, keepdim, indices)


def _mode_indices(a: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    """Index of the most frequent value along ``dim`` (among equally frequent ones the
    smallest), at the last place PyTorch's CPU kernel's ``std::sort`` puts it (first come
    first for 16 elements or fewer). Each NaN counts alone, and a slice with NaN is ordered
    as that sort leaves it: ``a < b`` is false either way with a NaN, so NaNs are not last
    but stop the insertions (the smallest value may come before them, others not)."""
    rows = _rows(a, dim)
    with_nan = (
        np.isnan(rows.astype(np.float32) if rows.dtype.kind == "V" else rows).any(axis=-1)
        if rows.dtype.kind in "fV"
        else np.zeros(rows.shape[0], bool)
    )
    out = np.zeros(rows.shape[0], np.int64)
    for r, row in enumerate(rows):
        order = np.argsort(row, kind="stable")
        ordered = row[order]
        if with_nan[r] or (row.size > 16 and np.any(ordered[1:] == ordered[:-1])):
            # PyTorch's std::sort orders equal values otherwise than a stable sort, and NaNs
            # otherwise than last
            keys = row.astype(np.float32) if row.dtype.kind == "V" else row
            try:
                order = np.asarray(introsort_order(keys.tolist()), np.int64)
                ordered = row[order]
            except (DepthLimitReached, IndexError):
                # (heapsort's order is not reproduced, nor an unguarded partition running
                # past the end among NaNs: the stable order stands in)
                pass
        # A run of equal values starts where the value differs from the one before.
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        lengths = np.diff(np.append(starts, row.size))
        best = int(np.argmax(lengths))  # (the first longest run: the smallest value)
        out[r] = order[starts[best] + lengths[best] - 1]
    return _from_rows(out, a.shape, dim, keepdim)


@tensor_method
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([3, 1, 3, 1, 2]).mode()
        torch.return_types.mode(
        values=tensor(1),
        indices=tensor(3))
    """
    a = input._data
    d = wrap_dim(_int_dim("mode", dim), a.ndim)
    if a.ndim == 0:  # (no kernel runs: any dtype, as PyTorch's)
        indices = np.zeros((), np.int64)
    else:
        _check_dims_not_empty("mode", a, (d,))
        if a.size == 0:  # (no kernel runs either)
            shape = list(a.shape)
            if keepdim:
                shape[d] = 1
            else:
                del shape[d]
            indices = np.zeros(shape, np.int64)
        else:
            if a.dtype.kind == "c":
                raise _dtype.no_kernel("mode_cpu", a.dtype)
            indices = _mode_indices(a, d, keepdim)
    index_tensor = wrap(np.asarray(indices, np.int64))
    return return_types.mode((_mode_values(input, d, keepdim, index_tensor), index_tensor))
