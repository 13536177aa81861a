"""Losses: the ops PyTorch has nodes for (nll, mse, smooth L1, Huber, binary cross-entropy) and
PyTorch's own compositions of ops for the others (cross-entropy, L1, KL divergence), so a loss
builds the same graph as in PyTorch.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..._dtype import result_type
from ..._frames import user_stacklevel
from ..._tensor import Tensor, wrap
from .._registry import ARITH, op, refuses_complex
from ..activation import binary_cross_entropy_with_logits as _bce_with_logits
from ..activation import log_softmax
from ..indexing import masked_fill
from ..pointwise import _filled, _half_type, _is_half, _to_half, _to_single, exp, neg, xlogy
from ..pointwise import abs as abs_
from ..reduction import mean, sum
from ..shape import expand, view
from ._common import (
    accumulation_dtype,
    cascade_sum,
    check_reduction,
    reduce_array,
    reduction_count,
    scalar_name,
    size_list,
)

__all__ = [
    "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
]


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str,
                      stacklevel: int | None = None) -> str:
    """PyTorch's mapping of the deprecated ``size_average``/``reduce`` flags (``reduction`` is
    returned unchanged when both are None), with PyTorch's deprecation warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{result}' "
        "instead.",
        UserWarning,
        stacklevel=user_stacklevel() if stacklevel is None else stacklevel,
    )
    return result


def _get_enum(reduction: str) -> str:
    """PyTorch's ``_Reduction.get_enum``: ``'elementwise_mean'`` is the deprecated spelling of
    ``'mean'``; any other unknown name is a ValueError."""
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        return "mean"
    check_reduction(reduction)
    return reduction


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction a functional loss applies: the legacy flags, when given, win over
    ``reduction`` (PyTorch's ``legacy_get_enum``), else ``get_enum(reduction)``."""
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce, reduction)
    return _get_enum(reduction)


# ----------------------------------------------------------------------------------------------
# Multiplying and dividing by a number, as PyTorch's C++ compositions do (``MulBackward1``)


@op("MulBackward1", complex_ok=True)
def _mul_scalar(self, other):
    dtype = self.dtype
    if isinstance(other, complex) and dtype.kind != "c":  # a complex number makes it complex
        dtype = np.result_type(dtype, np.complex64)
    return self * np.asarray(other, dtype=dtype)


@_mul_scalar.derivative("self")
def _(ops, grad, other):
    return grad * ops.conj(other)  # (PyTorch's, for complex values)


@op("DivBackward1")
def _div_scalar(self, other):
    return self / np.asarray(other, dtype=self.dtype)


@_div_scalar.derivative("self")
def _(ops, grad, other):
    return grad / other


# ----------------------------------------------------------------------------------------------
# Negative log-likelihood
#
# As PyTorch's node, NllLossBackward0 saves ``self`` (its backward reads only the shape),
# ``target``, ``weight`` and the output ``total_weight``. Its backward is an op of its own,
# ``nll_loss_backward``, whose derivative with respect to the incoming gradient is the loss
# again, with the total weight recomputed from ``target`` and ``weight`` (PyTorch's formula).


def _nll_kept(target: np.ndarray, ignore_index: int, classes: int) -> tuple[np.ndarray, Any]:
    """Targets with ignored entries at 0, and the mask of kept ones (None when all are)."""
    kept = target != ignore_index
    if kept.all():
        return target.astype(np.int64, copy=False), None
    return np.where(kept, target, 0).astype(np.int64, copy=False), kept


def _nll_element_weights(target: np.ndarray, weight: np.ndarray | None, ignore_index: int,
                         dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, Any]:
    """Safe targets, the weight of each element (0 where ignored) and the kept mask."""
    safe, kept = _nll_kept(target, ignore_index, 0)
    if weight is None:
        w = np.ones(safe.shape, dtype) if kept is None else kept.astype(dtype)
    else:
        w = weight.astype(dtype, copy=False)[safe]
        if kept is not None:
            w = np.where(kept, w, 0).astype(dtype, copy=False)
    return safe, w, kept


def _nll_total_weight(target: np.ndarray, weight: np.ndarray | None, ignore_index: int,
                      reduction: str, dtype: np.dtype) -> np.ndarray:
    """PyTorch's ``total_weight`` output: the summed weights of the kept targets (their count
    without weights; summed as its kernel sums them), 0 for 'none' on a batch."""
    if reduction == "none" and target.ndim:
        return np.zeros((), dtype)
    flat = target.reshape(-1)
    safe, kept = _nll_kept(flat, ignore_index, 0)
    if weight is None:
        return np.asarray(flat.size if kept is None else int(kept.sum()), dtype)
    index = np.arange(flat.size) if kept is None else np.flatnonzero(kept)
    return cascade_sum(weight.astype(dtype, copy=False)[safe[index]], index, flat.size)


def _nll_picked(self: np.ndarray, safe: np.ndarray) -> np.ndarray:
    """``self[n, target[n], ...]``."""
    if self.ndim == 1:
        return self[safe]
    if self.ndim == 2:
        return self[np.arange(self.shape[0]), safe]
    return np.take_along_axis(self, np.expand_dims(safe, 1), axis=1)[:, 0]


def _nll_forward(self, target, weight, reduction, ignore_index, total_weight):
    """``-self[n, target[n], ...] * weight[target[n]]``, 0 (+0) at ignored targets; summed as
    PyTorch's kernel sums (its cascade, in the input's dtype) and divided by ``total_weight``
    for 'mean'."""
    safe, w, kept = _nll_element_weights(target, weight, ignore_index, self.dtype)
    picked = _nll_picked(self, safe)
    if reduction == "none":
        losses = -picked * w if weight is not None else -picked
        if kept is not None:
            losses = np.where(kept, losses, 0)
        out = np.empty(losses.shape, self.dtype)  # a new row-major tensor, as PyTorch's
        out[...] = losses
        return out
    flat = picked.reshape(-1)
    if weight is not None:
        flat = flat * w.reshape(-1)
    index = np.arange(flat.size)
    if kept is not None:
        index = np.flatnonzero(kept.reshape(-1))
        flat = flat[index]
    total = cascade_sum(-flat, index, safe.size)
    if reduction == "sum":
        return total
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(total / total_weight, dtype=self.dtype)


def _nll_backward_forward(grad, self, target, weight, reduction, ignore_index, total_weight):
    """PyTorch's ``nll_loss_backward`` kernel: ``weight[t] * -(grad / total_weight)`` ('mean'),
    ``weight[t] * -grad`` otherwise, at each kept target; zeros elsewhere (also everywhere
    when every target is ignored, whatever the total weight)."""
    safe, w, kept = _nll_element_weights(target, weight, ignore_index, self.dtype)
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            values = -(grad / total_weight)
    else:
        values = -grad
    if weight is not None:
        values = w * values
    values = np.broadcast_to(np.asarray(values, self.dtype), safe.shape)
    if kept is not None:
        values = np.where(kept, values, 0).astype(self.dtype, copy=False)
    out = np.zeros(self.shape, self.dtype)
    if self.ndim == 1:
        out[safe] = values
    else:
        np.put_along_axis(out, np.expand_dims(safe, 1), np.expand_dims(values, 1), axis=1)
    return out


def _declare_nll(node: str, name: str) -> tuple[Any, Any]:
    """The loss op (named ``node``) and its backward op, whose derivatives are PyTorch's."""

    def forward(self, target, weight, reduction, ignore_index, total_weight):
        return _nll_forward(self, target, weight, reduction, ignore_index, total_weight)

    forward.__name__ = name
    # half_native: PyTorch's kernel sums in the input's dtype, bfloat16 as float16
    loss_op = op(node, tensor_params=("target", "weight"), saved_outputs=("total_weight",),
                 half_native=True, not_differentiable=("weight",))(forward)

    def backward(grad, self, target, weight, reduction, ignore_index, total_weight):
        return _nll_backward_forward(grad, self, target, weight, reduction, ignore_index,
                                     total_weight)

    backward.__name__ = name + "_backward"
    backward_op = op(node.replace("Backward0", "BackwardBackward0"), inputs=("grad", "self"),
                     tensor_params=("target", "weight", "total_weight"), half_native=True)(backward)

    @loss_op.derivative("self")
    def _(ops, grad, self, target, weight, reduction, ignore_index, total_weight):
        return getattr(ops, name + "_backward")(grad, self, target, weight, reduction,
                                              ignore_index, total_weight)

    @backward_op.derivative("grad")
    def _(ops, grad, target, weight, reduction, ignore_index):
        data = _array(grad)
        total = _nll_total_weight(_array(target), None if weight is None else _array(weight),
                                  ignore_index, reduction, data.dtype)
        if type(grad) is not np.ndarray:
            total = wrap(total)
        return getattr(ops, name)(grad, target, weight, reduction, ignore_index, total)

    @backward_op.derivative("self")
    def _(ops, grad):
        return ops.zeros_like(grad)

    return loss_op, backward_op


def _array(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


_nll_loss, _nll_loss_backward = _declare_nll("NllLossBackward0", "nll_loss_forward")
_nll_loss2d, _nll_loss2d_backward = _declare_nll("NllLoss2DBackward0", "nll_loss2d_forward")


def _nll_check_targets(x: np.ndarray, target: np.ndarray, ignore_index: int) -> None:
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    bad = (target != ignore_index) & ((target < 0) | (target >= classes))
    if bad.any():
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")


def _nll_apply(loss_op: Any, input: Tensor, target: Tensor, weight: Tensor | None,
               reduction: str, ignore_index: int) -> Tensor:
    x, t = input._data, target._data
    _nll_check_targets(x, t, ignore_index)
    w = None if weight is None else weight._data
    total = wrap(_nll_total_weight(t, w, ignore_index, reduction, x.dtype))
    return loss_op(input, target, weight, reduction, ignore_index, total)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``.

    ``input`` is ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)``; the class dimension is 1.
    """
    reduction = _reduction(size_average, reduce, reduction)
    x, t = input._data, target._data
    if t.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {scalar_name(t.dtype)}"
        )
    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim >= 2 and x.shape[0] != (t.shape[0] if t.ndim else 1):
        raise ValueError(
            f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
            f"({t.shape[0] if t.ndim else 1})."
        )
    classes = x.shape[0] if x.ndim == 1 else x.shape[1]
    if weight is not None and weight._data.size != classes:
        raise RuntimeError(
            f"weight tensor should be defined either for all {classes} classes or no classes "
            f"but got weight tensor of shape: {size_list(weight._data.shape)}"
        )
    if x.ndim <= 2:
        if t.ndim > 1 or (x.ndim == 1 and t.ndim != 0):
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return _nll_apply(_nll_loss, input, target, weight, reduction, ignore_index)
    if tuple(t.shape[1:]) != tuple(x.shape[2:]):
        expected = (x.shape[0],) + tuple(x.shape[2:])
        raise RuntimeError(
            f"Expected target size {size_list(expected)}, got {size_list(t.shape)}"
        )
    if x.ndim == 4:
        return _nll_apply(_nll_loss2d, input, target, weight, reduction, ignore_index)
    # PyTorch views 3-D and 5-D+ inputs as (N, C, 1, -1) (contiguous first) and runs the
    # 2-D loss.
    from ..copying import contiguous

    n, c = x.shape[:2]
    folded = view(contiguous(input), (n, c, 1, -1)) if x.size else input
    folded_target = view(contiguous(target), (n, 1, -1)) if t.size else target
    out = _nll_apply(_nll_loss2d, folded, folded_target, weight, reduction, ignore_index)
    if reduction == "none":
        return view(out, (n,) + tuple(x.shape[2:]))
    return out


# ----------------------------------------------------------------------------------------------
# Cross-entropy: log_softmax + nll_loss, or PyTorch's composition for probabilities


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy between logits ``input`` and class indices or class probabilities.

    Example:
        >>> import chainrule as torch
        >>> logits = torch.tensor([[2.0, 0.0]], requires_grad=True)
        >>> torch.nn.functional.cross_entropy(logits, torch.tensor([0]))
        tensor(0.1269, grad_fn=<NllLossBackward0>)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    x, t = input._data, target._data
    class_dim = 0 if x.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    if x.shape == t.shape:
        if t.dtype.kind not in "fV":
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got "
                f"{scalar_name(t.dtype)}"
            )
        return _cross_entropy_probabilities(logp, target, weight, reduction, label_smoothing,
                                            class_dim)
    loss = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0:
        return loss
    classes = x.shape[class_dim]
    if weight is not None:
        shape = [1] * x.ndim
        shape[class_dim] = classes
        smooth = neg(sum(logp * view(weight, shape), class_dim))
    else:
        smooth = neg(sum(logp, class_dim))
    ignored = target == ignore_index
    smooth = masked_fill(smooth, ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = t[t != ignore_index].reshape(-1)
            denominator = wrap(np.asarray(np.sum(weight._data[kept], dtype=weight._data.dtype)))
        else:
            denominator = sum(~ignored)
        smooth = sum(smooth) / denominator
    elif reduction == "sum":
        smooth = sum(smooth)
    return _mul_scalar(loss, 1 - label_smoothing) + _mul_scalar(
        smooth, label_smoothing / classes
    )


def _cross_entropy_probabilities(logp: Tensor, target: Tensor, weight: Tensor | None,
                                 reduction: str, label_smoothing: float,
                                 class_dim: int) -> Tensor:
    x = logp._data
    classes = x.shape[class_dim]
    if weight is not None and (weight._data.ndim != 1 or weight._data.size != classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {classes} classes "
            f"or no classes but got weight tensor of shape: {size_list(weight._data.shape)}"
        )
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    product = logp * target
    if weight is not None:
        shape = [1] * x.ndim
        shape[class_dim] = classes
        product = product * (view(weight, shape) if x.ndim > 1 else weight)
    if reduction == "none":
        return neg(sum(product, class_dim))
    total = neg(sum(product))
    if reduction == "sum":
        return total
    return _div_scalar(total, x.size // classes if x.size else 0)


# ----------------------------------------------------------------------------------------------
# Regression losses


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """``torch.broadcast_tensors``: expand each side that is not already the common shape."""
    a, b = input._data.shape, target._data.shape
    if a == b:
        return input, target
    try:
        shape = np.broadcast_shapes(a, b)
    except ValueError:
        for k in range(1, max(len(a), len(b)) + 1):
            sa = a[-k] if k <= len(a) else 1
            sb = b[-k] if k <= len(b) else 1
            if sa != sb and sa != 1 and sb != 1:
                raise RuntimeError(
                    f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {max(len(a), len(b)) - k}"
                ) from None
        raise
    if a != shape:
        input = expand(input, shape)
    if b != shape:
        target = expand(target, shape)
    return input, target


def _warn_size(input: Tensor, target: Tensor) -> None:
    if input._data.shape != target._data.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


@op("MseLossBackward0", inputs=("self", "target"), promote=ARITH)  # (float32 - int64: float32)
@refuses_complex("mse_cpu")
def _mse_loss(self, target, reduction):
    diff = self - target
    return reduce_array(diff * diff, reduction)


# The backward formulas multiply in PyTorch's kernel order, ``norm * f(x) * grad`` with
# ``norm = 1 / numel`` for 'mean' (rounded to the dtype first: ``_filled``, which bfloat16's
# Tensor derivatives need explicitly), so results agree to the bit.


@_mse_loss.derivative("self")
def _(ops, grad, self, target, reduction):
    return _filled(_norm(self.shape, reduction, 2.0), grad) * (self - target) * grad


@_mse_loss.derivative("target")
def _(ops, grad, self, target, reduction):
    return _filled(_norm(self.shape, reduction, 2.0), grad) * (target - self) * grad


def _norm(shape: Any, reduction: str, scale: float = 1.0) -> float:
    """``scale / numel`` for 'mean' (nan for an empty input, whose gradient is empty anyway),
    ``scale`` otherwise."""
    count = reduction_count(shape, reduction)
    return scale / count if count else math.nan


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str,
              mean_by_weight: bool) -> Tensor:
    if weight._data.shape != input._data.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return sum(loss)
    if reduction == "mean":
        return sum(loss) / sum(weight) if mean_by_weight else mean(loss)
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean (or summed) squared error."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((a - b) ** 2, weight, input, reduction, True)
    common = result_type(a, b)
    if b.dtype != common and not b.requires_grad:
        # (an integer or narrower target enters PyTorch's kernels as the common dtype, in
        # the backward too: float16 - int64 is a float16 difference)
        b = b.to(common)
    return _mse_loss(a, b, _get_enum(reduction))


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean (or summed) absolute error (PyTorch's composition: sub, abs, mean)."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted(abs_(a - b), weight, input, reduction, True)
    reduction = _get_enum(reduction)
    loss = abs_(a - b)
    if reduction == "none":
        return loss
    return mean(loss) if reduction == "mean" else sum(loss)


# (PyTorch's kernel promotes input and target to one dtype: a float32 input and a float64
# target give a float64 loss; each gradient is cast back to its input's dtype.)
@op("SmoothL1LossBackward0", inputs=("self", "target"), promote=ARITH)
@refuses_complex("smooth_l1_cpu")
def _smooth_l1_loss(self, target, reduction, beta):
    z = np.abs(self - target)
    loss = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta).astype(self.dtype, copy=False)
    return reduce_array(loss, reduction)


def _smooth_l1_grad(ops: Any, grad: Any, input: Any, target: Any, reduction: str,
                    beta: float) -> Any:
    """PyTorch's ``smooth_l1_backward`` with ``x = input - target``: its vectorised kernel,
    ``deriv * norm * grad`` (``deriv``: the sign where ``|x| >= beta``, else ``x / beta``, NaN
    included); for float16 its reduced-precision kernel, in float32 rounded once:
    ``norm * x * grad / beta`` inside the band, ``+-norm * grad`` outside."""
    norm = _norm(input.shape, reduction)
    if _is_half(grad):
        g = _to_single(grad)
        x = _to_single(input) - _to_single(target)
        inside = norm * x * g / beta
        return _to_half(ops.where(x <= -beta, -norm * g, ops.where(x >= beta, norm * g, inside)),
                        _half_type(grad))
    x = input - target
    return ops.where(ops.abs(x) >= beta, ops.sign(x), x / beta) * norm * grad


@_smooth_l1_loss.derivative("self")
def _(ops, grad, self, target, reduction, beta):
    return _smooth_l1_grad(ops, grad, self, target, reduction, beta)


@_smooth_l1_loss.derivative("target")
def _(ops, grad, self, target, reduction, beta):
    return _smooth_l1_grad(ops, grad, target, self, reduction, beta)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """Squared error below ``beta``, absolute error above (``beta=0``: the L1 loss)."""
    _warn_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    a, b = _broadcast_pair(input, target)
    reduction = _get_enum(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        loss = abs_(a - b)
        if reduction == "none":
            return loss
        return mean(loss) if reduction == "mean" else sum(loss)
    return _smooth_l1_loss(a, b, reduction, beta)


@op("HuberLossBackward0", inputs=("self", "target"))
@refuses_complex("huber_cpu")
def _huber_loss(self, target, reduction, delta):
    # PyTorch's kernel computes in float32 for float16 and rounds once.
    work = accumulation_dtype(self.dtype)
    z = np.abs(self.astype(work, copy=False) - target.astype(work, copy=False))
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)).astype(self.dtype,
                                                                              copy=False)
    return reduce_array(loss, reduction)


def _huber_grad(ops: Any, grad: Any, diff: Any, shape: Any, reduction: str, delta: float) -> Any:
    """PyTorch's vectorised ``huber_backward``: ``norm * clamp(x, -delta, delta) * grad``.
    (Its scalar loop, run on the elements past the last full pair of vectors, multiplies in
    another order outside the band: those can be an ulp off; where they are depends on the
    machine's vector width.)"""
    return _filled(_norm(shape, reduction), grad) * ops.clamp(diff, -delta, delta) * grad


def _check_same_dtype(found: Any, expected: Any) -> None:
    """PyTorch's binary_cross_entropy takes input and target in one dtype; so does
    huber_loss's backward kernel (its forward accepts a target of another dtype)."""
    found_dtype = found._data.dtype if isinstance(found, Tensor) else found.dtype
    expected_dtype = expected._data.dtype if isinstance(expected, Tensor) else expected.dtype
    if found_dtype != expected_dtype:
        raise RuntimeError(
            f"Found dtype {scalar_name(found_dtype)} but expected {scalar_name(expected_dtype)}"
        )


@_huber_loss.derivative("self")
def _(ops, grad, self, target, reduction, delta):
    _check_same_dtype(target, self)
    return _huber_grad(ops, grad, self - target, self.shape, reduction, delta)


@_huber_loss.derivative("target")
def _(ops, grad, self, target, reduction, delta):
    _check_same_dtype(self, target)
    return _huber_grad(ops, grad, target - self, self.shape, reduction, delta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Squared error below ``delta``, ``delta``-scaled absolute error above."""
    _warn_size(input, target)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        if weight._data.shape != input._data.shape:
            raise ValueError("Weights and input must have the same size.")
        _check_delta(delta)
        return _weighted(_huber_loss(a, b, "none", delta), weight, input, reduction, False)
    reduction = _get_enum(reduction)
    _check_delta(delta)
    return _huber_loss(a, b, reduction, delta)


def _check_delta(delta: float) -> None:
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")


# ----------------------------------------------------------------------------------------------
# Binary cross-entropy and KL divergence

# PyTorch's kernel clamps with a float constant (1e-12 rounded to float32), in every dtype.
_EPSILON = float(np.float32(1e-12))


# half_native: bfloat16 step by step, as float16 and PyTorch's kernel
@op("BinaryCrossEntropyBackward0", inputs=("self", "target"), tensor_params=("weight",),
    half_native=True, not_differentiable=("weight",), name="binary_cross_entropy")
@refuses_complex("binary_cross_entropy")
def _binary_cross_entropy(self, target, weight, reduction):
    _check_same_dtype(target, self)  # (the weight may have another dtype)
    _check_probabilities(self, target)
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(self), -100)
        log_1mx = np.maximum(np.log1p(-self), -100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return reduce_array(loss.astype(self.dtype, copy=False), reduction)


def _check_probabilities(x: np.ndarray, target: np.ndarray) -> None:
    """PyTorch checks input then target element by element: the first element out of [0, 1]
    (NaN included) decides which of the two errors is raised."""
    bad_input = ~((x >= 0) & (x <= 1))
    bad_target = ~((target >= 0) & (target <= 1))
    bad = bad_input | bad_target
    if bad.any():
        first = int(np.flatnonzero(bad.reshape(-1))[0])
        which = "input" if bad_input.reshape(-1)[first] else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


# The gradients in PyTorch's order: the element-wise formula, then the weight, then the mean.


@_binary_cross_entropy.derivative("self")
def _(ops, grad, self, target, weight, reduction):
    return ops.binary_cross_entropy_backward(grad, self, target, weight, reduction)


# PyTorch's BinaryCrossEntropyBackward0 computes the input's gradient with the op below, whose
# own derivatives (the second order) are PyTorch's formulas, not the derivative of the kernel's.


@op("BinaryCrossEntropyBackwardBackward0", inputs=("grad_output", "self", "target"),
    tensor_params=("weight",), half_native=True)
def binary_cross_entropy_backward(grad_output, self, target, weight, reduction):
    """PyTorch's kernel: ``grad * (x - t) / max((1 - x) * x, eps)``, times the weight, over
    the number of elements for 'mean'."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        g = grad_output * (self - target) / np.maximum((1 - self) * self,
                                                       np.asarray(_EPSILON, self.dtype))
        if weight is not None:
            g = g * weight
        if reduction == "mean":
            g = g / np.asarray(self.size, self.dtype)
    return np.asarray(g, self.dtype)


# Its derivatives are PyTorch's (FunctionsManual.cpp: binary_cross_entropy_double_backward
# and its _grad_output and _target variants), with their eps = 1e-12 where they put it.
_EPS_2 = 1e-12


def _bce_weighted(g: Any, weight: Any, reduction: str, shape: Any) -> Any:
    if weight is not None:
        g = g * weight
    return g / math.prod(shape) if reduction == "mean" else g


@binary_cross_entropy_backward.derivative("grad_output")
def _(ops, grad, self, target, weight, reduction):
    ggo = (self - target) / ((self + _EPS_2) * (1 - self + _EPS_2)) * grad
    if weight is not None:
        ggo = ggo * weight
    if reduction == "none":
        return ggo
    total = ops.sum(ggo, tuple(range(len(self.shape))), False)
    return total / math.prod(self.shape) if reduction == "mean" else total


@binary_cross_entropy_backward.derivative("self")
def _(ops, grad, grad_output, self, target, weight, reduction):
    numerator = self * self - 2 * self * target + target
    denominator = (self + _EPS_2) * (self + _EPS_2) * ((1 - self + _EPS_2) * (1 - self + _EPS_2))
    return _bce_weighted(numerator / denominator * (grad * grad_output), weight, reduction,
                         self.shape)


@binary_cross_entropy_backward.derivative("target")
def _(ops, grad, grad_output, self, weight, reduction):
    denominator = ops.clamp((1 - self) * self, _EPS_2, None)
    return _bce_weighted(-grad * grad_output / denominator, weight, reduction, self.shape)


@_binary_cross_entropy.derivative("target")
def _(ops, grad, self, weight, reduction):
    # -logit(self) = -log(x / (1 - x)), unclamped (+-inf at 0 and 1), as PyTorch.
    g = -ops.log(self / (1 - self)) * grad
    if weight is not None:
        g = g * weight
    return g / reduction_count(self.shape, reduction) if reduction == "mean" else g


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid and binary cross-entropy in one numerically stable op; the deprecated
    ``size_average``/``reduce`` flags override ``reduction`` as in PyTorch."""
    reduction = _reduction(size_average, reduce, reduction)
    return _bce_with_logits(input, target, weight, reduction=reduction, pos_weight=pos_weight)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy between probabilities ``input`` and ``target``."""
    reduction = _reduction(size_average, reduce, reduction)
    if target._data.shape != input._data.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        shape = np.broadcast_shapes(target._data.shape, weight._data.shape)
        weight = expand(weight, shape)
    return _binary_cross_entropy(input, target, weight, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """KL divergence ``sum(target * (log(target) - input))`` for log-probabilities ``input``."""
    if size_average is not None or reduce is not None:
        applied = _legacy_reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the KL "
                "div math definition.'mean' will be changed to behave the same as 'batchmean' in "
                "the next major release.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        applied = _get_enum("sum" if reduction == "batchmean" else reduction)
    if input._data.dtype.kind == "c" or target._data.dtype.kind == "c":
        raise RuntimeError("kl_div: Complex inputs not supported.")
    # PyTorch's compiled composite evaluates the right operand first, so its node is older and
    # runs last in backward: the order in which a half-precision target's gradients add up.
    if log_target:
        difference = target - input
        loss = exp(target) * difference
    else:
        product = target * input
        loss = xlogy(target, target) - product
    if applied == "mean":
        loss = mean(loss)
    elif applied == "sum":
        loss = sum(loss)
    # As PyTorch: 'batchmean' divides whatever the reduction was, legacy flags included.
    if reduction == "batchmean" and input._data.ndim != 0:
        return loss / input._data.shape[0]
    return loss


PRIMITIVES: dict[str, Any] = {
    "binary_cross_entropy_backward": binary_cross_entropy_backward,
    "nll_loss_forward": _nll_loss,
    "nll_loss_forward_backward": _nll_loss_backward,
    "nll_loss2d_forward": _nll_loss2d,
    "nll_loss2d_forward_backward": _nll_loss2d_backward,
}
