"""The multi-class margin losses, which PyTorch computes in kernels of their own:
``multi_margin_loss`` (``MultiMarginLossBackward0``) and ``multilabel_margin_loss``
(``MultilabelMarginLossBackward0``, which also saves the ``is_target`` mask its forward makes).

Their gradients are ops too, as PyTorch's ``*_backward`` functions, and are not differentiable
again: their nodes are PyTorch's ``NotImplemented`` ("derivative for
aten::multi_margin_loss_backward is not implemented"). Sums run in the input's dtype, sample
by sample, class by class, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from ...autograd.grad_mode import is_grad_enabled
from .._registry import op
from ..pointwise import _not_implemented_node
from ._common import scalar_name, size_list
from .losses import _reduction

__all__ = ["multi_margin_loss", "multilabel_margin_loss"]


def _matrix(x: np.ndarray) -> np.ndarray:
    """A 0-d or 1-d input as one sample of a batch."""
    return x.reshape(1, -1) if x.ndim < 2 else x


def _reduce_rows(loss: np.ndarray, reduction: str, batched: bool) -> np.ndarray:
    """Per-sample losses summed or averaged in order (PyTorch's loop), or kept (``none``: a
    0-d result for an unbatched call)."""
    if reduction == "none":
        return loss if batched else loss.reshape(())
    total = np.zeros((), loss.dtype)
    for value in loss:
        total = total + value
    if reduction == "mean":
        total = total / loss.dtype.type(loss.shape[0])
    return np.asarray(total, loss.dtype)


def _grad_scale(grad: np.ndarray, reduction: str, n: int) -> np.ndarray:
    """The output gradient per sample, as a column (divided by ``n`` for ``mean``)."""
    g = np.asarray(grad)
    if reduction == "none":
        return g.reshape(n, 1)
    if reduction == "mean":
        g = g / g.dtype.type(n)
    return np.broadcast_to(g.reshape(1, 1), (n, 1))


# ----------------------------------------------------------------------------------------------
# multi_margin_loss


def _margins(x: np.ndarray, t: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """``margin - x[target] + x[j]`` for every class ``j``, and the mask of ``j != target``."""
    rows = np.arange(x.shape[0])
    z = (x.dtype.type(margin) - x[rows, t][:, None]) + x
    others = np.ones(x.shape, bool)
    others[rows, t] = False
    return z, others


@op("MultiMarginLossBackward0", tensor_params=("target", "weight"), name="multi_margin_loss")
def _multi_margin_loss(self, target, p, margin, weight, reduction):
    """``sum_{j != y} w[y] * max(0, margin - x[y] + x[j]) ** p / C`` per sample, reduced."""
    x = _matrix(self)
    t = target.reshape(-1)
    z, others = _margins(x, t, margin)
    h = np.where(others & (z > 0), z, x.dtype.type(0))
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[t][:, None]
    loss = np.zeros(x.shape[0], x.dtype)
    for j in range(x.shape[1]):
        loss = loss + h[:, j]
    loss = loss / x.dtype.type(x.shape[1])
    # (a 1-d input with a 1-d target keeps its batch of one, as PyTorch's kernel)
    return _reduce_rows(loss, reduction, self.ndim == 2 or target.ndim > 0)


@_multi_margin_loss.derivative("self")
def _(ops, grad, self, target, p, margin, weight, reduction):
    return ops.multi_margin_loss_backward(grad, self, target, p, margin, weight, reduction)


@op("NotImplemented", inputs=("grad", "self"), tensor_params=("target", "weight"))
def _multi_margin_loss_backward(grad, self, target, p, margin, weight, reduction):
    """The gradient of :func:`multi_margin_loss` in ``self``: ``w[y] p h^(p-1) / C`` at each
    class with a positive margin term, their negated sum at the target."""
    x = _matrix(self)
    n, c = x.shape
    t = target.reshape(-1)
    z, others = _margins(x, t, margin)
    active = others & (z > 0)
    one = x.dtype.type(1) / x.dtype.type(c)
    d = np.where(active, one if p == 1 else x.dtype.type(2) * one * z, x.dtype.type(0))
    if weight is not None:
        d = d * weight[t][:, None]
    d[np.arange(n), t] = -d.sum(axis=1)
    out = d * _grad_scale(grad, reduction, n).astype(x.dtype, copy=False)
    return out.reshape(self.shape)


_not_implemented_node(_multi_margin_loss_backward, "multi_margin_loss_backward")


def _check_batch(name: str, x: np.ndarray) -> tuple[int, int]:
    """PyTorch's ``*_shape_check``: a non-empty vector, or a matrix with classes."""
    ok = (x.ndim <= 1 and x.size != 0) or (x.ndim == 2 and x.shape[1] != 0)
    if not ok:
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{size_list(x.shape)}"
        )
    return (1, x.size) if x.ndim <= 1 else x.shape  # type: ignore[return-value]


def _check_floating(kernel: str, x: np.ndarray) -> None:
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{scalar_name(x.dtype)}'")


def _check_scalar_type(expected: np.dtype, got: np.dtype) -> None:
    if got != expected:
        raise RuntimeError(
            f"expected scalar type {scalar_name(expected)} but found {scalar_name(got)}"
        )


def _no_grad_for_weight(name: str, weight: Tensor | None) -> None:
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError(
            f"The function '{name}' is not differentiable with respect to argument 'weight'. "
            "This input cannot have requires_grad True."
        )


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss: ``sum_{j != y} w[y] * max(0, margin - x[y] + x[j]) ** p / C``
    per sample (``p`` is 1 or 2), reduced.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> torch.nn.functional.multi_margin_loss(x, torch.tensor([3]))
        tensor(0.3250)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x, t = input._data, target._data
    n, c = _check_batch("multi_margin_loss", x)
    if not (t.ndim <= 1 and t.size == n):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{size_list(t.shape)}. Input has shape {size_list(x.shape)}."
        )
    if weight is not None and weight._data.size != c:
        raise RuntimeError(
            f"inconsistent weight size, expected {c} but got {size_list(weight._data.shape)}"
        )
    _no_grad_for_weight("multi_margin_loss", weight)
    _check_floating("multi_margin_loss_cpu_kernel", x)
    _check_scalar_type(np.dtype(np.int64), t.dtype)
    if weight is not None:
        _check_scalar_type(x.dtype, weight._data.dtype)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    margin = float(margin)
    return _multi_margin_loss(input, target, int(p), margin, weight, reduction)


# ----------------------------------------------------------------------------------------------
# multilabel_margin_loss


def _target_lists(t: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Which target slots are used (those before each row's first -1), and the ``is_target``
    mask of the classes they name."""
    negative = t < 0
    first = np.where(negative.any(axis=1), negative.argmax(axis=1), t.shape[1])
    used = np.arange(t.shape[1])[None, :] < first[:, None]
    is_target = np.zeros((t.shape[0], c), bool)
    rows = np.broadcast_to(np.arange(t.shape[0])[:, None], t.shape)
    is_target[rows[used], t[used]] = True
    return used, is_target


def _pair_terms(
    x: np.ndarray, t: np.ndarray, used: np.ndarray, is_target: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``1 - (x[target] - x[k])`` for every used target slot and class ``k``, and where it
    counts (a used slot, a class that is not a target, a positive term)."""
    picked = np.take_along_axis(x, np.where(used, t, 0), axis=1)
    z = (x.dtype.type(1) - picked[:, :, None]) + x[:, None, :]
    counts = used[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return z, counts


@op(
    "MultilabelMarginLossBackward0",
    tensor_params=("target",),
    saved_outputs=("is_target",),
    name="multilabel_margin_loss_forward",
)
def _multilabel_margin_loss(self, target, reduction, is_target):
    """``sum_{j in targets} sum_{k not a target} max(0, 1 - (x[j] - x[k])) / C`` per sample,
    reduced (the targets of a row are its entries before the first -1)."""
    x = _matrix(self)
    t = _matrix(target)
    used, mask = _target_lists(t, x.shape[1])
    z, counts = _pair_terms(x, t, used, mask)
    terms = np.where(counts, z, x.dtype.type(0)).reshape(x.shape[0], t.shape[1] * x.shape[1])
    loss = np.zeros(x.shape[0], x.dtype)
    for k in range(terms.shape[1]):
        loss = loss + terms[:, k]
    loss = loss / x.dtype.type(x.shape[1])
    return _reduce_rows(loss, reduction, self.ndim == 2)


@_multilabel_margin_loss.derivative("self")
def _(ops, grad, self, target, reduction, is_target):
    return ops.multilabel_margin_loss_backward(grad, self, target, reduction, is_target)


@op("NotImplemented", inputs=("grad", "self"), tensor_params=("target", "is_target"))
def _multilabel_margin_loss_backward(grad, self, target, reduction, is_target):
    """The gradient of :func:`multilabel_margin_loss` in ``self``: ``+1/C`` at each non-target
    class per positive pair term, ``-1/C`` at its target."""
    x = _matrix(self)
    t = _matrix(target)
    n, c = x.shape
    used, mask = _target_lists(t, c)
    _, counts = _pair_terms(x, t, used, mask)
    one = x.dtype.type(1) / x.dtype.type(c)
    d = counts.sum(axis=1).astype(x.dtype) * one
    per_slot = counts.sum(axis=2).astype(x.dtype) * one
    rows = np.broadcast_to(np.arange(n)[:, None], t.shape)
    np.subtract.at(d, (rows[used], t[used]), per_slot[used])
    out = d * _grad_scale(grad, reduction, n).astype(x.dtype, copy=False)
    return out.reshape(self.shape)


_not_implemented_node(_multilabel_margin_loss_backward, "multilabel_margin_loss_backward")


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-label hinge loss: ``sum_{j in targets} sum_{k not a target}
    max(0, 1 - (x[j] - x[k])) / C`` per sample, reduced. ``target`` holds class indices, each
    row's list ending at its first -1.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> torch.nn.functional.multilabel_margin_loss(x, torch.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    reduction = _reduction(size_average, reduce, reduction)
    x, t = input._data, target._data
    n, c = _check_batch("multilabel_margin_loss", x)
    if x.ndim <= 1:
        ok = t.ndim <= 1 and t.size == c
    else:
        ok = t.ndim == 2 and t.shape == (n, c)
    if not ok:
        raise RuntimeError(
            f"inconsistent target size: {size_list(t.shape)} for input of size: "
            f"{size_list(x.shape)}"
        )
    _check_floating("multilabel_margin_loss_forward_out_frame", x)
    _check_scalar_type(np.dtype(np.int64), t.dtype)
    t2 = _matrix(t)
    if t2.size and (t2.min() < -1 or t2.max() >= c):  # (every entry, also after a -1)
        raise RuntimeError("argument #2 'target' is out of range")
    _, mask = _target_lists(t2, c)
    is_target = wrap(mask.astype(x.dtype).reshape(t.shape))
    return _multilabel_margin_loss(input, target, reduction, is_target)


PRIMITIVES: dict[str, Any] = {
    "multi_margin_loss_backward": _multi_margin_loss_backward,
    "multilabel_margin_loss_backward": _multilabel_margin_loss_backward,
}
