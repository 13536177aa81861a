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

__all__ = ["diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid"]


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


# ----------------------------------------------------------------------------------------------
# gradient: central differences inside, one-sided at the edges (PyTorch's composition)

_GRADIENT_SIGNATURES = (
    " * (Tensor input, *, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n"
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.number) or (
        isinstance(value, Tensor) and value._data.ndim == 0
    )


def _gradient_arguments_error(given: dict[str, Any]) -> TypeError:
    names = ", ".join(f"{k}={type(v).__name__}" for k, v in given.items())
    return TypeError(
        "gradient() received an invalid combination of arguments - got (Tensor"
        f"{', ' + names if names else ''}), but expected one of:\n{_GRADIENT_SIGNATURES}"
    )


def _slice(t: Tensor, dim: int, start: int | None, stop: int | None = None) -> Tensor:
    index: list[Any] = [slice(None)] * t._data.ndim
    index[dim] = slice(start, stop)
    return t[tuple(index)]


def _gradient_with_spacing(t: Tensor, h: Any, d: int, edge_order: int) -> Tensor:
    """One direction of ``gradient`` with a uniform spacing ``h`` (a number)."""
    center = _div_scalar(_slice(t, d, 2) - _slice(t, d, 0, -2), h)
    if edge_order == 1:
        before = _div_scalar(_slice(t, d, 1, 2) - _slice(t, d, 0, 1), h)
        after = _div_scalar(_slice(t, d, -1) - _slice(t, d, -2, -1), h)
    else:
        before = _div_scalar(
            _mul_scalar(_slice(t, d, 0, 1), -1.5)
            + _mul_scalar(_slice(t, d, 1, 2), 2)
            - _mul_scalar(_slice(t, d, 2, 3), 0.5),
            h,
        )
        after = _div_scalar(
            _mul_scalar(_slice(t, d, -3, -2), 0.5)
            - _mul_scalar(_slice(t, d, -2, -1), 2)
            + _mul_scalar(_slice(t, d, -1), 1.5),
            h,
        )
    return shape.cat([before, _div_scalar(center, 2), after], d)


def _gradient_with_coordinates(t: Tensor, x: Tensor, d: int, edge_order: int) -> Tensor:
    """One direction of ``gradient`` at sample coordinates ``x`` (1-D): second-order central
    differences for uneven steps inside."""
    if x._data.ndim != 1:
        raise RuntimeError(
            "torch.gradient expected each element of spacing to have one dimension, but got an "
            f"element with {x._data.ndim} dimensions!"
        )
    along = [1] * t._data.ndim
    along[d] = -1
    steps = diff(x, 1, 0)
    dx1, dx2 = _slice(steps, 0, 0, -1), _slice(steps, 0, 1)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(along)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(along)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(along)
    center = a * _slice(t, d, 0, -2) + b * _slice(t, d, 1, -1) + c * _slice(t, d, 2)
    first, second, last, before_last = steps[0], steps[1], steps[-1], steps[-2]
    if edge_order == 1:
        before = (_slice(t, d, 1, 2) - _slice(t, d, 0, 1)) / first
        after = (_slice(t, d, -1) - _slice(t, d, -2, -1)) / last
    else:
        a = -(2.0 * first + second) / (first * (first + second))
        b = (first + second) / (first * second)
        c = (-first) / (second * (first + second))
        before = a * _slice(t, d, 0, 1) + b * _slice(t, d, 1, 2) + c * _slice(t, d, 2, 3)
        a = last / (before_last * (last + before_last))
        b = -(last + before_last) / (last * before_last)
        c = (2 * last + before_last) / (last * (last + before_last))
        after = a * _slice(t, d, -3, -2) + b * _slice(t, d, -2, -1) + c * _slice(t, d, -1)
    return shape.cat([before, center, after], d)


def gradient(
    input: Tensor, *, spacing: Any = None, dim: Any = None, edge_order: int = 1
) -> tuple[Tensor, ...]:
    """Estimates of ``input``'s derivative along each dimension in ``dim`` (all by default):
    central differences inside, one-sided differences of order ``edge_order`` (1 or 2) at the
    edges; ``spacing`` is a number (every dimension's step), a list of numbers (one step per
    dimension) or a list of 1-D tensors (the sample coordinates along each dimension).

    Example:
        >>> import chainrule as torch
        >>> torch.gradient(torch.tensor([1.0, 2.0, 4.0, 8.0]))
        (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    """
    given = {k: v for k, v in (("spacing", spacing), ("dim", dim)) if v is not None}
    if not isinstance(edge_order, int) or isinstance(edge_order, bool):
        raise _gradient_arguments_error({**given, "edge_order": edge_order})
    dim_is_int = isinstance(dim, int | np.integer) and not isinstance(dim, bool)
    dims_listed = isinstance(dim, list | tuple) and all(isinstance(k, int) for k in dim)
    if not (dim is None or dim_is_int or dims_listed):
        raise _gradient_arguments_error(given)
    listed = isinstance(spacing, list | tuple)
    if not (spacing is None or listed or _is_number(spacing)):
        raise _gradient_arguments_error(given)
    # (a list that is not all numbers is read as the coordinates: all tensors)
    coordinates = listed and not all(_is_number(s) for s in spacing)
    if coordinates and not all(isinstance(s, Tensor) for s in spacing):
        position = next(k for k, s in enumerate(spacing) if not isinstance(s, Tensor))
        raise TypeError(
            f"expected Tensor as element {position} in argument 1, but got "
            f"{type(spacing[position]).__name__}"
        )
    if listed and dims_listed is False and dim is not None and not dim_is_int:
        raise _gradient_arguments_error(given)
    if input._data.dtype == np.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    ndim = input._data.ndim
    dims = [dim] if dim_is_int else list(dim) if dims_listed else list(range(ndim))
    if listed:
        if dim is None and len(spacing) != ndim:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {ndim}', since dim argument was not given, but "
                f"got a list of length {len(spacing)}"
            )
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                f"dim arguments to have the same length, but got a spacing argument of length "
                f"{len(spacing)} and a dim argument of length {len(dims)}."
            )
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [wrap_dim(k, ndim) for k in dims]
    if dim is not None:
        seen: set[int] = set()
        for k in wrapped:
            if k in seen:
                raise RuntimeError(f"dim {k} appears multiple times in the list of dims")
            seen.add(k)
    for k in wrapped if dim is not None else range(ndim):
        if input._data.shape[k] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    if coordinates:
        return tuple(
            _gradient_with_coordinates(input, x, k, edge_order)
            for x, k in zip(spacing, wrapped, strict=True)
        )
    steps = list(spacing) if listed else [1.0 if spacing is None else spacing] * len(wrapped)
    steps = [s.item() if isinstance(s, Tensor) else s for s in steps]
    return tuple(
        _gradient_with_spacing(input, h, k, edge_order) for h, k in zip(steps, wrapped, strict=True)
    )
