"""Writing a tensor into a view of a copy: ``select_scatter``, ``slice_scatter`` and
``diagonal_scatter`` (the out-of-place forms of ``x[i] = src``, ``x[a:b] = src`` and
``x.diagonal().copy_(src)``).

The gradient of ``self`` is the output's gradient with zeros where ``src`` went; that of
``src`` is the output's gradient read through the same view (PyTorch's formulas).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._strides import element_strides, empty_like_preserving
from .._tensor import wrap_dim
from . import shape
from ._registry import op

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter"]


def _filled_copy(self: np.ndarray) -> np.ndarray:
    """A copy of ``self`` with its strides, gaps included (as PyTorch's: an ``empty_strided``
    like ``self``), or in its memory order where its strides overlap (an expanded input)."""
    strides = element_strides(self)
    if self.size and all(s > 0 for s in strides):
        extent = 1 + sum((n - 1) * s for n, s in zip(self.shape, strides, strict=True))
        storage = np.empty(extent, self.dtype)
        out = np.lib.stride_tricks.as_strided(
            storage, self.shape, tuple(s * self.itemsize for s in strides), writeable=True
        )
        out = out if _dense_or_gapped(out) else empty_like_preserving(self)
    else:
        out = empty_like_preserving(self)
    out[...] = self
    return out


def _dense_or_gapped(a: np.ndarray) -> bool:
    """Whether no two elements of ``a`` share memory (strides that do not overlap)."""
    order = sorted((s, n) for s, n in zip(a.strides, a.shape, strict=True) if n > 1)
    span = a.itemsize
    for stride, size in order:
        if stride < span:
            return False
        span = stride * size
    return True


def _write(view: np.ndarray, src: np.ndarray) -> None:
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )
    view[...] = src


@op("SelectScatterBackward0", inputs=("self", "src"), method=True)
def select_scatter(self, src, dim, index):
    """A copy of ``self`` with ``src`` written at ``index`` along ``dim``.

    Example:
        >>> import chainrule as torch
        >>> torch.select_scatter(torch.zeros(2, 2), torch.ones(2), 0, 1)
        tensor([[0., 0.],
                [1., 1.]])
    """
    out = _filled_copy(self)
    _write(shape._select.op.forward(out, wrap_dim(dim, self.ndim), index), src)
    return out


@select_scatter.derivative("self")
def _(ops, grad, dim, index):
    picked = ops.select(grad, wrap_dim(dim, grad.ndim), index)
    return ops.select_scatter(grad, ops.zeros_like(picked), dim, index)


@select_scatter.derivative("src")
def _(ops, grad, dim, index):
    return ops.select(grad, wrap_dim(dim, grad.ndim), index)


def _slice_view(a: Any, dim: int, start: Any, end: Any, step: int) -> Any:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return a[(slice(None),) * wrap_dim(dim, a.ndim) + (slice(start, end, step),)]


@op("SliceScatterBackward0", inputs=("self", "src"), method=True)
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    """A copy of ``self`` with ``src`` written into the slice ``start:end:step`` of ``dim``.

    Example:
        >>> import chainrule as torch
        >>> torch.slice_scatter(torch.zeros(3), torch.ones(2), start=1)
        tensor([0., 1., 1.])
    """
    out = _filled_copy(self)
    _write(_slice_view(out, dim, start, end, step), src)
    return out


@slice_scatter.derivative("self")
def _(ops, grad, dim, start, end, step):
    picked = _slice_view(grad, dim, start, end, step)
    return ops.slice_scatter(grad, ops.zeros_like(picked), dim, start, end, step)


@slice_scatter.derivative("src")
def _(ops, grad, dim, start, end, step):
    return _slice_view(grad, dim, start, end, step)


@op("DiagonalScatterBackward0", inputs=("self", "src"), method=True)
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    """A copy of ``self`` with ``src`` written on the ``offset`` diagonal of the
    ``dim1``/``dim2`` planes.

    Example:
        >>> import chainrule as torch
        >>> torch.diagonal_scatter(torch.zeros(2, 2), torch.ones(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    out = _filled_copy(self)
    _write(shape._diagonal_view(out, offset, dim1, dim2), src)
    return out


@diagonal_scatter.derivative("self")
def _(ops, grad, offset, dim1, dim2):
    picked = ops.diagonal(grad, offset, dim1, dim2)
    return ops.diagonal_scatter(grad, ops.zeros_like(picked), offset, dim1, dim2)


@diagonal_scatter.derivative("src")
def _(ops, grad, offset, dim1, dim2):
    return ops.diagonal(grad, offset, dim1, dim2)


# Helpers for derivatives (``ops.<name>``).
PRIMITIVES: dict[str, Any] = {
    "select_scatter": select_scatter,
    "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter,
}
