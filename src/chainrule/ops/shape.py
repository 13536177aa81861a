"""Shape ops and views: view, reshape, flatten, squeeze/unsqueeze, transpose/permute, expand.

Views share memory and the version counter with their base (``view=True`` in the table), as in
PyTorch: writing through a view is seen by the base.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap_dim
from ._registry import op

__all__ = [
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "t", "transpose",
    "swapaxes", "swapdims", "permute", "expand", "expand_as", "broadcast_to", "movedim",
    "moveaxis", "view_as", "reshape_as", "ravel", "adjoint",
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
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ----------------------------------------------------------------------------------------------
# view / reshape


@op("ViewBackward0", view=True)
def _view(self, size):
    shape = infer_size(size, self.size)
    try:
        return np.reshape(self, shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


@_view.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


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
    return _view(self, size_args(shape))


@op("UnsafeViewBackward0")
def _unsafe_view(self, size):
    return np.reshape(self, infer_size(size, self.size))


@_unsafe_view.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


def _can_view(array: np.ndarray, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(array, shape, copy=False)
    except ValueError:
        return False
    return True


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """``view`` when the memory layout allows it, otherwise a copy."""
    size = infer_size(size_args(shape), input._data.size)
    if _can_view(input._data, size):
        return _view(input, size)
    from .copying import clone

    return _unsafe_view(clone(input), size)


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.view(other.shape)``."""
    return _view(self, other._data.shape)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.reshape(other.shape)``."""
    return reshape(self, other._data.shape)


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


def ravel(input: Tensor) -> Tensor:
    """A 1-D view (or copy) of all elements."""
    return reshape(input, (-1,))


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension ``dim`` into ``sizes``."""
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    sizes = infer_size(list(sizes), shape[d]) if -1 in sizes else tuple(sizes)
    if math.prod(sizes) != shape[d]:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
            f"({shape[d]}) in the input tensor"
        )
    return _view(input, shape[:d] + tuple(sizes) + shape[d + 1:])


# ----------------------------------------------------------------------------------------------
# squeeze / unsqueeze


@op("SqueezeBackward0", view=True)
def _squeeze_all(self):
    return np.squeeze(self)


@_squeeze_all.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


@op("SqueezeBackward1", view=True)
def _squeeze_dim(self, dim):
    d = wrap_dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 1:
        return np.squeeze(self, axis=d)
    return self.view()


@_squeeze_dim.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


@op("SqueezeBackward2", view=True)
def _squeeze_dims(self, dim):
    dims = {wrap_dim(d, self.ndim) for d in dim}
    axes = tuple(d for d in sorted(dims) if self.ndim and self.shape[d] == 1)
    return np.squeeze(self, axis=axes) if axes else self.view()


@_squeeze_dims.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


def squeeze(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all, or only ``dim``)."""
    if dim is None:
        return _squeeze_all(input)
    if isinstance(dim, int | np.integer):
        return _squeeze_dim(input, int(dim))
    return _squeeze_dims(input, tuple(dim))


@op("UnsqueezeBackward0", view=True)
def unsqueeze(self, dim):
    """Insert a dimension of size 1 at ``dim``."""
    return np.expand_dims(self, wrap_dim(dim, self.ndim + 1))


@unsqueeze.derivative("self")
def _(F, grad, self_shape):
    return F.reshape(grad, self_shape)


# ----------------------------------------------------------------------------------------------
# transposes


@op("TBackward0", view=True)
def t(self):
    """Transpose a matrix (0-d and 1-d tensors are returned as they are)."""
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self.T


@t.derivative("self")
def _(F, grad):
    return F.t(grad)


@op("TransposeBackward0", view=True)
def transpose(self, dim0, dim1):
    """Swap two dimensions."""
    n = max(self.ndim, 1)
    return np.swapaxes(self, wrap_dim(dim0, n), wrap_dim(dim1, n)) if self.ndim else self.view()


@transpose.derivative("self")
def _(F, grad, dim0, dim1):
    return F.transpose(grad, dim0, dim1)


swapaxes = swapdims = transpose


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
    return np.transpose(self, axes)


@_permute.derivative("self")
def _(F, grad, dims):
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[d % ndim if ndim else 0] = i
    return F.permute(grad, tuple(inverse))


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions."""
    return _permute(input, size_args(dims))


def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Move dimensions to new positions, keeping the others in order."""
    ndim = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [wrap_dim(s, ndim) for s in src]
    dst = [wrap_dim(d, ndim) for d in dst]
    order = [d for d in range(ndim) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _permute(input, tuple(order))


moveaxis = movedim


def adjoint(input: Tensor) -> Tensor:
    """Transpose of the last two dimensions."""
    return transpose(input, -2, -1)


def matrix_transpose(input: Tensor) -> Tensor:
    """``input.mT``."""
    return transpose(input, -2, -1)


def full_transpose(input: Tensor) -> Tensor:
    """``input.T``: reverse all dimensions (PyTorch warns for other than 2-D)."""
    ndim = input._data.ndim
    if ndim != 2 and ndim != 0:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=3,
        )
    return _permute(input, tuple(range(ndim - 1, -1, -1)))


# ----------------------------------------------------------------------------------------------
# expand


@op("ExpandBackward0", view=True)
def _expand(self, size):
    shape = _expanded_shape(self.shape, size)
    return np.broadcast_to(self, shape)


@_expand.derivative("self")
def _(F, grad):
    # The engine sums the gradient back to the input's shape.
    return grad


def _expanded_shape(shape: tuple[int, ...], size: Sequence[int]) -> tuple[int, ...]:
    size = tuple(size)
    if len(size) < len(shape):
        raise RuntimeError(
            f"expand({_type_name(shape)}{{[{', '.join(map(str, shape))}]}}, size=[{', '.join(map(str, size))}]): "
            "the number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    lead = len(size) - len(shape)
    out = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                    "non-existing dimension 0"
                )
            out.append(s)
            continue
        current = shape[i - lead]
        if s == -1:
            out.append(current)
        elif current == 1 or current == s:
            out.append(s)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({current}) "
                f"at non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, size))}].  "
                f"Tensor sizes: [{', '.join(map(str, shape))}]"
            )
    return tuple(out)


def _type_name(shape: tuple[int, ...]) -> str:
    return "torch.FloatTensor"


def expand(self: Tensor, *sizes: Any) -> Tensor:
    """Broadcast to a larger shape without copying (``-1`` keeps a size)."""
    return _expand(self, size_args(sizes))


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.expand(other.shape)``."""
    return _expand(self, other._data.shape)


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input.expand(size)``."""
    return _expand(input, tuple(size))
