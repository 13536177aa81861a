"""Indexing: ``tensor[index]``, ``tensor[index] = value`` and the ops that pick or place
elements by index (index_select, gather, scatter, scatter_add, masked_fill, masked_select,
take, put, index_add, index_put, nonzero).

``x[index]`` follows PyTorch's order exactly. Integers, slices and None are applied first, one
after the other, as views (SelectBackward0, SliceBackward0, UnsqueezeBackward0); then all the
tensor indices at once (IndexBackward0, a copy). So ``m[0, [0, 1]]`` is an index of a select,
and integers never take part in advanced indexing as they do in NumPy (``x[0, :, [0, 1]]`` has
PyTorch's shape, not NumPy's).

Gradients of ops that pick elements put them back with accumulation (``x[[0, 0, 1]]`` sends
twice the gradient to row 0). Each of those backward helpers is an op of its own whose
derivative is the picking op again, so second derivatives work.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._meta import refuse_data_dependent
from .._overrides import DisableTorchFunction, handle_torch_function, overrides_enabled
from .._strides import (
    OVERLAP_MESSAGE,
    PARTIAL_OVERLAP_MESSAGE,
    c_contiguous,
    copy_preserving_layout,
    empty_in_order,
    has_internal_overlap,
    is_row_major,
    iterator_order,
    layout_order,
    overlap_status,
    view_strides,
    warn_expanded_write,
    writable,
)
from .._tensor import (
    _C_TYPE_NAMES,
    HAS_CONJ_BIT,
    Tensor,
    check_inference_inplace,
    retype,
    wrap,
    wrap_dim,
)
from ..autograd.forward_grad import DUAL, get_tangent, refuse_in_place, suspended
from ..autograd.grad_mode import state as _grad_state
from ..autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ._forward import tangent_to_write
from ._registry import argument_position, op, tensor_method
from .pointwise import _edges_of_inputs_needing_grad, _not_implemented_node
from .scalar_conversion import (
    check_long_long,
    check_scalar_fits,
    check_value_tensor,
    fill_value_for,
)
from .shape import (
    _alias,
    _expanded_shape,
    _fmt,
    _select,
    _slice,
    _type_name,
    flip,
    unbind,
    unsqueeze,
    wrap_dim_scalar,
)

__all__ = [
    "index_select", "gather", "scatter", "scatter_add", "masked_fill", "masked_select", "take",
    "put", "index_add", "index_put", "nonzero", "argwhere",
]

_INT64 = np.dtype(np.int64)
_INT32 = np.dtype(np.int32)
_UINT8 = np.dtype(np.uint8)
_BOOL = np.dtype(np.bool_)

# PyTorch's names of scalar types in messages ("got Float").
_SCALAR_NAMES = {
    "float16": "Half", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "uint8": "Byte", "bool": "Bool",
}


def _scalar_name(np_dtype: np.dtype) -> str:
    return _SCALAR_NAMES.get(np_dtype.name, np_dtype.name)


# ----------------------------------------------------------------------------------------------
# Advanced indexing: IndexBackward0 and its gradient


def _np_index(indices: tuple) -> tuple:
    """Our index tuple (arrays, None for a whole dimension) as a NumPy index (a uint8 mask,
    deprecated in PyTorch but still a mask, as NumPy's bool mask)."""
    return tuple(
        slice(None) if i is None else (i != 0 if i.dtype == _UINT8 else i) for i in indices
    )


_NOT_A_SUBCLASS = (
    "Creating a Tensor subclass from a class that does not inherit from Tensor is not "
    "possible. Make sure your class inherits from Tensor."
)


def _check_subclass(cls: Any) -> None:
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, Tensor):
        raise TypeError(_NOT_A_SUBCLASS)


@tensor_method
def as_subclass(self: Tensor, cls: type[Tensor]) -> Tensor:
    """This tensor as an instance of the Tensor subclass ``cls``: an alias sharing its data,
    version counter and autograd history (``AliasBackward0`` when it requires grad; ``_base``
    is ``self``), as PyTorch's."""
    _check_subclass(cls)
    with DisableTorchFunction():
        alias = _alias(self)
    return retype(alias, cls)


def make_subclass(cls: type[Tensor], data: Tensor, require_grad: bool = False) -> Tensor:
    """``Tensor._make_subclass``: a new leaf of type ``cls`` sharing ``data``'s memory and
    version counter (detached from its history), requiring grad if ``require_grad``."""
    _check_subclass(cls)
    if not isinstance(data, Tensor):
        raise TypeError(
            f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
            f"{type(data).__name__}"
        )
    if require_grad and data._data.dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    with DisableTorchFunction():
        t = retype(Tensor.detach(data), cls)
    if require_grad:
        t.requires_grad_(True)
    return t


Tensor._make_subclass = staticmethod(make_subclass)  # type: ignore[attr-defined]


@op("IndexBackward0", tensor_lists=("indices",))
def _index(self, indices):
    # ``indices``: PyTorch's list of index tensors (None for a dimension taken whole), masks
    # as masks (NumPy reads a mask in an index tuple as PyTorch does); checked beforehand by
    # ``_index_arguments``. They are what the node saves, as in PyTorch.
    return _advanced_index(self, indices)


def _advanced_index(a: np.ndarray, indices: tuple) -> np.ndarray:
    """``a[indices]`` laid out in memory as PyTorch's index kernel lays it out (NumPy puts the
    indexed dimensions outermost: ``x[:, [0, 2]]`` of a row-major ``x`` would not be
    row-major)."""
    positions = [d for d, i in enumerate(indices) if i is not None]
    single = None  # one integer vector indexing one dimension: np.take, in one pass
    if len(positions) == 1:
        index = indices[positions[0]]
        if index.dtype.kind == "i" and index.ndim == 1:
            single = positions[0]
            if is_row_major(a):  # PyTorch's result is then row-major, as np.take's
                return np.take(a, index, axis=single)
    order = _index_output_order(a, indices)
    if single is not None and order is not None:
        # The result's dimensions are the input's: when the input lies in the result's memory
        # order, take from it permuted to that order (a row-major result), then permute back.
        outer_to_inner = order[::-1]
        permuted = np.transpose(a, outer_to_inner)
        if permuted.flags.c_contiguous:
            taken = np.take(permuted, indices[single], axis=outer_to_inner.index(single))
            return np.transpose(taken, np.argsort(outer_to_inner))
    result = a[_np_index(indices)]
    if order is None:
        if is_row_major(result):
            return result
        out = np.empty(result.shape, result.dtype)
    else:
        out = empty_in_order(result.shape, result.dtype, order)
    np.copyto(out, result)
    return out


def _index_output_order(a: np.ndarray, indices: tuple) -> list[int] | None:
    """The memory order (innermost dimension first) of PyTorch's ``a[indices]``, or None for
    row-major.

    PyTorch's index kernel is a TensorIterator (see :func:`~chainrule._strides.iterator_order`)
    over ``a`` restrided (the indexed dimensions replaced by the index shape, stride 0) and the
    index tensors, broadcast to one shape and viewed with size-1 dimensions around it; its
    output takes the order TensorIterator gives those operands. A mask stands for the columns
    of its ``nonzero()`` (stride ``mask.ndim``); an int32 index is converted to int64 first (a
    dense copy). Non-adjacent indices are first moved to the front, with the dimensions they
    index (PyTorch's ``make_info``, ``AdvancedIndex``).
    """
    # Per dimension: None, or the index tensor's (shape, strides, whether int32).
    entries: list[tuple[tuple[int, ...], tuple[int, ...], bool] | None] = []
    for index in indices:
        if index is None:
            entries.append(None)
        elif index.dtype == _BOOL or index.dtype == _UINT8:
            count = int(np.count_nonzero(index))
            entries.extend([((count,), (index.ndim,), False)] * index.ndim)
        else:
            itemsize = index.itemsize
            strides = tuple(st // itemsize for st in index.strides)
            entries.append((index.shape, strides, index.dtype == _INT32))
    defined = [d for d, e in enumerate(entries) if e is not None]
    shapes = {entries[d][0] for d in defined}  # type: ignore[index]
    broadcast = next(iter(shapes)) if len(shapes) == 1 else tuple(np.broadcast_shapes(*shapes))
    for d in defined:
        index_shape, index_strides, int32 = entries[d]  # type: ignore[misc]
        if index_shape != broadcast:  # expand_outplace: only the tensors of another shape
            lead = len(broadcast) - len(index_shape)
            index_strides = (0,) * lead + tuple(
                0 if n == 1 and b != 1 else st
                for n, b, st in zip(index_shape, broadcast[lead:], index_strides, strict=True)
            )
        if int32:  # converted with .to(kLong): a dense copy
            index_strides = _dense_strides(broadcast, index_strides)
        entries[d] = (broadcast, index_strides, int32)
    shape, strides = a.shape, tuple(st // a.itemsize for st in a.strides)
    entries += [None] * (len(shape) - len(entries))
    if defined != list(range(defined[0], defined[-1] + 1)):
        # Not adjacent: the indexed dimensions (and their indices) go first.
        order = defined + [d for d in range(len(shape)) if d not in defined]
        shape = tuple(shape[d] for d in order)
        strides = tuple(strides[d] for d in order)
        entries = [entries[d] for d in order]
        defined = list(range(len(defined)))
    before, count = defined[0], len(defined)
    after = len(shape) - before - count
    out_shape = shape[:before] + broadcast + shape[before + count:]
    # The index tensors as reshape_indexer views them: (1,) * before + shape + (1,) * after.
    index_view = (1,) * before + broadcast + (1,) * after
    operands = [strides[:before] + (0,) * len(broadcast) + strides[before + count:]]
    for d in defined:
        viewed = view_strides(broadcast, entries[d][1], index_view)  # type: ignore[index]
        operands.append(tuple(
            0 if n == 1 and m != 1 else st
            for n, m, st in zip(index_view, out_shape, viewed, strict=True)  # type: ignore[arg-type]
        ))
    order = iterator_order(out_shape, operands)
    if order == list(range(len(out_shape) - 1, -1, -1)):
        return None
    return order


def _dense_strides(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a copy (``preserve_format``) of a tensor of this shape and strides."""
    dense = [0] * len(shape)
    step = 1
    for d in layout_order(shape, strides):
        dense[d] = step
        step *= shape[d]
    return tuple(dense)


@_index.derivative("self")
def _(ops, grad, self_shape, indices):
    return ops.index_backward(0, grad, self_shape, indices)


# The backward helpers below put a gradient into zeros. PyTorch's nodes for them take the zero
# tensor as a first input, so their ``next_functions`` start with ``(None, 0)``; here that
# input is the number 0 (``zeros``), which gives the same edge without allocating anything.


@op("IndexPutImplBackward0", inputs=("zeros", "grad"), tensor_lists=("indices",))
def _index_backward(zeros, grad, input_sizes, indices):
    """Zeros of ``input_sizes`` with ``grad`` added at ``indices`` (repeats accumulate)."""
    out = np.zeros(input_sizes, grad.dtype)
    np.add.at(out, _np_index(indices), grad)
    return out


@_index_backward.derivative("grad")
def _(ops, grad, indices):
    return ops.index(grad, indices)


def _expand_indices(shape: tuple[int, ...], entries: dict[int, Any]) -> tuple:
    """PyTorch's checks and mask expansion for the tensor indices of an advanced index.

    ``entries`` maps a dimension of the indexed tensor to an index tensor or array (integer, or
    a bool mask covering ``mask.ndim`` dimensions from there). Returns one int64 array or None
    per dimension, trailing Nones dropped.
    """
    return _check_indices(shape, entries)[0]


def _index_arguments(shape: tuple[int, ...], entries: dict[int, Any]) -> tuple:
    """The ``indices`` of the recorded index ops: checked as ``_expand_indices`` checks them,
    then as PyTorch passes (and saves) them: one tensor per index (the user's own tensor when
    one was given, a mask as a mask), None for a dimension before one that is taken whole."""
    expanded, substituted = _check_indices(shape, entries)
    if substituted:
        # Nothing is copied, so any index goes; NumPy gets in-range zeros instead.
        return tuple(None if a is None else wrap(a) for a in expanded)
    out: list[Tensor | None] = []
    covered = 0
    for dim in sorted(entries):
        entry = entries[dim]
        a = entry._data if isinstance(entry, Tensor) else entry
        out.extend([None] * (dim - covered))
        out.append(entry if isinstance(entry, Tensor) else wrap(a))
        covered = dim + (a.ndim if a.dtype == _BOOL or a.dtype == _UINT8 else 1)
    return tuple(out)


def _check_indices(shape: tuple[int, ...], entries: dict[int, Any],
                   bounds: bool = True) -> tuple[tuple, bool]:
    """``_expand_indices``, and whether the result is empty so that in-range zeros stand in
    for the indices (``bounds=False``: the indices' values are not checked, for writes, which
    check them last: :func:`_check_index_bounds`)."""
    out: list[np.ndarray | None] = []
    for dim in sorted(entries):
        a = entries[dim]
        if isinstance(a, Tensor):
            a = a._data
        out.extend([None] * (dim - len(out)))
        if a.dtype == _UINT8:
            warnings.warn(
                "indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                "torch.bool instead.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
            a = a.astype(np.bool_)
        if a.dtype == _BOOL:
            for j, size in enumerate(a.shape):
                if dim + j >= len(shape) or size != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {_fmt(a.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {_fmt(shape)} at index {dim + j}"
                    )
            out.extend(np.nonzero(a))
        elif a.dtype == _INT64 or a.dtype == _INT32:
            out.append(a.astype(np.int64, copy=False))
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if len(out) > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    while out and out[-1] is None:
        out.pop()
    indices = tuple(out)
    if not indices:
        return indices, False
    defined = [(a, shape[dim]) for dim, a in enumerate(indices) if a is not None]
    if len(defined) == 1:
        count = defined[0][0].size
    else:
        try:
            count = math.prod(np.broadcast_shapes(*(a.shape for a, _ in defined)))
        except ValueError:
            shapes = ", ".join(_fmt(a.shape) for a, _ in defined)
            raise IndexError(
                "shape mismatch: indexing tensors could not be broadcast together with shapes "
                f"{shapes}"
            ) from None
    if count and any(size == 0 for _, size in defined):
        raise IndexError("index is out of bounds for dimension with size 0")
    # The number of elements of the result: the index positions times the kept dimensions.
    kept = [size for dim, size in enumerate(shape) if dim >= len(indices) or indices[dim] is None]
    if not count or not math.prod(kept):
        # PyTorch checks bounds while copying elements: with none to copy, any index goes.
        # Zeros of the same shapes give NumPy the same (empty) result without its own check.
        return tuple(None if a is None else np.zeros_like(a) for a in indices), True
    if bounds:
        _check_advanced_bounds(defined)
    return indices, False


def _check_index_bounds(shape: tuple[int, ...], indices: tuple) -> None:
    """The bounds check :func:`_check_indices` left out (``bounds=False``; its in-range zeros
    when nothing is written)."""
    defined = [(a, shape[d]) for d, a in enumerate(indices) if a is not None]
    if all(a.size for a, _ in defined):
        _check_advanced_bounds(defined)


def _check_advanced_bounds(indices: list[tuple[np.ndarray, int]]) -> None:
    """PyTorch's error for the first bad index, in its order: output positions in turn, and
    at each position the index tensors in turn (its message counts index tensors, not dims)."""
    if all(a.min() >= -size and a.max() < size for a, size in indices):
        return
    shape = np.broadcast_shapes(*(a.shape for a, _ in indices))
    bad = np.stack([np.broadcast_to((a < -size) | (a >= size), shape).reshape(-1)
                    for a, size in indices])
    position = int(np.argmax(bad.any(axis=0)))
    k = int(np.argmax(bad[:, position]))
    a, size = indices[k]
    value = np.broadcast_to(a, shape).reshape(-1)[position]
    raise IndexError(f"index {value} is out of bounds for dimension {k} with size {size}")


def _check_bounds(index: np.ndarray, size: int, dim: int, error: type[Exception]) -> None:
    """PyTorch's error for the first index outside ``[-size, size)``."""
    if index.min() < -size or index.max() >= size:
        bad = index[(index < -size) | (index >= size)].flat[0]
        raise error(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _indexed_shape(shape: tuple[int, ...], indices: tuple) -> tuple[int, ...]:
    """The shape of ``x[indices]`` (advanced indexing), without computing it."""
    positions = [d for d, a in enumerate(indices) if a is not None]
    broadcast = np.broadcast_shapes(*(indices[d].shape for d in positions))
    if positions == list(range(positions[0], positions[-1] + 1)):
        # Adjacent tensor indices: their dimensions replace the indexed ones in place.
        return shape[:positions[0]] + broadcast + shape[positions[-1] + 1:]
    kept = tuple(s for d, s in enumerate(shape) if d >= len(indices) or indices[d] is None)
    return broadcast + kept


def _check_values_fit(values_shape: tuple[int, ...], shape: tuple[int, ...],
                      indices: tuple) -> None:
    result = _indexed_shape(shape, indices)
    try:
        fits = np.broadcast_shapes(values_shape, result) == result
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {_fmt(values_shape)} cannot be broadcast to "
            f"indexing result of shape {_fmt(result)}"
        )


# ----------------------------------------------------------------------------------------------
# Parsing an index (PyTorch's applySlicing)

_SELECT = 0
_SLICE = 1
_UNSQUEEZE = 2

_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result"
)
_ZERO_DIM_INDEX = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
    "to convert a 0-dim tensor to a number"
)


def _raise_zero_dim_index(index: int) -> None:
    if index == 0:
        raise IndexError(_ZERO_DIM_INDEX)
    # PyTorch reads the size of a dimension the 0-d tensor does not have as 0.
    raise IndexError(f"index {index} is out of bounds for dimension 0 with size 0")


def _is_sequence(obj: Any) -> bool:
    return isinstance(obj, Sequence)  # lists, tuples, str (Tensor and ndarray are not)


def _treat_as_tuple(index: Any) -> bool:
    """NumPy's old rule, kept by PyTorch: a short list holding sequences, slices, tensors,
    None or Ellipsis is a tuple of indices (with a deprecation warning)."""
    if not _is_sequence(index) or len(index) >= 32:
        return False
    for item in index:
        if (isinstance(item, Tensor | np.ndarray | slice) or _is_sequence(item)
                or item is None or item is Ellipsis):
            warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=user_stacklevel())
            return True
    return False


def _sequence_index(obj: Any) -> np.ndarray:
    """A list used as an index, as PyTorch converts it: bool stays bool, the rest int64."""
    a = np.asarray(obj)
    if a.dtype.kind in "USO":
        item = a.flat[0].item() if a.size else obj
        raise TypeError(f"new(): invalid data type '{type(item).__name__}'")
    if a.dtype == _BOOL:
        return a
    return a.astype(np.int64)


def _count_specified(items: tuple) -> int:
    """Dimensions of the tensor the index items consume (None, Ellipsis and bools consume none;
    a mask consumes its dimensions)."""
    count = 0
    for obj in items:
        if isinstance(obj, Tensor):
            a = obj._data
            count += a.ndim if a.dtype == _BOOL or a.dtype == _UINT8 else 1
        elif obj is not None and obj is not Ellipsis and type(obj) is not bool:
            count += 1
    return count


def _slice_bounds(s: slice, size: int) -> tuple[int, int, int]:
    try:
        start = 0 if s.start is None else operator.index(s.start)
        stop = None if s.stop is None else operator.index(s.stop)
        step = 1 if s.step is None else operator.index(s.step)
    except TypeError:
        raise TypeError(
            "slice indices must be integers or None or have an __index__ method"
        ) from None
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    return slice(start, stop, step).indices(size)


def _is_whole(s: slice, size: int) -> bool:
    """A slice PyTorch skips inside a tuple index: from 0, step 1, to the end (or beyond)."""
    start = 0 if s.start is None else operator.index(s.start)
    step = 1 if s.step is None else operator.index(s.step)
    return start == 0 and step == 1 and (s.stop is None or operator.index(s.stop) >= size)


def _int_like(obj: Any) -> bool:
    return type(obj) is int or isinstance(obj, np.integer)


def _plan(shape: tuple[int, ...], items: tuple) -> tuple[list[tuple], dict[int, np.ndarray]]:
    """The view steps and the tensor indices of a tuple index, as PyTorch's applySlicing.

    Steps are ``(_SELECT, dim, index)``, ``(_SLICE, dim, start, stop, step)`` or
    ``(_UNSQUEEZE, dim)``, applied in order; the tensor indices map dimensions of the viewed
    result to index arrays. (PyTorch's out-of-bounds message names the item's position in the
    index, not the dimension it selects from.)
    """
    ndim = len(shape)
    specified = _count_specified(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    current = list(shape)
    steps: list[tuple] = []
    entries: dict[int, np.ndarray] = {}
    dim = 0
    for position, obj in enumerate(items):
        if isinstance(obj, Tensor):
            a = obj._data
            if a.ndim == 0 and a.dtype.kind in "iu" and a.dtype != _UINT8:
                obj = int(a)  # a 0-d integer tensor indexes like an int
            elif a.ndim == 0:  # a 0-d bool (or byte) tensor: a new dim, indexed as a bool
                steps.append((_UNSQUEEZE, dim))
                current.insert(dim, 1)
                # (a 0-d float tensor ends here too: refused by the checks of its entry)
                is_flag = a.dtype == _BOOL or a.dtype == _UINT8
                entries[dim] = _bool_index(bool(a)) if is_flag else a.reshape(1)
                dim += 1
                continue
            else:
                entries[dim] = obj  # the tensor itself: the recorded op saves it
                dim += a.ndim if a.dtype == _BOOL or a.dtype == _UINT8 else 1
                continue
        if _int_like(obj):
            i = int(obj)
            size = current[dim]
            if i < -size or i >= size:
                raise IndexError(
                    f"index {i} is out of bounds for dimension {position} with size {size}"
                )
            steps.append((_SELECT, dim, i))
            del current[dim]
        elif type(obj) is slice:
            bounds = _slice_bounds(obj, current[dim])
            if not _is_whole(obj, current[dim]):
                steps.append((_SLICE, dim, *bounds))
                current[dim] = len(range(*bounds))
            dim += 1
        elif obj is Ellipsis:
            dim += ndim - specified
        elif obj is None or type(obj) is bool:
            steps.append((_UNSQUEEZE, dim))
            current.insert(dim, 1)
            if obj is not None:
                entries[dim] = _bool_index(obj)
            dim += 1
        elif _is_sequence(obj):
            a = _sequence_index(obj)
            entries[dim] = a
            dim += a.ndim if a.dtype == _BOOL else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(obj).__name__})"
            )
    return steps, entries


def _bool_index(flag: bool) -> np.ndarray:
    """A bool used as an index (on the new dimension it adds): the positions it keeps, as
    PyTorch turns it into ``[0]`` or ``[]``."""
    return np.arange(int(flag), dtype=np.int64)


def _as_items(index: Any) -> tuple:
    """The index as a tuple of items; NumPy arrays in it become index tensors, converted as
    lists are (bool stays bool, anything else int64)."""
    if type(index) is not tuple:
        index = tuple(index) if _treat_as_tuple(index) else (index,)
    if any(isinstance(item, np.ndarray) for item in index):
        index = tuple(wrap(_sequence_index(item)) if isinstance(item, np.ndarray) else item
                      for item in index)
    return index


# ----------------------------------------------------------------------------------------------
# tensor[index]


@tensor_method(name="__getitem__")
def getitem(self: Tensor, index: Any) -> Tensor:
    """``self[index]``: views for ints, slices, None and Ellipsis; a copy for tensor indices.

    Example:
        >>> import chainrule as torch
        >>> m = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        >>> m[0, [1, 0]]
        tensor([2., 1.], grad_fn=<IndexBackward0>)
        >>> m[0, [1, 0]].grad_fn.next_functions[0][0].name()
        'SelectBackward0'
    """
    kind = type(index)
    if kind is int or (isinstance(index, np.integer) and kind is not np.bool_):
        shape = self._data.shape
        i = int(index)
        if not shape:
            _raise_zero_dim_index(i)
        if i < -shape[0] or i >= shape[0]:
            raise IndexError(f"index {i} is out of bounds for dimension 0 with size {shape[0]}")
        return _select(self, 0, i)
    if kind is slice:
        # A lone slice is always applied (PyTorch skips whole slices only inside tuples).
        shape = self._data.shape
        if not shape:
            _refuse_zero_dim_slice(index)
        return _slice(self, 0, *_slice_bounds(index, shape[0]))
    if index is None:
        return unsqueeze(self, 0)
    if index is Ellipsis:
        return _alias(self)
    steps, entries = _plan(self._data.shape, _as_items(index))
    result = self
    for step in steps:
        if step[0] == _SELECT:
            result = _select(result, step[1], step[2])
        elif step[0] == _SLICE:
            result = _slice(result, *step[1:])
        else:
            result = unsqueeze(result, step[1])
    if entries:
        return _index(result, _index_arguments(result._data.shape, entries))
    return _alias(self) if result is self else result


# ----------------------------------------------------------------------------------------------
# tensor[index] = value


def _refuse_zero_dim_slice(index: slice) -> None:
    """PyTorch's error for a lone slice of a 0-d tensor, read or written (a bad step's first)."""
    _slice_bounds(index, 1)
    raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _locate(a: np.ndarray, index: Any) -> tuple[np.ndarray, dict[int, np.ndarray], bool]:
    """The array ``a[index] = v`` writes to (a view, or ``a``), its tensor indices, and whether
    that array is ``a`` itself (which decides PyTorch's leaf-or-view message)."""
    kind = type(index)
    if kind is int or (isinstance(index, np.integer) and kind is not np.bool_):
        if not a.ndim:
            _raise_zero_dim_index(int(index))
        items: tuple = (int(index),)
    elif index is None or index is True:
        return np.expand_dims(a, 0), {}, False
    elif kind is slice and not a.ndim:
        _refuse_zero_dim_slice(index)
    else:
        items = _as_items(index)
    steps, entries = _plan(a.shape, items)
    target = a
    for step in steps:
        lead = (slice(None),) * step[1]
        if step[0] == _SELECT:
            target = target[lead + (step[2], Ellipsis)]
        elif step[0] == _SLICE:
            target = target[lead + (slice(*step[2:]),)]
        else:
            target = np.expand_dims(target, step[1])
    return target, entries, not steps


def _type_label(value: Any) -> str:
    kind = type(value)
    module = kind.__module__
    return kind.__name__ if module == "builtins" else f"{module.split('.')[0]}.{kind.__name__}"


def _value_array(self: Tensor, value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        data = value._data
        if data.dtype.kind == "c" and self._data.dtype.kind != "c":
            warnings.warn(
                "Casting complex values to real discards the imaginary part", UserWarning,
                stacklevel=user_stacklevel(),
            )
            data = data.real
        return data
    if isinstance(value, np.integer):  # (PyTorch reads a NumPy integer as an int; a NumPy
        value = int(value)  # float32 is refused, a float64 is a float)
    if isinstance(value, bool | int | float | complex):
        check_long_long(value)
        check_scalar_fits(value, self._data.dtype, numel=1)  # (float16: not checked)
        if isinstance(value, complex) and self._data.dtype.kind != "c":
            value = value.real
        return np.asarray(value)
    raise TypeError(f"can't assign a {_type_label(value)} to a {_type_name(self._data.dtype)}")


def _check_mask_fill(self: Tensor, entries: dict[int, Any], value: Any) -> bool:
    """Whether ``self[index] = value`` with tensor indices is PyTorch's ``masked_fill_``: one
    index tensor, a bool or uint8 mask, and one value element (a number, or a tensor of any
    dtype, cast); a uint8 mask is refused there."""
    if len(entries) != 1:
        return False
    (mask,) = entries.values()
    kind = (mask._data if isinstance(mask, Tensor) else mask).dtype
    if kind != _BOOL and kind != _UINT8:
        return False
    if isinstance(value, Tensor) and value._data.size != 1:
        return False
    if kind == _UINT8:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char"
        )
    if isinstance(value, Tensor) and value._data.dtype.kind == "c":  # (its single element)
        check_scalar_fits(complex(value._data.reshape(-1)[0]), self._data.dtype, numel=1)
    return True


def _check_put_dtype(self: Tensor, value: Any) -> None:
    """index_put_'s refusal of a value tensor of another dtype than ``self``'s."""
    if isinstance(value, Tensor) and value._data.dtype != self._data.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_name(self._data.dtype)} for the destination and "
            f"{_scalar_name(value._data.dtype)} for the source."
        )


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return shape[k:]


_LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_OF_LEAF_MESSAGE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


def _check_writable(self: Tensor, is_self: bool) -> None:
    """PyTorch's refusal to write into a leaf (or a view of one) that requires grad, or into
    an inference tensor outside inference mode."""
    check_inference_inplace(self)
    if not _grad_state.grad_enabled:
        return
    base = self._base
    # (a view made before its base required grad requires grad through it, as PyTorch's)
    if self._requires_grad or base is not None and base._requires_grad:
        if base is not None:
            if self._view_meta is not None:
                return  # a view PyTorch forbids writing to: the write's own check says so
            if base._grad_node is None:  # a view of a leaf (even one that stopped requiring grad)
                raise RuntimeError(_VIEW_OF_LEAF_MESSAGE)
        elif self._grad_node is None:
            raise RuntimeError(_LEAF_MESSAGE if is_self else _VIEW_OF_LEAF_MESSAGE)


def _setitem_recorded(self: Tensor, index: Any, value: Any) -> None:
    """``self[index] = value`` when autograd must record it: the indexed view of ``self`` is
    overwritten in place (``CopySlices`` on ``self``, as PyTorch), with ``copy_``/``fill_`` for
    basic indices and ``index_put`` for tensor indices."""
    from .inplace import apply_inplace, check_inplace

    if index is None or index is True:
        items: tuple = (None,)
    elif type(index) is int or isinstance(index, np.integer) and type(index) is not np.bool_:
        if not self._data.ndim:
            _raise_zero_dim_index(int(index))
        items = (int(index),)
    elif type(index) is slice and not self._data.ndim:
        _refuse_zero_dim_slice(index)
    else:
        items = _as_items(index)
    steps, entries = _plan(self._data.shape, items)
    _check_writable(self, not steps)
    target = self
    for step in steps:
        if step[0] == _SELECT:
            target = _select(target, step[1], step[2])
        elif step[0] == _SLICE:
            target = _slice(target, *step[1:])
        else:
            target = unsqueeze(target, step[1])
    if not entries:
        # A number is copied as a 0-d tensor (so CopySlices has PyTorch's two inputs).
        if not isinstance(value, Tensor):
            value = wrap(np.asarray(value, dtype=self._data.dtype))
        target.copy_(value)
        return
    mask_fill = _check_mask_fill(self, entries, value)
    if not mask_fill:
        indices, _ = _check_indices(target._data.shape, entries, bounds=False)
        if indices and isinstance(value, Tensor):
            _check_values_fit(_strip_leading_ones(value._data.shape), target._data.shape, indices)
        _check_put_dtype(self, value)
    indices = _index_arguments(target._data.shape, entries)
    if not isinstance(value, Tensor):
        value = wrap(np.asarray(value, dtype=self._data.dtype))
    elif value._data.dtype != self._data.dtype:
        value = value.to(self.dtype)  # (a one-element value under one mask: masked_fill_'s)
    check_inplace(target, value)
    apply_inplace(target, _index_put, indices, value, False)


def _setitem_with_tangents(self: Tensor, index: Any, value: Any) -> None:
    """``self[index] = value`` in forward mode: the values written, then ``self``'s tangent
    (created as zeros, shared with its base, when it has none) takes ``value``'s tangent
    (zero for a number or a tensor without one) at ``index``, as PyTorch's."""
    if self._data.dtype.kind == "c" or (isinstance(value, Tensor)
                                        and value._data.dtype.kind == "c"):
        refuse_in_place("an in-place operation", self, value)
    value_tangent = get_tangent(value) if isinstance(value, Tensor) else None
    with suspended():
        setitem(self, index, value)
        target = tangent_to_write(self)
        setitem(target, index, 0.0 if value_tangent is None else value_tangent)


@tensor_method(name="__setitem__")
def setitem(self: Tensor, index: Any, value: Any) -> None:
    """``self[index] = value``: write into the tensor (and every view of its memory).

    Works on tensors that do not require grad, and on any tensor under ``no_grad()``; bumps
    the version counter shared with views. A number is broadcast; a tensor is broadcast to
    the indexed shape (leading 1s of its shape ignored) and cast to ``self``'s dtype.

    Example:
        >>> import chainrule as torch
        >>> x = torch.zeros(2, 3)
        >>> x[0, 1:] = 5.
        >>> x[x > 4] += 1  # read, add, write back
        >>> x
        tensor([[0., 6., 6.],
                [0., 0., 0.]])
    """
    if (
        type(value) is not Tensor
        and isinstance(value, Tensor)
        and value._tf_active
        and overrides_enabled()
    ):
        # (PyTorch hands the write to the value's type: vmap's batched tensors refuse it)
        handle_torch_function(Tensor.__setitem__, (self, index, value), self, index, value)
        return
    values = _value_array(self, value)
    if index is False:
        return  # PyTorch writes nothing (and checks nothing)
    if DUAL[0] and (get_tangent(self) is not None or get_tangent(value) is not None):
        _setitem_with_tangents(self, index, value)
        return
    if _grad_state.grad_enabled and (
        self._requires_grad or (isinstance(value, Tensor) and value._requires_grad)
    ):
        _setitem_recorded(self, index, value)
        return
    if HAS_CONJ_BIT[0](self):
        from .conjugate import CONJ_WRITE_MESSAGE, is_conj_view

        if is_conj_view(self):
            raise RuntimeError(CONJ_WRITE_MESSAGE)
    target, entries, is_self = _locate(self._data, index)
    if isinstance(value, Tensor) and value._data.ndim:  # (a 0-d value is a fill: no check)
        values = _apart_from(target, value._data, values, refuse_full=bool(entries))
    if entries:
        # PyTorch's order: the indices, the value's shape, its dtype, the indices' bounds
        mask_fill = _check_mask_fill(self, entries, value)
        indices, _ = _check_indices(target.shape, entries, bounds=False)
        _check_writable(self, is_self)
        values = values.reshape(_strip_leading_ones(values.shape))
        if indices:
            _check_values_fit(values.shape, target.shape, indices)
        if not mask_fill:
            _check_put_dtype(self, value)
        if indices:
            _check_index_bounds(target.shape, indices)
        if MUTATION_WATCH:
            clone_saved_before_write(self, target)  # (the region written: PyTorch's view)
        if not target.flags.writeable:
            if has_internal_overlap(target):
                warn_expanded_write("index_put_", "tensor[indices] = tensor")
            target = writable(target)
        target[_np_index(indices)] = values
    else:
        if values.ndim and values.shape != target.shape:
            stripped = _strip_leading_ones(values.shape)
            _expanded_shape(stripped, target.shape, values.dtype)  # PyTorch's error if no fit
            values = values.reshape(stripped)
        _check_writable(self, is_self)
        if not target.flags.writeable:
            if has_internal_overlap(target):
                raise RuntimeError(OVERLAP_MESSAGE)
            target = writable(target)  # (a region of an expanded tensor seen once)
        if MUTATION_WATCH:
            clone_saved_before_write(self, target)  # (the region written: PyTorch's view)
        target[...] = values
    self._vc[0] += 1


def _apart_from(
    target: np.ndarray, source: np.ndarray, values: np.ndarray, refuse_full: bool
) -> np.ndarray:
    """``values`` (read from ``source``) safe to write into ``target``: PyTorch's refusal of a
    source sharing part of the target's memory (``copy_``), or any of it (``index_put_``:
    ``refuse_full``), where both are non-overlapping and dense; a copy where they share memory
    otherwise (NumPy's assignment between overlapping arrays of other strides can read
    elements it already wrote)."""
    status = overlap_status(target, source)
    if status == "partial" or (refuse_full and status == "full"):
        raise RuntimeError(PARTIAL_OVERLAP_MESSAGE)
    if status != "no" and np.shares_memory(target, values):
        return values.copy()
    return values


@tensor_method(name="__iter__")
def iterate(self: Tensor) -> Any:
    """``iter(tensor)``: the slices along dim 0, from one ``unbind`` (as PyTorch)."""
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(self, 0))


@tensor_method(name="__reversed__")
def reverse(self: Tensor) -> Tensor:
    """``reversed(tensor)``: the tensor flipped along dim 0 (a 0-d tensor itself), as PyTorch."""
    if self._data.ndim == 0:
        return self
    return flip(self, 0)


@tensor_method(name="__contains__")
def contains(self: Tensor, element: Any) -> bool:
    """``element in tensor``: whether any element equals ``element`` (a tensor or a number)."""
    if not isinstance(element, Tensor | int | float | complex | bool | np.number | np.bool_):
        raise RuntimeError(
            "Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
            f"{type(element)}."
        )
    return bool((element == self).any().item())


# ----------------------------------------------------------------------------------------------
# index_select


def _index_dtype_ok(index: np.ndarray) -> bool:
    return index.dtype == _INT64 or index.dtype == _INT32


@op("IndexSelectBackward0", tensor_params=("index",))
def _index_select(self, dim, index):
    if self.ndim == 0:
        return self.copy()
    return np.take(self, index.reshape(-1), axis=dim)


@_index_select.derivative("self")
def _(ops, grad, self_shape, dim, index):
    return ops.index_select_backward(0, grad, self_shape, dim, index)


@op("IndexAddBackward0", inputs=("zeros", "grad"), tensor_params=("index",))
def _index_select_backward(zeros, grad, input_sizes, dim, index):
    """Zeros of ``input_sizes`` with the rows of ``grad`` added at ``index`` along ``dim``."""
    out = np.zeros(input_sizes, grad.dtype)
    if not input_sizes:
        out[...] = grad
    else:
        np.add.at(out, (slice(None),) * dim + (index.reshape(-1),), grad)
    return out


@_index_select_backward.derivative("grad")
def _(ops, grad, dim, index):
    return ops.index_select(grad, dim, index)


def _tensor_arg(name: str, arg: str, position: int, value: Any) -> Tensor:
    """``value``, or PyTorch's TypeError (``position`` counted in the function form)."""
    if not isinstance(value, Tensor):
        position = argument_position(position)
        raise TypeError(
            f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
            f"{type(value).__name__}"
        )
    return value


@tensor_method
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` at ``index`` (a 1-D integer tensor) along ``dim``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]]).index_select(0, torch.tensor([1, 1]))
        tensor([[3, 4],
                [3, 4]])
    """
    idx = _tensor_arg("index_select", "index", 3, index)._data
    ndim = input._data.ndim
    d = wrap_dim(dim, ndim)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if ndim == 0 and idx.size != 1:
        raise RuntimeError(
            f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)"
        )
    if not _index_dtype_ok(idx):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = input._data.shape[d] if ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        _index_select_range_error(input._data, d, idx)
    return _index_select(input, d, index)


def _index_select_range_error(data: np.ndarray, dim: int, index: np.ndarray) -> None:
    """Raise PyTorch's error for an index out of range: its CPU kernel checks an empty input
    of 2+ dims and selections along dim 1 otherwise than the other paths."""
    size = data.shape[dim] if data.ndim else 1
    if data.ndim > 1 and (data.size == 0 or dim == 1):
        if size <= 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        flat = index.reshape(-1)
        bad = flat[(flat < 0) | (flat >= size)][0]
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    raise IndexError("index out of range in self")


# ----------------------------------------------------------------------------------------------
# gather, scatter, scatter_add


def _as_1d(a: np.ndarray) -> np.ndarray:
    """0-d arrays as 1-d views (PyTorch's gather/scatter treat a scalar as one element)."""
    return a.reshape(1) if a.ndim == 0 else a


def _grid(index: np.ndarray, dim: int) -> tuple:
    """The full NumPy index of gather/scatter: ``index`` along ``dim``, positions elsewhere."""
    ndim = index.ndim
    out = []
    for k, size in enumerate(index.shape):
        if k == dim:
            out.append(index)
        else:
            shape = [1] * ndim
            shape[k] = size
            out.append(np.arange(size).reshape(shape))
    return tuple(out)


def _leading_part(src: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return src[tuple(slice(0, n) for n in shape)]


@op("GatherBackward0", tensor_params=("index",))
def _gather(self, dim, index):
    # Row-major as PyTorch's, whatever the layouts of ``self`` and ``index``
    return c_contiguous(_as_1d(self)[_grid(_as_1d(index), dim)].reshape(index.shape))


@_gather.derivative("self")
def _(ops, grad, self, dim, index):
    # Reads ``self`` (for its shape) so that it is saved, as PyTorch saves it.
    return ops.gather_backward(0, grad, tuple(self.shape), dim, index)


@op("ScatterAddBackward0", inputs=("zeros", "grad"), tensor_params=("index",))
def _gather_backward(zeros, grad, input_sizes, dim, index):
    """Zeros of ``input_sizes`` with ``grad`` added where ``gather`` read (repeats add up)."""
    out = np.zeros(input_sizes, grad.dtype)
    np.add.at(_as_1d(out), _grid(_as_1d(index), dim), _as_1d(grad))
    return out


@_gather_backward.derivative("grad")
def _(ops, grad, dim, index):
    return ops.gather(grad, dim, index)


def _size_1d(shape: tuple[int, ...], d: int) -> int:
    return shape[wrap_dim(d, len(shape))] if shape else 1


def _check_index_range(index: np.ndarray, size: int, dim: int) -> None:
    if index.size:
        _check_bounds(index, size, dim, RuntimeError)
        if index.min() < 0:  # gather/scatter take no negative index
            raise RuntimeError(
                f"index {index[index < 0].flat[0]} is out of bounds for dimension {dim} with "
                f"size {size}"
            )


@tensor_method
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for ``dim=0`` (and likewise for other dims).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]]).gather(1, torch.tensor([[0, 0], [1, 0]]))
        tensor([[1, 1],
                [4, 3]])
    """
    idx = _tensor_arg("gather", "index", 3, index)._data
    shape = input._data.shape
    d = wrap_dim_scalar(dim, len(shape))
    if not _index_dtype_ok(idx):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if idx.size:
        if max(len(shape), 1) != max(idx.ndim, 1):
            raise RuntimeError(
                "Index tensor must have the same number of dimensions as input tensor"
            )
        for k in range(max(len(shape), 1)):
            if k != d and _size_1d(idx.shape, k) > _size_1d(shape, k):
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {_fmt(idx.shape)} to "
                    f"be no larger than self {_fmt(shape)} apart from dimension {d}"
                )
        _check_index_range(idx, _size_1d(shape, d), d)
    return _gather(input, d, index)


@op("ScatterBackward0", inputs=("self", "src"), tensor_params=("index",))
def _scatter(self, dim, index, src):
    out = self.copy()
    idx = _as_1d(index)
    _as_1d(out)[_grid(idx, dim)] = _leading_part(_as_1d(src), idx.shape)
    return out


@_scatter.derivative("self")
def _(ops, grad, dim, index):
    return ops.scatter_value(grad, dim, index, 0)


@_scatter.derivative("src")
def _(ops, grad, dim, index):
    return ops.gather(grad, dim, index)


@op("ScatterBackward1", tensor_params=("index",))
def _scatter_value(self, dim, index, value):
    out = self.copy()
    _as_1d(out)[_grid(_as_1d(index), dim)] = value
    return out


@_scatter_value.derivative("self")
def _(ops, grad, dim, index):
    return ops.scatter_value(grad, dim, index, 0)


@op("ScatterAddBackward0", inputs=("self", "src"), tensor_params=("index",))
def _scatter_add(self, dim, index, src):
    out = self.copy()
    idx = _as_1d(index)
    np.add.at(_as_1d(out), _grid(idx, dim), _leading_part(_as_1d(src), idx.shape))
    return out


@_scatter_add.derivative("self")
def _(ops, grad):
    return grad


@_scatter_add.derivative("src")
def _(ops, grad, dim, index):
    return ops.gather(grad, dim, index)


def _check_scatter(name: str, input: Tensor, dim: int, index: Any, src: Tensor | None, *,
                   check_range: bool = True) -> int:
    """PyTorch's argument checks of scatter and scatter_add; returns the wrapped dim (the
    indices' range is checked last, unless ``check_range`` is False)."""
    idx = _tensor_arg(name, "index", 3, index)._data
    shape = input._data.shape
    d = wrap_dim_scalar(dim, len(shape))
    if not _index_dtype_ok(idx):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None and src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not idx.size:
        return d
    ndim = max(len(shape), 1)
    if ndim != max(idx.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = any(k != d and _size_1d(idx.shape, k) > _size_1d(shape, k) for k in range(ndim))
    if src is None:
        if wrong:
            raise RuntimeError(
                f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(shape)} apart "
                f"from dimension {d}"
            )
    else:
        src_shape = src._data.shape
        if not wrong:
            wrong = any(_size_1d(idx.shape, k) > _size_1d(src_shape, k) for k in range(ndim))
        if max(src._data.ndim, 1) != max(idx.ndim, 1):
            raise RuntimeError(
                "Index tensor must have the same number of dimensions as src tensor"
            )
        if wrong:
            raise RuntimeError(
                f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(shape)} apart "
                f"from dimension {d} and to be no larger size than src {_fmt(src_shape)}"
            )
    if check_range:
        _check_index_range(idx, _size_1d(shape, d), d)
    return d


def _reduced_into(out: np.ndarray, dim: int, index: np.ndarray, values: Any, reduce: str) -> None:
    """``values`` added into (``reduce="add"``) or multiplied into ``out`` at ``index`` along
    ``dim``, repeated indices accumulating (bool: or / and)."""
    idx = _as_1d(index)
    if isinstance(values, np.ndarray):
        values = _leading_part(_as_1d(values), idx.shape)
    ufunc = np.add if reduce == "add" else np.multiply
    if out.dtype == np.bool_:
        ufunc = np.logical_or if reduce == "add" else np.logical_and
    ufunc.at(_as_1d(out), _grid(idx, dim), values)


# PyTorch's scatter with ``reduce=`` has no derivative: its autograd fallback records a
# NotImplemented node, whose backward raises.
@op("NotImplemented", inputs=("self", "src"), tensor_params=("index",))
def _scatter_reduce_src(self, dim, index, src, reduce):
    out = self.copy()
    _reduced_into(out, dim, index, src, reduce)
    return out


@op("NotImplemented", tensor_params=("index",))
def _scatter_reduce_value(self, dim, index, value, reduce):
    out = self.copy()
    _reduced_into(out, dim, index, value, reduce)
    return out


_NO_REDUCE: Any = object()
_SCATTER_REDUCE_WARNED = [False]
_SCATTER_OVERLOADS = (
    " * (int dim, Tensor index, Tensor src)\n"
    " * (int dim, Tensor index, Tensor src, *, str reduce)\n"
    " * (int dim, Tensor index, Number value)\n"
    " * (int dim, Tensor index, Number value, *, str reduce)\n"
)


def _check_reduce(reduce: Any, src: Any) -> None:
    """PyTorch's checks of scatter's ``reduce``, and its deprecation warning (once) for a
    tensor ``src``."""
    if not isinstance(reduce, str):
        raise TypeError(
            "scatter() received an invalid combination of arguments - got (int, Tensor, "
            f"{type(src).__name__}, reduce={type(reduce).__name__}), but expected one of:\n"
            + _SCATTER_OVERLOADS
        )
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor) and not _SCATTER_REDUCE_WARNED[0]:
        _SCATTER_REDUCE_WARNED[0] = True
        warnings.warn(
            "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
            "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
            "reduction options.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


@tensor_method(inplace=True)
def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Any = None,
    *,
    value: Any = None,
    reduce: Any = _NO_REDUCE,
) -> Tensor:
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written at ``index``
    along ``dim`` (the reverse of :func:`gather`); with ``reduce="add"`` or ``"multiply"``,
    added or multiplied in instead (not differentiable, as in PyTorch).

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(2, 2).scatter(1, torch.tensor([[1], [0]]), 5.)
        tensor([[0., 5.],
                [5., 0.]])
    """
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    reduced = reduce is not _NO_REDUCE
    if reduced:
        _check_reduce(reduce, value if src is None else src)
    if isinstance(src, Tensor):
        d = _check_scatter("scatter", input, dim, index, src)
        if reduced:
            return _edges_of_inputs_needing_grad(_scatter_reduce_src(input, d, index, src, reduce))
        return _scatter(input, d, index, src)
    number = value if src is None else src
    if not isinstance(number, bool | int | float | complex):
        raise TypeError(
            f"scatter(): argument 'value' must be Number, not {type(number).__name__}"
        )
    number = fill_value_for(number, input._data.dtype)  # (uint8 takes -1 as 255)
    d = _check_scatter("scatter", input, dim, index, None)
    if reduced:
        return _edges_of_inputs_needing_grad(_scatter_reduce_value(input, d, index, number, reduce))
    return _scatter_value(input, d, index, number)


_not_implemented_node(_scatter_reduce_src, "scatter")
_not_implemented_node(_scatter_reduce_value, "scatter")


@tensor_method(inplace=True)
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats add up)."""
    src = _tensor_arg("scatter_add", "src", 4, src)
    d = _check_scatter("scatter_add", input, dim, index, src)
    return _scatter_add(input, d, index, src)


# ----------------------------------------------------------------------------------------------
# masked_fill, masked_select


def _broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast shape, with PyTorch's message when there is none."""
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        da = a[i - n + len(a)] if i >= n - len(a) else 1
        db = b[i - n + len(b)] if i >= n - len(b) else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                f"non-singleton dimension {i}"
            )
        out.append(db if da == 1 else da)
    return tuple(out)


@op("MaskedFillBackward0", tensor_params=("mask",))
def _masked_fill(self, mask, value):
    # PyTorch fills a contiguous clone (np.where would follow a transposed input's order).
    return c_contiguous(np.where(mask, np.asarray(value, dtype=self.dtype), self))


@_masked_fill.derivative("self")
def _(ops, grad, mask):
    return ops.masked_fill(grad, mask, 0)


@op("MaskedFillBackward1", inputs=("self", "value"), tensor_params=("mask",))
def _masked_fill_tensor(self, mask, value):
    return c_contiguous(np.where(mask, value.astype(self.dtype), self))


@_masked_fill_tensor.derivative("self")
def _(ops, grad, mask):
    return ops.masked_fill(grad, mask, 0)


@_masked_fill_tensor.derivative("value")
def _(ops, grad, mask):
    return ops.where(mask, grad, 0)  # the engine sums it to the 0-d value


def _masked_fill_in_place_op(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """What ``Tensor.masked_fill_`` writes into ``input`` (its checks in the in-place order)."""
    return _masked_fill_checked(input, mask, value, in_place=True)


_masked_fill_in_place_op.__name__ = "masked_fill"  # (its argument errors name the function)


@tensor_method(inplace=_masked_fill_in_place_op)
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """A copy of ``input`` with ``value`` (a number or 0-d tensor) where ``mask`` is True.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([1., -2., 3.])
        >>> x.masked_fill(x < 0, 0.)
        tensor([1., 0., 3.])
    """
    return _masked_fill_checked(input, mask, value, in_place=False)


def _masked_fill_checked(input: Tensor, mask: Tensor, value: Any, in_place: bool) -> Tensor:
    """``masked_fill`` after PyTorch's checks, in its order: the value's type, the mask's dtype,
    then the shapes (mask with input: "tensor a" is the mask) and the value's rank; in place,
    the value's rank first, then the shapes with ``self`` as "tensor a"."""
    if not isinstance(value, Tensor | bool | int | float | complex):
        raise TypeError(
            f"masked_fill(): argument 'value' must be Number, not {type(value).__name__}"
        )
    m = _tensor_arg("masked_fill", "mask", 2, mask)._data
    if m.dtype != _BOOL:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_C_TYPE_NAMES.get(m.dtype.name, m.dtype.name)}"
        )
    if not in_place:
        _broadcast_shape(m.shape, input._data.shape)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value._data.ndim} dimension(s)."
        )
    if in_place:
        _broadcast_shape(input._data.shape, m.shape)
    if isinstance(value, Tensor):
        if value._data.dtype.kind == "c" and input._data.dtype.kind != "c":
            check_scalar_fits(complex(value._data), input._data.dtype, numel=1)
        check_value_tensor(value, input._data.dtype)
        return _masked_fill_tensor(input, mask, value)
    return _masked_fill(input, mask, fill_value_for(value, input._data.dtype))


@op("MaskedSelectBackward0", tensor_params=("mask",))
def _masked_select(self, mask):
    shape = np.broadcast_shapes(self.shape, mask.shape)
    return np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)]


@_masked_select.derivative("self")
def _(ops, grad, self, mask):
    # Reads ``self`` (for its shape) so that it is saved, as PyTorch saves it.
    return ops.masked_select_backward(0, grad, tuple(self.shape), mask)


@op("MaskedScatterBackward0", inputs=("zeros", "grad"), tensor_params=("mask",))
def _masked_select_backward(zeros, grad, input_sizes, mask):
    """Zeros of the broadcast shape with ``grad`` placed where ``mask`` is True."""
    shape = np.broadcast_shapes(tuple(input_sizes), mask.shape)
    out = np.zeros(shape, grad.dtype)
    out[np.broadcast_to(mask, shape)] = grad
    return out


@_masked_select_backward.derivative("grad")
def _(ops, grad, mask):
    return ops.masked_select(grad, mask)


@tensor_method
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements where ``mask`` (broadcast with ``input``) is True, as a 1-D tensor."""
    m = _tensor_arg("masked_select", "mask", 2, mask)._data
    if m.dtype != _BOOL:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _broadcast_shape(m.shape, input._data.shape)
    refuse_data_dependent("masked_select", input, mask)
    return _masked_select(input, mask)


# ----------------------------------------------------------------------------------------------
# take, put


@op("TakeBackward0", tensor_params=("index",))
def _take(self, index):
    return self.reshape(-1)[index]


@_take.derivative("self")
def _(ops, grad, self, index):
    # Reads ``self`` (for its shape) so that it is saved, as PyTorch saves it.
    return ops.take_backward(0, grad, tuple(self.shape), index)


@op("PutBackward0", inputs=("zeros", "grad"), tensor_params=("index",))
def _take_backward(zeros, grad, input_sizes, index):
    """Zeros of ``input_sizes`` with ``grad`` added at the flat positions ``index``."""
    out = np.zeros(input_sizes, grad.dtype)
    np.add.at(out.reshape(-1), index, grad)
    return out


@_take_backward.derivative("grad")
def _(ops, grad, index):
    return ops.take(grad, index)


def _check_flat_range(index: np.ndarray, numel: int) -> None:
    if index.size and (index.min() < -numel or index.max() >= numel):
        bad = index[(index < -numel) | (index >= numel)].flat[0]
        raise IndexError(
            f"out of range: tried to access index {bad} on a tensor of {numel} elements."
        )


@tensor_method
def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of ``input`` seen as 1-D, at ``index`` (the result has ``index``'s shape)."""
    idx = _tensor_arg("take", "index", 2, index)._data
    if idx.dtype != _INT64:
        raise RuntimeError(
            f"take(): Expected a long tensor for index, but got {_scalar_name(idx.dtype)}"
        )
    if idx.size and not input._data.size:
        raise IndexError("take(): tried to take from an empty tensor")
    _check_flat_range(idx, input._data.size)
    return _take(input, index)


@op("PutBackward0", inputs=("self", "source"), tensor_params=("index",))
def _put(self, index, source, accumulate):
    out = copy_preserving_layout(self)  # PyTorch writes into clone(): self's memory order
    where: Any = index.reshape(-1)  # positions in row-major order
    if out.flags.c_contiguous:
        target = out.reshape(-1)  # a view
    else:  # (a transposed copy has no flat view: the positions as coordinates)
        target, where = out, np.unravel_index(where % out.size, out.shape)
    values = source if np.ndim(source) == 0 else np.reshape(source, -1)
    if accumulate:
        np.add.at(target, where, values)
    else:
        target[where] = values
    return out


@_put.derivative("self")
def _(ops, grad, index, accumulate):
    return grad if accumulate else ops.put(grad, index, 0, False)


@_put.derivative("source")
def _(ops, grad, index, source):
    # Reads ``source`` (for its shape) so that it is saved, as PyTorch saves it.
    return ops.reshape(ops.take(grad, index), tuple(source.shape))


@tensor_method(inplace=True)
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` (seen as 1-D) with ``source`` written (or added) at ``index``."""
    idx = _tensor_arg("put", "index", 2, index)._data
    src = _tensor_arg("put", "source", 3, source)._data
    if idx.dtype != _INT64:
        raise RuntimeError(
            f"put_(): Expected a long tensor for index, but got {_scalar_name(idx.dtype)}"
        )
    if src.dtype != input._data.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_scalar_name(input._data.dtype)} and source.dtype = {_scalar_name(src.dtype)}"
        )
    if src.size != idx.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got "
            f"source.numel() = {src.size}, index.numel() = {idx.size}"
        )
    if idx.size and not input._data.size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    _check_flat_range(idx, input._data.size)
    return _put(input, index, source, bool(accumulate))


# ----------------------------------------------------------------------------------------------
# index_add, index_put


@op("IndexAddBackward0", inputs=("self", "source"), tensor_params=("index",), complex_ok=True)
def _index_add(self, dim, index, source, alpha):
    out = self.copy()
    values = source if alpha == 1 else source * alpha
    np.add.at(_as_1d(out), (slice(None),) * dim + (index.reshape(-1),), _as_1d(values))
    return out


@_index_add.derivative("self")
def _(ops, grad):
    return grad


@_index_add.derivative("source")
def _(ops, grad, dim, index, alpha, source):
    # Reads ``source`` (for its shape) so that it is saved, as PyTorch saves it.
    g = ops.reshape(ops.index_select(grad, dim, index), tuple(source.shape))
    return g if alpha == 1 else g * ops.conj(alpha)  # (PyTorch's, for a complex alpha)


@tensor_method(inplace=True)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
              ) -> Tensor:
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``.

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(3).index_add(0, torch.tensor([0, 0, 2]), torch.tensor([1., 2., 3.]))
        tensor([3., 0., 3.])
    """
    idx = _tensor_arg("index_add", "index", 3, index)._data
    src = _tensor_arg("index_add", "source", 4, source)._data
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if idx.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
            f"{_scalar_name(idx.dtype)} and size: {_fmt(idx.shape)}"
        )
    if not _index_dtype_ok(idx):
        raise RuntimeError(
            f"index_add_(): Expected dtype int32/int64 for index but got: "
            f"{_scalar_name(idx.dtype)}"
        )
    if src.dtype != input._data.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_scalar_name(input._data.dtype)}) and source "
            f"({_scalar_name(src.dtype)}) must have the same scalar type"
        )
    if d != 0 and d >= src.ndim:
        raise RuntimeError(
            f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim "
            f"{src.ndim}"
        )
    if idx.size != _size_1d(src.shape, d):
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
            f"({_size_1d(src.shape, d)}), for dim: {d}"
        )
    if len(shape) != len(src.shape) or any(
        k != d and a != b for k, (a, b) in enumerate(zip(shape, src.shape, strict=True))
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {_fmt(shape)} source.shape = {_fmt(src.shape)}"
        )
    if idx.size:
        _check_bounds(idx, _size_1d(shape, d), d, RuntimeError)
        if idx.min() < 0:
            raise RuntimeError(
                f"index {idx[idx < 0].flat[0]} is out of bounds for dimension {d} with size "
                f"{_size_1d(shape, d)}"
            )
    dtype = input._data.dtype
    if type(alpha) is not bool and dtype.kind in "iuf" and dtype != np.float64:
        alpha = fill_value_for(alpha, dtype)  # (read as a Scalar: uint8 refuses 1000)
    return _index_add(input, d, index, source, alpha)


@op("IndexPutBackward0", inputs=("self", "values"), tensor_lists=("indices",))
def _index_put(self, indices, values, accumulate):
    out = copy_preserving_layout(self)  # PyTorch writes into clone(): self's memory order
    if accumulate:
        np.add.at(out, _np_index(indices), values)
    else:
        out[_np_index(indices)] = values
    return out


@_index_put.derivative("self")
def _(ops, grad, indices, accumulate):
    return grad if accumulate else ops.index_put(grad, indices, 0, False)


@_index_put.derivative("values")
def _(ops, grad, indices):
    return ops.index(grad, indices)  # the engine sums it to the values' shape


def _index_list(indices: Any) -> dict[int, np.ndarray]:
    """A tuple of index tensors as ``_expand_indices`` entries (a mask spans its dims)."""
    if isinstance(indices, Tensor) or not isinstance(indices, Sequence):
        raise TypeError(
            f"index_put(): argument 'indices' (position {argument_position(2)}) must be tuple "
            f"of Tensors, not {type(indices).__name__}"
        )
    entries: dict[int, Any] = {}
    dim = 0
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
        a = t._data
        entries[dim] = t
        dim += a.ndim if a.dtype == _BOOL or a.dtype == _UINT8 else 1
    return entries


@tensor_method(inplace=True)
def index_put(input: Tensor, indices: Sequence[Tensor], values: Tensor,
              accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``values`` written (or added) at ``input[indices]``.

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(3).index_put((torch.tensor([0, 0]),), torch.tensor(1.), True)
        tensor([2., 0., 0.])
    """
    values = _tensor_arg("index_put", "values", 3, values)
    shape = input._data.shape
    entries = _index_list(indices)
    if len(indices) > len(shape):
        raise IndexError(
            f"too many indices for tensor of dimension {len(shape)} (got {len(indices)})"
        )
    # PyTorch's order: the indices, the values' shape, their dtype, the indices' bounds
    prepared, _ = _check_indices(shape, entries, bounds=False)
    if prepared:
        _check_values_fit(values._data.shape, shape, prepared)
    _check_put_dtype(input, values)
    if prepared:
        _check_index_bounds(shape, prepared)
        return _index_put(input, _index_arguments(shape, entries), values, bool(accumulate))
    return _index_put(input, prepared, values, bool(accumulate))


# ----------------------------------------------------------------------------------------------
# nonzero


@tensor_method
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """Positions of the non-zero elements: an ``(n, ndim)`` int64 tensor, or with
    ``as_tuple=True`` one 1-D tensor per dimension (a 0-d input counts as 1-d).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[0, 1], [2, 0]]).nonzero()
        tensor([[0, 1],
                [1, 0]])
    """
    refuse_data_dependent("nonzero", input)
    a = input._data
    if as_tuple:
        return tuple(wrap(np.array(i, dtype=np.int64)) for i in np.nonzero(np.atleast_1d(a)))
    return wrap(np.argwhere(a).astype(np.int64, copy=False))


@tensor_method
def argwhere(input: Tensor) -> Tensor:
    """``nonzero(input)``."""
    return nonzero(input)

# Helpers for derivatives (``ops.<name>``): each NumPy forward has its public op's signature.
PRIMITIVES: dict[str, Any] = {
    "index": _index, "index_backward": _index_backward, "index_select": _index_select,
    "index_select_backward": _index_select_backward, "gather": _gather,
    "gather_backward": _gather_backward, "scatter_value": _scatter_value,
    "masked_fill": _masked_fill,
    "masked_select": _masked_select, "masked_select_backward": _masked_select_backward,
    "take": _take, "take_backward": _take_backward, "put": _put, "index_put": _index_put,
}
