"""``torch.functional``: the module PyTorch keeps some tensor functions in (``einsum``,
``split``, ``meshgrid``, ``norm``, ``unique`` ...), also reachable as ``torch.<name>``.
Programs import it (``import torch.functional as F``), so it exists here with the same names,
the very functions of the ``chainrule`` namespace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    lu,
    meshgrid,
    norm,
    split,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)
from ._size import Size

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "einsum",
    "lu",
    "meshgrid",
    "norm",
    "split",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
]


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (ints stand for 1-d shapes), without
    making any tensor; PyTorch's errors for shapes that do not broadcast.

    Example:
        >>> broadcast_shapes((2,), (3, 1), (1, 1, 1))
        chainrule.Size([1, 3, 2])
    """
    given = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not given:
        return Size([])
    for shape in given:
        if not isinstance(shape, Sequence):
            raise RuntimeError(
                "Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                f"got {shape}"
            )
    common = [1] * max(len(shape) for shape in given)
    for index, shape in enumerate(given):
        for dim in range(-1, -1 - len(shape), -1):
            size = shape[dim]
            if size == common[dim]:
                continue
            if common[dim] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[dim] = size
            if size == 1 or common[dim] == size:
                continue
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {size} at {dim}! Mismatching "
                f"argument at index {index} had {shape}; but expected shape should be "
                f"broadcastable to {common}"
            )
    return Size(common)
