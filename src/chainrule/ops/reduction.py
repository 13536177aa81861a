"""Reductions: sum, mean (and, added by later work, prod, max/min, var/std, norm, ...).

A reduction's derivative spreads the gradient back over the reduced dimensions with
:func:`expand_reduced`, the one helper every reduction shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._dtype import to_dtype
from .._tensor import Tensor, wrap_dim
from ._registry import op

__all__ = ["sum", "mean", "sum_to_size"]


def normalize_dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Reduction dims as sorted non-negative ints (``None`` or ``()``: all dims)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int | np.integer):
        dims: Sequence[int] = (int(dim),)
    else:
        dims = tuple(dim)
        if not dims:
            return tuple(range(ndim))
    out = set()
    for d in dims:
        w = wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.add(w)
    return tuple(sorted(out))


def expand_reduced(F: Any, grad: Any, shape: tuple[int, ...], dims: tuple[int, ...],
                   keepdim: bool) -> Any:
    """Undo a reduction over ``dims``: re-insert them (if dropped) and broadcast to ``shape``."""
    if not keepdim:
        for d in dims:
            grad = F.unsqueeze(grad, d)
    return F.expand(grad, shape)


def _sum_dtype(array: np.ndarray, dtype: Any) -> Any:
    if dtype is not None:
        return to_dtype(dtype).np
    if array.dtype.kind in "biu":
        return np.int64
    return None


@op("SumBackward0")
def _sum_all(self, *, dtype=None):
    return np.sum(self, dtype=_sum_dtype(self, dtype))


@_sum_all.derivative("self")
def _(F, grad, self_shape):
    return F.expand(grad, self_shape)


@op("SumBackward1")
def _sum_dim(self, dim, keepdim=False, *, dtype=None):
    dims = normalize_dims(dim, self.ndim)
    return np.sum(self, axis=dims, keepdims=keepdim, dtype=_sum_dtype(self, dtype))


@_sum_dim.derivative("self")
def _(F, grad, self_shape, dim, keepdim):
    return expand_reduced(F, grad, self_shape, normalize_dims(dim, len(self_shape)), keepdim)


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over ``dim`` (int or tuple), keeping it with ``keepdim``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).sum(0)
        tensor([4., 6.])
    """
    if dim is None:
        if keepdim:
            return _sum_dim(input, tuple(range(input._data.ndim)), True, dtype=dtype)
        return _sum_all(input, dtype=dtype)
    return _sum_dim(input, dim, keepdim, dtype=dtype)


def _mean_check(array: np.ndarray, dtype: Any) -> Any:
    if dtype is not None:
        return to_dtype(dtype).np
    if array.dtype.kind not in "fc":
        name = _dtype.from_numpy_dtype(array.dtype).name
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_SCALAR_TYPE_NAMES.get(name, name.capitalize())}"
        )
    return None


_SCALAR_TYPE_NAMES = {
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "float32": "Float", "float64": "Double", "float16": "Half",
}


@op("MeanBackward0")
def _mean_all(self, *, dtype=None):
    d = _mean_check(self, dtype)
    return np.mean(self, dtype=d) if d is not None else np.mean(self, dtype=self.dtype)


@_mean_all.derivative("self")
def _(F, grad, self_shape):
    count = 1
    for s in self_shape:
        count *= s
    return F.expand(grad / count, self_shape)


@op("MeanBackward1")
def _mean_dim(self, dim, keepdim=False, *, dtype=None):
    d = _mean_check(self, dtype)
    dims = normalize_dims(dim, self.ndim)
    return np.mean(self, axis=dims, keepdims=keepdim, dtype=d if d is not None else self.dtype)


@_mean_dim.derivative("self")
def _(F, grad, self_shape, dim, keepdim):
    dims = normalize_dims(dim, len(self_shape))
    count = 1
    for d in dims:
        count *= self_shape[d]
    return expand_reduced(F, grad / count, self_shape, dims, keepdim)


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Arithmetic mean of all elements, or over ``dim``."""
    if dim is None:
        if keepdim:
            return _mean_dim(input, tuple(range(input._data.ndim)), True, dtype=dtype)
        return _mean_all(input, dtype=dtype)
    return _mean_dim(input, dim, keepdim, dtype=dtype)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum ``input`` over broadcast dimensions so that it has shape ``size``."""
    from .shape import _view, size_args

    shape = size_args(size)
    have = input._data.shape
    lead = len(have) - len(shape)
    if lead < 0 or any(s != 1 and s != h for s, h in zip(shape, have[lead:], strict=True)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and have[lead + i] != 1
    )
    if not dims:
        return input
    summed = _sum_dim(input, dims, True)
    return _view(summed, shape) if lead else summed
