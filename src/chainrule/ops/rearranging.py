"""Rearranging elements: ``rot90``, ``Tensor.unfold`` (sliding windows, a view),
``take_along_dim``, ``repeat_interleave``, ``diagflat`` and ``hsplit``/``vsplit``/``dsplit``.

``rot90`` and ``unfold`` are nodes of their own (``Rot90Backward0``, ``UnfoldBackward0``); the
others are PyTorch compositions of existing ops, so they record what PyTorch records
(``GatherBackward0``, ``IndexSelectBackward0``, ``DiagEmbedBackward0``, ``SliceBackward0`` ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._strides import contiguous_format, element_strides, empty_like_preserving, with_strides
from .._tensor import Tensor, wrap, wrap_dim
from . import indexing, shape
from ._registry import op, tensor_method
from .copying import clone
from .shape import wrap_dim_scalar

__all__ = [
    "rot90",
    "take_along_dim",
    "repeat_interleave",
    "diagflat",
    "hsplit",
    "vsplit",
    "dsplit",
]


# ----------------------------------------------------------------------------------------------
# rot90


def _rotation_dims(ndim: int, dims: Sequence[int]) -> tuple[int, int]:
    """``dims`` checked and made non-negative, with PyTorch's errors."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim), wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}"
        )
    return d0, d1


@op("Rot90Backward0", method=True)
def rot90(self, k=1, dims=(0, 1)):
    """``self`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first dim
    towards the second (a new tensor).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]]).rot90()
        tensor([[2, 4],
                [1, 3]])
    """
    d0, d1 = _rotation_dims(self.ndim, dims)
    turns = k % 4
    if turns == 0:
        return np.array(self, order="C", copy=True)
    # PyTorch's composition: a flip (a copy in the input's memory order), then for a quarter
    # turn a transpose of it (a view of the copy, not copied again).
    flip_dims = {1: (d1,), 2: (d0, d1), 3: (d0,)}[turns]
    flipped = empty_like_preserving(self)
    np.copyto(flipped, np.flip(self, flip_dims))
    return flipped if turns == 2 else flipped.swapaxes(d0, d1)


@rot90.derivative("self")
def _(ops, grad, k, dims):
    return ops.rot90(grad, -k, dims)


# ----------------------------------------------------------------------------------------------
# Tensor.unfold: sliding windows along a dimension, a view


def _window_geometry(shape: tuple[int, ...], dimension: int, size: int, step: int) -> tuple:
    """The non-negative dim, the number of windows and the result's shape, with PyTorch's
    errors."""
    ndim = len(shape)
    d = wrap_dim_scalar(dimension, ndim)
    length = shape[d] if ndim else 1
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {d} is {length} but size is {size}"
        )
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not ndim:
        return d, 1, (size,)
    windows = (length - size) // step + 1
    return d, windows, shape[:d] + (windows,) + shape[d + 1 :] + (size,)


@op("UnfoldBackward0", view=True, name="unfold")
def _unfold(self, dimension, size, step):
    d, _, out_shape = _window_geometry(self.shape, dimension, size, step)
    if not self.ndim:
        return with_strides(self, out_shape, (1,))
    strides = element_strides(self)
    out_strides = strides[:d] + (strides[d] * step,) + strides[d + 1 :] + (strides[d],)
    return with_strides(self, out_shape, out_strides)


@_unfold.derivative("self")
def _(ops, grad, self_shape, dimension, size, step):
    return ops.unfold_backward(grad, self_shape, dimension, size, step)


@op("UnfoldBackwardBackward0", inputs=("grad_in",))
def _unfold_backward(grad_in, input_sizes, dim, size, step):
    """Zeros of ``input_sizes`` with each window of ``grad_in`` added back where it was taken
    (overlapping windows add up): the gradient of ``unfold``."""
    input_sizes = tuple(input_sizes)
    if not input_sizes:
        return grad_in.sum(dtype=grad_in.dtype).reshape(())
    d, windows, _ = _window_geometry(input_sizes, dim, size, step)
    out = np.zeros(input_sizes, grad_in.dtype)
    positions = (np.arange(windows)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    # (dim d and the window's last dim to the front, merged: one row per position taken)
    moved = np.moveaxis(grad_in, (d, grad_in.ndim - 1), (0, 1))
    rows = moved.reshape((windows * size,) + moved.shape[2:])
    np.add.at(np.moveaxis(out, d, 0), positions, rows)
    return out


@_unfold_backward.derivative("grad_in")
def _(ops, grad, dim, size, step):
    return ops.unfold(grad, dim, size, step)


def _unfold_method(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last
    dimension (a view sharing ``self``'s memory).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(5.).unfold(0, 2, 2)
        tensor([[0., 1.],
                [2., 3.]])
    """
    return _unfold(self, dimension, size, step)


_unfold_method.__name__ = _unfold_method.__qualname__ = "unfold"
tensor_method(name="unfold")(_unfold_method)


# ----------------------------------------------------------------------------------------------
# take_along_dim


@tensor_method
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """The elements of ``input`` at ``indices`` along ``dim`` (``indices`` and ``input``
    broadcast against each other except along ``dim``); with no ``dim``, at ``indices`` of the
    flattened ``input``.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([[10, 30, 20], [60, 40, 50]])
        >>> torch.take_along_dim(x, x.argmax(1, keepdim=True), 1)
        tensor([[30],
                [60]])
    """
    if indices._data.dtype != np.int64:
        raise RuntimeError(
            "torch.take_along_dim(): dtype of indices should be Long but got "
            f"{indexing._scalar_name(indices._data.dtype)}"
        )
    if dim is None:
        return indexing.gather(input.view(-1), 0, indices.view(-1))
    ndim = input._data.ndim
    if ndim != indices._data.ndim:
        raise RuntimeError(
            "torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {ndim} dimensions for input, and {indices._data.ndim} "
            "dimensions for indices"
        )
    d = wrap_dim_scalar(dim, ndim)
    if ndim == 0:  # (PyTorch asks a 0-d input for its size along dim)
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    in_shape = list(input._data.shape)
    in_shape[d] = indices._data.shape[d]
    index_shape = indexing._broadcast_shape(tuple(in_shape), indices._data.shape)
    self_shape = list(index_shape)
    if ndim:
        self_shape[d] = input._data.shape[d]
    expanded_indices = shape.broadcast_to(indices, index_shape)
    expanded_input = shape.broadcast_to(input, tuple(self_shape))
    return indexing.gather(expanded_input, d, expanded_indices)


# ----------------------------------------------------------------------------------------------
# repeat_interleave


def _repeat_indices(repeats: Tensor) -> Tensor:
    """``repeat_interleave(repeats)``: each position ``i`` repeated ``repeats[i]`` times."""
    r = repeats._data
    if r.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if r.dtype.kind not in "iu":
        raise _dtype.no_kernel("repeat_interleave_cpu", r.dtype)
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return wrap(np.repeat(np.arange(r.size, dtype=r.dtype), r))


@tensor_method
def repeat_interleave(
    input: Tensor, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None
) -> Tensor:
    """Each element (each slice along ``dim``) repeated ``repeats`` times in place, where
    ``repeats`` is a number or one count per element; with no ``dim``, of the flattened input.
    ``repeat_interleave(counts)`` alone gives ``i`` repeated ``counts[i]`` times.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1, 2]).repeat_interleave(2)
        tensor([1, 1, 2, 2])
    """
    if repeats is None:  # repeat_interleave(repeats): the indices
        return _repeat_indices(input)
    if dim is None:
        input = shape.flatten(input)
        dim = 0
    ndim = input._data.ndim
    if isinstance(repeats, Tensor):
        r = repeats._data
        if r.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if ndim == 0:  # (PyTorch asks a 0-d input for its size along dim)
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, ndim)
        length = input._data.shape[d]
        if r.size == 1:
            repeats = shape.expand(shape.reshape(repeats, (1,)), length)
        elif r.shape[0] != length:
            raise RuntimeError(
                "repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{r.shape[0]} and input.size({d}) = {length}"
            )
        return indexing.index_select(input, d, _repeat_indices(repeats))
    count = int(repeats)
    if count < 0:
        raise RuntimeError("Repeats must be non-negative")
    d = wrap_dim(dim, ndim)
    if ndim == 0:  # (0-d: dim 0, then PyTorch's unsqueeze(1) fails)
        wrap_dim(1, 0)
    # PyTorch's composition: a new dim after ``d``, expanded, copied row-major (whatever the
    # input's layout) and viewed with ``d`` merged.
    widened = list(input._data.shape)
    widened.insert(d + 1, count)
    expanded = shape.expand(shape.unsqueeze(input, d + 1), tuple(widened))
    copied = clone(expanded, memory_format=contiguous_format)
    merged = widened[:d] + [widened[d] * count] + widened[d + 2:]
    return shape.view(copied, tuple(merged))


# ----------------------------------------------------------------------------------------------
# diagflat, hsplit, vsplit, dsplit


@tensor_method
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A matrix whose ``offset`` diagonal holds the flattened ``input``.

    Example:
        >>> import chainrule as torch
        >>> torch.diagflat(torch.tensor([[1, 2]]))
        tensor([[1, 0],
                [0, 2]])
    """
    return shape.diag_embed(shape.reshape(input, (-1,)), offset)


def _split_along(name: str, input: Tensor, spec: Any, min_dims: int, dim: int) -> tuple:
    ndim = input._data.ndim
    if ndim < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
            f"tensor with {ndim} dimensions!"
        )
    if isinstance(spec, int | np.integer) and not isinstance(spec, bool):
        size = input._data.shape[dim]
        if spec == 0 or size % spec:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {spec}!"
            )
    return shape.tensor_split(input, spec, dim)


@tensor_method
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """Split horizontally: along dim 1 (dim 0 of a 1-D tensor), into equal sections or at the
    given indices."""
    dim = 0 if input._data.ndim == 1 else 1
    return _split_along("hsplit", input, indices_or_sections, 1, dim)


@tensor_method
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """Split vertically: along dim 0 of a tensor of at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 2, 0)


@tensor_method
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    """Split depth-wise: along dim 2 of a tensor of at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 3, 2)


# Helpers for derivatives (``ops.<name>``).
PRIMITIVES: dict[str, Any] = {
    "rot90": rot90,
    "unfold": _unfold,
    "unfold_backward": _unfold_backward,
}
