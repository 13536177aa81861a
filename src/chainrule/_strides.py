"""PyTorch's layout rule for new tensors that copy another one (``torch.preserve_format``).

``clone()`` and ``empty_like()`` keep the memory order of their input: a transposed input gives a
transposed result. PyTorch orders the result's dimensions as the input's strides order them,
innermost first, and makes it dense: for an input that is already dense that is the input's own
layout; for an expanded or step-sliced one, dimensions of stride 0 are "ambiguous" and keep their
place, and equal strides put the smaller dimension inside (the insertion sort of PyTorch's
``infer_dense_strides``, which its TensorIterator also uses).

NumPy's ``order="K"`` differs for stride-0 dimensions (it puts them innermost), so the rule is
written out here.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "layout_order", "empty_preserving_layout", "copy_preserving_layout",
    "full_preserving_layout", "strided",
    "contiguous_format", "preserve_format", "channels_last",
]

# The layout and memory-format markers (``torch.strided``, ``torch.preserve_format`` ...).
strided = "chainrule.strided"
contiguous_format = "chainrule.contiguous_format"
preserve_format = "chainrule.preserve_format"
channels_last = "chainrule.channels_last"


def layout_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """The dimensions from innermost to outermost, as PyTorch lays out a copy of this layout."""

    def should_swap(dim0: int, dim1: int) -> int:
        stride0, stride1 = strides[dim0], strides[dim1]
        if stride0 == 0 or stride1 == 0:
            return 0  # ambiguous: keep the contiguous order
        if stride0 < stride1:
            return -1
        if stride0 > stride1:
            return 1
        return 1 if shape[dim0] > shape[dim1] else 0

    order = list(range(len(shape) - 1, -1, -1))  # C order: the last dimension innermost
    for i in range(1, len(order)):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(order[dim0], order[dim1])
            if comparison > 0:
                order[dim0], order[dim1] = order[dim1], order[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return order


def empty_preserving_layout(array: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """An uninitialised array of ``array``'s shape (and dtype, unless given), laid out as
    PyTorch lays out a copy of it."""
    dtype = array.dtype if dtype is None else dtype
    if array.ndim < 2 or array.flags.c_contiguous or any(s < 0 for s in array.strides):
        return np.empty(array.shape, dtype)  # (negative strides: PyTorch has none)
    inner_to_outer = layout_order(array.shape, array.strides)
    outer_to_inner = inner_to_outer[::-1]
    block = np.empty([array.shape[d] for d in outer_to_inner], dtype)
    return block.transpose(np.argsort(outer_to_inner))


def copy_preserving_layout(array: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """A copy of ``array`` (cast to ``dtype`` if given) in the layout PyTorch's ``clone()`` and
    ``to()`` give it."""
    if array.flags.c_contiguous:
        return array.astype(array.dtype if dtype is None else dtype)
    out = empty_preserving_layout(array, dtype)
    np.copyto(out, array, casting="unsafe")
    return out


def full_preserving_layout(array: np.ndarray, value: object) -> np.ndarray:
    """``value`` in ``array``'s shape and dtype, laid out as PyTorch lays out a result computed
    from ``array`` (``np.full_like`` would put an expanded dimension innermost)."""
    out = empty_preserving_layout(array)
    out.fill(value)
    return out
