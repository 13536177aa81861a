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

import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._frames import user_stacklevel

__all__ = [
    "layout_order", "empty_preserving_layout", "copy_preserving_layout",
    "full_preserving_layout", "strided", "is_non_overlapping_and_dense",
    "obeys_layout_contract", "copy_obeying_contract", "empty_with_strides_of",
    "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
    "iterator_order", "broadcast_strides", "empty_in_order", "iterator_output",
    "in_iterator_layout", "MEMORY_FORMATS", "is_contiguous_as", "copy_in_memory_format",
    "memory_format_strides", "storage_root", "flat_storage", "has_internal_overlap", "writable",
    "OVERLAP_MESSAGE", "warn_expanded_write", "PARTIAL_OVERLAP_MESSAGE", "overlap_status",
    "suggest_memory_format", "empty_in_memory_format", "c_contiguous", "is_row_major",
    "contiguous_strides",
    "element_strides", "with_strides", "view_strides", "empty_like_preserving", "layout",
    "memory_format", "check_memory_format", "check_layout", "dim_order", "argument_type_name",
]

class layout:
    """A tensor's memory layout (PyTorch's ``torch.layout``): here every tensor is
    ``strided``. Printed by name, as PyTorch prints it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"chainrule.{self._name}"

    def __reduce__(self) -> str:  # (pickled as the module's marker of that name)
        return self._name


class memory_format:
    """How a copy lays out its elements (PyTorch's ``torch.memory_format``):
    ``contiguous_format``, ``preserve_format``, ``channels_last``, ``channels_last_3d``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"chainrule.{self._name}"

    def __reduce__(self) -> str:
        return self._name


def _outer_first(shape: Sequence[int], strides: Sequence[int], a: int, b: int) -> int:
    """PyTorch's comparison of dimensions ``a`` and ``b`` for a permutation from the outermost
    dimension: 1 if ``a`` lies inside ``b`` in memory (swap them), -1 if outside, 0 if
    undecided (a zero stride, or equal strides and lengths)."""

    def at_least(x: int, y: int) -> bool:  # (x >= y, a length of 0 counting as the larger)
        if y == 0:
            return True
        if x == 0:
            return False
        return x >= y or x % y == 0

    stride_a, stride_b = strides[a], strides[b]
    if stride_a == 0 or stride_b == 0:
        return 0
    if stride_a == stride_b:
        return 0 if at_least(shape[b], shape[a]) else 1
    if at_least(stride_b, stride_a):
        return -1
    return 1 if at_least(stride_a, stride_b) else 0


def dim_order(array: np.ndarray) -> tuple[list[int], bool]:
    """The dimensions of ``array`` from the outermost in memory to the innermost (PyTorch's
    logical to physical permutation of an element-wise result), and whether that order is not
    the only one (two neighbours the comparison leaves undecided)."""
    shape, strides = array.shape, element_strides(array)
    ndim = len(shape)
    if ndim == 0:
        return [], False
    if ndim == 1:
        return [0], False
    contiguous = is_contiguous_as(array, contiguous_format)
    channels = is_contiguous_as(array, channels_last)
    if contiguous and not channels:
        return list(range(ndim)), False
    if channels and not contiguous:
        return [0, *range(2, ndim), 1], False
    # an insertion sort from the innermost dimension, stopping at the first decided comparison
    order = list(reversed(range(ndim)))
    for i in range(1, ndim):
        right = i
        for left in reversed(range(i)):
            comparison = _outer_first(shape, strides, order[left], order[right])
            if comparison > 0:
                order[left], order[right] = order[right], order[left]
                right = left
            elif comparison < 0:
                break
    ambiguous = any(
        _outer_first(shape, strides, order[i], order[i + 1]) != -1 for i in range(ndim - 1)
    )
    return list(reversed(order)), ambiguous


def argument_type_name(value: Any) -> str:
    """A value's type as PyTorch's argument errors name it (``str``, ``torch.dtype``,
    ``Tensor``)."""
    kind = type(value)
    given = kind.__name__
    if kind.__module__.startswith("chainrule") and given != "Tensor":
        given = f"torch.{given}"  # (layout, dtype ...: PyTorch's C types' names)
    return given


def check_memory_format(name: str, value: Any) -> None:
    """PyTorch's argument error of ``name`` given a ``memory_format`` that is not one."""
    if value is not None and not isinstance(value, memory_format):
        raise TypeError(
            f"{name}(): argument 'memory_format' must be torch.memory_format, not "
            f"{argument_type_name(value)}"
        )


def check_layout(name: str, value: Any) -> None:
    """PyTorch's argument error of ``name`` given a ``layout`` that is not one."""
    if value is not None and not isinstance(value, layout):
        raise TypeError(
            f"{name}(): argument 'layout' must be torch.layout, not {argument_type_name(value)}"
        )


# The layout and memory-format markers (``torch.strided``, ``torch.preserve_format`` ...).
strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


def layout_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """The dimensions from innermost to outermost, as PyTorch lays out a copy of this layout."""
    return iterator_order(shape, [strides])


def empty_preserving_layout(array: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """An uninitialised array of ``array``'s shape (and dtype, unless given), laid out as
    PyTorch lays out a copy of it."""
    dtype = array.dtype if dtype is None else dtype
    if array.ndim < 2 or any(s < 0 for s in array.strides):
        return np.empty(array.shape, dtype)  # (negative strides: PyTorch has none)
    if array.flags.c_contiguous:
        out = np.empty(array.shape, dtype)
        if 1 not in array.shape or _row_major_strides(array):
            return out
        # PyTorch's empty_like(preserve_format) copies the strides of a non-overlapping and
        # dense tensor exactly, those of its size-1 dimensions too (which NumPy's row-major
        # flag ignores): (3, 1, 4) with strides (4, 100, 1) stays so
        return np.lib.stride_tricks.as_strided(
            out, array.shape, tuple(stride * out.itemsize for stride in element_strides(array)))
    inner_to_outer = layout_order(array.shape, array.strides)
    outer_to_inner = inner_to_outer[::-1]
    block = np.empty([array.shape[d] for d in outer_to_inner], dtype)
    return block.transpose(np.argsort(outer_to_inner))


def _row_major_strides(array: np.ndarray) -> bool:
    """Whether a row-major (by NumPy's flag) array has the row-major strides PyTorch gives
    a new tensor also in its size-1 dimensions (or is empty)."""
    return array.size == 0 or element_strides(array) == contiguous_strides(array.shape)


def copy_preserving_layout(array: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """A copy of ``array`` (cast to ``dtype`` if given) in the layout PyTorch's ``clone()`` and
    ``to()`` give it (an empty array keeps its strides, as PyTorch's)."""
    if not array.size:
        return empty_like_preserving(array, dtype)
    if array.flags.c_contiguous and (1 not in array.shape or _row_major_strides(array)):
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
    ``grad`` normally has ``variable``'s shape; it has another only when ``.data`` or ``set_``
    gave the leaf a new shape after the graph was built: then, as PyTorch, ``grad``'s strides
    are compared with the leaf's first ones (a gradient with more dimensions than the leaf does
    not obey), so a gradient of the old shape may still be kept as is."""
    strides = grad.strides
    if (
        variable.flags.c_contiguous
        and grad.flags.c_contiguous
        and 0 not in strides
        and grad.shape == variable.shape
    ):
        return True  # the common case, without the loop
    if not is_non_overlapping_and_dense(variable):
        return bool(grad.flags.c_contiguous)
    if grad.ndim > variable.ndim:
        return False
    wanted_strides = variable.strides
    if grad.itemsize != variable.itemsize:  # (strides in elements, as PyTorch's)
        strides = tuple(s // grad.itemsize for s in strides)
        wanted_strides = tuple(s // variable.itemsize for s in wanted_strides)
    for size, stride, wanted in zip(grad.shape, strides, wanted_strides[: grad.ndim], strict=True):
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
    if variable.flags.c_contiguous and grad.shape == variable.shape:  # the common case
        return np.array(grad, dtype=variable.dtype, order="C")
    out = np.empty(variable.shape, variable.dtype)
    if out.strides != variable.strides and is_non_overlapping_and_dense(variable):
        out = empty_with_strides_of(variable)
    np.copyto(out, grad, casting="unsafe")
    return out
# TensorIterator's output layout, memory formats, and strides of empty tensors


def iterator_order(shape: tuple[int, ...], operand_strides: list[tuple[int, ...]]) -> list[int]:
    """The dimensions from innermost to outermost, as PyTorch's TensorIterator orders them for
    an output it allocates (``reorder_dimensions``).

    ``operand_strides`` are the inputs' strides broadcast to ``shape`` (0 for a broadcast
    dimension, in any unit, each operand in one unit), in the order the op adds its inputs.
    Two dimensions are compared operand by operand: an operand with a stride 0 in either says
    nothing; the first strict difference decides; equal strides put the larger dimension outside
    (and say nothing otherwise). With one operand this is :func:`layout_order`.
    """

    def should_swap(dim0: int, dim1: int) -> int:
        for strides in operand_strides:
            stride0, stride1 = strides[dim0], strides[dim1]
            if stride0 == 0 or stride1 == 0:
                continue
            if stride0 < stride1:
                return -1
            if stride0 > stride1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    order = list(range(len(shape) - 1, -1, -1))
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


def broadcast_strides(array: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``array``'s strides (bytes) as TensorIterator sees it in an op of result ``shape``:
    missing leading dimensions and size-1 dimensions that broadcast get stride 0."""
    lead = len(shape) - array.ndim
    strides = [0] * lead
    for size, target, stride in zip(array.shape, shape[lead:], array.strides, strict=True):
        strides.append(0 if size == 1 and target != 1 else stride)
    return tuple(strides)


def empty_in_order(shape: tuple[int, ...], dtype: np.dtype, inner_to_outer: list[int]
                   ) -> np.ndarray:
    """An uninitialised dense array of ``shape`` whose dimensions lie in memory in the order
    given (innermost first): PyTorch's ``empty_strided`` with dense strides of that order."""
    outer_to_inner = inner_to_outer[::-1]
    if outer_to_inner == sorted(outer_to_inner):
        return np.empty(shape, dtype)
    block = np.empty([shape[d] for d in outer_to_inner], dtype)
    return block.transpose(np.argsort(outer_to_inner))


def iterator_output(shape: tuple[int, ...], dtype: np.dtype, operands: list[np.ndarray]
                    ) -> np.ndarray:
    """An uninitialised array laid out as PyTorch's TensorIterator allocates the output of an
    op over ``operands`` (the inputs, in order) with result ``shape``."""
    strides = [broadcast_strides(a, shape) for a in operands]
    return empty_in_order(shape, dtype, iterator_order(shape, strides))


def in_iterator_layout(out: np.ndarray, operands: list[np.ndarray]) -> np.ndarray:
    """``out``, an element-wise op's result over ``operands`` (its array inputs, in PyTorch's
    order), laid out as PyTorch's TensorIterator allocates it: ``out`` itself when NumPy chose
    the same order, else a copy. NumPy orders the result by all operands at once and falls back
    to row-major when they disagree; TensorIterator lets the first operand that orders two
    dimensions decide (``x.t() + y`` is laid out as ``x.t()``)."""
    wanted = iterator_output(out.shape, out.dtype, operands)
    if wanted.strides == out.strides:
        return out
    np.copyto(wanted, out)
    return wanted



def _strides_like_channels_last(shape: tuple[int, ...], strides: tuple[int, ...],
                                dims: tuple[int, ...]) -> bool:
    """PyTorch's ``is_channels_last_strides_{2d,3d}`` (``dims``: the channel dimension first,
    then the spatial ones innermost to outermost, then the batch dimension)."""
    if strides[1] == 0:
        return False  # a trivial channel dimension: contiguous by default
    low = 0
    for d in dims:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False  # ambiguous (N111 and the like): contiguous by default
        low = strides[d]
        if shape[d] > 1:
            low *= shape[d]
    return True


def suggest_memory_format(array: np.ndarray) -> memory_format:
    """PyTorch's ``suggest_memory_format()``: ``channels_last`` for a 4-d array laid out as
    NHWC, ``channels_last_3d`` for a 5-d one laid out as NDHWC, else ``contiguous_format``."""
    if array.ndim == 4 and _strides_like_channels_last(array.shape, array.strides,
                                                       (1, 3, 2, 0)):
        return channels_last
    if array.ndim == 5 and _strides_like_channels_last(array.shape, array.strides,
                                                       (1, 4, 3, 2, 0)):
        return channels_last_3d
    return contiguous_format


def empty_in_memory_format(shape: tuple[int, ...], dtype: np.dtype, memory_format: Any
                           ) -> np.ndarray:
    """An uninitialised array of ``shape`` in a memory format (channels innermost for the
    channels-last formats, C order otherwise)."""
    if memory_format == channels_last and len(shape) == 4:
        return empty_in_order(shape, dtype, [1, 3, 2, 0])
    if memory_format == channels_last_3d and len(shape) == 5:
        return empty_in_order(shape, dtype, [1, 4, 3, 2, 0])
    return np.empty(shape, dtype)


MEMORY_FORMATS = (contiguous_format, preserve_format, channels_last, channels_last_3d)
#: The dimensions of each channels-last format, innermost first, and the rank it needs.
_CHANNELS_LAST_ORDERS = {channels_last: ((1, 3, 2, 0), 4), channels_last_3d: ((1, 4, 3, 2, 0), 5)}


def is_contiguous_as(array: np.ndarray, memory_format: Any) -> bool:
    """PyTorch's ``is_contiguous(memory_format=...)``: for a channels-last format, strides
    exactly those of its layout (dimensions of size 1 aside; false for another rank); for the
    others, row-major and dense."""
    order = _CHANNELS_LAST_ORDERS.get(memory_format)  # type: ignore[arg-type]
    if order is None:
        return bool(array.flags.c_contiguous)
    dims, rank = order
    if array.ndim != rank:
        return False
    itemsize = array.itemsize
    expected = 1
    for d in dims:
        size = array.shape[d]
        if size != 1:
            if array.strides[d] != expected * itemsize:
                return False
            expected *= size
    return True


def memory_format_strides(shape: tuple[int, ...], memory_format: Any) -> tuple[int, ...]:
    """The strides (in elements) PyTorch gives ``shape`` in ``memory_format`` (contiguous or a
    channels-last format; its error for a channels-last format of another rank)."""
    order = _CHANNELS_LAST_ORDERS.get(memory_format)
    if order is None:
        return contiguous_strides(shape)
    dims, rank = order
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format._name} format")
    strides = [0] * rank
    step = 1
    for d in dims:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def copy_in_memory_format(array: np.ndarray, memory_format: Any,
                          dtype: np.dtype | None = None) -> np.ndarray:
    """A copy of ``array`` (cast to ``dtype``) laid out in ``memory_format`` (not
    ``preserve_format``), with PyTorch's error for a channels-last format of another rank."""
    strides = memory_format_strides(array.shape, memory_format)
    out = empty_in_memory_format(array.shape, dtype or array.dtype, memory_format)
    if out.size == 0:  # NumPy gives an empty array no strides: PyTorch's
        return with_strides(out, out.shape, strides)
    out[...] = array
    return out


def is_row_major(array: np.ndarray) -> bool:
    """Whether ``array`` has PyTorch's contiguous strides exactly, also in its dimensions of
    size 1 (NumPy's and PyTorch's contiguity flags ignore those strides, but PyTorch's
    ``stride()`` shows them and its TensorIterator orders by them)."""
    if not array.flags.c_contiguous:
        return False
    if 1 not in array.shape or array.size == 0:
        return True
    step = array.itemsize
    for size, stride in zip(reversed(array.shape), reversed(array.strides), strict=True):
        if stride != step:
            return False
        step *= size
    return True


def c_contiguous(array: np.ndarray) -> np.ndarray:
    """``array`` in C order with PyTorch's contiguous strides: itself when it has them, a view
    when only dimensions of size 1 have other strides, else a C-ordered copy (0-d arrays stay
    0-d, which ``np.ascontiguousarray`` does not keep)."""
    if not array.flags.c_contiguous:
        return array.copy()
    if 1 not in array.shape or is_row_major(array):
        return array
    return with_strides(array, array.shape, contiguous_strides(array.shape))


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's contiguous strides (in elements) of ``shape``: sizes 0 count as 1."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def element_strides(array: np.ndarray) -> tuple[int, ...]:
    """``array``'s strides in elements, as PyTorch reports them.

    NumPy gives a new empty array zero strides, where PyTorch gives contiguous ones: an empty
    array whose strides are all zero has contiguous strides; other empty arrays (views made by
    :func:`with_strides`, which PyTorch's view rules give strides) keep theirs.
    """
    itemsize = array.itemsize
    if array.size == 0 and not any(array.strides):
        return contiguous_strides(array.shape)
    return tuple(s // itemsize for s in array.strides)


def storage_root(array: np.ndarray) -> np.ndarray:
    """The array that owns ``array``'s memory (the end of its ``base`` chain): its storage."""
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)

PARTIAL_OVERLAP_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation."
)


def overlap_status(a: np.ndarray, b: np.ndarray) -> str:
    """PyTorch's ``get_overlap_status`` of two arrays: ``"no"`` (no memory in common, or an
    empty one), ``"too hard"`` (one of them is not non-overlapping and dense: PyTorch does not
    look further), ``"full"`` (the same memory block with the same strides) or ``"partial"``
    (overlapping blocks otherwise)."""
    if a.size == 0 or b.size == 0 or not np.may_share_memory(a, b):
        return "no"
    if not (is_non_overlapping_and_dense(a) and is_non_overlapping_and_dense(b)):
        return "too hard"
    a_begin = a.__array_interface__["data"][0]
    b_begin = b.__array_interface__["data"][0]
    a_end = a_begin + a.size * a.itemsize
    b_end = b_begin + b.size * b.itemsize
    if a_begin == b_begin and a_end == b_end:
        same = a.itemsize == b.itemsize and a.strides == b.strides
        return "full" if same else "partial"
    return "partial" if a_begin < b_end and b_begin < a_end else "no"


def warn_expanded_write(op_name: str, example: str) -> None:
    """PyTorch's deprecation warning for ``op_name`` writing into an expanded tensor."""
    warnings.warn(
        f"Use of {op_name} on expanded tensors is deprecated. Please clone() the tensor before "
        "performing this operation. This also applies to advanced indexing e.g. "
        f"{example}",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def has_internal_overlap(array: np.ndarray) -> bool:
    """PyTorch's ``has_internal_overlap(...) == MemOverlap::Yes``: a dimension of more than one
    element with stride 0 (as ``expand`` makes). Other layouts count as not overlapping, as
    PyTorch does not look further ("too hard")."""
    return any(
        stride == 0 and size > 1 for size, stride in zip(array.shape, array.strides, strict=True)
    )


def writable(array: np.ndarray) -> np.ndarray:
    """``array``, or, when it is a read-only view (an expanded tensor's), a writable alias of
    the same memory made on its storage when the storage is writable (PyTorch writes through
    an expanded tensor where the op allows it). Otherwise ``array`` itself."""
    if array.flags.writeable:
        return array
    root = storage_root(array)
    if not root.flags.writeable:
        return array
    try:
        offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return np.ndarray(array.shape, array.dtype, buffer=root, offset=offset,
                          strides=array.strides)
    except (TypeError, ValueError, BufferError):  # an owner without the buffer protocol
        return array


def flat_storage(array: np.ndarray) -> np.ndarray:
    """The memory ``array`` lies in (its storage root) as a 1-D view, in memory order."""
    return storage_root(array).ravel(order="K")  # (a view: the root owns contiguous memory)


def on_storage(flat: np.ndarray, shape: Sequence[int], strides: Sequence[int],
               offset: int, writeable: bool = True) -> np.ndarray:
    """The array of ``shape``/``strides``/``offset`` (in elements) on the 1-D storage ``flat``
    (an ``as_strided`` of it); read-only when ``flat`` is or ``writeable`` is False."""
    itemsize = flat.itemsize
    out = np.ndarray(tuple(shape), flat.dtype, buffer=flat, offset=offset * itemsize,
                     strides=tuple(s * itemsize for s in strides))
    if not (writeable and flat.flags.writeable):
        out.flags.writeable = False
    return out


def with_strides(array: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...],
                 offset: int = 0) -> np.ndarray:
    """A view of ``array`` with ``shape`` and ``strides`` (in elements), starting ``offset``
    elements after it, that reaches no element other than those of a plain view of it: for an
    empty array (no element is ever read), or strides that differ from a plain view's only in
    dimensions of size 1 (never stepped along). They are PyTorch's strides where NumPy's differ
    (``zeros(0, 3).t().stride()`` is ``(1, 3)``; ``unsqueeze(-1)`` of a transposed matrix gives
    the new dimension stride 1; an empty slice keeps PyTorch's start and step).
    """
    byte_strides = tuple(s * array.itemsize for s in strides)
    # Made on the array that owns the memory, so that the view's ``base`` chain leads there
    # (``storage_offset()`` and ``untyped_storage()`` follow it; ``as_strided`` would break it).
    root = storage_root(array)
    try:
        start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        start += offset * array.itemsize
        out = np.ndarray(shape, array.dtype, buffer=root, offset=start, strides=byte_strides)
    except (TypeError, ValueError, BufferError):  # an owner without the buffer protocol
        from numpy.lib.stride_tricks import as_strided

        out = as_strided(array, shape, byte_strides)
    if not array.flags.writeable:
        out.flags.writeable = False  # (an expanded array stays read-only)
    return out


def view_strides(old_shape: tuple[int, ...], old_strides: tuple[int, ...],
                 new_shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides PyTorch's ``view`` gives a tensor of ``old_shape``/``old_strides`` viewed as
    ``new_shape`` (its ``computeStride``), or None when no view is possible.

    NumPy's reshape agrees on the dimensions that matter but may give a size-1 dimension
    another stride.
    """
    numel = 1
    for size in old_shape:
        numel *= size
    if numel == 0:
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_strides)
        return contiguous_strides(tuple(new_shape))
    if not old_shape:
        old_shape, old_strides = (1,), (1,)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1
                             and old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def empty_like_preserving(array: np.ndarray, dtype: np.dtype | None = None) -> np.ndarray:
    """:func:`empty_preserving_layout`, also for an empty ``array``: PyTorch's
    ``empty_like(preserve_format)`` keeps an empty tensor's strides as they are."""
    if array.size or array.ndim < 2:
        return empty_preserving_layout(array, dtype)
    out = np.empty(array.shape, array.dtype if dtype is None else dtype)
    return with_strides(out, array.shape, element_strides(array))


_TYPED_STORAGE_WARNED = [False]


class TypedStorage:
    """``tensor.storage()``: the memory a tensor lies in, seen as elements of its dtype
    (PyTorch's deprecated ``TypedStorage``): its length counts the whole storage, not only the
    tensor's elements; ``data_ptr()`` is the storage's start."""

    __slots__ = ("_flat", "dtype")

    def __init__(self, array: np.ndarray, dtype: Any) -> None:
        root = storage_root(array)
        # (the storage in the tensor's element type: a float view of complex memory counts
        # two per complex number, as PyTorch's)
        flat = root.ravel(order="K")  # (a view: the root owns contiguous memory)
        self._flat = flat.view(array.dtype) if root.size else array.reshape(0)
        self.dtype = dtype

    @property
    def device(self) -> Any:
        """The CPU."""
        from ._size import CPU

        return CPU

    def __len__(self) -> int:
        return int(self._flat.size)

    def size(self) -> int:
        """The number of elements of the storage."""
        return len(self)

    def element_size(self) -> int:
        """Bytes per element."""
        return int(self._flat.itemsize)

    def nbytes(self) -> int:
        """Bytes of the storage."""
        return int(self._flat.nbytes)

    def data_ptr(self) -> int:
        """The address of the storage's first byte."""
        return int(self._flat.__array_interface__["data"][0])

    def tolist(self) -> list[Any]:
        """The elements as Python numbers."""
        return self._flat.tolist()

    def untyped(self) -> UntypedStorage:
        """The storage's bytes."""
        return untyped_storage(self._flat)

    def __getitem__(self, index: int) -> Any:
        return self._flat[index].item()

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def __repr__(self) -> str:
        body = " " + "\n ".join(str(value) for value in self.tolist())
        kind = f"chainrule.storage.TypedStorage(dtype={self.dtype}, device=cpu)"
        return f"{body}\n[{kind} of size {len(self)}]"


class UntypedStorage:
    """``tensor.untyped_storage()``: the bytes a tensor lies in (PyTorch's ``UntypedStorage``).
    Every tensor over the same memory (a view, a slice, an expansion) gives the same object;
    ``size()`` and ``len`` count bytes of the whole storage, ``data_ptr()`` is its start, and
    indexing reads or writes a byte of it (the tensors see the change)."""

    __slots__ = ("_root", "_bytes", "__weakref__")

    def __init__(self, root: np.ndarray, data: np.ndarray | None = None) -> None:
        self._root = root
        if data is None:
            data = root.ravel(order="K").view(np.uint8) if root.size else np.zeros(0, np.uint8)
        self._bytes = data

    @property
    def device(self) -> Any:
        """The CPU."""
        from ._size import CPU

        return CPU

    is_cuda = False
    is_sparse = False

    def __len__(self) -> int:
        return int(self._bytes.size)

    def size(self) -> int:
        """The number of bytes of the storage."""
        return len(self)

    def nbytes(self) -> int:
        """The number of bytes of the storage."""
        return len(self)

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    def data_ptr(self) -> int:
        """The address of the storage's first byte."""
        return int(self._bytes.__array_interface__["data"][0])

    def untyped(self) -> UntypedStorage:
        """Itself."""
        return self

    def is_shared(self) -> bool:
        """False: the memory is this process's own."""
        return False

    def is_pinned(self, device: Any = "cuda") -> bool:
        """False: there is no pinned memory without an accelerator."""
        return False

    def get_device(self) -> int:
        """-1, the CPU."""
        return -1

    def type(self) -> str:
        """The storage's type name."""
        return "chainrule.storage.UntypedStorage"

    def tolist(self) -> list[int]:
        """The bytes as Python ints."""
        return self._bytes.tolist()

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return UntypedStorage(self._root, self._bytes[index])
        size = len(self)
        position = int(index) + size if index < 0 else int(index)
        if not 0 <= position < size:
            raise IndexError(f"index {position} out of range for storage of size {size}")
        return int(self._bytes[position])

    def __setitem__(self, index: int | slice, value: Any) -> None:
        # (PyTorch's: a byte from any int, wrapped; no negative index when writing)
        if not isinstance(value, int):
            raise RuntimeError(
                "can only set storage content with a int types, but got "
                f"{type(value).__name__} instead"
            )
        if isinstance(index, slice):
            self._bytes[index] = value & 0xFF
            return
        if not 0 <= index < len(self):
            raise RuntimeError("out of bounds")
        self._bytes[index] = value & 0xFF

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def fill_(self, value: int) -> UntypedStorage:
        """Set every byte to ``value``."""
        self._bytes[...] = value
        return self

    def copy_(self, source: UntypedStorage) -> UntypedStorage:
        """Copy the bytes of a storage of the same size."""
        self._bytes[...] = source._bytes
        return self

    def __repr__(self) -> str:
        body = " " + "\n ".join(str(value) for value in self.tolist())
        return f"{body}\n[chainrule.storage.UntypedStorage(device=cpu) of size {len(self)}]"


_UNTYPED_STORAGES: weakref.WeakValueDictionary[tuple[int, int], UntypedStorage] = (
    weakref.WeakValueDictionary()
)


def untyped_storage(array: np.ndarray) -> UntypedStorage:
    """The :class:`UntypedStorage` of the memory ``array`` lies in: the same object for every
    array over that memory, while one is alive (as PyTorch keeps a storage's Python object).
    Found by the memory's start and length: a live storage keeps its memory alive, so no other
    memory can be at its address meanwhile."""
    root = storage_root(array)
    key = (int(root.__array_interface__["data"][0]), int(root.nbytes))
    storage = _UNTYPED_STORAGES.get(key)
    if storage is None:
        storage = UntypedStorage(root)
        _UNTYPED_STORAGES[key] = storage
    return storage


def typed_storage(array: np.ndarray, dtype: Any) -> TypedStorage:
    """``tensor.storage()``, with PyTorch's deprecation warning (once per process)."""
    if not _TYPED_STORAGE_WARNED[0]:
        _TYPED_STORAGE_WARNED[0] = True
        import warnings

        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()",
            UserWarning,
            stacklevel=3,
        )
    return TypedStorage(array, dtype)
