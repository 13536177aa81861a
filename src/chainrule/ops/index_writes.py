"""Writing slices chosen by an index along a dimension: ``index_copy`` (slices of a source)
and ``index_fill`` (a value), with their in-place forms.

Gradients (PyTorch's formulas): ``self`` gets the output's gradient with the written slices
zeroed; ``source`` the gradient's slices at ``index``; a tensor ``value`` their sum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._strides import empty_like_preserving
from .._tensor import Tensor, wrap, wrap_dim
from ._registry import op, tensor_method
from .indexing import _scalar_name
from .scalar_conversion import check_value_tensor, fill_value_for
from .shape import wrap_dim_scalar

__all__ = ["index_copy", "index_fill"]


def _rows(a: np.ndarray, dim: int) -> np.ndarray:
    """``a`` with ``dim`` first (a view), so that an index picks slices."""
    return np.moveaxis(a, dim, 0) if a.ndim else a.reshape(1)


# ----------------------------------------------------------------------------------------------
# index_copy


def _check_copy(self: np.ndarray, d: int, index: np.ndarray, source: np.ndarray) -> None:
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if index.dtype != np.int64:
        raise RuntimeError(
            f"index_copy_(): Expected a long tensor for index, but got {_scalar_name(index.dtype)}"
        )
    if source.ndim and self.ndim and source.ndim != self.ndim:
        raise IndexError(
            "index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source.ndim}), destination dimensionality "
            f"({self.ndim})"
        )
    count = source.shape[d] if source.ndim else 1
    if index.size != count:
        raise IndexError(
            f"index_copy_(): Number of indices ({index.size}) should be equal to "
            f"source.size(dim) ({count})"
        )
    dest_slice = [s for k, s in enumerate(self.shape) if k != d]
    source_slice = [s for k, s in enumerate(source.shape) if k != d]
    if source.ndim and dest_slice != source_slice:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(map(str, dest_slice))} at dimension {d} and source slice "
            f"shape: {' '.join(map(str, source_slice))} at dimension 0."
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{_scalar_name(self.dtype)} and (source) {_scalar_name(source.dtype)}"
        )
    size = self.shape[d] if self.ndim else 1
    for i in index.reshape(-1):
        if i < 0 or i >= size:
            raise IndexError(
                f"index_copy_(): index {i} is out of bounds for dimension {d} with size {size}"
            )


@op(
    "IndexCopyBackward0",
    inputs=("self", "source"),
    tensor_params=("index",),
    method=True,
    inplace=True,
)
def index_copy(self, dim, index, source):
    """A copy of ``self`` whose slices ``index[i]`` along ``dim`` are ``source``'s slices
    ``i``.

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(3).index_copy(0, torch.tensor([2, 0]), torch.tensor([5., 7.]))
        tensor([7., 0., 5.])
    """
    d = wrap_dim_scalar(dim, self.ndim)
    _check_copy(self, d, index, source)
    out = np.array(self, order="C", copy=True)
    _rows(out, d)[index.reshape(-1)] = _rows(source, d) if source.ndim else source
    return out


@index_copy.derivative("self")
def _(ops, grad, dim, index):
    return ops.index_fill(grad, wrap_dim(dim, grad.ndim), index, 0)


@index_copy.derivative("source")
def _(ops, grad, dim, index, source_shape):
    picked = ops.index_select(grad, wrap_dim(dim, grad.ndim), index.reshape(-1))
    return ops.reshape(picked, tuple(source_shape))


# ----------------------------------------------------------------------------------------------
# index_fill


def _filled(self: np.ndarray, dim: int, index: np.ndarray, value: Any) -> np.ndarray:
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = wrap_dim_scalar(dim, self.ndim)
    size = self.shape[d] if self.ndim else 1
    flat = index.reshape(-1)
    for i in flat:
        if i < -size or i >= size:
            raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
    out = empty_like_preserving(self)  # (in the input's memory order, as PyTorch's clone)
    out[...] = self
    _rows(out, d)[flat] = value
    return out


@op("IndexFillBackward0", tensor_params=("index",), name="index_fill")
def _index_fill_number(self, dim, index, value):
    return _filled(self, dim, index, value)


@_index_fill_number.derivative("self")
def _(ops, grad, dim, index):
    return ops.index_fill(grad, dim, index, 0)


@op("IndexFillBackward1", inputs=("self", "value"), tensor_params=("index",), name="index_fill")
def _index_fill_tensor(self, dim, index, value):
    return _filled(self, dim, index, value.astype(self.dtype))


@_index_fill_tensor.derivative("self")
def _(ops, grad, dim, index):
    return ops.index_fill(grad, dim, index, 0)


@_index_fill_tensor.derivative("value")
def _(ops, grad, dim, index):
    # Each filled slice once, however often the index repeats it (PyTorch's _unique(index)).
    if isinstance(index, Tensor):
        once: Any = wrap(np.unique(index._data.reshape(-1)))
    else:
        once = np.unique(index.reshape(-1))
    picked = ops.index_select(grad, wrap_dim(dim, grad.ndim), once)
    return ops.sum(picked, None, False)


@tensor_method(inplace=True)
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` whose slices ``index`` along ``dim`` are filled with ``value`` (a
    number or a 0-d tensor).

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(3).index_fill(0, torch.tensor([0, 2]), 1.)
        tensor([1., 0., 1.])
    """
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got "
                f"tensor with {value._data.ndim} dimension(s)."
            )
        check_value_tensor(value, input._data.dtype)  # (read as a Scalar of input's type)
        return _index_fill_tensor(input, dim, index, value)
    if isinstance(value, bool | int | float | complex):
        value = fill_value_for(value, input._data.dtype)  # (uint8 takes -1 as 255)
    return _index_fill_number(input, dim, index, value)


# Helpers for derivatives (``ops.<name>``).
PRIMITIVES: dict[str, Any] = {"index_fill": _index_fill_number}
