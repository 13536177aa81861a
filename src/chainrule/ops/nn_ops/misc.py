"""Bilinear layer, one-hot encoding and the vector-normalising helpers of nn.functional."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap, wrap_dim
from ...autograd.grad_mode import is_grad_enabled
from .._registry import ARITH, op
from ..copying import clone
from ..reduction import norm, norm_p_dim, sum
from ..shape import reshape
from ._common import scalar_name, size_list

__all__ = ["bilinear", "one_hot", "normalize", "cosine_similarity", "pairwise_distance"]


@op("TrilinearBackward0", inputs=("input1", "weight", "input2"))
def _bilinear_product(input1, weight, input2):
    """``out[n, o] = sum_ij input1[n, i] * weight[o, i, j] * input2[n, j]``.

    In PyTorch's order (its ``_trilinear``): ``input1`` contracted with the weight first, that
    product (rounded to the dtype: it shows in float16) then contracted with ``input2``.
    """
    n, i = input1.shape
    o, _, j = weight.shape
    first = input1 @ np.reshape(np.transpose(weight, (1, 0, 2)), (i, o * j))
    return np.matmul(np.reshape(first, (n, o, j)), input2[:, :, None])[:, :, 0]


def _is_half(x: Any) -> bool:
    return str(x.dtype).endswith("float16")


def _sum_one_by_one(ops: Any, x: Any, dim: int) -> Any:
    """``x`` summed over ``dim`` one slice after the other, each sum rounded to the dtype (the
    ``output.add_(buf)`` loop of PyTorch's ``_trilinear`` backward; it shows in float16)."""
    total = ops.select(x, dim, 0)
    for k in range(1, x.shape[dim]):
        total = total + ops.select(x, dim, k)
    return total


@_bilinear_product.derivative("input1")
def _(ops, grad, weight, input2):
    n, o = grad.shape
    _, i, j = weight.shape
    if _is_half(grad):
        # PyTorch's order of roundings: grad * weight, contracted with input2 per output
        # feature, the features' terms added one by one.
        scaled = ops.unsqueeze(ops.unsqueeze(grad, 2), 3) * ops.unsqueeze(weight, 0)
        terms = ops.bmm(ops.reshape(scaled, (n, o * i, j)), ops.unsqueeze(input2, 2))
        return _sum_one_by_one(ops, ops.reshape(terms, (n, o, i)), 1)
    per_sample = ops.reshape(
        ops.mm(input2, ops.reshape(ops.permute(weight, (2, 0, 1)), (j, o * i))), (n, o, i))
    return ops.reshape(ops.bmm(ops.reshape(grad, (n, 1, o)), per_sample), (n, i))


@_bilinear_product.derivative("input2")
def _(ops, grad, weight, input1):
    n, o = grad.shape
    _, i, j = weight.shape
    per_sample = ops.reshape(
        ops.mm(input1, ops.reshape(ops.permute(weight, (1, 0, 2)), (i, o * j))), (n, o, j))
    if _is_half(grad):
        # PyTorch's order of roundings: each feature's term times the gradient, added one by
        # one.
        return _sum_one_by_one(ops, per_sample * ops.unsqueeze(grad, 2), 1)
    return ops.reshape(ops.bmm(ops.reshape(grad, (n, 1, o)), per_sample), (n, j))


@_bilinear_product.derivative("weight")
def _(ops, grad, input1, input2):
    # grad_w[o, i, j] = sum_n (grad[n, o] * input1[n, i]) * input2[n, j], paired as PyTorch's
    # _trilinear backward pairs it (the product with the gradient first).
    n, o = grad.shape
    i, j = input1.shape[1], input2.shape[1]
    scaled = ops.reshape(ops.unsqueeze(grad, 2) * ops.unsqueeze(input1, 1), (n, o * i))
    return ops.reshape(ops.mm(ops.t(scaled), input2), (o, i, j))


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
    # PyTorch scatters into zeros: a contiguous result whatever the indices' layout.
    return wrap((idx[..., None] == np.arange(num_classes)).astype(np.int64, order="C"))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """``input / max(||input||_p, eps)`` along ``dim`` (PyTorch's composition); with ``out``
    the result is written into ``out`` (as PyTorch's ``div(..., out=out)``) and returned."""
    if out is not None and is_grad_enabled() and (input.requires_grad or out.requires_grad):
        raise RuntimeError(
            "div(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad."
        )
    denom = norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    result = input / denom
    if out is None:
        return result
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    out.copy_(result)
    return out


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (norms clamped at ``eps``)."""
    if x1._data.dtype.kind == "c" or x2._data.dtype.kind == "c":  # (PyTorch's check)
        common = np.result_type(x1._data, x2._data)
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_name(common)}")
    shape = np.broadcast_shapes(x1._data.shape, x2._data.shape)
    a = x1.expand(shape) if x1._data.shape != shape else x1
    b = x2.expand(shape) if x2._data.shape != shape else x2
    d = wrap_dim(dim, len(shape))
    # As PyTorch: the norms are cloned (CloneBackward0), then the clones clamped in place
    # without recording it (the clamp has no gradient). Clamping the norms themselves would
    # change the result their nodes saved, and so their gradient, for norms below eps.
    norm_a = clone(norm(a, 2, d, keepdim=True))
    norm_b = clone(norm(b, 2, d, keepdim=True))
    np.maximum(norm_a._data, eps, out=norm_a._data)
    np.maximum(norm_b._data, eps, out=norm_b._data)
    return sum((a / norm_a) * (b / norm_b), d)


@op("AddBackward1", promote=ARITH, promote_with=("other",))
def _add_scalar(self, other):
    # ``tensor + number`` as PyTorch's C++ code adds a Scalar (one edge, not AddBackward0's two).
    return self + other


@_add_scalar.derivative("self")
def _(ops, grad):
    return grad


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dimension (of the broadcast shape).

    As PyTorch: ``at::norm(x1 - x2 + eps, p, dim, keepdim)``: ``NormBackward1`` over
    ``AddBackward1`` (the Scalar add) over ``SubBackward0``.
    """
    innermost = max(x1._data.ndim, x2._data.ndim) - 1
    return norm_p_dim(_add_scalar(x1 - x2, eps), float(p), innermost, keepdim)


PRIMITIVES: dict[str, Any] = {}
