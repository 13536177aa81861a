"""Softmax-family ops and the logistic loss the seed articles use.

(``nn.functional`` re-exports these; losses and layers beyond them live in ``ops/nn_ops.py``.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import REDUCED_FLOATS, no_kernel, to_dtype
from .._frames import user_stacklevel
from .._tensor import Tensor, wrap_dim
from ._registry import op, refuses_complex, tensor_method
from .pointwise import derivative_in_float32, half_in_float32

__all__ = ["softmax", "log_softmax", "binary_cross_entropy_with_logits"]


def _softmax_dim(ndim: int, dim: int | None, name: str) -> int:
    if dim is None:
        # PyTorch's legacy rule for an implicit dim (with a deprecation warning).
        import warnings

        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        dim = 0 if ndim in (0, 1, 3) else 1
    if ndim == 0:
        wrap_dim(dim, 1)  # (-1 and 0 only: PyTorch's IndexError for others)
        return 0
    return wrap_dim(dim, ndim)


# Float16 is computed in float32 and rounded once, forward and backward (PyTorch's kernels).


def _no_kernel_for(name: str, a: np.ndarray, dim: int) -> NotImplementedError:
    """PyTorch's error for (log_)softmax of complex, integer or bool values: its kernel along
    the last dim, or along another, has no version for them."""
    kernel = (
        f"{name}_lastdim_kernel_impl" if dim == a.ndim - 1 or a.ndim == 0 else f"{name}_kernel_impl"
    )
    return no_kernel(kernel, a.dtype)


@op("SoftmaxBackward0")
@half_in_float32
def _softmax(self, dim):
    if self.size == 0:  # (no kernel runs: any dtype, as PyTorch's)
        return np.empty(self.shape, self.dtype)
    if self.dtype.kind not in "fV":
        raise _no_kernel_for("softmax", self, dim)
    if self.ndim == 0:
        with np.errstate(invalid="ignore"):
            return np.exp(self - self)  # 1, or NaN for NaN and infinities
    # PyTorch's softmax allocates its result contiguous, whatever the input's layout.
    shifted = np.subtract(self, self.max(axis=dim, keepdims=True), order="C")
    e = np.exp(shifted, out=shifted)
    e /= e.sum(axis=dim, keepdims=True)
    return e


@_softmax.derivative("self")
@derivative_in_float32
def _(ops, grad, result, dim):
    if len(result.shape) == 0:  # (0, or NaN where the result is NaN)
        return result * (grad - grad * result)
    return result * (grad - ops.sum(grad * result, dim, True))


@op("LogSoftmaxBackward0", half_native=True)  # bfloat16 as float16
def _log_softmax(self, dim):
    if self.size == 0:  # (no kernel runs: any dtype, as PyTorch's)
        return np.empty(self.shape, self.dtype)
    if self.dtype.kind not in "fV":
        raise _no_kernel_for("log_softmax", self, dim)
    if self.ndim == 0:
        with np.errstate(invalid="ignore"):
            return self - self  # 0, or NaN for NaN and infinities
    half = self.dtype if self.dtype in REDUCED_FLOATS else None
    x = self.astype(np.float32) if half else self  # float16/bfloat16 computed in float32
    # Contiguous whatever the input's layout, as PyTorch's log_softmax.
    shifted = np.subtract(x, x.max(axis=dim, keepdims=True), order="C")
    total = np.exp(shifted).sum(axis=dim, keepdims=True)
    if half and dim == self.ndim - 1:
        # PyTorch's last-dimension kernel keeps the sum and its log in half precision.
        log_total = np.log(total.astype(half).astype(np.float32)).astype(half)
        return (shifted - log_total.astype(np.float32)).astype(half)
    result = shifted - np.log(total)
    return result.astype(half) if half else result


@_log_softmax.derivative("self")
@derivative_in_float32
def _(ops, grad, result, dim):
    if len(result.shape) == 0:  # (0, or NaN where the result is NaN)
        return grad - ops.exp(result) * grad
    return grad - ops.exp(result) * ops.sum(grad, dim, True)


def _cast_input(input: Tensor, dtype: Any) -> Tensor:
    """``input`` in ``dtype`` (an integer type too: the kernel then refuses it, as PyTorch's)."""
    return input if dtype is None else input.to(to_dtype(dtype))


@tensor_method
def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``."""
    return _softmax(_cast_input(input, dtype), _softmax_dim(input._data.ndim, dim, "softmax"))


@tensor_method
def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed stably."""
    return _log_softmax(
        _cast_input(input, dtype), _softmax_dim(input._data.ndim, dim, "log_softmax")
    )


def apply_reduction(loss: np.ndarray, reduction: str) -> np.ndarray:
    """'none' | 'mean' | 'sum' on an element-wise loss array (float16 and bfloat16 summed in
    float32 and rounded once, as PyTorch's sum)."""
    if reduction == "none":
        return loss
    work = np.float32 if loss.dtype in REDUCED_FLOATS else loss.dtype
    if reduction == "mean":
        return np.asarray(np.mean(loss, dtype=work), dtype=loss.dtype)
    if reduction == "sum":
        return np.asarray(np.sum(loss, dtype=work), dtype=loss.dtype)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _mean_of(g: Any, shape: tuple[int, ...], reduction: str) -> Any:
    """``g`` divided by the element count for 'mean' (PyTorch's last step, ``div_(numel)``)."""
    if reduction == "mean":
        return g / (int(np.prod(shape)) if shape else 1)
    return g


# As in PyTorch, weight and pos_weight are not differentiable (requiring grad is an error).
@op(
    "BinaryCrossEntropyWithLogitsBackward0",
    inputs=("self", "target"),
    tensor_params=("weight", "pos_weight"),
    not_differentiable=("weight", "pos_weight"),
    name="binary_cross_entropy_with_logits",
    half_native=True,  # bfloat16 step by step, as float16 and PyTorch's composite forward
)
@refuses_complex("log_sigmoid_cpu")
def _bce_with_logits(self, target, weight, pos_weight, reduction):
    # PyTorch builds the loss in place on ``1 - target``: it has the target's dtype (a float32
    # input with a float64 target gives a float64 loss, and the reverse a float32 one), each
    # step rounded to it; the pos_weight factor is applied in place on log_sigmoid(input).
    x = self
    out = target.dtype
    softplus_neg = np.logaddexp(0, -x).astype(x.dtype, copy=False)  # log(1 + exp(-x))
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        softplus_neg = np.asarray(log_weight * softplus_neg).astype(x.dtype, copy=False)
    loss = np.asarray((1 - target) * x).astype(out, copy=False)
    loss = np.asarray(loss + softplus_neg).astype(out, copy=False)
    if weight is not None:
        loss = np.asarray(loss * weight).astype(out, copy=False)
    return apply_reduction(loss, reduction)  # (float32 for halves)


# PyTorch's binary_cross_entropy_with_logits_backward and its target backward, step for step
# (the order in which half precision rounds): the formula, times grad, times the weight, over
# the element count for 'mean'.
@_bce_with_logits.derivative("self")
def _(ops, grad, self, target, weight, pos_weight, reduction, self_shape):
    if pos_weight is not None:
        t = pos_weight * target
        g = (t + 1 - target) * ops.sigmoid(self) - t
    else:
        g = ops.sigmoid(self) - target
    g = g * grad
    if weight is not None:
        g = g * weight
    return _mean_of(g, self_shape, reduction)


@_bce_with_logits.derivative("target")
def _(ops, grad, self, target, weight, pos_weight, reduction, target_shape):
    if pos_weight is not None:
        # log_sigmoid(-x) - log_sigmoid(x) * pos_weight, written with softplus(-x)
        softplus_neg = ops.log1p(ops.exp(-ops.abs(self))) + ops.clamp(-self, 0, None)
        g = (pos_weight - 1) * softplus_neg - self
    else:
        g = -self
    g = g * grad
    if weight is not None:
        g = g * weight
    return _mean_of(g, target_shape if len(target_shape) else (), reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + binary cross-entropy in one numerically stable op."""
    if target._data.shape != input._data.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _bce_with_logits(input, target, weight, pos_weight, reduction)
