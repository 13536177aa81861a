"""Bilinear layer, one-hot encoding and the vector-normalising helpers of nn.functional."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap, wrap_dim
from .._registry import op
from ..reduction import norm, sum
from ..shape import reshape
from ._common import size_list

__all__ = ["bilinear", "one_hot", "normalize", "cosine_similarity", "pairwise_distance"]


@op("TrilinearBackward0", inputs=("input1", "weight", "input2"))
def _bilinear_product(input1, weight, input2):
    """``out[n, o] = sum_ij input1[n, i] * weight[o, i, j] * input2[n, j]``."""
    return np.einsum("ni,oij,nj->no", input1, weight, input2, optimize=True)


@_bilinear_product.derivative("input1")
def _(F, grad, weight, input2):
    n, o = grad.shape
    _, i, j = weight.shape
    per_sample = F.reshape(F.mm(input2, F.reshape(F.permute(weight, (2, 0, 1)), (j, o * i))),
                           (n, o, i))
    return F.reshape(F.bmm(F.reshape(grad, (n, 1, o)), per_sample), (n, i))


@_bilinear_product.derivative("input2")
def _(F, grad, weight, input1):
    n, o = grad.shape
    _, i, j = weight.shape
    per_sample = F.reshape(F.mm(input1, F.reshape(F.permute(weight, (1, 0, 2)), (i, o * j))),
                           (n, o, j))
    return F.reshape(F.bmm(F.reshape(grad, (n, 1, o)), per_sample), (n, j))


@_bilinear_product.derivative("weight")
def _(F, grad, input1, input2):
    n, o = grad.shape
    i, j = input1.shape[1], input2.shape[1]
    outer = F.reshape(F.unsqueeze(input1, 2) * F.unsqueeze(input2, 1), (n, i * j))
    return F.reshape(F.mm(F.t(grad), outer), (o, i, j))


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """``x1^T A x2 + b`` for each output feature (``weight`` is ``(out, in1, in2)``)."""
    a, b, w = input1._data, input2._data, weight._data
    if a.ndim != b.ndim:
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {a.ndim} and {b.ndim}"
        )
    if a.shape[:-1] != b.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {size_list(a.shape)} and "
            f"{size_list(b.shape)}"
        )
    if w.ndim != 3 or a.shape[-1] != w.shape[1] or b.shape[-1] != w.shape[2]:
        raise RuntimeError(
            f"bilinear(): input size does not match weight size: got {a.shape[-1]} and "
            f"{b.shape[-1]} but expected {w.shape[1] if w.ndim == 3 else '?'} and "
            f"{w.shape[2] if w.ndim == 3 else '?'}"
        )
    out_shape = tuple(a.shape[:-1]) + (w.shape[0],)
    flat1 = reshape(input1, (-1, a.shape[-1]))
    flat2 = reshape(input2, (-1, b.shape[-1]))
    out = reshape(_bilinear_product(flat1, weight, flat2), out_shape)
    return out if bias is None else out + bias


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Integer class indices to a one-hot ``int64`` tensor with a new last dimension."""
    idx = tensor._data
    if idx.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor."
            )
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return wrap((idx[..., None] == np.arange(num_classes)).astype(np.int64))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim`` (PyTorch's composition)."""
    denom = norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped at ``eps``)."""
    shape = np.broadcast_shapes(x1._data.shape, x2._data.shape)
    a = x1.expand(shape) if x1._data.shape != shape else x1
    b = x2.expand(shape) if x2._data.shape != shape else x2
    d = wrap_dim(dim, len(shape))
    norm_a = norm(a, 2, d, keepdim=True)
    norm_b = norm(b, 2, d, keepdim=True)
    # PyTorch clamps the norms in place without recording it (the clamp has no gradient).
    np.maximum(norm_a._data, eps, out=norm_a._data)
    np.maximum(norm_b._data, eps, out=norm_b._data)
    return sum((a / norm_a) * (b / norm_b), d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dimension."""
    return norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


PRIMITIVES: dict[str, Any] = {}
