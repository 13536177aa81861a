"""Running extremes and sums along a dimension: ``cummax``, ``cummin`` (values and the index
each came from) and ``logcumsumexp``. (``cumsum`` and ``cumprod`` are in ops/reduction.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .. import _return_types as return_types
from .._tensor import Tensor, wrap, wrap_dim
from ._registry import op, tensor_method
from .pointwise import _complex_logaddexp

__all__ = ["cummax", "cummin", "logcumsumexp"]

_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)


# ----------------------------------------------------------------------------------------------
# cummax, cummin


def _running_indices(a: np.ndarray, dim: int, largest: bool) -> np.ndarray:
    """For each position along ``dim``, the index of the running maximum (minimum): the latest
    of equal values, and once a NaN is seen the latest NaN, as PyTorch's kernel picks."""
    moved = np.moveaxis(a, dim, 0)
    indices = np.zeros(moved.shape, np.int64)
    if moved.shape[0] == 0:
        return np.moveaxis(indices, 0, dim)
    best = moved[0].copy()
    current = np.zeros(moved.shape[1:], np.int64)
    with np.errstate(invalid="ignore"):
        for i in range(moved.shape[0]):
            x = moved[i]
            better = x >= best if largest else x <= best
            if a.dtype.kind in "fcV":
                better = better | (x != x)  # (a NaN takes over and stays)
            best = np.where(better, x, best)
            current = np.where(better, i, current)
            indices[i] = current
    return np.ascontiguousarray(np.moveaxis(indices, 0, dim))


def _make_running(name: str, node: str, largest: bool) -> Any:
    @op(node, tensor_params=("indices",), name=name)
    def values(self, dim, indices):
        if self.ndim == 0:
            return self.copy()
        return np.ascontiguousarray(np.take_along_axis(self, indices, axis=dim))

    @values.derivative("self")
    def _(ops, grad, self, dim, indices):
        # PyTorch's cummaxmin_backward: the gradient added at the index each value came from.
        if not self.shape:
            return grad
        return ops.gather_backward(0, grad, tuple(self.shape), dim, indices)

    def running(input: Tensor, dim: int) -> Any:
        a = input._data
        if a.size == 0:
            # PyTorch returns empty results at once: any dim (0 stands in for one out of
            # range), any dtype
            d = wrap_dim(dim, a.ndim) if -a.ndim <= dim < a.ndim else 0
            index_tensor = wrap(np.zeros(a.shape, np.int64))
            result_type = getattr(return_types, name)
            return result_type((values(input, d, index_tensor), index_tensor))
        if a.ndim == 0 and dim not in (0, -1):
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
        d = wrap_dim(dim, a.ndim)
        if a.dtype.kind == "c" and a.ndim:  # (a 0-d tensor is its own result, any dtype)
            raise _dtype.no_kernel(f"{name}_cpu", a.dtype)
        indices = np.zeros((), np.int64) if a.ndim == 0 else _running_indices(a, d, largest)
        index_tensor = wrap(indices)
        result_type = getattr(return_types, name)
        return result_type((values(input, d, index_tensor), index_tensor))

    running.__name__ = running.__qualname__ = name
    return running


_cummax = _make_running("cummax", "CummaxBackward0", largest=True)
_cummin = _make_running("cummin", "CumminBackward0", largest=False)


@tensor_method
def cummax(input: Tensor, dim: int) -> Any:
    """The running maximum along ``dim`` and the index of each (the latest of equal values; a
    NaN, once met, is the maximum from there on), as ``(values, indices)``.

    Example:
        >>> import chainrule as torch
        >>> torch.cummax(torch.tensor([1, 3, 2, 3]), 0).indices
        tensor([0, 1, 1, 3])
    """
    return _cummax(input, dim)


@tensor_method
def cummin(input: Tensor, dim: int) -> Any:
    """The running minimum along ``dim`` and the index of each (see :func:`cummax`)."""
    return _cummin(input, dim)


# ----------------------------------------------------------------------------------------------
# logcumsumexp


def _complex_logcumsumexp(a: np.ndarray, dim: int) -> np.ndarray:
    """PyTorch's complex kernel: along ``dim``, ``cum = logaddexp(x_i, cum)`` from ``-inf``
    (its complex ``_log_add_exp_helper``), accumulated in complex128 and each result rounded
    to ``a``'s type."""
    steps = np.moveaxis(a, dim, 0).astype(np.complex128)
    out = np.empty(a.shape, a.dtype)  # (row-major, as PyTorch's result)
    written = np.moveaxis(out, dim, 0)
    cum = np.full(steps.shape[1:], complex(-np.inf, 0))
    for i in range(steps.shape[0]):
        cum = _complex_logaddexp(steps[i], cum)
        written[i] = cum
    return out


@op("LogcumsumexpBackward0", name="logcumsumexp", complex_ok=True)
def _logcumsumexp(self, dim):
    if self.dtype.kind in "iub":
        raise _dtype.no_kernel("logcumsumexp_out_cpu", self.dtype)
    if self.ndim == 0 or self.size == 0:  # (complex too)
        return self.copy()
    if self.dtype.kind == "c":
        return _complex_logcumsumexp(self, dim)
    if self.dtype == _HALF:  # (accumulated in float32, rounded once)
        out = np.logaddexp.accumulate(self.astype(_SINGLE), axis=dim).astype(_HALF)
    else:
        out = np.logaddexp.accumulate(self, axis=dim)
    return np.ascontiguousarray(out)  # (PyTorch's result is contiguous whatever the input)


@_logcumsumexp.derivative("self")
def _(ops, grad, self, dim, result):
    # d out_j / d x_i = exp(x_i - out_j) for j >= i: the gradient is a reversed running sum of
    # grad_j * exp(-out_j), times exp(x_i). Summed in log space, positive and negative parts
    # apart (a log of a signed sum does not exist), so that nothing overflows (PyTorch's
    # formula).
    if not self.shape:
        return grad

    def reversed_logcumsumexp(x: Any) -> Any:
        return ops.flip(ops.logcumsumexp(ops.flip(x, (dim,)), dim), (dim,))

    if getattr(grad, "_data", grad).dtype.kind == "c":
        # Complex: one sum in log space (a complex log exists), conjugated as PyTorch's
        # conj(exp(reversed_logcumsumexp(log(conj(grad)) - result) + self)).
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            log_grad = ops.log(ops.conj(grad))
            return ops.conj(ops.exp(reversed_logcumsumexp(log_grad - result) + self))
    lowest = float(_dtype.finfo(getattr(grad, "_data", grad).dtype).min)
    with np.errstate(divide="ignore"):
        log_abs = ops.log(ops.abs(grad))
    positive = ops.where(grad > 0, log_abs, lowest)
    negative = ops.where(grad < 0, log_abs, lowest)

    with np.errstate(over="ignore", invalid="ignore"):
        return ops.exp(reversed_logcumsumexp(positive - result) + self) - ops.exp(
            reversed_logcumsumexp(negative - result) + self
        )


@tensor_method
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed without overflow.

    Example:
        >>> import chainrule as torch
        >>> torch.logcumsumexp(torch.tensor([0., 0.]), 0)
        tensor([0.0000, 0.6931])
    """
    return _logcumsumexp(input, wrap_dim(dim, input._data.ndim))


# Helpers for derivatives (``ops.<name>``).
PRIMITIVES: dict[str, Any] = {"logcumsumexp": _logcumsumexp}
