"""Flatten parameters into one vector and back."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ...ops.inplace import bump_version
from ...ops.shape import cat, reshape

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and concatenated (differentiable)."""
    return cat([reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of ``vec`` into the parameters (in place)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p._data.size
        p._data[...] = vec._data[offset : offset + n].reshape(p._data.shape)
        bump_version(p)
        offset += n
