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
    "full_preserving_layout", "strided", "is_non_overlapping_and_dense",
    "obeys_layout_contract", "copy_obeying_contract", "empty_with_strides_of",
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


# ----------------------------------------------------------------------------------------------
# The gradient layout contract (what AccumulateGrad gives a leaf's ``.grad``)


def is_non_overlapping_and_dense(array: np.ndarray) -> bool:
    """Whether the elements fill one block of memory, each once, in some order of the
    dimensions (PyTorch's ``is_non_overlapping_and_dense``: a permuted contiguous layout)."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return True
    itemsize = array.itemsize
    dims = sorted(
        (stride, size) for size, stride in zip(array.shape, array.strides, strict=True)
        if size >= 2
    )
    required = itemsize
    for stride, size in dims:
        if stride != required:
            return False
        required *= size
    return True


def obeys_layout_contract(grad: np.ndarray, variable: np.ndarray) -> bool:
    """PyTorch's "gradient layout contract" (``obeys_layout_contract``): a gradient fit to be a
    leaf's ``.grad`` has the leaf's strides when the leaf is non-overlapping and dense (over
    dimensions of size other than 1, where it only must not have stride 0), else is row-major.
    ``grad`` has ``variable``'s shape and dtype."""
    strides = grad.strides
    if variable.flags.c_contiguous and grad.flags.c_contiguous and 0 not in strides:
        return True  # the common case, without the loop
    if not is_non_overlapping_and_dense(variable):
        return bool(grad.flags.c_contiguous)
    for size, stride, wanted in zip(grad.shape, strides, variable.strides, strict=True):
        if stride != wanted if size != 1 else stride == 0:
            return False
    return True


def empty_with_strides_of(variable: np.ndarray) -> np.ndarray:
    """An uninitialised array with ``variable``'s shape, dtype and strides (which must be
    non-overlapping and dense: one block of ``variable.size`` elements)."""
    block = np.empty(max(variable.size, 1), variable.dtype)
    return np.lib.stride_tricks.as_strided(block, variable.shape, variable.strides)


def copy_obeying_contract(grad: np.ndarray, variable: np.ndarray) -> np.ndarray:
    """A copy of ``grad`` laid out as PyTorch's AccumulateGrad lays out a ``.grad`` it copies
    (``clone_obey_contract``): with the leaf's own strides if the leaf is non-overlapping and
    dense, else row-major."""
    out = np.empty(variable.shape, variable.dtype)
    if out.strides != variable.strides and is_non_overlapping_and_dense(variable):
        out = empty_with_strides_of(variable)
    np.copyto(out, grad, casting="unsafe")
    return out
