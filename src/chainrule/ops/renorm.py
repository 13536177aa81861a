"""``renorm``: each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it.

As PyTorch's kernel, the norm of each slice is taken in the accumulation type (float32 for
float16 and bfloat16), and the factor
``maxnorm / (norm + 1e-7)`` (1 where the norm does not exceed ``maxnorm``) is rounded to the
input's dtype before it multiplies the slice. The node is ``RenormBackward0`` (also for the
in-place ``renorm_``), saving ``self``, ``p``, ``dim`` and ``maxnorm``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtype import float32
from .._tensor import Tensor, wrap_dim
from ._registry import op, tensor_method
from .reduction import _norm_backward, _type_name, _vector_norm

__all__ = ["renorm"]

_EPS = 1e-7  # (PyTorch's, added to the norm before dividing)

PRIMITIVES: dict[str, Any] = {"vector_norm": _vector_norm}


def _other_dims(ndim: int, dim: int) -> tuple[int, ...]:
    return tuple(d for d in range(ndim) if d != dim)


@op("RenormBackward0", half_native=True)
def _renorm(self, p, dim, maxnorm):
    a = self
    half = a.dtype.itemsize == 2 and a.dtype.kind in "fV"
    if half:  # (norm and factor in float32, the factor rounded to the half type as PyTorch's)
        a = a.astype(np.float32)
    norm = _vector_norm.op.forward(a, float(p), _other_dims(a.ndim, dim), True)
    if norm.dtype.kind == "c":
        norm = norm.real
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.asarray(maxnorm / (norm + norm.dtype.type(_EPS)), norm.dtype)
        factor = np.where(norm > maxnorm, scaled, norm.dtype.type(1))
    if half:
        factor = factor.astype(self.dtype).astype(np.float32)
        return np.ascontiguousarray((a * factor).astype(self.dtype))
    return np.ascontiguousarray((a * factor).astype(self.dtype, copy=False))


@_renorm.derivative("self")
def _(ops, grad, self, p, dim, maxnorm):
    # y = x * f(n), n = ||x||_p over the other dims, f = maxnorm / (n + eps) where n > maxnorm:
    # dx = f grad - f / (n + eps) * d||x||_p(sum(x grad)), and grad itself elsewhere. As
    # PyTorch's, the norm and the sum are taken in float32 for float16 and bfloat16.
    dims = _other_dims(len(self.shape), dim)
    wide = _is_half(self)
    norm = ops.vector_norm(self, float(p), dims, True, float32.np if wide else None)
    weighted = ops.sum(self * grad, dims, True, dtype=float32 if wide else None)
    with np.errstate(divide="ignore", invalid="ignore"):
        norm_grad = _norm_backward(ops, weighted, self, float(p), dims, norm)
        inverse = 1 / (norm + _EPS)
        factor = inverse * maxnorm
        scaled = factor * grad - (factor * inverse) * norm_grad
    return ops.where(norm > maxnorm, scaled, grad)


def _is_half(x: Any) -> bool:
    """Whether ``x`` (an array, or a Tensor under ``create_graph``) is float16 or bfloat16."""
    kind = x.dtype.np if isinstance(x, Tensor) else x.dtype
    return kind.itemsize == 2 and kind.kind in "fV"


def _cpp_double(value: float) -> str:
    """``value`` as C++'s ``operator<<`` writes a double (six significant digits)."""
    return f"{value:g}"


def _number_arg(name: str, position: int, value: Any) -> Any:
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise TypeError(
                f"renorm(): argument '{name}' (position {position}) must be Number, not Tensor"
            )
        return value.item()
    if not isinstance(value, int | float | complex | np.number):
        raise TypeError(
            f"renorm(): argument '{name}' (position {position}) must be Number, not "
            f"{type(value).__name__}"
        )
    return value


@tensor_method(inplace=True)
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Scale each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` to the norm
    ``maxnorm`` (``maxnorm / (norm + 1e-7)`` times the slice); other slices are unchanged.

    Example:
        >>> import chainrule as torch
        >>> torch.renorm(torch.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.0)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    p = _number_arg("p", 2, p)
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer):
        raise TypeError(
            f"renorm(): argument 'dim' (position 3) must be int, not {type(dim).__name__}"
        )
    maxnorm = _number_arg("maxnorm", 4, maxnorm)
    if isinstance(p, complex) or not float(p) > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if not float(maxnorm) >= 0:
        raise RuntimeError(
            f"renorm: expected maxnorm to be >= 0 but got {_cpp_double(float(maxnorm))}"
        )
    a = input._data
    if a.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    dim = wrap_dim(int(dim), a.ndim)
    if a.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(a)}"
        )
    if math.isinf(float(p)):
        for d in _other_dims(a.ndim, dim):
            if a.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the inf norm on the dimension {d}"
                    "because this dimension is empty and the operation does not have an identity"
                )
    return _renorm(input, float(p), dim, float(maxnorm))
