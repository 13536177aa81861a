"""The few graph functions that are not ops of the op table: the engine's plumbing (reducing a
gradient to its input's shape, casting it to its input's dtype) and the identity.

Their gradients are each other (``ir.backward``): :func:`identity`'s passes through, the
gradient of :func:`sum_to` and :func:`sum_to_like` is :func:`expand_like` and the other way
round, :func:`cast`'s casts back; so gradient graphs can be differentiated again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.engine import sum_to_shape

__all__ = ["identity", "sum_to", "sum_to_like", "expand_like", "cast"]


def identity(input: Tensor) -> Tensor:
    """``input`` itself (a graph node that names a value: TF's ``Identity``, a variable's
    ``read``)."""
    return input


def sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``grad`` summed over broadcast dimensions down to ``shape``, as the engine reduces a
    gradient to its input's shape (float16 and bfloat16 summed in float32)."""
    reduced = sum_to_shape(grad._data, tuple(shape))
    if reduced is None:
        raise RuntimeError(
            f"Function sum_to: a gradient of shape {list(grad.shape)} cannot be summed to "
            f"shape {list(shape)}"
        )
    return wrap(np.asarray(reduced))  # (a 0-d result: an array, not a NumPy scalar)


def sum_to_like(grad: Tensor, like: Tensor) -> Tensor:
    """:func:`sum_to` to the shape ``like`` has when the graph runs (``grad`` itself when it
    has that shape already)."""
    if tuple(grad.shape) == tuple(like.shape):
        return grad
    return sum_to(grad, tuple(like.shape))


def expand_like(grad: Tensor, like: Tensor) -> Tensor:
    """``grad`` broadcast to ``like``'s shape (a new array): the gradient of a sum."""
    return wrap(np.array(np.broadcast_to(grad._data, tuple(like.shape))))


def cast(input: Tensor, dtype: Any) -> Tensor:
    """``input`` converted to ``dtype`` (a complex gradient of a real input: its real part,
    as the engine takes it)."""
    if input.dtype.is_complex and not dtype.is_complex:
        input = wrap(input._data.real)
    return wrap(input._data.astype(dtype.np))
