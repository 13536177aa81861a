"""Helpers the distributions share: broadcasting parameters, probabilities <-> logits, lazily
computed attributes, and the standard normal draw the families share."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from functools import update_wrapper
from typing import Any

import numpy as np

from .._dtype import dtype as DType
from .._dtype import get_default_dtype
from .._finfo import finfo
from .._size import Size
from .._tensor import Tensor, make_tensor
from ..autograd.grad_mode import enable_grad
from ..ops.activation import softmax
from ..ops.combining import broadcast_tensors
from ..ops.creation import empty, tensor

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers to one shape; numbers become tensors of the first tensor's
    dtype (the default dtype when there is none)."""
    if not all(isinstance(v, Tensor | numbers.Number) for v in values):
        raise ValueError(
            "Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
            "implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        dtype: DType = get_default_dtype()
        for v in values:
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
        values = tuple(v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values)
    return tuple(broadcast_tensors(*values))


def _standard_normal(shape: Size | tuple[int, ...], dtype: DType) -> Tensor:
    """Standard normal draws of ``shape``: ``empty(shape).normal_()``, as PyTorch's, so that
    a seeded program draws PyTorch's numbers (no graph)."""
    return empty(tuple(shape), dtype=dtype).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[: value.dim() - dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: a sigmoid for binary events, else a softmax over the last
    dimension."""
    if is_binary:
        return logits.sigmoid()
    return softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]`` of its dtype."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped away from 0 and 1 first)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """A property computed on first access (with grad enabled) and then stored on the
    instance, as PyTorch's ``torch.distributions.utils.lazy_property``."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property is on the class: also a property, for the docs tools."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of the lower triangle (with ``diag`` diagonals above) of the last two
    dimensions, row by row, as a vector."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    rows, cols = np.tril_indices(n, k=diag)
    keep = tensor((rows * n + cols).tolist())
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., keep]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a square matrix whose lower triangle (with
    ``diag``) holds ``vec`` and whose other entries are 0."""
    length = vec.shape[-1]
    root = ((1 + 2 * diag) ** 2 + 8 * length + 4 * abs(diag) * (diag + 1)) ** 0.5
    n_float = (-(1 + 2 * diag) + root) / 2
    n = round(n_float)
    if (n - n_float) ** 2 > 1e-6:
        raise ValueError(
            f"The size of last dimension is {length} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    rows, cols = np.tril_indices(n, k=diag)
    # a 0/1 matrix that puts entry k of the vector at (rows[k], cols[k]): differentiable
    placement = np.zeros((length, n * n), dtype=vec.dtype.np)
    placement[np.arange(length), rows * n + cols] = 1
    flat = vec @ make_tensor(placement)
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))
