"""``unsafe_split``, ``unsafe_chunk`` and ``unsafe_split_with_sizes``: the pieces of
``split``/``chunk``/``split_with_sizes``, sharing the input's memory, but not recorded as views
(PyTorch's "unsafe" forms: writing one in place is recorded as a write to an ordinary tensor,
without regenerating the input's history). Nodes ``UnsafeSplitBackward0`` and
``UnsafeSplitWithSizesBackward0``; the gradient is the pieces' gradients concatenated.
"""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ._registry import op, tensor_method
from .shape import _pieces, chunk, split, split_with_sizes

__all__ = ["unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"]


@op("UnsafeSplitBackward0", num_outputs=-1)
def _unsafe_split_many(self, split_sizes, dim):
    return _pieces(self, dim, split_sizes)


@_unsafe_split_many.derivative("self")
def _(ops, grad, dim):
    return ops.cat(grad, dim)


@op("UnsafeSplitWithSizesBackward0", num_outputs=-1)
def _unsafe_split_with_sizes_many(self, split_sizes, dim):
    return _pieces(self, dim, split_sizes)


@_unsafe_split_with_sizes_many.derivative("self")
def _(ops, grad, dim):
    return ops.cat(grad, dim)


# A split into one piece is recorded by a single-output op of the same node name (as ``split``
# does in ops/shape.py: the engine hands a one-output node a bare gradient).
@op("UnsafeSplitBackward0")
def _unsafe_split_one(self):
    return self.view()


@_unsafe_split_one.derivative("self")
def _(ops, grad):
    return grad


@op("UnsafeSplitWithSizesBackward0")
def _unsafe_split_with_sizes_one(self):
    return self.view()


@_unsafe_split_with_sizes_one.derivative("self")
def _(ops, grad):
    return grad


def _unsafe(pieces: tuple, input: Tensor, dim: int, with_sizes: bool) -> tuple:
    """The pieces (computed and checked by the view op) again, by the unsafe op."""
    sizes = tuple(p._data.shape[dim] for p in pieces)
    if len(sizes) == 1:
        one = _unsafe_split_with_sizes_one if with_sizes else _unsafe_split_one
        return (one(input),)
    many = _unsafe_split_with_sizes_many if with_sizes else _unsafe_split_many
    return tuple(many(input, sizes, dim))


def _dim(input: Tensor, dim: int) -> int:
    ndim = input._data.ndim
    return dim + ndim if dim < 0 else dim


@tensor_method
def unsafe_split(tensor: Tensor, split_size: int, dim: int = 0) -> tuple:
    """:func:`split` into pieces of ``split_size`` whose results are not tracked as views.

    Example:
        >>> import chainrule as torch
        >>> torch.unsafe_split(torch.arange(5), 2)
        (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    pieces = split(tensor.detach(), split_size, dim)
    return _unsafe(pieces, tensor, _dim(tensor, dim), with_sizes=False)


@tensor_method
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """:func:`chunk` whose results are not tracked as views."""
    pieces = chunk(input.detach(), chunks, dim)
    return _unsafe(pieces, input, _dim(input, dim), with_sizes=False)


@tensor_method
def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """:func:`split_with_sizes` whose results are not tracked as views."""
    pieces = split_with_sizes(input.detach(), split_sizes, dim)
    return _unsafe(pieces, input, _dim(input, dim), with_sizes=True)
