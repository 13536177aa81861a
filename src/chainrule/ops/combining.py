"""Tensors combined into one or onto one shape: ``broadcast_tensors`` (and
``broadcast_shapes``, the same rule on shapes), ``meshgrid``,
``cartesian_prod`` (views and a stack, as PyTorch builds them) and ``block_diag`` (one node,
``BlockDiagBackward0``)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._size import Size
from .._tensor import Tensor
from .creation import zeros
from .indexing import _broadcast_shape
from .shape import _expand, _ListOp, reshape, stack, tensor_list, view

__all__ = ["broadcast_tensors", "broadcast_shapes", "meshgrid", "cartesian_prod", "block_diag"]


def _unpacked(name: str, tensors: tuple) -> list[Tensor]:
    """``f(a, b)`` or ``f([a, b])``: the tensors, with PyTorch's error for other elements."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    return tensor_list(name, tensors)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (a tensor already of that shape is
    returned as it is)."""
    ts = tensor_list("broadcast_tensors", tensors)
    shape: tuple[int, ...] = ()
    for t in ts:
        shape = _broadcast_shape(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else _expand(t, shape) for t in ts)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape tensors of ``shapes`` broadcast to, without making tensors: each argument is
    a shape (a tuple, list or ``Size``) or an int (a 1-D shape); ``None`` is skipped.

    Example:
        >>> import chainrule as torch
        >>> torch.broadcast_shapes((2, 1), (3,), 1)
        chainrule.Size([2, 3])
    """
    given = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in given:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, got "
                f"{shape}"
            )
    common: list[Any] = [1] * max((len(shape) for shape in given), default=0)
    # (as PyTorch: dimensions from the last, each argument against what the ones before it
    # agreed on; a 1 takes the other length, a length below 0 is refused where it would)
    for index, shape in enumerate(given):
        for dim in range(-1, -1 - len(shape), -1):
            if shape[dim] == common[dim]:
                continue
            if common[dim] == 1:
                if shape[dim] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[dim] = shape[dim]
            if shape[dim] != 1 and common[dim] != shape[dim]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[dim]} at {dim}! "
                    f"Mismatching argument at index {index} had {shape}; but expected shape "
                    f"should be broadcastable to {common}"
                )
    for item, length in enumerate(common):  # (what PyTorch's Size() accepts: ints, bools)
        if not hasattr(length, "__index__") or isinstance(length, Tensor):
            raise TypeError(
                f"torch.Size() takes an iterable of 'int' (item {item} is "
                f"'{type(length).__name__}')"
            )
    return Size(int(length) for length in common)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids: the i-th result repeats the i-th 1-D tensor along every other
    dimension (``indexing="xy"`` swaps the first two dimensions, as NumPy's default)."""
    ts = _unpacked("meshgrid", tensors)
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)",
            UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts[1:]:
        if t.dtype != ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t.dim()}-D tensor of shape {tuple(t.shape)}")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._data.size for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = -1
        grids.append(_expand(view(t, view_shape), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-D tensor, one per row (``itertools.product``
    order)."""
    ts = tensor_list("cartesian_prod", tensors)
    for t in ts:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def _block_layout(shapes: Sequence[tuple[int, ...]]) -> tuple:
    """Each input's ``(row, col, rows, cols)`` block in the result."""
    blocks = []
    row = col = 0
    for i, shape in enumerate(shapes):
        if len(shape) > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {len(shape)} dimensions")
        rows, cols = (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else shape
        blocks.append((row, col, rows, cols))
        row += rows
        col += cols
    return tuple(blocks)


def _block_diag_forward(arrays: Sequence[np.ndarray], blocks: tuple, shapes: tuple) -> np.ndarray:
    rows = sum(b[2] for b in blocks)
    cols = sum(b[3] for b in blocks)
    out = np.zeros((rows, cols), dtype=np.result_type(*arrays) if arrays else np.float32)
    for a, (r, c, nr, nc) in zip(arrays, blocks, strict=True):
        out[r:r + nr, c:c + nc] = np.reshape(a, (nr, nc))
    return out


def _block_diag_derivative(ops: Any, grad: Any, k: int, blocks: tuple, shapes: tuple) -> Any:
    r, c, nr, nc = blocks[k]
    block = ops.slice(ops.slice(grad, 0, r, r + nr, 1), 1, c, c + nc, 1)
    if len(shapes[k]) == 2:
        return block
    return ops.reshape(block, shapes[k])


_BLOCK_DIAG = _ListOp("block_diag", "BlockDiagBackward0", ("blocks", "shapes"),
                      _block_diag_forward, _block_diag_derivative)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors as blocks on the diagonal of a matrix of zeros (0-d and 1-D tensors are one
    row)."""
    ts = tensor_list("block_diag", tensors)
    shapes = tuple(tuple(t.shape) for t in ts)
    blocks = _block_layout(shapes)
    if not ts:
        return zeros((1, 0))
    return _BLOCK_DIAG(ts, blocks, shapes)
