"""Writing a tensor into a view of a copy: ``select_scatter``, ``slice_scatter``,
``diagonal_scatter`` and ``as_strided_scatter`` (the out-of-place forms of ``x[i] = src``,
``x[a:b] = src``, ``x.diagonal().copy_(src)`` and ``x.as_strided(...).copy_(src)``).

The gradient of ``self`` is the output's gradient with zeros where ``src`` went; that of
``src`` is the output's gradient read through the same view (PyTorch's formulas).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._strides import element_strides, empty_like_preserving, flat_storage, on_storage
from .._tensor import Tensor, wrap, wrap_dim
from . import shape
from ._registry import op, tensor_method

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter"]


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


def _overlaps_for_sure(a: np.ndarray) -> bool:
    """PyTorch's ``has_internal_overlap(...) == MemOverlap::Yes``: a stride of 0 along a
    dimension of more than one element (an expanded tensor)."""
    return any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape, strict=True))


def _scatter_geometry(a: np.ndarray, offset_of_a: int) -> tuple:
    """The layout of ``as_strided_scatter``'s output, as PyTorch's ``clone_preserve_strides``:
    the input's sizes, strides and storage offset in a copy of its whole storage (a contiguous
    clone where the input overlaps itself): ``(sizes, strides, offset, storage size)``."""
    if _overlaps_for_sure(a):
        return _dense_geometry(a)
    return a.shape, element_strides(a), offset_of_a, flat_storage(a).size


def _clone_in(a: np.ndarray, geometry: tuple) -> np.ndarray:
    """A copy of ``a`` laid out as ``geometry`` in a new storage of its size (whatever the
    input's storage holds outside ``a`` is copied along when the layout is the input's own)."""
    shape_, strides, offset, numel = geometry
    if _overlaps_for_sure(a):
        storage = np.empty(numel, a.dtype)
    else:
        storage = flat_storage(a).copy()
    out = on_storage(storage, shape_, strides, offset)
    out[...] = a
    return out


@op("AsStridedScatterBackward0", inputs=("self", "src"))
def _as_strided_scatter(self, src, size, stride, storage_offset, geometry):
    out = _clone_in(self, geometry)
    if 0 in size:
        return out
    if src.dtype.kind == "c" and out.dtype.kind != "c":
        src = src.real  # (the public function warned, as PyTorch's copy_)
    on_storage(flat_storage(out), size, stride, storage_offset)[...] = src
    return out


@_as_strided_scatter.derivative("self")
def _(ops, grad, size, stride, storage_offset, geometry):
    # d out / d self: 1 at the elements whose storage position src was not written to, else 0.
    # (PyTorch's as_strided_scatter_backward gives self the gradient of the written elements
    # instead, which fails its own gradcheck; this is the Jacobian's transpose.)
    shape_, strides, offset, _ = geometry
    positions = shape._flat_positions(shape_, strides, offset)
    written = np.isin(positions, shape._flat_positions(size, stride, storage_offset))
    return ops.where(written if type(grad) is np.ndarray else wrap(written), 0, grad)


@_as_strided_scatter.derivative("src")
def _(ops, grad, size, stride, storage_offset, geometry):
    # Each src element gets the gradient of the output element at its storage position (0 at
    # a position no output element has); PyTorch's grad.contiguous().as_strided(...) where the
    # output is contiguous (the only layout PyTorch allows for a self that requires grad).
    shape_, strides, offset, numel = geometry
    storage = ops.take_backward(
        0,
        ops.reshape(grad, (-1,)),
        (numel,),
        shape._flat_positions(shape_, strides, offset).reshape(-1),
    )
    picked = shape._flat_positions(size, stride, storage_offset).reshape(-1)
    return ops.reshape(ops.take(storage, picked), tuple(size))


def _dense_geometry(a: Any) -> tuple:
    """The contiguous layout of ``a``'s shape: sizes, strides, offset 0, storage size."""
    shape_ = tuple(a.shape)
    strides, step = [], 1
    for n in reversed(shape_):
        strides.append(step)
        step *= max(n, 1)
    return shape_, tuple(reversed(strides)), 0, int(np.prod(shape_, dtype=np.int64))


_REQUIRES_CONTIGUOUS = (
    "!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED at "
    '"/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp":4754, please report a bug to '
    "PyTorch. as_strided_scatter is currently only supported for contiguous inputs"
)
_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)
_COMPLEX_TO_REAL = (
    "Casting complex values to real discards the imaginary part (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)"
)


@tensor_method
def as_strided_scatter(
    input: Tensor,
    src: Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> Tensor:
    """A copy of ``input`` with ``src`` written into its ``as_strided(size, stride,
    storage_offset)`` view. As PyTorch's, the copy keeps ``input``'s strides and storage offset
    in a copy of its whole storage (positions and the default offset are ``input``'s), and a
    non-contiguous ``input`` that requires grad is refused.

    Example:
        >>> import chainrule as torch
        >>> torch.as_strided_scatter(torch.zeros(4), torch.ones(2), (2,), (2,), 1)
        tensor([0., 1., 0., 1.])
    """
    if input.requires_grad and not input.is_contiguous():
        raise RuntimeError(_REQUIRES_CONTIGUOUS)
    data = input._data
    geometry = _scatter_geometry(data, input.storage_offset())
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: "
            f"{list(stride)}"
        )
    offset = geometry[2] if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    numel = geometry[3]
    needed = (
        0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    )
    if needed > numel:
        itemsize = data.itemsize
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out "
            f"of bounds for storage of size {numel * itemsize}"
        )
    if tuple(src.shape) != size:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(size)}"
        )
    if any(s == 0 and n > 1 for s, n in zip(stride, size, strict=True)):
        raise RuntimeError(_OVERLAP)
    if src._data.dtype.kind == "c" and input._data.dtype.kind != "c":
        warnings.warn(_COMPLEX_TO_REAL, UserWarning, stacklevel=user_stacklevel())
    return _as_strided_scatter(input, src, size, stride, offset, geometry)


# Helpers for derivatives (``ops.<name>``).
PRIMITIVES: dict[str, Any] = {
    "select_scatter": select_scatter,
    "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter,
}
