"""Shape ops and views: view, reshape, squeeze/unsqueeze, transposes, expand; slicing views
(select, narrow, diagonal); joining (cat, stack) and splitting (split, chunk, unbind); copies
that move elements (repeat, flip, roll, tril/triu, diag, trace).

Views share memory and the version counter with their base (``view=True`` in the table), as in
PyTorch: writing through a view is seen by the base.
"""

from __future__ import annotations

import inspect
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._frames import user_stacklevel
from .._strides import (
    c_contiguous,
    contiguous_format,
    contiguous_strides,
    copy_in_memory_format,
    element_strides,
    empty_in_memory_format,
    empty_like_preserving,
    flat_storage,
    is_row_major,
    on_storage,
    suggest_memory_format,
    view_strides,
    with_strides,
)
from .._tensor import LEGACY_TYPE_NAMES, Tensor, wrap, wrap_dim
from ._registry import ARITH, op, tensor_method
from .conjugate import conj

__all__ = [
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "t", "transpose",
    "swapaxes", "swapdims", "permute", "expand", "expand_as", "broadcast_to", "movedim",
    "moveaxis", "view_as", "reshape_as", "ravel", "adjoint",
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
    "row_stack", "atleast_1d", "atleast_2d", "atleast_3d", "split", "split_with_sizes", "chunk",
    "unbind", "tensor_split", "select", "narrow", "diagonal", "diag", "diag_embed", "tril",
    "triu", "trace", "flip", "fliplr", "flipud", "roll", "tile", "as_strided",
]


def size_args(size: tuple) -> tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))`` or ``f(Size([2, 3]))`` -> ``(2, 3)``."""
    if len(size) == 1 and isinstance(size[0], Sequence | np.ndarray):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, int | np.integer):
            raise TypeError(
                f"view(): argument 'size' (position 1) must be tuple of ints, but found element "
                f"of type {type(s).__name__} at pos {len(out)}"
            )
        out.append(int(s))
    return tuple(out)


def infer_size(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` in ``shape``; PyTorch's error when the sizes do not fit ``numel``."""
    shape = list(shape)
    unknown = []
    for i, s in enumerate(shape):  # (PyTorch's order: the first bad size decides the error)
        if s == -1:
            if unknown:
                raise RuntimeError("only one dimension can be inferred")
            unknown.append(i)
        elif s < -1:
            raise RuntimeError(
                f"invalid shape dimension {s} at index {i} of shape {_fmt(shape)}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ----------------------------------------------------------------------------------------------
# Strides of views of empty tensors


def _with_torch_strides(a: np.ndarray) -> np.ndarray:
    """``a``, or for an empty array whose strides NumPy zeroed, the same empty array with
    PyTorch's contiguous strides, so that a view made from it (transposed, sliced, expanded)
    has the strides PyTorch's view has (``zeros(0, 3).t().stride()`` is ``(1, 3)``)."""
    if a.size or not a.ndim or any(a.strides):
        return a
    return with_strides(a, a.shape, contiguous_strides(a.shape))


# ----------------------------------------------------------------------------------------------
# view / reshape


@op("ViewBackward0", view=True)
def _view(self, size):
    shape = infer_size(size, self.size)
    try:
        return _with_view_strides(self, np.reshape(self, shape, copy=False))
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


def _with_view_strides(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out``, NumPy's view of ``a`` in another shape, with the strides PyTorch's view gives
    it: they can differ only in dimensions of size 1 (or of an empty view), and not at all
    when ``a`` is row-major with PyTorch's own strides."""
    if out.size and (1 not in out.shape or is_row_major(a)):
        return out
    strides = view_strides(a.shape, element_strides(a), out.shape)
    if strides is None or out.strides == tuple(st * a.itemsize for st in strides):
        return out
    return with_strides(a, out.shape, strides)


@_view.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


@tensor_method
def view(self: Tensor, *shape: Any) -> Tensor:
    """The same data with another shape (no copy; ``-1`` infers one size).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(6).view(2, -1).shape
        chainrule.Size([2, 3])
    """
    if len(shape) == 1 and not isinstance(shape[0], int | Sequence | Tensor | np.integer):
        from .copying import view_dtype

        return view_dtype(self, shape[0])
    if not shape:
        raise TypeError(
            "view() received an invalid combination of arguments - got (), but expected one "
            "of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n"
        )
    return _view(self, size_args(shape))


@op("UnsafeViewBackward0")
def _unsafe_view(self, size):
    return np.reshape(self, infer_size(size, self.size))


@_unsafe_view.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


def _can_view(array: np.ndarray, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(array, shape, copy=False)
    except ValueError:
        return False
    return True


@op("ReshapeAliasBackward0", view=True)
def _reshape_alias(self, size):
    return _with_view_strides(self, np.reshape(self, size, copy=False))


@_reshape_alias.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


@tensor_method
def reshape(input: Tensor, *shape: Any) -> Tensor:
    """``view`` when the memory layout allows it, otherwise a copy."""
    if not shape:
        raise missing_argument("reshape", "shape")
    size = infer_size(size_args(shape), input._data.size)
    if _can_view(input._data, size):
        if input._data.flags.c_contiguous:
            return _view(input, size)
        # A view of non-contiguous memory: PyTorch records it as _reshape_alias.
        return _reshape_alias(input, size)
    from .copying import clone

    return _unsafe_view(clone(input, memory_format=contiguous_format), size)


@tensor_method
def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.shape)``."""
    return _view(self, other._data.shape)


@tensor_method
def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.shape)``."""
    return reshape(self, other._data.shape)


@tensor_method
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim .. end_dim`` into one."""
    ndim = input._data.ndim
    if ndim == 0:
        return reshape(input, (1,))
    start = wrap_dim(start_dim, ndim)
    end = wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input._data.shape
    new = shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:]
    return reshape(input, new)


@tensor_method
def ravel(input: Tensor) -> Tensor:
    """All elements as a 1-D contiguous tensor: a view when ``input`` is contiguous, else a
    copy (PyTorch's ``contiguous().view(-1)``: ``CloneBackward0`` then ``ViewBackward0``, and a
    copy even where a strided 1-D view would do, as for a step-sliced vector)."""
    from .copying import contiguous

    return _view(contiguous(input), (-1,))


@tensor_method
def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension ``dim`` into ``sizes``."""
    shape = input._data.shape
    sizes = [_index_arg(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = wrap_dim_scalar(dim, len(shape))
    # PyTorch reports what inferring the sizes raised as an "unexpected error", except sizes
    # that do not fit
    if not shape:
        raise RuntimeError(
            "unflatten got an unexpected error:\n"
            f"Dimension specified as {d} but tensor has no dimensions"
        )
    try:
        inferred = infer_size(sizes, shape[d])
    except RuntimeError as error:
        if "is invalid for input of size" not in str(error):
            raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
        raise RuntimeError(
            f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the size of dim {d} "
            f"({shape[d]}) in the input tensor"
        ) from None
    return _view(input, shape[:d] + inferred + shape[d + 1:])


# ----------------------------------------------------------------------------------------------
# squeeze / unsqueeze


@op("SqueezeBackward0", view=True)
def _squeeze_all(self):
    return np.squeeze(_with_torch_strides(self))


@_squeeze_all.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


@op("SqueezeBackward1", view=True)
def _squeeze_dim(self, dim):
    d = wrap_dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 1:
        return np.squeeze(_with_torch_strides(self), axis=d)
    return self.view()


@_squeeze_dim.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


@op("SqueezeBackward2", view=True)
def _squeeze_dims(self, dim):
    dims = {wrap_dim(d, self.ndim) for d in dim}
    axes = tuple(d for d in sorted(dims) if self.ndim and self.shape[d] == 1)
    return np.squeeze(_with_torch_strides(self), axis=axes) if axes else self.view()


@_squeeze_dims.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


@tensor_method
def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all, or only ``dim``)."""
    return squeeze_with(SQUEEZE_OVERLOADS, input, dim)


#: squeeze's overloads, as PyTorch picks them: no dim, one dim, several dims.
SQUEEZE_OVERLOADS = (_squeeze_all, _squeeze_dim, _squeeze_dims)


def squeeze_with(overloads: Sequence[Callable[..., Tensor]], input: Tensor,
                 dim: int | Sequence[int] | None) -> Tensor:
    """``squeeze(input, dim)`` through the overload ``dim`` picks (of ``overloads``, in the
    order of :data:`SQUEEZE_OVERLOADS`; ``squeeze_`` passes its in-place nodes)."""
    if dim is None:
        return overloads[0](input)
    if isinstance(dim, int | np.integer):
        return overloads[1](input, int(dim))
    dim = tuple(dim)
    dim_list(dim, input._data.ndim)  # (PyTorch's errors for repeated dims)
    return overloads[2](input, dim)


@op("UnsqueezeBackward0", view=True, method=True)
def unsqueeze(self, dim):
    """Insert a dimension of size 1 at ``dim``.

    Its stride is PyTorch's: ``size * stride`` of the dimension after it, 1 at the end.
    """
    d = wrap_dim(dim, self.ndim + 1)
    shape = self.shape[:d] + (1,) + self.shape[d:]
    if self.size:
        # NumPy's reshape (a view: only a 1 is inserted) mostly gives those strides; not at
        # the end of a non-contiguous array, nor to size-1 dimensions of a contiguous one.
        strides = self.strides
        new = strides[d] * self.shape[d] if d < self.ndim else self.itemsize
        out = self.reshape(shape)
        if out.strides == strides[:d] + (new,) + strides[d:]:
            return out
    strides = element_strides(self)
    new = strides[d] * self.shape[d] if d < self.ndim else 1
    return with_strides(self, shape, strides[:d] + (new,) + strides[d:])


@unsqueeze.derivative("self")
def _(ops, grad, self_shape):
    return ops.reshape(grad, self_shape)


# ----------------------------------------------------------------------------------------------
# transposes


@op("TBackward0", view=True, method=True)
def t(self):
    """Transpose a matrix (0-d and 1-d tensors are returned as they are)."""
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _with_torch_strides(self).T


@t.derivative("self")
def _(ops, grad):
    return ops.t(grad)


@op("TransposeBackward0", view=True, method=True, aliases=("swapaxes", "swapdims"))
def transpose(self, dim0, dim1):
    """Swap two dimensions."""
    n = max(self.ndim, 1)
    if not self.ndim:
        return self.view()
    return np.swapaxes(_with_torch_strides(self), wrap_dim(dim0, n), wrap_dim(dim1, n))


@transpose.derivative("self")
def _(ops, grad, dim0, dim1):
    return ops.transpose(grad, dim0, dim1)


swapaxes = swapdims = transpose


@op("AliasBackward0", view=True)
def _alias(self):
    # ``x[...]``, ``x[:, :]``, ``movedim`` of a 0-d tensor: a new tensor sharing x's memory,
    # as PyTorch's alias.
    return self.view()


@_alias.derivative("self")
def _(ops, grad):
    return grad


@op("PermuteBackward0", view=True)
def _permute(self, dims):
    ndim = self.ndim
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    axes = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(axes)) != ndim:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(_with_torch_strides(self), axes)


@_permute.derivative("self")
def _(ops, grad, dims):
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d % ndim if ndim else 0] = i
    return ops.permute(grad, tuple(inverse))


@tensor_method
def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions."""
    if not dims:
        raise missing_argument("permute", "dims")
    return _permute(input, size_args(dims))


@tensor_method(aliases=("moveaxis",))
def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Move dimensions to new positions, keeping the others in order."""
    ndim = input._data.ndim
    src = list(_int_tuple(source))
    dst = list(_int_tuple(destination))
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)"
        )
    wrapped_src = [wrap_dim_scalar(d, ndim) for d in src]
    wrapped_dst = [wrap_dim_scalar(d, ndim) for d in dst]
    if len(set(wrapped_src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(wrapped_dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if ndim == 0:  # (a 0-d tensor is returned as an alias, as PyTorch's)
        return _alias(input)
    order = [d for d in range(ndim) if d not in wrapped_src]
    for d, s in sorted(zip(wrapped_dst, wrapped_src, strict=True)):
        order.insert(d, s)
    return _permute(input, tuple(order))


moveaxis = movedim


def _swap_last_two(input: Tensor, name: str, zero_d_hint: str) -> Tensor:
    """``transpose(input, -2, -1)`` for ``mT``, ``mH`` and ``adjoint()`` (the last two also
    conjugate a complex tensor): a 0-d tensor is returned as it is, with PyTorch's deprecation
    warning, and a 1-d one is refused."""
    ndim = input._data.ndim
    if ndim == 0:
        warnings.warn(f"{name} is deprecated on 0-D tensors. {zero_d_hint}", UserWarning,
                      stacklevel=user_stacklevel())
        return input
    if ndim < 2:
        label = "tensor.adjoint()" if name == "adjoint()" else name.replace("Tensor.", "tensor.")
        raise RuntimeError(
            f"{label} is only supported on matrices or batches of matrices. Got {ndim}-D tensor."
        )
    return transpose(input, -2, -1)


@tensor_method
def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (``ConjBackward0`` of
    ``TransposeBackward0`` for a complex tensor, as PyTorch's)."""
    return conj(_swap_last_two(input, "adjoint()", "Consider using x.conj()."))


def matrix_transpose(input: Tensor) -> Tensor:
    """``input.mT``: the last two dimensions swapped."""
    return _swap_last_two(
        input, "Tensor.mT", "This function is the identity in these cases."
    )


def matrix_conj_transpose(input: Tensor) -> Tensor:
    """``input.mH``: ``mT``, conjugated for a complex tensor."""
    return conj(_swap_last_two(input, "Tensor.mH", "Consider using x.conj()."))


def conj_transpose(input: Tensor) -> Tensor:
    """``input.H``: the conjugate transpose of a matrix (``TransposeBackward0``, not ``T``'s
    permute; then ``ConjBackward0`` for a complex one)."""
    ndim = input._data.ndim
    if ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=user_stacklevel())
        return conj(input)
    if ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if ndim > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor.{hint}"
        )
    return conj(transpose(input, -2, -1))


def full_transpose(input: Tensor) -> Tensor:
    """``input.T``: reverse all dimensions (PyTorch warns for other than 2-D)."""
    ndim = input._data.ndim
    if ndim == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
            "cases.", UserWarning, stacklevel=user_stacklevel(),
        )
    elif ndim != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return _permute(input, tuple(range(ndim - 1, -1, -1)))


# ----------------------------------------------------------------------------------------------
# expand


@op("ExpandBackward0", view=True)
def _expand(self, size):
    shape = _expanded_shape(self.shape, size, self.dtype)
    out = np.broadcast_to(_with_torch_strides(self), shape)
    if 1 not in shape:
        return out
    # NumPy gives size-1 dimensions stride 0; PyTorch keeps theirs, and gives a new leading
    # one ``size * stride`` of the dimension after it (its inferExpandGeometry).
    strides = list(element_strides(self))
    expanded = [0] * len(shape)
    lead = len(shape) - len(strides)
    for i in range(len(shape) - 1, -1, -1):
        if i >= lead:
            stride = strides[i - lead]
            old_size = self.shape[i - lead]
        else:  # (a 0-d tensor expands with strides 0 throughout)
            stride = shape[i + 1] * expanded[i + 1] if i + 1 < len(shape) else 0
            old_size = 1
        expanded[i] = 0 if old_size != shape[i] else stride
    if tuple(s // self.itemsize for s in out.strides) == tuple(expanded) or not self.itemsize:
        return out
    view = with_strides(self, shape, tuple(expanded))
    if not out.flags.writeable:
        view.flags.writeable = False  # read-only, as NumPy's broadcast
    return view


@_expand.derivative("self")
def _(ops, grad):
    # The engine sums the gradient back to the input's shape.
    return grad


_FLOAT32 = np.dtype(np.float32)


def _expanded_shape(
    shape: tuple[int, ...], size: Sequence[int], np_dtype: np.dtype = _FLOAT32
) -> tuple[int, ...]:
    """The shape ``expand(size)`` gives a tensor of ``shape``; PyTorch's errors otherwise."""
    size = tuple(size)
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand({_type_name(np_dtype)}{{{_fmt(shape)}}}, size={_fmt(size)}): "
            "the number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    lead = len(size) - len(shape)
    out = [0] * len(size)
    # Checked from the last dimension, as PyTorch does (it reports the last mismatch); a 0-d
    # tensor takes the sizes as they are.
    for i in range(len(size) - 1, -1, -1) if shape else ():
        s = size[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            out[i] = s
            continue
        current = shape[i - lead]
        if s == -1:
            out[i] = current
        elif current == 1 or current == s:
            out[i] = s
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({current}) "
                f"at non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, size))}].  "
                f"Tensor sizes: [{', '.join(map(str, shape))}]"
            )
    if not shape:
        out = list(size)
    if min(out, default=0) < 0:
        # PyTorch keeps a negative size and fails counting the elements (a shape holding a 0
        # too passes there in PyTorch and gives a tensor with a negative size: refused here)
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(out)


def _type_name(np_dtype: np.dtype) -> str:
    """The legacy type name PyTorch prints in messages (``chainrule.FloatTensor``)."""
    from .._dtype import from_numpy_dtype

    return "chainrule." + LEGACY_TYPE_NAMES.get(from_numpy_dtype(np_dtype), "Tensor")


@tensor_method
def expand(self: Tensor, *sizes: Any) -> Tensor:
    """Broadcast to a larger shape without copying (``-1`` keeps a size)."""
    if not sizes:
        raise missing_argument("expand", "size")
    return _expand(self, size_args(sizes))


@tensor_method
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.shape)``."""
    return _expand(self, other._data.shape)


@tensor_method
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input.expand(size)``."""
    return _expand(input, tuple(size))


# ----------------------------------------------------------------------------------------------
# Argument helpers


def _index_arg(value: Any) -> int:
    """An int argument given as an int, a NumPy integer or a one-element integer tensor."""
    return operator.index(value)


def wrap_dim_scalar(dim: int, ndim: int) -> int:
    """``wrap_dim`` as PyTorch's ``maybe_wrap_dim``: a 0-d tensor counts as 1-d, so that its
    dims ``0`` and ``-1`` both are ``0``."""
    d = wrap_dim(dim, ndim)
    return d if d >= 0 else 0


def dim_list(dims: Sequence[int], ndim: int) -> tuple[int, ...]:
    """``dims`` wrapped one after the other, PyTorch's error on the first out of range or
    repeated (``flip``, ``squeeze``: its ``dim_list_to_bitset``)."""
    wrapped: list[int] = []
    for d in dims:
        w = wrap_dim_scalar(d, ndim)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    return tuple(wrapped)


def missing_argument(name: str, argument: str) -> TypeError:
    """PyTorch's error for a call without its required (varargs) argument, ``x.flip()``."""
    return TypeError(f'{name}() missing 1 required positional arguments: "{argument}"')


def _wrap_dim_strict(dim: int, ndim: int) -> int:
    """``wrap_dim`` for ops that do not treat a 0-d tensor as 1-d (unbind, roll with dims)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, ndim)


def _int_tuple(values: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple."""
    if isinstance(values, int | np.integer) or (
        isinstance(values, Tensor) and values._data.ndim == 0
    ):
        return (_index_arg(values),)
    return tuple(_index_arg(v) for v in values)


def _varargs(values: tuple) -> tuple:
    """``f(1, 2)`` or ``f((1, 2))`` -> ``(1, 2)``."""
    if len(values) == 1 and isinstance(values[0], Sequence | np.ndarray):
        return tuple(values[0])
    return values


def tensor_list(name: str, tensors: Any) -> list[Tensor]:
    """Check a list-of-tensors argument the way PyTorch does (``cat``, ``stack`` ...)."""
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
            f"{type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    return list(tensors)


# ----------------------------------------------------------------------------------------------
# select / slice (the views behind indexing and narrow) and their backward helpers


@op("SelectBackward0", view=True)
def _select(self, dim, index):
    # ``dim`` is non-negative here; the trailing Ellipsis keeps a 0-d result a view.
    size = self.shape[dim]
    if index < -size or index >= size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {_fmt(self.shape)} at "
            f"dimension {dim}"
        )
    return _with_torch_strides(self)[(slice(None),) * dim + (index, Ellipsis)]


@_select.derivative("self")
def _(ops, grad, self_shape, dim, index):
    return ops.select_backward(grad, self_shape, dim, index)


@op("SelectBackwardBackward0", inputs=("grad",))
def _select_backward(grad, input_sizes, dim, index):
    """Zeros of ``input_sizes`` with ``grad`` at ``index`` of ``dim`` (select's gradient)."""
    out = np.zeros(input_sizes, grad.dtype)
    out[(slice(None),) * dim + (index, Ellipsis)] = grad
    return out


@_select_backward.derivative("grad")
def _(ops, grad, dim, index):
    return ops.select(grad, dim, index)


@tensor_method
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at ``index`` of dimension ``dim``, which is removed (a view).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]]).select(1, 0)
        tensor([1, 3])
    """
    ndim = input._data.ndim
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return _select(input, wrap_dim(dim, ndim), _index_arg(index))


@op("SliceBackward0", view=True)
def _slice(self, dim, start, end, step):
    # Python's slice semantics are PyTorch's for positive steps: bounds are clamped.
    source = _with_torch_strides(self)
    out = source[(slice(None),) * dim + (slice(start, end, step),)]
    if out.size:
        return out
    # An empty result: NumPy keeps the dimension's stride and the source's start where
    # PyTorch's slice multiplies the stride by the step and moves the start to the (clamped)
    # first index: zeros(4, 5)[4:] starts at element 20, zeros(6, 0)[:, ::3] has stride 3.
    first = slice(start, end, step).indices(source.shape[dim])[0]
    strides = list(element_strides(source))
    offset = first * strides[dim]
    strides[dim] *= step
    return with_strides(source, out.shape, tuple(strides), offset)


@_slice.derivative("self")
def _(ops, grad, self_shape, dim, start, end, step):
    return ops.slice_backward(grad, self_shape, dim, start, end, step)


@op("SliceBackwardBackward0", inputs=("grad",))
def _slice_backward(grad, input_sizes, dim, start, end, step):
    """Zeros of ``input_sizes`` with ``grad`` in the slice (slice's gradient)."""
    out = np.zeros(input_sizes, grad.dtype)
    out[(slice(None),) * dim + (slice(start, end, step),)] = grad
    return out


@_slice_backward.derivative("grad")
def _(ops, grad, dim, start, end, step):
    return ops.slice(grad, dim, start, end, step)


@tensor_method
def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` elements of dimension ``dim`` from ``start`` (a view).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(5).narrow(0, 1, 3)
        tensor([1, 2, 3])
    """
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start = _index_arg(start)
    length = _index_arg(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, ndim)
    size = input._data.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return _slice(input, d, start, start + length, 1)


# ----------------------------------------------------------------------------------------------
# diagonal, diag, diag_embed, tril/triu, trace


def _diagonal_view(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable view of the diagonal of ``a`` (``np.diagonal``'s view is read-only)."""
    a = _with_torch_strides(a)
    ndim = a.ndim
    d1 = wrap_dim_scalar(dim1, ndim)
    d2 = wrap_dim_scalar(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = a.shape[d1], a.shape[d2]
    length = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = [slice(None)] * ndim
    if length:
        if offset >= 0:
            start[d2] = slice(offset, None)
        else:
            start[d1] = slice(-offset, None)
    base = a[tuple(start)]
    keep = [k for k in range(ndim) if k != d1 and k != d2]
    shape = tuple(a.shape[k] for k in keep) + (length,)
    strides = tuple(a.strides[k] for k in keep) + (a.strides[d1] + a.strides[d2],)
    # (on the owning array: storage_offset() sees the diagonal's offset, as_strided would not)
    return with_strides(base, shape, tuple(st // a.itemsize for st in strides))


@op("DiagonalBackward0", view=True, method=True)
def diagonal(self, offset=0, dim1=0, dim2=1):
    """The diagonal of the ``dim1``/``dim2`` planes, as a last dimension (a view).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(9).view(3, 3).diagonal()
        tensor([0, 4, 8])
    """
    return _diagonal_view(self, offset, dim1, dim2)


@diagonal.derivative("self")
def _(ops, grad, self_shape, offset, dim1, dim2):
    return ops.diagonal_backward(grad, self_shape, offset, dim1, dim2)


@op("DiagonalBackwardBackward0", inputs=("grad",))
def _diagonal_backward(grad, input_sizes, offset, dim1, dim2):
    """Zeros of ``input_sizes`` with ``grad`` on the diagonal (diagonal's gradient)."""
    out = np.zeros(input_sizes, grad.dtype)
    _diagonal_view(out, offset, dim1, dim2)[...] = grad
    return out


@_diagonal_backward.derivative("grad")
def _(ops, grad, offset, dim1, dim2):
    return ops.diagonal(grad, offset, dim1, dim2)


@op("DiagEmbedBackward0", method=True)
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims ``dim1``/``dim2``) whose ``offset`` diagonal is the last dimension.

    Example:
        >>> import chainrule as torch
        >>> torch.diag_embed(torch.tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
    """
    ndim = self.ndim + 1  # (a 0-d input: dims in [-1, 0], which cannot be two different ones)
    d1 = wrap_dim(dim1, ndim)
    d2 = wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = self.shape[-1] + abs(offset)
    batch = list(self.shape[:-1])
    shape = []
    for k in range(ndim):
        shape.append(n if k in (d1, d2) else batch.pop(0))
    out = np.zeros(shape, self.dtype)
    _diagonal_view(out, offset, d1, d2)[...] = self
    return out


@diag_embed.derivative("self")
def _(ops, grad, offset, dim1, dim2):
    return ops.diagonal(grad, offset, dim1, dim2)


@op("DiagonalBackward0_copy")
def _diag_copy(self, diagonal):
    return _diagonal_view(self, diagonal, 0, 1).copy()


@_diag_copy.derivative("self")
def _(ops, grad, self_shape, diagonal):
    return ops.diagonal_backward(grad, self_shape, diagonal, 0, 1)


@tensor_method
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor as a diagonal matrix, or the diagonal of a matrix (a copy).

    Example:
        >>> import chainrule as torch
        >>> torch.diag(torch.tensor([[1, 2], [3, 4]]))
        tensor([1, 4])
    """
    if not isinstance(input, Tensor):
        raise TypeError(
            f"diag(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    ndim = input._data.ndim
    if ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if ndim == 2:
        return _diag_copy(input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


@op("TrilBackward0", method=True, inplace=True)
def tril(self, diagonal=0):
    """The lower triangle of the last two dimensions (elements above ``diagonal`` zeroed)."""
    if self.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return c_contiguous(np.tril(self, diagonal))  # PyTorch's result is contiguous


@tril.derivative("self")
def _(ops, grad, diagonal):
    return ops.tril(grad, diagonal)


@op("TriuBackward0", method=True, inplace=True)
def triu(self, diagonal=0):
    """The upper triangle of the last two dimensions (elements below ``diagonal`` zeroed)."""
    if self.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return c_contiguous(np.triu(self, diagonal))  # PyTorch's result is contiguous


@triu.derivative("self")
def _(ops, grad, diagonal):
    return ops.triu(grad, diagonal)


@op("TraceBackward0", method=True)
def trace(self):
    """The sum of the main diagonal of a matrix (integers sum as int64)."""
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    if self.dtype == np.bool_:
        raise _dtype.no_kernel("trace", self.dtype)
    dtype = np.int64 if self.dtype.kind in "iu" else self.dtype
    return np.trace(self, dtype=dtype)


@trace.derivative("self")
def _(ops, grad, self_shape):
    # d trace / d self is the identity: the gradient spread along the diagonal.
    length = min(self_shape)
    return ops.diagonal_backward(ops.expand(grad, (length,)), self_shape, 0, 0, 1)


# ----------------------------------------------------------------------------------------------
# flip, roll, repeat, tile


@op("FlipBackward0")
def _flip(self, dims):
    # A copy (np.flip is a view) in the input's memory order: PyTorch's flip writes into
    # ``empty_like(self)``, so a transposed input gives a transposed result.
    out = empty_like_preserving(self)
    np.copyto(out, np.flip(self, dims) if dims and self.ndim else self)
    return out


@_flip.derivative("self")
def _(ops, grad, dims):
    return ops.flip(grad, dims)


@tensor_method
def flip(input: Tensor, *args: Any, dims: Any = None) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(4).flip(0)
        tensor([3, 2, 1, 0])
    """
    if not args and dims is None:
        raise missing_argument("flip", "dims")
    wrapped = dim_list(_int_tuple(_varargs(args) if dims is None else dims), input._data.ndim)
    return _flip(input, wrapped)


@tensor_method
def fliplr(input: Tensor) -> Tensor:
    """``flip(input, 1)`` (at least 2-D)."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


@tensor_method
def flipud(input: Tensor) -> Tensor:
    """``flip(input, 0)`` (at least 1-D)."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


@op("RollBackward0")
def _roll(self, shifts, dims):
    if not dims:
        return c_contiguous(np.roll(self, shifts[0]))  # flattened, then the shape restored
    # As PyTorch's roll_cpu: one dimension after the other, each result laid out anew
    out = self
    for shift, dim in zip(shifts, dims, strict=True):
        out = _roll_one(out, shift, dim)
    return out


def _roll_one(a: np.ndarray, shift: int, dim: int) -> np.ndarray:
    """``a`` rolled along ``dim`` as PyTorch lays the result out: an empty one cloned as it is,
    a whole turn a row-major copy, otherwise in ``a``'s suggested memory format (channels-last
    for an NHWC or NDHWC layout, else row-major)."""
    if a.size == 0:
        return empty_like_preserving(a)
    if shift % a.shape[dim] == 0:
        return np.array(a, order="C")
    rolled = np.roll(a, shift, dim)
    memory_format = suggest_memory_format(a) if a.ndim in (4, 5) else contiguous_format
    if memory_format == contiguous_format:
        return c_contiguous(rolled)
    return copy_in_memory_format(rolled, memory_format)


@_roll.derivative("self")
def _(ops, grad, shifts, dims):
    return ops.roll(grad, tuple(-s for s in shifts), dims)


@tensor_method
def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
         ) -> Tensor:
    """Shift elements along ``dims`` cyclically (all elements, flattened, without ``dims``).

    Example:
        >>> import chainrule as torch
        >>> torch.arange(4).roll(1)
        tensor([3, 0, 1, 2])
    """
    shift = _int_tuple(shifts)
    dim = () if dims is None else _int_tuple(dims)
    if not shift:
        raise RuntimeError("`shifts` required")
    if (dim or len(shift) != 1) and len(shift) != len(dim):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shift)}, dims:{len(dim)}"
        )
    ndim = input._data.ndim
    if ndim and not input._data.size:  # (PyTorch clones an empty tensor, dims unchecked)
        return _roll(input, shift, (0,) * len(dim))
    return _roll(input, shift, tuple(_wrap_dim_strict(d, ndim) for d in dim))


@op("RepeatBackward0")
def _repeat(self, repeats):
    lead = len(repeats) - self.ndim
    # Row-major whatever the input's layout, as PyTorch's (np.tile keeps the layout when every
    # count is 1)
    return c_contiguous(np.tile(self.reshape((1,) * lead + self.shape), repeats))


@_repeat.derivative("self")
def _(ops, grad, self_shape, repeats):
    # Each output dimension r * s is viewed as (r, s); summing the r axes folds the copies.
    padded = (1,) * (len(repeats) - len(self_shape)) + tuple(self_shape)
    split_shape: list[int] = []
    for r, s in zip(repeats, padded, strict=True):
        split_shape += [r, s]
    g = ops.reshape(grad, tuple(split_shape))
    if repeats:
        g = ops.sum(g, tuple(range(0, 2 * len(repeats), 2)))
    return ops.reshape(g, tuple(self_shape))


@tensor_method
def repeat(self: Tensor, *repeats: Any) -> Tensor:
    """Tile the tensor ``repeats[i]`` times along each dimension (new leading dims allowed).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1, 2]).repeat(2)
        tensor([1, 2, 1, 2])
    """
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _int_tuple(_varargs(repeats))
    shape = self._data.shape
    if len(reps) < len(shape):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    padded = (1,) * (len(reps) - len(shape)) + shape
    out_shape = [r * s for r, s in zip(reps, padded, strict=True)]
    for size in out_shape:
        if size < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {size}: {_fmt(out_shape)}"
            )
    return _repeat(self, reps)


@tensor_method
def tile(input: Tensor, *args: Any, dims: Any = None) -> Tensor:
    """``repeat`` with ``dims`` padded with leading 1s to the tensor's dimensions.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2]]).tile(2).shape
        chainrule.Size([1, 4])
    """
    if not args and dims is None:
        raise missing_argument("tile", "dims")
    reps = _int_tuple(_varargs(args) if dims is None else dims)
    reps = (1,) * (input._data.ndim - len(reps)) + reps
    return repeat(input, reps)


# ----------------------------------------------------------------------------------------------
# cat and stack: one differentiable input per tensor of the list


def _signature(names: Sequence[str]) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(name, kind) for name in names])


class _ListOp:
    """An op whose differentiable inputs are a list of tensors (``cat``, ``stack``).

    The op table names each differentiable input, so the op for a list of ``n`` tensors is
    declared with inputs ``t0 .. t{n-1}`` (on first use, then cached): every tensor gets its own
    ``next_functions`` entry, as in PyTorch, and inputs of different dtypes are promoted.
    ``forward(arrays, *params)`` and ``derivative(ops, grad, k, *params)`` (the gradient of the
    k-th tensor) are written once, for any length.
    """

    def __init__(self, name: str, node_name: str, params: Sequence[str],
                 forward: Callable[..., Any], derivative: Callable[..., Any]) -> None:
        self.name = name
        self.node_name = node_name
        self.params = tuple(params)
        self.forward = forward
        self.derivative = derivative
        self._by_length: dict[int, Any] = {}

    def __call__(self, tensors: Sequence[Tensor], *params: Any) -> Tensor:
        public = self._by_length.get(len(tensors))
        if public is None:
            public = self._declare(len(tensors))
        return public(*tensors, *params)

    def _declare(self, n: int) -> Any:
        names = tuple(f"t{i}" for i in range(n))
        forward_arrays = self.forward

        def forward(*args: Any) -> np.ndarray:
            return forward_arrays(args[:n], *args[n:])

        forward.__name__ = self.name
        forward.__signature__ = _signature(names + self.params)  # type: ignore[attr-defined]
        # (cat and stack move elements: their gradients are PyTorch's for complex values too)
        public = op(self.node_name, inputs=names, promote=ARITH, complex_ok=True)(forward)
        for k, name in enumerate(names):
            public.derivative(name)(self._derivative_of(k))
        self._by_length[n] = public
        return public

    def _derivative_of(self, k: int) -> Callable[..., Any]:
        derivative = self.derivative

        def of_input_k(ops: Any, grad: Any, *params: Any) -> Any:
            return derivative(ops, grad, k, *params)

        of_input_k.__signature__ = _signature(("ops", "grad") + self.params)  # type: ignore[attr-defined]
        return of_input_k


def _cat_memory_format(arrays: Sequence[np.ndarray]) -> Any:
    """PyTorch's memory format of a ``cat`` result: that of the inputs when they all suggest
    the same channels-last format, else contiguous (NumPy would follow the inputs' order)."""
    if arrays[0].ndim not in (4, 5):
        return contiguous_format  # (the only channels-last formats are 4-d and 5-d)
    first = suggest_memory_format(arrays[0])
    if first == contiguous_format:
        return first
    for a in arrays[1:]:
        if suggest_memory_format(a) != first:
            return contiguous_format
    return first


def _concatenate(arrays: Sequence[np.ndarray], dim: int, memory_format: str) -> np.ndarray:
    """``np.concatenate`` into a new array of ``memory_format`` (one pass, no extra copy)."""
    if memory_format == contiguous_format and all(a.flags.c_contiguous for a in arrays):
        out = np.concatenate(arrays, axis=dim)  # row-major inputs: a row-major result
        if out.flags.c_contiguous:
            return c_contiguous(out)
    shape = list(arrays[0].shape)
    shape[dim] = sum(a.shape[dim] for a in arrays)
    out = empty_in_memory_format(tuple(shape), np.result_type(*arrays), memory_format)
    return np.concatenate(arrays, axis=dim, out=out)


def _cat_forward(arrays: Sequence[np.ndarray], dim: int, spans: tuple) -> np.ndarray:
    live = [a for a, span in zip(arrays, spans, strict=True) if span is not None]
    if not live:  # only legacy empty tensors: the result is one too
        return np.concatenate(arrays)
    # (The skipped legacy empty tensors still take part in choosing the memory format.)
    return _concatenate(live, dim, _cat_memory_format(arrays))


def _cat_derivative(ops: Any, grad: Any, k: int, dim: int, spans: tuple) -> Any:
    span = spans[k]
    if span is None:  # a skipped legacy empty tensor gets an empty gradient
        return ops.reshape(ops.slice(grad, 0, 0, 0, 1), (0,))
    return ops.slice(grad, dim, span[0], span[1], 1)


def _stack_forward(arrays: Sequence[np.ndarray], dim: int) -> np.ndarray:
    # PyTorch's stack is a cat: along ``dim`` then viewed with the new dimension (dim inside
    # the inputs' dims), or of the inputs unsqueezed at the end. Its memory format is that
    # cat's; only 4-d and 5-d cat inputs can be channels-last.
    ndim = arrays[0].ndim
    if dim < ndim:
        parts = arrays
    else:
        parts = [unsqueeze.op.forward(a, dim) for a in arrays] if ndim in (3, 4) else []
    memory_format = _cat_memory_format(parts) if parts and parts[0].ndim in (4, 5) else (
        contiguous_format)
    shape = arrays[0].shape[:dim] + (len(arrays),) + arrays[0].shape[dim:]
    if memory_format == contiguous_format:
        if all(a.flags.c_contiguous for a in arrays):
            out = np.stack(arrays, axis=dim)  # row-major inputs: a row-major result
            if out.flags.c_contiguous:
                return c_contiguous(out)
        return np.stack(arrays, axis=dim, out=np.empty(shape, np.result_type(*arrays)))
    return np.reshape(_concatenate(parts, dim, memory_format), shape, copy=False)


def _stack_derivative(ops: Any, grad: Any, k: int, dim: int) -> Any:
    return ops.select(grad, dim, k)


_CAT = _ListOp("cat", "CatBackward0", ("dim", "spans"), _cat_forward, _cat_derivative)
_STACK = _ListOp("stack", "StackBackward0", ("dim",), _stack_forward, _stack_derivative)


def _cat_layout(shapes: Sequence[tuple[int, ...]], dim: int) -> tuple[int, tuple]:
    """The wrapped ``dim`` and each input's ``(start, end)`` in the result (None: skipped)."""
    for i, shape in enumerate(shapes):
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # PyTorch still skips 1-D empty tensors, whatever the other shapes (legacy behaviour).
    live = [i for i, shape in enumerate(shapes) if shape != (0,)]
    if not live:
        return 0, (None,) * len(shapes)
    ref = shapes[live[0]]
    d = wrap_dim(dim, len(ref))
    spans: list[tuple[int, int] | None] = [None] * len(shapes)
    offset = 0
    for i in live:
        shape = shapes[i]
        if len(shape) != len(ref):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(ref)} and {len(shape)}"
            )
        for k, (expected, got) in enumerate(zip(ref, shape, strict=True)):
            if k != d and expected != got:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{expected} but got size {got} for tensor number {i} in the list."
                )
        spans[i] = (offset, offset + shape[d])
        offset += shape[d]
    return d, tuple(spans)


def _dim_arg(name: str, dim: Any) -> int:
    if dim is None or isinstance(dim, float):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    return _index_arg(dim)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dimension.

    Example:
        >>> import chainrule as torch
        >>> torch.cat([torch.tensor([1, 2]), torch.tensor([3])])
        tensor([1, 2, 3])
    """
    tensors = tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    d, spans = _cat_layout([t._data.shape for t in tensors],
                           _dim_arg("cat", dim if axis is None else axis))
    return _CAT(tensors, d, spans)


def concat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Alias of :func:`cat`."""
    return cat(tensors, dim, axis=axis)


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Alias of :func:`cat` (NumPy's argument name)."""
    return cat(tensors, axis)


def cat_arrays(arrays: Sequence[np.ndarray], dim: int) -> np.ndarray:
    """``cat`` on arrays of one dtype: the derivatives' ``ops.cat`` on the fast path."""
    return _concatenate(arrays, dim, _cat_memory_format(arrays))


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of equal shape along a new dimension.

    Example:
        >>> import chainrule as torch
        >>> torch.stack([torch.tensor([1, 2]), torch.tensor([3, 4])], 1)
        tensor([[1, 3],
                [2, 4]])
    """
    tensors = tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {_fmt(first)} at entry 0 "
                f"and {_fmt(t._data.shape)} at entry {i}"
            )
    return _STACK(tensors, wrap_dim(_dim_arg("stack", dim), len(first) + 1))


def stack_arrays(arrays: Sequence[np.ndarray], dim: int) -> np.ndarray:
    """``stack`` on arrays: the derivatives' ``ops.stack`` on the fast path."""
    return _stack_forward(arrays, dim)


def _atleast(t: Tensor, n: int) -> Tensor:
    ndim = t._data.ndim
    if ndim >= n:
        return t
    if ndim == 0:
        return reshape(t, (1,) * n)
    if n == 2 or ndim == 2:
        return unsqueeze(t, 0 if n == 2 else -1)
    return unsqueeze(unsqueeze(t, 0), -1)  # 1-D to 3-D: (1, n, 1)


def _atleast_all(name: str, n: int, tensors: tuple) -> Any:
    if len(tensors) == 1:
        only = tensors[0]
        if isinstance(only, Tensor):
            return _atleast(only, n)
        if not isinstance(only, Sequence):
            kind = type(only).__name__
            mismatch = (
                f"      didn't match because some of the arguments have invalid types: (!{kind}!)"
            )
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got ({kind}), but "
                f"expected one of:\n * (Tensor input)\n{mismatch}\n * (tuple of Tensors "
                f"tensors)\n{mismatch}\n"
            )
        tensors = tuple(only)
    return tuple(_atleast(t, n) for t in tensor_list(name, tensors))


def atleast_1d(*tensors: Any) -> Any:
    """The tensor (or each tensor) with at least one dimension."""
    return _atleast_all("atleast_1d", 1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """The tensor (or each tensor) with at least two dimensions."""
    return _atleast_all("atleast_2d", 2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """The tensor (or each tensor) with at least three dimensions."""
    return _atleast_all("atleast_3d", 3, tensors)


def _nonempty(name: str, tensors: Any) -> list[Tensor]:
    tensors = tensor_list(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join column-wise: along dim 1, or dim 0 for 1-D tensors."""
    parts = [_atleast(t, 1) for t in _nonempty("hstack", tensors)]
    return cat(parts, 0 if parts[0]._data.ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join row-wise (1-D tensors become rows)."""
    return cat([_atleast(t, 2) for t in _nonempty("vstack", tensors)], 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join depth-wise, along dim 2 (tensors made at least 3-D)."""
    return cat([_atleast(t, 3) for t in _nonempty("dstack", tensors)], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Join as columns: 0-D and 1-D tensors become columns, then ``hstack``."""
    parts = []
    for t in _nonempty("column_stack", tensors):
        parts.append(reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t)
    return cat(parts, 1)


# ----------------------------------------------------------------------------------------------
# split, chunk, unbind, tensor_split: several views from one node


def _pieces(a: np.ndarray, dim: int, sizes: Sequence[int]) -> list[np.ndarray]:
    a = _with_torch_strides(a)
    lead = (slice(None),) * dim
    out = []
    start = 0
    for size in sizes:
        out.append(a[lead + (slice(start, start + size),)])
        start += size
    return out


def _split_sizes(dim_size: int, split_size: int) -> list[int]:
    if split_size == 0:
        return [0]
    count = max((dim_size + split_size - 1) // split_size, 1)
    return [split_size] * (count - 1) + [split_size - (split_size * count - dim_size)]


@op("SplitBackward0", multi_view=True, num_outputs=-1)
def _split_many(self, split_size, dim):
    return _pieces(self, dim, _split_sizes(self.shape[dim], split_size))


@_split_many.derivative("self")
def _(ops, grad, dim):
    return ops.cat(grad, dim)


@op("SplitWithSizesBackward0", multi_view=True, num_outputs=-1)
def _split_with_sizes_many(self, split_sizes, dim):
    return _pieces(self, dim, split_sizes)


@_split_with_sizes_many.derivative("self")
def _(ops, grad, dim):
    return ops.cat(grad, dim)


# A multi-output node with a single output gets a bare gradient from the engine instead of a
# list of one (``_n_out == 1`` means single-output there). Until the engine tells the two
# apart, a split into one piece is recorded by a single-output op of the same node name.


@op("SplitBackward0", multi_view=True)
def _split_one(self):
    return self.view()


@_split_one.derivative("self")
def _(ops, grad):
    return grad


@op("SplitWithSizesBackward0", multi_view=True)
def _split_with_sizes_one(self):
    return self.view()


@_split_with_sizes_one.derivative("self")
def _(ops, grad):
    return grad


def _split(self: Tensor, split_size: int, dim: int) -> tuple:
    if len(_split_sizes(self._data.shape[dim], split_size)) == 1:
        return (_split_one(self),)
    return _split_many(self, split_size, dim)


def _split_with_sizes(self: Tensor, split_sizes: tuple[int, ...], dim: int) -> tuple:
    if len(split_sizes) == 1:
        return (_split_with_sizes_one(self),)
    return _split_with_sizes_many(self, split_sizes, dim)


@tensor_method
def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    """Views of consecutive pieces of ``split_sizes`` elements along ``dim``."""
    ndim = self._data.ndim
    if ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    sizes = tuple(_index_arg(s) for s in split_sizes)
    d = wrap_dim(dim, ndim)
    dim_size = self._data.shape[d]
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={_fmt(sizes)}"
        )
    if sum(sizes) != dim_size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {dim_size} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={_fmt(sizes)}"
        )
    return _split_with_sizes(self, sizes, d)


@tensor_method
def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Views of pieces of ``split_size`` elements (the last may be smaller) along ``dim``, or of
    the sizes listed.

    Example:
        >>> import chainrule as torch
        >>> torch.arange(5).split(2)
        (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    if isinstance(split_size_or_sections, Sequence):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    split_size = _index_arg(split_size_or_sections)
    ndim = tensor._data.ndim
    if ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(
            f"split expects split_size be non-negative, but got split_size={split_size}"
        )
    d = wrap_dim(dim, ndim)
    dim_size = tensor._data.shape[d]
    if split_size == 0 and dim_size != 0:
        raise RuntimeError(
            "split_size can only be 0 if dimension size is 0, but got dimension size of "
            f"{dim_size}"
        )
    return _split(tensor, split_size, d)


@tensor_method
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """Split into ``chunks`` views of equal size (the last may be smaller, or fewer pieces)."""
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = _index_arg(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, ndim)
    dim_size = input._data.shape[d]
    split_size = (dim_size + chunks - 1) // chunks
    if split_size == 0 and dim_size == 0:
        # As PyTorch: ``chunks`` empty pieces (split would give one).
        return _split_with_sizes(input, (0,) * chunks, d)
    return _split(input, split_size, d)


@op("UnbindBackward0", multi_view=True, num_outputs=-1)
def _unbind_many(self, dim):
    lead = (slice(None),) * dim
    return [self[lead + (i, Ellipsis)] for i in range(self.shape[dim])]


@_unbind_many.derivative("self")
def _(ops, grad, dim):
    return ops.stack(grad, dim)


@op("UnbindBackward0", multi_view=True)
def _unbind_one(self, dim):
    # One slice: single-output twin of ``_unbind_many`` (see ``_split_one``).
    return self[(slice(None),) * dim + (0, Ellipsis)]


@_unbind_one.derivative("self")
def _(ops, grad, dim):
    return ops.unsqueeze(grad, dim)


def _unbind(self: Tensor, dim: int) -> tuple:
    if self._data.shape[dim] == 1:
        return (_unbind_one(self, dim),)
    return _unbind_many(self, dim)


@tensor_method
def unbind(input: Tensor, dim: int = 0) -> tuple:
    """Views of each slice along ``dim`` (which is removed).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1, 2], [3, 4]]).unbind(1)
        (tensor([1, 3]), tensor([2, 4]))
    """
    ndim = input._data.ndim
    d = wrap_dim_scalar(dim, ndim)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return _unbind(input, d)


@tensor_method
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple:
    """Split into ``sections`` near-equal views, or at the listed ``indices`` (slices)."""
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = wrap_dim(dim, ndim)
    size = input._data.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        spec = spec.item() if spec._data.ndim == 0 else spec.tolist()
    if isinstance(spec, Sequence):
        bounds = [0] + [_index_arg(i) for i in spec] + [size]
        return tuple(_slice(input, d, bounds[i], bounds[i + 1], 1) for i in range(len(spec) + 1))
    sections = _index_arg(spec)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    base, extra = divmod(size, sections)
    out = []
    start = 0
    for i in range(sections):
        end = start + base + (1 if i < extra else 0)
        out.append(_slice(input, d, start, end, 1))
        start = end
    return tuple(out)

# Helpers for derivatives (``ops.<name>``): each NumPy forward has its public op's signature.
# ``ops.cat`` and ``ops.stack`` take a list, so ops/__init__.py binds them by hand.
PRIMITIVES: dict[str, Any] = {
    "select": _select, "slice": _slice, "select_backward": _select_backward,
    "slice_backward": _slice_backward, "diagonal": diagonal,
    "diagonal_backward": _diagonal_backward, "tril": tril, "triu": triu, "flip": _flip,
    "roll": _roll,
}


# ----------------------------------------------------------------------------------------------
# as_strided: a view of the tensor's storage with any sizes, strides and offset


def _flat_positions(size: Sequence[int], stride: Sequence[int], offset: int) -> np.ndarray:
    """The storage position of each element of the geometry ``(size, stride, offset)``."""
    positions = np.full(tuple(size), offset, dtype=np.int64)
    for axis, (n, s) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[axis] = n
        positions = positions + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return positions


@op("AsStridedBackward0", view=True)
def _as_strided(self, size, stride, storage_offset, geometry):
    # (a view on the storage keeps the chain of bases: storage_offset() and a further
    # as_strided find the same storage)
    flat = flat_storage(self)
    if 0 in size:  # (no element: any offset is PyTorch's, NumPy's buffer takes up to its end)
        storage_offset = min(storage_offset, flat.size)
    return on_storage(flat, size, stride, storage_offset)


@_as_strided.derivative("self")
def _(ops, grad, size, stride, storage_offset, geometry):
    # PyTorch's as_strided_backward: the gradient added into a zero storage at the output's
    # positions (overlapping outputs add up), averaged over input elements sharing a position
    # (an expanded input), then read back at the input's positions.
    in_size, in_stride, in_offset, numel = geometry
    inputs = _flat_positions(in_size, in_stride, in_offset).reshape(-1)
    storage = ops.take_backward(0, ops.reshape(grad, (-1,)),
                                (numel,), _flat_positions(size, stride, storage_offset).reshape(-1))
    counts = np.bincount(inputs, minlength=numel)
    if counts.max(initial=0) > 1:
        factor = np.maximum(counts, 1).astype(getattr(grad, "_data", grad).dtype)
        storage = storage / (factor if type(storage) is np.ndarray else wrap(factor))
    return ops.reshape(ops.take(storage, inputs), tuple(in_size))


def _as_strided_arguments(input: Tensor, size: Any, stride: Any,
                          storage_offset: int | None) -> tuple:
    """The checked arguments of ``as_strided`` (PyTorch's errors), with the input's geometry
    in its storage (what the gradient needs)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    data = input._data
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    numel = flat_storage(data).size
    itemsize = data.itemsize
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride,
                                                                               strict=True))
    if needed > numel:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out "
            f"of bounds for storage of size {numel * itemsize}"
        )
    geometry = (data.shape, tuple(s // itemsize for s in data.strides), input.storage_offset(),
                numel)
    return size, stride, offset, geometry


@tensor_method
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes, strides and offset (in elements;
    the offset defaults to ``input``'s own)."""
    return _as_strided(input, *_as_strided_arguments(input, size, stride, storage_offset))
