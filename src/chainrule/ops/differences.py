"""Finite differences and the trapezoid rule: ``diff``, ``trapezoid`` (alias ``trapz``) and
``cumulative_trapezoid``.

Each is PyTorch's composition of existing ops, so the graph is PyTorch's: ``diff`` ends in
``SubBackward0``, ``trapezoid`` with a spacing number in ``MulBackward1`` (a product with a
number, PyTorch's Scalar overload), with sample points ``x`` in ``DivBackward1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._strides import empty_like_preserving
from .._tensor import Tensor, wrap, wrap_dim
from . import creation, pointwise, reduction, shape
from ._dispatch import FLOAT
from ._registry import op, tensor_method
from .pointwise import half_in_float32
from .special_ops import _mul_scalar

__all__ = ["diff", "trapezoid", "trapz", "cumulative_trapezoid"]


@op("DivBackward1", promote=FLOAT, promote_with=("other",), name="div")
@half_in_float32
def _div_scalar(self, other):
    """``self / other`` for a number ``other`` (PyTorch's ``div.Scalar``)."""
    return np.asarray(np.true_divide(self, other))


@_div_scalar.derivative("self")
def _(ops, grad, other):
    return ops.div(grad, other)


# ----------------------------------------------------------------------------------------------
# diff


def _check_joined(input: Tensor, other: Tensor, dim: int) -> None:
    if other._data.ndim != input._data.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for k, (a, b) in enumerate(zip(input._data.shape, other._data.shape, strict=True)):
        if k != dim and a != b:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({k}) = {a}, but got "
                f"tensor.size({k}) = {b}"
            )


@tensor_method
def diff(
    input: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``out[i] = input[i + 1] - input[i]``,
    repeated ``n`` times), after joining ``prepend`` and ``append`` to ``input``; bool inputs
    give the xor of neighbours.

    Example:
        >>> import chainrule as torch
        >>> torch.diff(torch.tensor([1, 4, 9, 16]))
        tensor([3, 5, 7])
    """
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if n == 0 and prepend is None and append is None:
        return _zeroth_difference(input)  # (dim unread, even out of range, as PyTorch's)
    d = wrap_dim(dim, input._data.ndim)
    if prepend is not None or append is not None:
        parts = []
        for other in (prepend, append):
            if other is not None:
                _check_joined(input, other, d)
        if prepend is not None:
            parts.append(prepend)
        parts.append(input)
        if append is not None:
            parts.append(append)
        input = shape.cat(parts, d)
    if n == 0:
        return _zeroth_difference(input)
    size = input._data.shape[d]
    length = size - 1
    result = input
    is_bool = input._data.dtype == np.bool_
    for _ in range(min(n, size)):
        later = shape.narrow(result, d, 1, length)
        earlier = shape.narrow(result, d, 0, length)
        result = pointwise.logical_xor(later, earlier) if is_bool else later - earlier
        length -= 1
    return result


def _zeroth_difference(input: Tensor) -> Tensor:
    """``input`` copied into zeros laid out as it is (PyTorch's ``zeros_like`` then ``copy_``:
    the gradient goes through ``CopyBackwards``)."""
    zeros = empty_like_preserving(input._data)
    zeros[...] = 0
    result = wrap(zeros)
    result.copy_(input)
    return result


# ----------------------------------------------------------------------------------------------
# trapezoid, trapz, cumulative_trapezoid


def _refuse_bool(name: str, y: Tensor, x: Tensor | None) -> None:
    """PyTorch's error for bool samples or sample points."""
    if x is None and y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if x is not None and np.bool_ in (y._data.dtype, x._data.dtype):
        raise RuntimeError(
            f"{name}: received a bool input for `x` or `y`, but bool is not supported"
        )


def _trapezoid_dim(name: str, y: Tensor, dim: int) -> int:
    if y._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, y._data.ndim)


def _without(y: Tensor, dim: int) -> Tensor:
    """Zeros shaped as ``y`` without ``dim`` (the integral over no samples)."""
    return creation.zeros(tuple(s for k, s in enumerate(y._data.shape) if k != dim), dtype=y.dtype)


def _spacings(name: str, y: Tensor, x: Tensor, dim: int) -> Tensor:
    """``x[i + 1] - x[i]`` along ``dim`` (a 1-D ``x`` laid along ``dim``)."""
    if x._data.ndim == 1:
        sizes = [1] * y._data.ndim
        sizes[dim] = x._data.shape[0]
        x = x.view(*sizes)
        if x._data.shape[dim] != y._data.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    length = x._data.shape[dim]
    pairs = max(length - 1, 0)
    return shape.narrow(x, dim, min(1, length), pairs) - shape.narrow(x, dim, 0, pairs)


def _check_overload(name: str, x: Any, dx: Any) -> None:
    if x is not None and dx is not None:
        got = "(Tensor, Tensor, dx=" + type(dx).__name__ + ")"
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got {got}, but expected "
            f"one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = "
            "1, int dim = -1)\n"
        )


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoid rule, with sample points ``x``
    (a tensor) or a constant spacing ``dx`` (default 1).

    Example:
        >>> import chainrule as torch
        >>> torch.trapezoid(torch.tensor([1., 2., 3.]))
        tensor(4.)
    """
    _check_overload("trapezoid", x, dx)
    d = _trapezoid_dim("trapezoid", y, dim)
    size = y._data.shape[d]
    if x is not None:
        if x._data.ndim == 1 and x._data.shape[0] != size:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        if size == 0:
            return _without(y, d)
        _refuse_bool("trapezoid", y, x)
        spacing = _spacings("trapezoid", y, x, d)
        pairs = shape.narrow(y, d, 1, size - 1) + shape.narrow(y, d, 0, size - 1)
        return _div_scalar(reduction.sum(pairs * spacing, d), 2.0)
    if size == 0:
        return _without(y, d)
    _refuse_bool("trapezoid", y, None)
    step = 1 if dx is None else dx
    ends = shape.select(y, d, 0) + shape.select(y, d, -1)
    return _mul_scalar(reduction.sum(y, d) - _mul_scalar(ends, 0.5), step)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """``trapezoid`` (its older name)."""
    _check_overload("trapz", x, dx)
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(
    y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1
) -> Tensor:
    """The running integral of ``y`` along ``dim`` by the trapezoid rule (one element fewer
    than ``y`` along ``dim``), with sample points ``x`` or a constant spacing ``dx``.

    Example:
        >>> import chainrule as torch
        >>> torch.cumulative_trapezoid(torch.tensor([1., 2., 3.]))
        tensor([1.5000, 4.0000])
    """
    _check_overload("cumulative_trapezoid", x, dx)
    _refuse_bool("cumulative_trapezoid", y, x)
    if y._data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _trapezoid_dim("cumulative_trapezoid", y, dim)
    size = y._data.shape[d]
    if x is not None and x._data.ndim == 1 and x._data.shape[0] != size:
        raise RuntimeError(
            "cumulative_trapezoid: There must be one `x` value for each sample point"
        )
    # (no samples: the same formula on empty slices, as PyTorch's: a float result, recorded)
    length = max(size - 1, 0)
    pairs = shape.narrow(y, d, 0, length) + shape.narrow(y, d, min(1, size), length)
    if x is not None:
        spacing = _spacings("cumulative_trapezoid", y, x, d)
        return _div_scalar(reduction.cumsum(pairs * spacing, d), 2.0)
    step = 1 if dx is None else dx
    return reduction.cumsum(_mul_scalar(pairs, step / 2.0), d)
