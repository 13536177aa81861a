"""``cdist``: p-norm distances between the rows of two batches of matrices.

As in PyTorch, the Euclidean distance of large inputs (more than 25 rows, or
``compute_mode="use_mm_for_euclid_dist"``) is computed with a matrix product
(``EuclideanDistBackward0``, differentiable twice); every other case is one
``CdistBackward0`` node whose gradient, ``CdistBackwardBackward0``, PyTorch does not
differentiate again (its backward raises ``NotImplementedError``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._dtype import SCALAR_TYPE_NAMES, from_numpy_dtype
from .._tensor import Tensor
from ._registry import op
from .indexing import _broadcast_shape
from .shape import _expand, view

__all__ = ["cdist"]

PRIMITIVES: dict[str, Any] = {}


def _pairwise(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """``x1[..., i, :] - x2[..., j, :]`` at ``[..., i, j, :]``."""
    return x1[..., :, None, :] - x2[..., None, :, :]


def pnorm_of_differences(diff: np.ndarray, p: float) -> np.ndarray:
    """The ``p``-norm of ``diff`` along its last dimension, as PyTorch's distance kernels
    compute it (also ``pdist``'s, ``nn_ops/pdist.py``)."""
    diff = np.abs(diff)
    if p == 0:
        out = np.sum(np.minimum(np.ceil(diff), 1), axis=-1)  # (NaN where a difference is)
    elif p == 1:
        out = np.sum(diff, axis=-1)
    elif p == 2:
        out = np.sqrt(np.sum(diff * diff, axis=-1))
    elif math.isinf(p):
        out = np.fmax.reduce(diff, axis=-1, initial=0)  # (PyTorch's max skips NaN)
    else:
        out = np.sum(diff ** p, axis=-1) ** (1 / p)
    return out


@op("CdistBackward0", inputs=("x1", "x2"))
def _cdist_forward(x1, x2, p):
    out = pnorm_of_differences(_pairwise(x1, x2), p)
    return np.ascontiguousarray(out.astype(x1.dtype, copy=False))


def pnorm_gradient(diff: np.ndarray, g: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """The gradient of ``dist = ||diff||_p`` (last dimension) in ``diff``, times ``g``
    (``g`` and ``dist`` keep a trailing dimension of 1), with PyTorch's values at 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            out = np.zeros_like(diff)
        elif p == 1:
            out = g * np.sign(diff)
        elif p < 2:
            out = np.sign(diff) * np.abs(diff) ** (p - 1) * g / dist ** (p - 1)
            zero = (dist == 0) | ((diff == 0) & (p < 1))
            out = np.where(zero, 0, out)
        elif p == 2:
            out = np.where(dist == 0, 0, g * diff / dist)
        elif math.isinf(p):
            out = g * np.sign(diff) * (1 - np.minimum(1, np.ceil(np.abs(np.abs(diff) - dist))))
        else:
            out = np.where(dist == 0, 0, diff * np.abs(diff) ** (p - 2) * g / dist ** (p - 1))
    return out


@op("CdistBackwardBackward0", inputs=("grad", "x1", "x2", "cdist"))
def _cdist_backward(grad, x1, x2, p, cdist):
    out = pnorm_gradient(_pairwise(x1, x2), grad[..., None], cdist[..., None], p)
    return np.sum(out, axis=-2).astype(x1.dtype, copy=False)


for _name in ("grad", "x1", "x2", "cdist"):

    @_cdist_backward.derivative(_name)
    def _(ops, grads):
        raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


@_cdist_forward.derivative("x1")
def _(ops, grad, x1, x2, p, result):
    return ops.cdist_backward(grad, x1, x2, p, result)


@_cdist_forward.derivative("x2")
def _(ops, grad, x1, x2, p, result):
    return ops.cdist_backward(ops.transpose(grad, -1, -2), x2, x1, p,
                              ops.transpose(result, -1, -2))


PRIMITIVES["cdist_backward"] = _cdist_backward


@op("EuclideanDistBackward0", inputs=("x1", "x2"), half_native=True)
def _euclidean_dist(x1, x2):
    # PyTorch's kernel, each step rounded to the input's dtype (bfloat16 too: the subtraction
    # inside the product cancels, so where it rounds shows).
    dtype = x1.dtype
    wide = np.float32 if dtype.itemsize == 2 else dtype

    def norm(x: np.ndarray) -> np.ndarray:
        x = x.astype(wide)
        squares = (x * x).astype(dtype).astype(wide)
        return np.sum(squares, axis=-1, keepdims=True).astype(dtype)

    x1_norm, x2_norm = norm(x1), norm(x2)
    x1_ = np.concatenate([(x1.astype(wide) * -2).astype(dtype), x1_norm, np.ones_like(x1_norm)],
                         axis=-1)
    x2_ = np.concatenate([x2, np.ones_like(x2_norm), x2_norm], axis=-1)
    product = np.matmul(x1_.astype(wide), np.swapaxes(x2_, -1, -2).astype(wide)).astype(dtype)
    return np.sqrt(np.maximum(product.astype(wide), 0)).astype(dtype)


def _matmul(ops: Any, a: Any, b: Any) -> Any:
    return ops.mm(a, b) if a.ndim == 2 else ops.bmm(a, b)


@_euclidean_dist.derivative("x1")
def _(ops, grad, x1, x2, result):
    ratio = ops.where(result == 0, grad * 0, grad / ops.where(result == 0, result + 1, result))
    return x1 * ops.sum(ratio, -1, True) - _matmul(ops, ratio, x2)


@_euclidean_dist.derivative("x2")
def _(ops, grad, x1, x2, result):
    ratio = ops.where(result == 0, grad * 0, grad / ops.where(result == 0, result + 1, result))
    return (x2 * ops.unsqueeze(ops.sum(ratio, -2), -1)
            - _matmul(ops, ops.transpose(ratio, -1, -2), x1))


_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def _type(t: Tensor) -> str:
    return SCALAR_TYPE_NAMES[from_numpy_dtype(t._data.dtype)]


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` and each row of ``x2``
    (``(..., r1, c)`` and ``(..., r2, c)`` give ``(..., r1, r2)``; batch dims broadcast).

    Example:
        >>> import chainrule as torch
        >>> torch.cdist(torch.tensor([[0., 0.]]), torch.tensor([[3., 4.]]))
        tensor([[5.]])
    """
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _MODES[compute_mode]
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
            f"{x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {_type(t)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_type(x1)} but found {_type(x2)}")
    batch = _broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    r1, r2, c = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        out_shape = (*batch, r1, r2)
        if x1.dim() == 2 and x2.dim() == 2:
            return view(_euclidean_dist(x1, x2), out_shape)
        b = math.prod(batch)
        e1 = view(_expand(x1, (*batch, r1, c)).contiguous(), (b, r1, c))
        e2 = view(_expand(x2, (*batch, r2, c)).contiguous(), (b, r2, c))
        return view(_euclidean_dist(e1, e2), out_shape)
    if _type(x1) in ("Half", "BFloat16") and r1 * r2 * c * math.prod(batch):
        raise NotImplementedError(f"\"cdist\" not implemented for '{_type(x1)}'")
    return _cdist_forward(x1, x2, float(p))
