"""Margin and likelihood losses PyTorch composes of other ops (so their graphs are PyTorch's):
margin ranking, hinge embedding, cosine embedding, multi-label soft margin, triplet margin
(with a distance function), Poisson and Gaussian negative log-likelihood; and the soft margin
loss, which has a node of its own (``SoftMarginLossBackward0``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._strides import empty_preserving_layout
from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import no_grad
from .._registry import op
from ..indexing import masked_fill
from ..pointwise import clamp_min, exp, log, minimum, where
from ..reduction import mean, sum
from ..special_ops import _add_scalar, _mul_scalar
from ._common import reduce_array
from .activations import logsigmoid
from .losses import _reduction
from .misc import pairwise_distance

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
]


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """PyTorch's ``apply_loss_reduction``: ``MeanBackward0`` / ``SumBackward0`` / none."""
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


@op("SubBackward1")
def _sub_scalar(self, other):
    # ``tensor - number`` as PyTorch's C++ subtracts a Scalar (one edge).
    return self - np.asarray(other, dtype=self.dtype)


@_sub_scalar.derivative("self")
def _(ops, grad):
    return grad


def _number(value: float, like: Tensor) -> Tensor:
    """A number as a 0-d tensor of ``like``'s dtype (a wrapped Scalar in PyTorch's C++)."""
    return wrap(np.asarray(value, dtype=like._data.dtype))


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    for t in (input1, input2, target):
        if t.dim() != input1.dim() or t.dim() != target.dim():
            raise RuntimeError(
                "margin_ranking_loss : All input tensors should have same dimension but got "
                f"sizes: input1: {_sizes(input1)}, input2: {_sizes(input2)}, target: "
                f"{_sizes(target)} "
            )
    loss = clamp_min(_add_scalar(-target * (input1 - input2), margin), 0)
    return _reduce(loss, reduction)


def _sizes(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = wrap(np.zeros(input._data.shape, input._data.dtype))
    margin_part = clamp_min(_number(margin, input) - input, 0)
    output = where(target != 1, margin_part, zeros) + where(target != -1, input, zeros)
    return _reduce(output, reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (cosines along the last dimension)."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dim() == 0 and input1.dim() != 1 or target.dim() == 1 and input1.dim() != 2:
        expected = "1D" if target.dim() == 0 else "2D"
        raise RuntimeError(
            f"{target.dim()}D target tensor expects {expected} input tensors, but "
            f"found inputs with sizes {list(input1.shape)} and "
            f"{list(input2.shape)}."
        )
    if tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(
            f"cosine_embedding_loss: Input1 and Input2 must have the same shape. "
            f"Got {list(input1.shape)} and {list(input2.shape)}"
        )
    dim = input1.dim() - 1
    eps = 1e-12
    products = sum(input1 * input2, dim)
    square1 = _add_scalar(sum(input1 * input1, dim), eps)
    square2 = _add_scalar(sum(input2 * input2, dim), eps)
    cos = products / (square1 * square2).sqrt()
    zeros = wrap(np.zeros(cos._data.shape, cos._data.dtype))
    positive = _number(1, cos) - cos
    negative = clamp_min(_sub_scalar(cos, margin), 0)
    output = where(target == 1, positive, zeros) + where(target == -1, negative, zeros)
    return _reduce(output, reduction)


@op("SoftMarginLossBackward0", inputs=("self",), tensor_params=("target",),
    not_differentiable=("target",), name="soft_margin_loss")
def _soft_margin_loss(self, target, reduction):
    work = np.float32 if self.dtype.kind == "f" and self.itemsize < 4 else self.dtype
    loss = np.log1p(np.exp(-target.astype(work) * self.astype(work)))
    if reduction == "none":  # laid out like the input, as PyTorch's element-wise kernel
        out = empty_preserving_layout(self, self.dtype)
        out[...] = loss
        return out
    return reduce_array(loss.astype(self.dtype), reduction)


@_soft_margin_loss.derivative("self")
def _(ops, grad, self, target, reduction):
    # d/dx log(1 + exp(-t x)) = -t * exp(-t x) / (1 + exp(-t x)) = -t * sigmoid(-t x)
    z = ops.exp(-target * self)
    g = -target * z / (z + 1) * grad
    if reduction == "mean":
        count = 1
        for s in self.shape:
            count *= s
        g = g / count
    return g


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-target * input))``, reduced (two-class logistic loss)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(input.shape) != tuple(target.shape):
        # PyTorch's kernel writes the loss into an input-shaped output.
        shape = tuple(np.broadcast_shapes(tuple(input.shape), tuple(target.shape)))
        if shape != tuple(input.shape):
            raise RuntimeError(
                f"output with shape {list(input.shape)} doesn't match the "
                f"broadcast shape {list(shape)}"
            )
        target = target.expand(shape)
    return _soft_margin_loss(input, target, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class logistic loss averaged over the classes (last dimension), then reduced."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = sum(loss, class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    raise ValueError(reduction + " is not valid")


def _check_same_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs"
        )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``p``-norm distance; the margin
    must be positive (``torch.triplet_margin_loss`` itself takes any)."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return triplet_margin_loss_any_margin(anchor, positive, negative, margin, p, eps, swap,
                                          reduction)


def triplet_margin_loss_any_margin(anchor: Tensor, positive: Tensor, negative: Tensor,
                                   margin: float, p: float, eps: float, swap: bool,
                                   reduction: str) -> Tensor:
    """``torch.triplet_margin_loss``: the loss without the functional form's margin check."""
    _check_same_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(clamp_min(_add_scalar(d_pos, margin) - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` any distance function (default:
    ``pairwise_distance``)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_same_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    loss = clamp_min(margin + d_pos - d_neg, 0)
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log-likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term for ``target > 1``."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(_add_scalar(input, eps))
    if full:
        # Stirling's approximation of log(target!), where target > 1 (a function of target:
        # its gradient reaches target, as PyTorch's).
        stirling = (
            target * log(target) - target + _mul_scalar(log(_mul_scalar(target, 2 * math.pi)), 0.5)
        )
        loss = loss + masked_fill(stirling, target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target)^2 / var)``
    (``var`` clamped at ``eps`` without a gradient for the clamp; ``full`` adds
    ``0.5 * log(2 pi)``)."""
    if isinstance(var, float | int) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * wrap(np.ones(input._data.shape, input._data.dtype))
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif (
            input.dim() == var.dim()
            and np.sum([y for x, y in zip(input.shape, var.shape, strict=True) if x != y]) == 1
        ):
            pass  # heteroscedastic: one dimension of size 1 broadcasts
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


PRIMITIVES: dict[str, Any] = {}
