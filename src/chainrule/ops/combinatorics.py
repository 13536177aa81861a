"""``combinations`` (the r-element combinations of a vector's elements, as Python's
``itertools.combinations``) and ``vander`` (the Vandermonde matrix of a vector).

Both are PyTorch's composites, written with the same ops so that the graph is PyTorch's node
for node: ``combinations`` is a meshgrid of the vector masked to increasing index tuples and
stacked (``StackBackward0 -> MaskedSelectBackward0 -> ExpandBackward0 -> ViewBackward0``);
``vander`` writes the vector and its running products into slices of a matrix of ones
(``CopySlices``, ``CumprodBackward0``), flipped unless ``increasing``.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap
from .combining import meshgrid
from .indexing import masked_select
from .reduction import cumprod
from .shape import _fmt, flip, stack

__all__ = ["combinations", "vander"]


def _increasing_mask(n: int, r: int, with_replacement: bool) -> np.ndarray:
    """The r-dimensional mask of index tuples that increase (or do not decrease)."""
    grids = np.meshgrid(*([np.arange(n)] * r), indexing="ij")
    mask = np.ones((n,) * r, dtype=bool)
    for a, b in zip(grids, grids[1:], strict=False):
        mask &= (a <= b) if with_replacement else (a < b)
    return mask


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The combinations of ``r`` elements of the 1-D ``input`` (in lexicographic order of
    their positions), as the rows of an ``(count, r)`` tensor; with ``with_replacement`` an
    element may repeat.

    Example:
        >>> import chainrule as torch
        >>> torch.combinations(torch.tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return wrap(np.empty(0, input._data.dtype))
    grids = meshgrid(*([input] * r), indexing="ij")
    mask = wrap(_increasing_mask(input._data.shape[0], r, with_replacement))
    return stack([masked_select(g, mask) for g in grids], 1)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1)`` ... ``x ** 0``
    (the other way with ``increasing``); integer inputs give int64, as PyTorch's.

    Example:
        >>> import chainrule as torch
        >>> torch.vander(torch.tensor([1, 2, 3]))
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0]
    if N is not None:
        n = N
        if n < 0:
            raise RuntimeError("N must be non-negative.")
    dtype = _dtype.promote_types(x.dtype, _dtype.int64)
    result = wrap(np.empty((x._data.shape[0], n), dtype.np))
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(cumprod(result[:, 1:], 1))
    if not increasing:
        return flip(result, (1,))
    return result
