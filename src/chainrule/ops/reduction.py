"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, norm, logsumexp,
median, all/any, count_nonzero, and the scans cumsum/cumprod.

A reduction's derivative spreads the gradient back over the reduced dimensions with
:func:`expand_reduced` (or, for the ``keepdim`` shape only, :func:`unsqueeze_reduced` and
broadcasting). Every derivative is written with operators and ``ops`` helpers, so it is
differentiable again under ``create_graph=True``.

Where PyTorch picks a different node for different arguments (``MaxBackward1`` for ``max()``,
``MaxBackward0`` for ``max(dim)``), there is one op per node and a public function that
dispatches; reductions that return ``(values, indices)`` compute the indices first, then run a
value-selecting op that saves them (as PyTorch's ``MaxBackward0`` saves ``indices``).
"""

from __future__ import annotations

import builtins
import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .. import _return_types as return_types
from .._dtype import to_dtype
from .._frames import user_stacklevel
from .._strides import c_contiguous, empty_preserving_layout
from .._tensor import Tensor, wrap, wrap_dim
from ._dispatch import COMPOSITE_BACKWARD, backward_grad_mode, functorch_wrapped
from ._registry import ARITH, op, recorded_as, tensor_method
from .pointwise import div, isnan, logical_not
from .selection import kth_smallest_indices, topk_order, unstable_sort_indices

__all__ = [
    "sum",
    "mean",
    "sum_to_size",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "norm",
    "logsumexp",
    "cumsum",
    "cumprod",
    "all",
    "any",
    "median",
    "count_nonzero",
    "dist",
    "sort",
    "argsort",
    "msort",
    "topk",
    "kthvalue",
    "nansum",
    "nanmean",
]

_UNSET: Any = object()  # marks an argument that was not passed


# ----------------------------------------------------------------------------------------------
# Helpers shared by the reductions


def normalize_dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Reduction dims as sorted non-negative ints (``None`` or ``()``: all dims).

    A 0-d tensor accepts ``dim`` 0 or -1 (checked here) and has no dimension to reduce, so its
    dims are ``()``.
    """
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int | np.integer):
        dims: Sequence[int] = (int(dim),)
    else:
        dims = tuple(dim)
        if not dims:
            return tuple(range(ndim))
    out = set()
    for d in dims:
        w = wrap_dim(d, ndim or 1)  # (a 0-d tensor's dims 0 and -1 are the same one)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.add(w)
    if ndim == 0:
        return ()
    return tuple(sorted(out))


def expand_reduced(
    ops: Any, grad: Any, shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool
) -> Any:
    """Undo a reduction over ``dims``: re-insert them (if dropped) and broadcast to ``shape``."""
    return ops.expand(unsqueeze_reduced(ops, grad, dims, keepdim), shape)


def unsqueeze_reduced(ops: Any, value: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    """A reduction's output (or its gradient) with the reduced ``dims`` back as size-1 dims."""
    if not keepdim:
        for d in dims:
            value = ops.unsqueeze(value, d)
    return value


def _data(x: Any) -> Any:
    """The array behind ``x`` (derivatives get arrays on the fast path, Tensors otherwise)."""
    return x._data if isinstance(x, Tensor) else x


def _has_zero(x: Any) -> bool:
    return bool(np.any(_data(x) == 0))


def _is_nan(x: Any) -> bool:
    return bool(np.isnan(_data(x)))


def _count(shape: Sequence[int], dims: Sequence[int]) -> int:
    """How many elements a reduction over ``dims`` of ``shape`` combines."""
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _squeeze_dims(a: np.ndarray, dims: tuple[int, ...], keepdim: bool) -> np.ndarray:
    return a if keepdim or not dims else np.squeeze(a, axis=dims)


def _type_name(array: np.ndarray) -> str:
    """PyTorch's scalar type name of an array's dtype (``Float``, ``Long`` ...)."""
    name = _dtype.from_numpy_dtype(array.dtype).name
    return _SCALAR_TYPE_NAMES.get(name, name.capitalize())


_SCALAR_TYPE_NAMES = {
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
    "float32": "Float",
    "float64": "Double",
    "float16": "Half",
}


def _label(value: Any) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


class _NoOverload(Exception):
    """Raised inside a public function whose arguments match none of PyTorch's overloads."""


def _overloads(*signatures: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a public function PyTorch's error for calls matching none of its ``signatures``.

    The function raises :class:`_NoOverload`; the wrapper turns it into PyTorch's
    ``received an invalid combination of arguments`` TypeError, which quotes the call as made
    (positional arguments, then keywords).
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def public(*args: Any, **kwargs: Any) -> Any:
            try:
                if not args and "input" not in kwargs:
                    raise _NoOverload
                return fn(*args, **kwargs)
            except _NoOverload:
                got = [_label(a) for a in args]
                got += [f"{key}={_label(kwargs[key])}" for key in sorted(kwargs)]
                lines = [
                    f"{fn.__name__}() received an invalid combination of arguments - got "
                    f"({', '.join(got)}), but expected one of:"
                ]
                lines.extend(f" * {signature}" for signature in signatures)
                raise TypeError("\n".join(lines) + "\n") from None

        return public

    return decorate


def _int_dim(name: str, dim: Any) -> int:
    """A ``dim`` that must be one int (argmax, cumsum, median ...), with PyTorch's TypeError."""
    if isinstance(dim, int | np.integer) and not isinstance(dim, bool):
        return int(dim)
    raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")


def _dims_arg(name: str, dim: Any, allow_none: bool = True) -> Any:
    """A ``dim`` that may be an int or a sequence of ints (amax, logsumexp ...)."""
    if dim is None and allow_none or _is_int(dim):
        return dim
    if isinstance(dim, Sequence) and builtins.all(
        isinstance(d, int | np.integer) and not isinstance(d, bool) for d in dim
    ):
        return tuple(dim)
    raise TypeError(
        f"{name}(): argument 'dim' (position 2) must be tuple of ints, not {type(dim).__name__}"
    )


def _check_not_empty(
    name: str, a: np.ndarray, error: type[Exception] = RuntimeError, hint: bool = True
) -> None:
    """PyTorch's error for a full reduction without identity over no elements."""
    if a.size == 0:
        message = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
        if hint:
            message += " Specify the reduction dim with the 'dim' argument."
        raise error(message)


def _check_dims_not_empty(name: str, a: np.ndarray, dims: Any) -> None:
    """PyTorch's error for a reduction without identity over an empty dimension (``dims`` as
    the caller gave them: PyTorch quotes them unwrapped)."""
    for d in (dims,) if isinstance(dims, int | np.integer) else dims:
        # (each wrapped in turn: an empty dim before a later one out of range is reported)
        if a.ndim and a.shape[wrap_dim(d, a.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


# ----------------------------------------------------------------------------------------------
# Accumulation: PyTorch's CPU reductions accumulate float16 in float32 and round once at the end
# (NumPy would accumulate in float16: the mean of 2000 x 60 ones would be inf). Every reduction
# here goes through these helpers; float32 and float64 pass straight through.

_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)
_DOUBLE = np.dtype(np.float64)


def _accumulate_dtype(array: np.ndarray, dtype: Any) -> Any:
    """The dtype sum, prod, cumsum and cumprod return: ``dtype``, else int64 for integers and
    bools, else the input's (None)."""
    if dtype is not None:
        return to_dtype(dtype).np
    if array.dtype.kind in "biu":
        return np.int64
    return None


def _accumulate(fn: Any, a: np.ndarray, dtype: Any, **kwargs: Any) -> np.ndarray:
    """``fn(a, dtype=..., **kwargs)`` for ``np.sum``, ``np.prod``, ``np.cumsum``,
    ``np.cumprod`` and ``np.mean``, returning ``dtype`` (see :func:`_accumulate_dtype`) and
    accumulating a float16 (or bfloat16) result in float32, rounded once. The scans (PyTorch's
    ``cpu_cum_base_kernel``) accumulate float32 in float64 too: ``cumsum([3e38, 3e38, -3e38])``
    ends at 3e38, not inf.

    The result is in C order, as PyTorch's reductions and scans allocate it whatever the input's
    layout (NumPy follows a transposed input's order).
    """
    in_dtype = a.dtype
    if dtype is None and (in_dtype is _DOUBLE or in_dtype is _SINGLE and fn not in _SCANS):
        if fn in _SCANS and not a.flags.c_contiguous:  # written in C order directly
            return fn(a, out=np.empty(a.shape, in_dtype), **kwargs)
        return c_contiguous(fn(a, **kwargs))  # the common case, as fast as NumPy's own
    out_dtype = _accumulate_dtype(a, dtype)
    if out_dtype is None:
        out_dtype = in_dtype
    elif in_dtype != out_dtype:
        # PyTorch converts the input to the result's dtype first (each element rounded), then
        # accumulates: cumsum(dtype=float32) of float64 values is that of their float32 values.
        a = a.astype(out_dtype)
    if out_dtype in _dtype.REDUCED_FLOATS or out_dtype == _SINGLE and fn in _SCANS:
        wide = np.float64 if out_dtype == _SINGLE else _SINGLE
        return np.asarray(fn(a, dtype=wide, **kwargs)).astype(out_dtype, order="C")
    return c_contiguous(fn(a, dtype=out_dtype, **kwargs))


_SCANS = (np.cumsum, np.cumprod)


def _in_single(a: np.ndarray) -> np.ndarray:
    """A float16 array as float32 (the dtype PyTorch computes it in); others as they are."""
    return a.astype(_SINGLE) if a.dtype == _HALF else a


# ----------------------------------------------------------------------------------------------
# sum, mean


@op("SumBackward0")
def _sum_all(self, *, dtype=None):
    return _accumulate(np.sum, self, dtype)


@_sum_all.derivative("self")
def _(ops, grad, self_shape):
    return ops.expand(grad, self_shape)


@op("SumBackward1")
def _sum_dim(self, dim, keepdim=False, *, dtype=None):
    dims = normalize_dims(dim, self.ndim)
    return _accumulate(np.sum, self, dtype, axis=dims, keepdims=keepdim)


@_sum_dim.derivative("self")
def _(ops, grad, self_shape, dim, keepdim):
    return expand_reduced(ops, grad, self_shape, normalize_dims(dim, len(self_shape)), keepdim)


@tensor_method
def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over ``dim`` (int or tuple), keeping it with ``keepdim``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).sum(0)
        tensor([4., 6.])
    """
    if dim is None:
        if keepdim:
            return _sum_dim(input, tuple(range(input._data.ndim)), True, dtype=dtype)
        return _sum_all(input, dtype=dtype)
    return _sum_dim(input, dim, keepdim, dtype=dtype)


@op("NansumBackward0")
def _nansum(self, dim, keepdim=False, *, dtype=None):
    dims = tuple(range(self.ndim)) if dim is None else normalize_dims(dim, self.ndim)
    if self.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is not None and self.size and self.dtype.kind in "fV" and to_dtype(dtype).is_complex:
        raise _dtype.no_kernel("nansum_cpu", to_dtype(dtype).np)  # (integers are summed)
    return _accumulate(np.nansum, self, dtype, axis=dims, keepdims=keepdim)


@_nansum.derivative("self")
def _(ops, grad, self, dim, keepdim):
    dims = tuple(range(self.ndim)) if dim is None else normalize_dims(dim, self.ndim)
    # (times "not NaN", as PyTorch's: an infinite or NaN gradient stays NaN at a NaN)
    return expand_reduced(ops, grad, self.shape, dims, keepdim) * (self == self)


@tensor_method
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum treating NaN as zero (of all elements, or over ``dim``)."""
    if isinstance(dim, list | tuple) and not dim:
        dim = None
    return _nansum(input, dim, keepdim, dtype=dtype)


@tensor_method
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean of the non-NaN elements: ``nansum / count of non-NaN`` (NaN where all are NaN)."""
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype "
            f"but got {_type_name(input._data)}"
        )
    _mean_check(input._data, dtype, "nanmean")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return div(nansum(input, dim, keepdim, dtype=dtype), count)


def _mean_check(array: np.ndarray, dtype: Any, name: str = "mean") -> Any:
    if dtype is not None:
        wanted = to_dtype(dtype).np
        if wanted.kind not in "fcV":
            raise RuntimeError(
                f"{name}(): could not infer output dtype. Optional dtype must be either a "
                f"floating point or complex dtype. Got: {_type_name(np.empty(0, wanted))}"
            )
        return wanted
    if array.dtype.kind not in "fcV":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_type_name(array)}"
        )
    return None


@op("MeanBackward0")
def _mean_all(self, *, dtype=None):
    d = _mean_check(self, dtype)
    return _accumulate(np.mean, self if d is None else self.astype(d), None)


@_mean_all.derivative("self")
def _(ops, grad, self_shape):
    count = 1
    for s in self_shape:
        count *= s
    # ops.div: in float16 the count is not rounded to float16 first (PyTorch's scalar division).
    return ops.expand(ops.div(grad, count), self_shape)


@op("MeanBackward1")
def _mean_dim(self, dim, keepdim=False, *, dtype=None):
    d = _mean_check(self, dtype)
    dims = normalize_dims(dim, self.ndim)
    return _accumulate(
        np.mean, self if d is None else self.astype(d), None, axis=dims, keepdims=keepdim
    )


@_mean_dim.derivative("self")
def _(ops, grad, self_shape, dim, keepdim):
    dims = normalize_dims(dim, len(self_shape))
    count = 1
    for d in dims:
        count *= self_shape[d]
    return expand_reduced(ops, ops.div(grad, count), self_shape, dims, keepdim)


@tensor_method
def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Arithmetic mean of all elements, or over ``dim``."""
    if dim is None:
        if keepdim:
            return _mean_dim(input, tuple(range(input._data.ndim)), True, dtype=dtype)
        return _mean_all(input, dtype=dtype)
    return _mean_dim(input, dim, keepdim, dtype=dtype)


@tensor_method
def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum ``input`` over broadcast dimensions so that it has shape ``size``."""
    from .shape import _view, size_args

    shape = size_args(size)
    have = input._data.shape
    lead = len(have) - len(shape)
    if lead < 0 or builtins.any(s != 1 and s != h for s, h in zip(shape, have[lead:], strict=True)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and have[lead + i] != 1
    )
    if not dims:
        return input
    summed = _sum_dim(input, dims, True)
    return _view(summed, shape) if lead else summed


# ----------------------------------------------------------------------------------------------
# Scans along one dim: cumsum, cumprod (and the shifted products prod's gradient needs)


def _shift(ops: Any, x: Any, dim: int, offset: int) -> Any:
    """``x`` moved ``offset`` places along ``dim`` (toward higher indices if positive), with
    zeros filling the vacated places. ``|offset|`` must be smaller than the dim's size."""
    shape = tuple(x.shape)
    n = shape[dim]
    if offset >= 0:
        return ops.slice_backward(ops.slice(x, dim, 0, n - offset, 1), shape, dim, offset, n, 1)
    return ops.slice_backward(ops.slice(x, dim, -offset, n, 1), shape, dim, 0, n + offset, 1)


def _first_position(shape: tuple[int, ...], dim: int) -> np.ndarray:
    """A boolean mask, broadcastable to ``shape``, true at index 0 of ``dim``."""
    mask_shape = [1] * len(shape)
    mask_shape[dim] = shape[dim]
    return (np.arange(shape[dim]) == 0).reshape(mask_shape)


def _reverse_cumsum(ops: Any, x: Any, dim: int) -> Any:
    """``out_i = sum_{k >= i} x_k`` along ``dim``."""
    return ops.flip(ops.cumsum(ops.flip(x, (dim,)), dim), (dim,))


def _products_of_others(ops: Any, x: Any, dim: int) -> Any:
    """``out_i`` = the product of every element of ``x``'s slice along ``dim`` except ``x_i``.

    The exclusive products from the left times those from the right: exact with zeros, where
    ``prod / x_i`` is not. Written as PyTorch's ``prod_safe_zeros_backward`` (the cumulative
    products of ``[1, x_0, ..., x_{n-2}]`` and of ``[1, x_{n-1}, ..., x_1]``, flipped), op for
    op, so that its own derivatives (a Hessian, forward over reverse) are PyTorch's, signed
    zeros included.
    """
    n = x.shape[dim]
    if n == 0:
        return x
    ones = ops.zeros_like(ops.narrow(x, dim, 0, 1)) + 1
    left = ops.cumprod(ops.cat([ones, ops.narrow(x, dim, 0, n - 1)], dim), dim)
    reversed_rest = ops.flip(ops.narrow(x, dim, 1, n - 1), (dim,))
    right = ops.flip(ops.cumprod(ops.cat([ones, reversed_rest], dim), dim), (dim,))
    return left * right


def _scan(name: str, input: Tensor, dim: Any, dtype: Any, fn: Any) -> Tensor:
    d = wrap_dim(_int_dim(name, dim), input._data.ndim)
    return fn(input, d, dtype=dtype)


@op("CumsumBackward0")
def _cumsum(self, dim, *, dtype=None):
    out_dtype = _accumulate_dtype(self, dtype)
    if self.ndim == 0:
        return self.astype(out_dtype or self.dtype, copy=True)
    return _accumulate(np.cumsum, self, dtype, axis=dim)


@_cumsum.derivative("self")
def _(ops, grad, self_shape, dim):
    if not self_shape:
        return grad
    return _reverse_cumsum(ops, grad, dim)


@tensor_method(inplace=True)
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Cumulative sum along ``dim``: ``out_i = input_0 + ... + input_i``.

    Integer and bool inputs are summed in int64 unless ``dtype`` says otherwise.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1., 2., 3.]).cumsum(0)
        tensor([1., 3., 6.])
    """
    return _scan("cumsum", input, dim, dtype, _cumsum)


@op("CumprodBackward0", complex_ok=True)
def _cumprod(self, dim, *, dtype=None):
    out_dtype = _accumulate_dtype(self, dtype)
    if self.ndim == 0:
        return self.astype(out_dtype or self.dtype, copy=True)
    if np.dtype(out_dtype or self.dtype).kind == "c":
        self = _times_one(self, out_dtype, dim)
    return _accumulate(np.cumprod, self, dtype, axis=dim)


def _times_one(a: np.ndarray, out_dtype: Any, dim: int | None = None) -> np.ndarray:
    """``a`` in the complex result type with its first elements along ``dim`` (all of a 0-d
    ``a``) multiplied by 1: PyTorch's products start from 1, and a complex multiplication
    turns ``inf + 0j`` into ``inf + nanj`` (NumPy's scan starts from the first element)."""
    complex_type = np.dtype(out_dtype or a.dtype)
    out = a.astype(complex_type)  # (a copy)
    first = (slice(None),) * dim + (0,) if dim is not None else ()
    if dim is None or a.shape[dim]:
        with np.errstate(invalid="ignore"):
            out[first] *= complex_type.type(1)
    return out


@_cumprod.derivative("self")
def _(ops, grad, self, dim, result):
    shape = tuple(self.shape)
    if not shape or shape[dim] <= 1:
        return grad
    grad = _in_dtype_of(grad, self)  # (PyTorch's grad.to(self.scalar_type()) with dtype=)
    # Complex values: the formulas below are linear in ``grad``; PyTorch's gradient is theirs
    # with the input and output conjugated (the conjugate of each partial derivative).
    self, result = _conjugated(ops, self, result)
    # When the input, output or gradient is functorch-wrapped ("subclass-like": under a
    # torch.func transform, or a gradient batched by vmap as jacrev's), PyTorch's formula takes
    # the differentiable path below whatever the values and grad mode.
    composite = functorch_wrapped(self, result, grad)
    if not composite and not _has_zero(self):
        # y_k = x_0 * ... * x_k, so dy_k/dx_i = y_k / x_i for k >= i.
        return _reverse_cumsum(ops, grad * result, dim) / self
    if not composite and not backward_grad_mode(self):
        # Not recorded: PyTorch's O(n) formula for inputs with zeros (its numbers where
        # products overflow).
        return _cumprod_backward_with_zeros(ops, grad, self, dim, result)
    return _cumprod_backward_omitted_products(ops, grad, self, dim)


def _cumprod_backward_omitted_products(ops: Any, grad: Any, x: Any, dim: int) -> Any:
    """PyTorch's differentiable cumprod gradient (recorded with create_graph, or under a
    torch.func transform), op for op so that its values and its own derivatives round as
    PyTorch's, signed zeros included: ``dL/dx_k = sum_{j >= k} g_j * prod_{i <= j, i != k}
    x_i``, the omitted products being ``prod(x[:k])`` times ``cumprod(x[k+1:])``, one slice
    of the gradient per ``k``, stacked. Exact with zeros; O(n^2) work along ``dim``."""
    n = x.shape[dim]
    ones = ops.zeros_like(ops.narrow(grad, dim, 0, 1)) + 1
    slices = []
    for k in range(n):
        if k == 0:
            omitted = ops.cat([ones, ops.cumprod(ops.slice(x, dim, 1, n, 1), dim)], dim)
        else:
            until_k = ops.prod(ops.slice(x, dim, 0, k, 1), dim, True)
            omitted = until_k
            if k < n - 1:
                from_next = ops.cumprod(ops.slice(x, dim, k + 1, n, 1), dim)
                spread = ops.expand(until_k, tuple(from_next.shape)) * from_next
                omitted = ops.cat([until_k, spread], dim)
        slices.append(ops.sum(ops.slice(grad, dim, k, n, 1) * omitted, dim))
    return ops.stack(slices, dim)


def _in_dtype_of(grad: Any, like: Any) -> Any:
    """``grad`` in ``like``'s dtype (an array or a recorded Tensor), as it is if already."""
    if grad.dtype == like.dtype:
        return grad
    if type(grad) is np.ndarray:
        return grad.astype(like.dtype)
    return grad.to(like.dtype)


def _conjugated(ops: Any, self: Any, result: Any) -> tuple[Any, Any]:
    """``self`` and ``result`` conjugated if complex (else as they are)."""
    if _is_complex(self):
        return ops.conj(self), ops.conj(result)
    return self, result


def _cumprod_backward_with_zeros(ops: Any, grad: Any, x: Any, dim: int, result: Any) -> Any:
    """PyTorch's cumprod gradient without grad mode, for an input with zeros, op for op (so
    bfloat16 Tensors round where its ops do): before the first zero of a slice
    ``reversed_cumsum(result * grad) / x``; at the first zero the products of the elements
    after it (up to the second zero) times the gradients there, summed, times the product
    before it; after it, nothing."""
    count = ops.cumsum(x == 0, dim)
    before = count == 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        w = ops.where(before, result * grad, 0)
        out = ops.where(before, _reverse_cumsum(ops, w, dim) / x, 0)
        one = count == 1
        first = (x == 0) & one
        between = ops.cumprod(ops.where(one & ~first, x, 1), dim)
        after_first = ops.sum(between * ops.where(one, grad, 0), dim, keepdim=True)
        previous = ops.where(_first_position(tuple(x.shape), dim), 1, _shift(ops, result, dim, 1))
        return ops.where(first, after_first * previous, out)


@tensor_method(inplace=True)
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Cumulative product along ``dim``: ``out_i = input_0 * ... * input_i``.

    The gradient is exact when the input holds zeros (no division by the input there).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1., 2., 3.]).cumprod(0)
        tensor([1., 2., 6.])
    """
    return _scan("cumprod", input, dim, dtype, _cumprod)


# ----------------------------------------------------------------------------------------------
# prod


def _prod_backward(ops: Any, grad: Any, self: Any, result: Any, dim: int | None) -> Any:
    """Gradient of a product over ``dim`` (all elements if None); ``grad`` and ``result`` have
    the keepdim shape (or are 0-d for the full product). Complex values: with the input and
    output conjugated (the conjugate of each partial derivative), as PyTorch's."""
    self, result = _conjugated(ops, self, result)
    # (under torch.func transforms PyTorch's input is a wrapped tensor, "subclass-like", and
    # it takes the division-free path below whatever the values: its results, and their
    # derivatives, round differently)
    composite = COMPOSITE_BACKWARD[0] > 0
    if not composite and not _has_zero(self):
        return grad * (result / self)
    if (
        not composite
        and dim is None
        and isinstance(self, np.ndarray)
        and not backward_grad_mode(self)
        and np.count_nonzero(self == 0) > 1
    ):
        # PyTorch's shortcut outside grad mode (create_graph, vjp_fn): with two zeros every
        # partial derivative is 0 (even where an infinite element makes the products of the
        # others NaN).
        return np.zeros_like(self, dtype=np.result_type(self, grad))
    # With zeros, d prod / d x_i is the product of the other elements, computed without division.
    if dim is not None:
        return grad * _products_of_others(ops, self, dim)
    shape = tuple(self.shape)
    flat = ops.reshape(self, (_count(shape, range(len(shape))),))
    return grad * ops.reshape(_products_of_others(ops, flat, 0), shape)


@op("ProdBackward0", complex_ok=True)
def _prod_all(self, *, dtype=None):
    return _accumulate(np.prod, self, dtype)


@_prod_all.derivative("self")
def _(ops, grad, self, result):
    if not self.shape:
        return grad
    return _prod_backward(ops, grad, self, result, None)


@op("ProdBackward1", complex_ok=True)
def _prod_dim(self, dim, keepdim=False, *, dtype=None):
    out_dtype = _accumulate_dtype(self, dtype)
    if self.ndim == 0:
        if np.dtype(out_dtype or self.dtype).kind == "c":
            return _times_one(self, out_dtype)
        return self.astype(out_dtype or self.dtype, copy=True)
    return _accumulate(np.prod, self, dtype, axis=dim, keepdims=keepdim)


@_prod_dim.derivative("self")
def _(ops, grad, self, dim, keepdim, result):
    if not self.shape:
        return grad
    grad = unsqueeze_reduced(ops, grad, (dim,), keepdim)
    result = unsqueeze_reduced(ops, result, (dim,), keepdim)
    return _prod_backward(ops, grad, self, result, dim)


@tensor_method
@_overloads(
    "(Tensor input, *, torch.dtype dtype = None)",
    "(Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor out = None)",
)
def prod(input: Tensor, dim: Any = _UNSET, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Product of all elements, or over one ``dim`` (keeping it with ``keepdim``).

    Integer and bool inputs multiply in int64. The gradient is exact with zeros in the input
    (one zero or several).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 2.], [3., 4.]]).prod(1)
        tensor([ 2., 12.])
    """
    if dim is _UNSET:
        return _prod_all(input, dtype=dtype)
    if not isinstance(dim, int | np.integer) or isinstance(dim, bool):
        raise _NoOverload
    return _prod_dim(input, wrap_dim(int(dim), input._data.ndim), keepdim, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# max, min (full, along a dim with indices, and binary), amax, amin, argmax, argmin


def _evenly_distribute(ops: Any, grad: Any, self: Any, result: Any) -> Any:
    """``grad`` (0-d) shared equally by the elements equal to ``result`` (NaN: by the NaNs).

    PyTorch's gradient of ``max()``, ``min()`` and ``median()`` over all elements.
    """
    mask = ops.isnan(self) if _is_nan(result) else self == result
    count = builtins.max(int(np.sum(_data(mask))), 1)  # 0 only for an empty input
    return mask * (grad / count)


def _take_along(a: np.ndarray, dim: int, keepdim: bool, indices: np.ndarray) -> np.ndarray:
    """The elements of ``a`` at ``indices`` along ``dim`` (indices shaped like the output)."""
    if a.ndim == 0:
        return a.copy()
    index = indices if keepdim else np.expand_dims(indices, dim)
    out = np.take_along_axis(a, index, axis=dim)
    return c_contiguous(out if keepdim else np.squeeze(out, axis=dim))


def _value_selecting_backward(
    ops: Any, grad: Any, self_shape: tuple[int, ...], dim: int, keepdim: bool, indices: Any
) -> Any:
    """Gradient of picking one element per slice: ``grad`` placed at ``indices``, zeros
    elsewhere (so among equal values the one whose index was returned gets it all)."""
    if not self_shape:
        return grad
    grad = unsqueeze_reduced(ops, grad, (dim,), keepdim)
    indices = unsqueeze_reduced(ops, indices, (dim,), keepdim)
    return ops.scatter_along(grad, self_shape, dim, indices)


@op("GatherBackward0", tensor_params=("index",))
def _gather_along(self, dim, index):
    """The elements of ``self`` at ``index`` along ``dim`` (``index`` has ``self``'s number of
    dims; the derivative of :func:`_scatter_along`)."""
    return np.take_along_axis(self, index, axis=dim)


@_gather_along.derivative("self")
def _(ops, grad, self_shape, dim, index):
    return ops.scatter_along(grad, self_shape, dim, index)


@op("ScatterBackward0", inputs=("grad",), tensor_params=("index",))
def _scatter_along(grad, input_sizes, dim, index):
    """Zeros of shape ``input_sizes`` with ``grad`` written at ``index`` along ``dim`` (one
    index per slice): the gradient of selecting those elements."""
    out = np.zeros(input_sizes, grad.dtype)
    if out.ndim == 2 and dim in (1, -1) and index.shape == (out.shape[0], 1):
        out[np.arange(out.shape[0]), index[:, 0]] = grad[:, 0]  # one per row (a loss's pick)
    else:
        np.put_along_axis(out, index, grad, axis=dim)
    return out


@_scatter_along.derivative("grad")
def _(ops, grad, dim, index):
    return ops.gather_along(grad, dim, index)


def _make_full_extreme(name: str, node: str, fn: Any) -> Any:
    @op(node)
    def full(self):
        return fn(self)

    @full.derivative("self")
    def _(ops, grad, self, result):
        return _evenly_distribute(ops, grad, self, result)

    full.__name__ = f"_{name}_all"
    return full


def _make_dim_extreme(name: str, node: str) -> Any:
    @op(node, tensor_params=("indices",))
    def along(self, dim, keepdim, indices):
        return _take_along(self, dim, keepdim, indices)

    @along.derivative("self")
    def _(ops, grad, self_shape, dim, keepdim, indices):
        return _value_selecting_backward(ops, grad, self_shape, dim, keepdim, indices)

    along.__name__ = f"_{name}_dim"
    return along


_max_all = _make_full_extreme("max", "MaxBackward1", np.max)
_min_all = _make_full_extreme("min", "MinBackward1", np.min)
_max_dim = _make_dim_extreme("max", "MaxBackward0")
_min_dim = _make_dim_extreme("min", "MinBackward0")

_MAX_MIN_SIGNATURES = (
    "(Tensor input, *, Tensor out = None)",
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)",
)


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _refuse_complex(name: str, a: np.ndarray) -> None:
    """PyTorch's error for ``max(dim)``, ``argmax`` ... of complex values (which have no
    order)."""
    if a.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")


def _extreme(name: str, input: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``max``/``min``: PyTorch's three overloads (all elements, binary, along a dim)."""
    if not isinstance(input, Tensor) or len(args) > 2 or set(kwargs) - {"dim", "keepdim", "other"}:
        raise _NoOverload
    if "other" in kwargs or args and isinstance(args[0], Tensor):
        if len(args) + len(kwargs) != 1:
            raise _NoOverload
        other = kwargs["other"] if "other" in kwargs else args[0]
        if not isinstance(other, Tensor):
            raise _NoOverload
        from .pointwise import maximum, minimum

        return maximum(input, other) if name == "max" else minimum(input, other)
    if not args and not kwargs:
        a = input._data
        _check_not_empty(name, a)
        if a.dtype.kind == "c":
            raise _dtype.no_kernel(f"{name}_all", a.dtype)
        return (_max_all if name == "max" else _min_all)(input)
    if len(args) == 2 and "keepdim" in kwargs or args and "dim" in kwargs:
        raise _NoOverload
    dim = args[0] if args else kwargs.get("dim", _UNSET)
    keepdim = args[1] if len(args) == 2 else kwargs.get("keepdim", False)
    if not _is_int(dim) or not isinstance(keepdim, bool | np.bool_):
        raise _NoOverload
    return _extreme_along(name, input, int(dim), bool(keepdim))


def _extreme_along(name: str, input: Tensor, dim: int, keepdim: bool) -> Any:
    a = input._data
    d = wrap_dim(dim, a.ndim)
    if a.ndim:
        _check_dims_not_empty(name, a, (d,))
    _refuse_complex(name, a)
    if a.ndim == 0:
        indices = np.zeros((), np.int64)
    else:
        pick = np.argmax if name == "max" else np.argmin  # first occurrence; NaN wins
        indices = pick(a, axis=d, keepdims=keepdim)
    index_tensor = wrap(np.asarray(indices, np.int64))
    along = _max_dim if name == "max" else _min_dim
    result_type = return_types.max if name == "max" else return_types.min
    return result_type((along(input, d, keepdim, index_tensor), index_tensor))


@tensor_method
@_overloads(*_MAX_MIN_SIGNATURES)
def max(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch-style name
    """The largest element (PyTorch's three overloads).

    * ``max(input)``: the maximum of all elements (NaN if any is NaN); the gradient is shared
      equally among the elements equal to it.
    * ``max(input, dim, keepdim=False)``: ``(values, indices)`` along ``dim`` (the first index
      among equal values); the gradient goes to the returned index.
    * ``max(input, other)``: the element-wise ``maximum``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 5.], [4., 2.]]).max(1).indices
        tensor([1, 0])
    """
    return _extreme("max", input, args, kwargs)


@tensor_method
@_overloads(*_MAX_MIN_SIGNATURES)
def min(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch-style name
    """The smallest element: ``min(input)``, ``min(input, dim, keepdim=False)`` giving
    ``(values, indices)``, or the element-wise ``minimum(input, other)`` (see :func:`max`)."""
    return _extreme("min", input, args, kwargs)


def _make_amax(name: str, node: str, fn: Any) -> Any:
    @op(node)
    def reduce(self, dim, keepdim=False):
        return c_contiguous(fn(self, axis=dim, keepdims=keepdim))

    @reduce.derivative("self")
    def _(ops, grad, self, dim, keepdim, result):
        # The gradient is shared equally among the elements equal to the result (PyTorch's
        # rule for ties); where the result is NaN, no element equals it and it is NaN.
        grad = unsqueeze_reduced(ops, grad, dim, keepdim)
        mask = self == unsqueeze_reduced(ops, result, dim, keepdim)
        count = ops.sum(mask, dim, True, dtype=grad.dtype)
        return (grad / count) * mask

    reduce.__name__ = f"_{name}"
    return reduce


_amax = _make_amax("amax", "AmaxBackward0", np.max)
_amin = _make_amax("amin", "AminBackward0", np.min)


def _amax_amin(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    a = input._data
    given = _dims_arg(name, dim)
    if given is None or given == ():
        _check_not_empty(name, a)
    else:
        _check_dims_not_empty(name, a, given)  # (before repeated dims, as PyTorch)
    dims = normalize_dims(given, a.ndim)
    if a.dtype.kind == "c" and a.size:  # (an empty result needs no kernel)
        raise _dtype.no_kernel(f"{name[1:]}_values_cpu", a.dtype)  # max_values_cpu ...
    return (_amax if name == "amax" else _amin)(input, dims, keepdim)


@tensor_method
def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The maximum over ``dim`` (an int or a tuple; all dims by default).

    Unlike ``max(dim)`` it returns no indices, and the gradient is shared equally among equal
    maxima.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 5.], [4., 2.]]).amax(0)
        tensor([4., 5.])
    """
    return _amax_amin("amax", input, dim, keepdim)


@tensor_method
def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The minimum over ``dim`` (an int or a tuple; all dims by default); see :func:`amax`."""
    return _amax_amin("amin", input, dim, keepdim)


def _make_arg_extreme(name: str, fn: Any) -> Any:
    @op(name, differentiable=False)
    def arg_extreme(self, dim=None, keepdim=False):
        if dim is None:
            index = np.asarray(fn(self), np.int64)
            return index.reshape((1,) * self.ndim) if keepdim else index
        if self.ndim == 0:
            return np.zeros((), np.int64)
        return c_contiguous(fn(self, axis=dim, keepdims=keepdim).astype(np.int64, copy=False))

    arg_extreme.__name__ = f"_{name}"
    return arg_extreme


_argmax = _make_arg_extreme("argmax", np.argmax)
_argmin = _make_arg_extreme("argmin", np.argmin)


def _arg_extreme(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    a = input._data
    if a.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    _refuse_complex(name, a)
    if dim is None:
        _check_not_empty(name, a, IndexError, hint=False)
        return (_argmax if name == "argmax" else _argmin)(input, None, keepdim)
    d = wrap_dim(_int_dim(name, dim), a.ndim)
    _check_dims_not_empty(name, a, (d,))
    return (_argmax if name == "argmax" else _argmin)(input, d, keepdim)


@tensor_method
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the maximum (of the flattened input when ``dim`` is None), int64.

    The first index among equal values; a NaN counts as the maximum.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 5.], [4., 2.]]).argmax()
        tensor(1)
    """
    return _arg_extreme("argmax", input, dim, keepdim)


@tensor_method
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the minimum (of the flattened input when ``dim`` is None), int64."""
    return _arg_extreme("argmin", input, dim, keepdim)


# ----------------------------------------------------------------------------------------------
# median


@op("MedianBackward0")
def _median_all(self):
    flat = self.reshape(-1)
    if flat.size == 0:
        # (PyTorch's fill: NaN in the input's type, True for bool; integers their lowest)
        return np.asarray(
            np.nan if self.dtype.kind in "fVcb" else np.iinfo(self.dtype).min, self.dtype
        )
    if self.dtype.kind in "fV" and np.isnan(flat).any():
        return np.asarray(np.nan, self.dtype)
    return np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2]


@_median_all.derivative("self")
def _(ops, grad, self, result):
    return _evenly_distribute(ops, grad, self, result)


@op("MedianBackward1", tensor_params=("indices",))
def _median_dim(self, dim, keepdim, indices):
    return _take_along(self, dim, keepdim, indices)


@_median_dim.derivative("self")
def _(ops, grad, self_shape, dim, keepdim, indices):
    return _value_selecting_backward(ops, grad, self_shape, dim, keepdim, indices)


def _median_indices(a: np.ndarray, dim: int, keepdim: bool) -> np.ndarray:
    """Index of the lower median along ``dim``, as PyTorch picks it: the middle position of a
    stable sort (so among equal values, by position), or the first NaN of a slice with NaN."""
    n = a.shape[dim]
    order = np.argsort(a, axis=dim, kind="stable")
    index = np.take(order, [(n - 1) // 2], axis=dim)
    if a.dtype.kind in "fV":
        nan = np.isnan(a)
        has_nan = nan.any(axis=dim, keepdims=True)
        index = np.where(has_nan, np.argmax(nan, axis=dim, keepdims=True), index)
    return index if keepdim else np.squeeze(index, axis=dim)


@tensor_method
def median(input: Tensor, dim: Any = _UNSET, keepdim: bool = False) -> Any:
    """The lower median of all elements, or ``(values, indices)`` along ``dim``.

    NaN propagates (the index is then the first NaN's). Over all elements the gradient is
    shared equally among the elements equal to the median; along ``dim`` it goes to the
    returned index.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1., 4., 2., 3.]).median()
        tensor(2.)
    """
    a = input._data
    if dim is _UNSET:
        if a.size and (a.dtype == np.bool_ or a.dtype.kind == "c"):
            raise _dtype.no_kernel("median_cpu", a.dtype)
        return _median_all(input)  # (NaN in the input's type when empty, any type)
    d = wrap_dim(_int_dim("median", dim), a.ndim)
    if a.ndim:
        _check_dims_not_empty("median", a, (d,))
    if a.dtype == np.bool_ or a.dtype.kind == "c":
        raise _dtype.no_kernel("median_out", a.dtype)
    if a.ndim == 0:
        indices = np.zeros((), np.int64)
    else:
        indices = _median_indices(a, d, keepdim)
    index_tensor = wrap(np.asarray(indices, np.int64))
    return return_types.median((_median_dim(input, d, keepdim, index_tensor), index_tensor))


# ----------------------------------------------------------------------------------------------
# var, std, var_mean, std_mean


def _correction(name: str, dim: Any, unbiased: Any, correction: Any) -> tuple[Any, float]:
    """PyTorch's overloads ``(dim, unbiased, keepdim)``, ``(dim, *, correction, keepdim)`` and
    ``(unbiased)`` as ``(dim, correction)``."""
    if isinstance(dim, bool):  # var(input, unbiased)
        if unbiased is not _UNSET:
            raise _NoOverload
        dim, unbiased = None, dim
    if unbiased is not _UNSET and correction is not _UNSET:
        raise _NoOverload
    if unbiased is not _UNSET:
        return dim, 1 if unbiased else 0
    if correction is _UNSET or correction is None:
        return dim, 1
    return dim, correction


def _moments(
    a: np.ndarray,
    dims: tuple[int, ...] | None,
    correction: float,
    keepdim: bool,
    one_pass: bool = True,
    take_sqrt: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``(var, mean)`` over ``dims`` (all when None) with ``max(0, n - correction)`` degrees of
    freedom (inf or NaN when that is 0, as PyTorch), the variance's square root if
    ``take_sqrt``, both in ``a``'s dtype.

    As PyTorch's kernels: by default the moments of Welford's algorithm in float64 (here two
    passes, the squares summed in float64, constant rows' means exact, which agree with it:
    the variance of a constant row is exactly 0). With ``one_pass=False`` (``var``/``std``
    reducing a float32 or float64 tensor to one number) PyTorch takes the mean in the input's
    dtype first and sums the squared deviations in float64, so a constant row of large values
    can get a variance that is not 0 (``[1e30] * 3`` in float32 has variance inf): so does
    this.
    """
    if a.dtype == _HALF:
        var, mean = _moments(a.astype(_SINGLE), dims, correction, keepdim, one_pass, take_sqrt)
        return var.astype(_HALF), mean.astype(_HALF)
    if a.dtype.kind == "c":
        # As PyTorch: the variance of the real parts plus that of the imaginary parts (a real
        # number), its square root taken after the sum; the mean complex.
        var_re, mean_re = _moments(a.real, dims, correction, keepdim, one_pass)
        var_im, mean_im = _moments(a.imag, dims, correction, keepdim, one_pass)
        var = var_re + var_im
        if take_sqrt:
            var = np.sqrt(var)
        mean = np.empty(mean_re.shape, a.dtype)
        mean.real, mean.imag = mean_re, mean_im
        return var, mean
    axes = tuple(range(a.ndim)) if dims is None else dims
    n = _count(a.shape, axes)
    dof = builtins.max(0, n - correction)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if not one_pass:
            mean = np.sum(a, axis=axes, keepdims=True) / n  # 0 / 0 = NaN for no elements
        else:
            # Welford's moments in float64: the mean of float32 values summed in float64 (no
            # overflow, exact for constant rows). Welford's update m += (x - m) / k turns an
            # infinite mean into NaN at the next element (inf - inf): a row's mean stays
            # infinite only when its one infinite element comes last.
            mean = np.sum(a, axis=axes, keepdims=True, dtype=np.float64) / n
            if n > 1 and np.isinf(mean).any():
                mean = np.where(np.isinf(mean) & ~_infinite_last_alone(a, axes), np.nan, mean)
            mean = mean.astype(a.dtype)
        squares = _squared_deviations(a, mean, axes)
        if one_pass and a.size and a.dtype == np.float64:
            # A float64 sum can put a constant row's mean an ulp off (so its variance would
            # not be 0). Such rows have deviations within a few ulps of their mean: found from
            # the sums just made, their means set exactly (rarely needed).
            tiny = 4 * _dtype.finfo(a.dtype).eps * np.abs(mean)
            suspect = (squares > 0) & (squares <= n * tiny * tiny)
            if suspect.any():
                mean = np.where(suspect, _exact_mean(a, axes, n, mean), mean)
                squares = _squared_deviations(a, mean, axes)
        var = _squeeze_dims(squares / dof, axes, keepdim)
        if take_sqrt:
            var = np.sqrt(var)
    # In C order, as PyTorch allocates a reduction's result.
    return (
        var.astype(a.dtype, order="C"),
        _squeeze_dims(mean, axes, keepdim).astype(a.dtype, order="C"),
    )


def _infinite_last_alone(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Per row over ``axes`` (kept): whether the row's only infinite element is its last (in
    row-major order of the reduced dimensions, the order PyTorch's kernel visits a contiguous
    tensor's)."""
    last = a[tuple(slice(-1, None) if axis in axes else slice(None) for axis in range(a.ndim))]
    return np.isinf(last) & (np.isinf(a).sum(axis=axes, keepdims=True) == 1)


def _squared_deviations(a: np.ndarray, mean: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``sum((a - mean)**2)`` over ``axes`` (kept), accumulated in float64 as PyTorch does; in
    float64 throughout where float32 squares overflow (the variance may not fit float32, its
    square root does)."""
    diff = a - mean
    squares = np.sum(diff * diff, axis=axes, keepdims=True, dtype=np.float64)
    if a.dtype != np.float64 and np.isinf(squares).any():
        diff = a.astype(np.float64) - mean
        squares = np.sum(diff * diff, axis=axes, keepdims=True)
    return squares


def _exact_mean(a: np.ndarray, axes: tuple[int, ...], n: int, mean: np.ndarray) -> np.ndarray:
    """The mean over ``axes`` (kept), exact for constant rows: summed in float64 for float32;
    for float64, ``mean`` with constant rows set to their value."""
    if a.dtype != np.float64:
        return (np.sum(a, axis=axes, keepdims=True, dtype=np.float64) / n).astype(a.dtype)
    low = np.min(a, axis=axes, keepdims=True)
    return np.where(low == np.max(a, axis=axes, keepdims=True), low, mean)


def _one_number(a: np.ndarray, dims: tuple[int, ...] | None) -> bool:
    """Whether PyTorch's ``var``/``std`` take their all-elements path (one output element,
    float32 or float64 input)."""
    if a.dtype not in (np.float32, np.float64):
        return False
    axes = range(a.ndim) if dims is None else dims
    return a.size == _count(a.shape, axes)


def _var_backward(
    ops: Any, grad: Any, self: Any, dims: tuple[int, ...] | None, correction: float, keepdim: bool
) -> Any:
    """Gradient of the variance: ``2 / (n - correction) * grad * (x - mean)``.

    Over all elements with no degrees of freedom left, PyTorch returns ``grad * inf`` (NaN where
    ``x == mean``); along dims it uses ``2 / (n - correction)`` as it is (inf, or negative).
    """
    shape = tuple(self.shape)
    axes = tuple(range(len(shape))) if dims is None else dims
    n = _count(shape, axes)
    grad = unsqueeze_reduced(ops, grad, axes, keepdim or dims is None)
    mean = ops.mean(self, axes, True)
    dof = n - correction
    if dims is None and dof <= 0:
        return grad * ops.where(self == mean, math.nan, math.inf)
    factor = 2.0 / dof if dof != 0 else math.inf
    return ops.mul(grad, factor) * (self - mean)


def _std_to_var_grad(ops: Any, grad: Any, result: Any) -> Any:
    """d std = d var / (2 std), zero where std is zero."""
    return ops.where(result == 0, 0, grad / (result * 2))


def _mean_backward(
    ops: Any, grad: Any, shape: tuple[int, ...], dims: tuple[int, ...] | None, keepdim: bool
) -> Any:
    axes = tuple(range(len(shape))) if dims is None else dims
    n = _count(shape, axes)
    return expand_reduced(ops, ops.div(grad, builtins.max(n, 1)), shape, axes, keepdim)


@op("VarBackward0", complex_ok=True)
def _var(self, dim, correction, keepdim):
    return _moments(self, dim, correction, keepdim, not _one_number(self, dim))[0]


@_var.derivative("self")
def _(ops, grad, self, dim, correction, keepdim):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _var_backward(ops, grad, self, dim, correction, keepdim)


@op("StdBackward0", complex_ok=True)
def _std(self, dim, correction, keepdim):
    return _moments(self, dim, correction, keepdim, not _one_number(self, dim), True)[0]


@_std.derivative("self")
def _(ops, grad, self, dim, correction, keepdim, result):
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = _std_to_var_grad(ops, grad, result)
        return _var_backward(ops, grad, self, dim, correction, keepdim)


@op("VarMeanBackward0", num_outputs=2, complex_ok=True)
def _var_mean(self, dim, correction, keepdim):
    return _moments(self, dim, correction, keepdim)


@_var_mean.derivative("self")
def _(ops, grads, self, dim, correction, keepdim):
    grad_var, grad_mean = grads
    shape = tuple(self.shape)
    out = _mean_backward(ops, grad_mean, shape, dim, keepdim or dim is None)
    # PyTorch skips the variance term when that output got no gradient (zeros here).
    if np.any(_data(grad_var)):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _var_backward(ops, grad_var, self, dim, correction, keepdim) + out
    return out


@op("StdMeanBackward0", num_outputs=2, complex_ok=True)
def _std_mean(self, dim, correction, keepdim):
    return _moments(self, dim, correction, keepdim, take_sqrt=True)


@_std_mean.derivative("self")
def _(ops, grads, self, dim, correction, keepdim, result):
    grad_std, grad_mean = grads
    shape = tuple(self.shape)
    out = _mean_backward(ops, grad_mean, shape, dim, keepdim or dim is None)
    if np.any(_data(grad_std)):
        with np.errstate(divide="ignore", invalid="ignore"):
            grad_var = _std_to_var_grad(ops, grad_std, result)
            out = _var_backward(ops, grad_var, self, dim, correction, keepdim) + out
    return out


_VAR_SIGNATURES = (
    "(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
    "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
    "(bool unbiased = True)",
)


def _moment_call(
    name: str, fn: Any, input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any
) -> Any:
    dim, correction = _correction(name, dim, unbiased, correction)
    a = input._data
    if a.dtype.kind not in "fcV":
        kind = name if name.endswith("_mean") else "std and var"
        raise RuntimeError(f"{kind} only support floating point and complex dtypes")
    given = _dims_arg(name, dim)
    # None: over everything, PyTorch's no-dim case (also for dim=() and for 0-d inputs, whose
    # only valid dims reduce nothing).
    dims = None if given is None or given == () or a.ndim == 0 else normalize_dims(given, a.ndim)
    if a.ndim == 0 and given is not None:
        normalize_dims(given, 0)  # PyTorch's IndexError for a dim other than 0 or -1
    axes = tuple(range(a.ndim)) if dims is None else dims
    out_numel = _count(a.shape, [i for i in range(a.ndim) if i not in axes])
    factor = a.size / out_numel if out_numel else 0
    if factor - correction <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return fn(input, dims, correction, keepdim)


@tensor_method
@_overloads(*_VAR_SIGNATURES)
def var(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = _UNSET,
    keepdim: bool = False,
    *,
    correction: Any = _UNSET,
) -> Tensor:
    """Variance over ``dim`` (all dims by default) with ``n - correction`` degrees of freedom.

    ``correction`` defaults to 1 (Bessel's correction); ``unbiased=False`` means 0. With no
    degrees of freedom left it warns and gives inf or NaN, as PyTorch does.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1., 2., 4.]).var()
        tensor(2.3333)
    """
    return _moment_call("var", _var, input, dim, unbiased, keepdim, correction)


@tensor_method
@_overloads(*_VAR_SIGNATURES)
def std(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = _UNSET,
    keepdim: bool = False,
    *,
    correction: Any = _UNSET,
) -> Tensor:
    """Standard deviation: the square root of :func:`var` (same arguments)."""
    return _moment_call("std", _std, input, dim, unbiased, keepdim, correction)


@_overloads(*_VAR_SIGNATURES)
def var_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = _UNSET,
    keepdim: bool = False,
    *,
    correction: Any = _UNSET,
) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` in one pass, one node (``VarMeanBackward0``)."""
    return _moment_call("var_mean", _var_mean, input, dim, unbiased, keepdim, correction)


@_overloads(*_VAR_SIGNATURES)
def std_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = _UNSET,
    keepdim: bool = False,
    *,
    correction: Any = _UNSET,
) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim`` in one pass, one node (``StdMeanBackward0``)."""
    return _moment_call("std_mean", _std_mean, input, dim, unbiased, keepdim, correction)


# ----------------------------------------------------------------------------------------------
# norm (torch.norm / Tensor.norm: vector norms, node LinalgVectorNormBackward0)


def _p_name(p: float) -> str:
    return "inf" if p > 0 else "-inf"


@op("LinalgVectorNormBackward0", complex_ok=True)
def _vector_norm(self, ord, dim, keepdim, dtype=None):  # noqa: A002 - PyTorch's name
    a = self if dtype is None else self.astype(dtype)
    if a.dtype.kind == "c":  # the norm of the absolute values: real, as PyTorch's
        a = np.abs(a)
    if a.dtype == _HALF:  # accumulated in float32, rounded once (||[300, 400]|| is 500, not inf)
        return _norm_values(a.astype(_SINGLE), ord, dim, keepdim).astype(_HALF)
    return _norm_values(a, ord, dim, keepdim)


def _norm_values(
    a: np.ndarray,
    ord: float,
    dim: tuple[int, ...] | None,  # noqa: A002
    keepdim: bool,
) -> np.ndarray:
    """The vector ``ord``-norm of ``a`` over ``dim`` (all dims if None), in C order."""
    return c_contiguous(_norm_any_order(a, ord, dim, keepdim))


def _norm_any_order(
    a: np.ndarray,
    ord: float,
    dim: tuple[int, ...] | None,  # noqa: A002
    keepdim: bool,
) -> np.ndarray:
    axes = tuple(range(a.ndim)) if dim is None else dim
    if ord != 0 and _count(a.shape, axes) == 1:
        # One element per slice: its absolute value (no overflow in squaring, as PyTorch).
        return _squeeze_dims(np.abs(a), axes, keepdim)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if ord == 2:
            return np.sqrt(np.sum(a * a, axis=axes, keepdims=keepdim))
        if ord == 1:
            return np.sum(np.abs(a), axis=axes, keepdims=keepdim)
        if ord == math.inf:
            return np.max(np.abs(a), axis=axes, keepdims=keepdim)
        if ord == -math.inf:
            return np.min(np.abs(a), axis=axes, keepdims=keepdim)
        if ord == 0:
            return np.sum(a != 0, axis=axes, keepdims=keepdim, dtype=a.dtype)
        return np.sum(np.abs(a) ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)


@_vector_norm.derivative("self")
def _(ops, grad, self, ord, dim, keepdim, result):  # noqa: A002
    axes = tuple(range(len(self.shape))) if dim is None else dim
    grad = unsqueeze_reduced(ops, grad, axes, keepdim)
    norm = unsqueeze_reduced(ops, result, axes, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _norm_backward(ops, grad, self, ord, axes, norm)


def _is_complex(value: Any) -> bool:
    """Whether a derivative's argument (an array, or a Tensor under ``create_graph``) is
    complex."""
    return value.is_complex() if isinstance(value, Tensor) else value.dtype.kind == "c"


def _norm_backward(ops: Any, grad: Any, x: Any, p: float, axes: tuple[int, ...], norm: Any) -> Any:
    """Gradient of ``||x||_p = (sum |x|^p)^(1/p)``: ``grad * sign(x) |x|^(p-1) / norm^(p-1)``.

    At zero PyTorch's conventions hold: 0 where ``x == 0`` for ``p < 1``, 0 everywhere when the
    norm is 0 for ``p >= 1``; ``p = inf`` shares the gradient among the largest ``|x|``; ``p = 0``
    (a count) has no gradient.
    """
    if p == 0:
        return None
    sign = ops.sgn if _is_complex(x) else ops.sign  # (x / |x| for complex values, as PyTorch)
    if p == 1:
        return grad * sign(x)
    if p == 2:
        return grad * ops.where(norm == 0, 0, x / norm)
    if math.isinf(p):
        magnitude = ops.abs(x)
        mask = (magnitude == norm) | ops.isnan(magnitude)
        count = ops.sum(mask, axes, True, dtype=grad.dtype)
        return sign(x) * ((grad / count) * mask)
    if p < 1:
        scaled = sign(x) * ops.where(x == 0, 0, ops.abs(x) ** (p - 1))
        return scaled * grad * norm ** (1 - p)
    if p < 2:
        scaled = sign(x) * ops.abs(x) ** (p - 1)
    else:
        scaled = x * ops.abs(x) ** (p - 2)
    return scaled * ops.where(norm == 0, 0, grad / norm ** (p - 1))


@tensor_method
def norm(
    input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Tensor:
    """The vector ``p``-norm over ``dim`` (all elements by default): ``(sum |x|^p)^(1/p)``.

    ``p`` may be ``'fro'`` (the 2-norm), a number, ``inf`` (max ``|x|``), ``-inf`` (min
    ``|x|``) or 0 (the count of non-zeros). The node is ``LinalgVectorNormBackward0``, as for
    PyTorch's ``Tensor.norm``; the gradient at zero follows PyTorch's conventions.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([3., 4.]).norm()
        tensor(5.)
    """
    a = input._data
    if isinstance(p, Tensor):
        p = p.item()
    if isinstance(p, str):
        if p != "fro" or dim is not None and not isinstance(dim, int) and len(dim) > 2:
            _matrix_norm_error(p, a, dim)
        p = 2
    elif p is None:
        p = 2
    ord = float(p)  # noqa: A001
    if a.dtype.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_type_name(a)}"
        )
    dims = _dims_arg("norm", dim)
    if math.isinf(ord):
        if dims is None or dims == () or dims == []:
            if a.size == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {_p_name(ord)} norm on an empty "
                    "tensor because the operation does not have an identity"
                )
        else:
            # (each dim wrapped and checked in turn, before repeated dims are looked for)
            for d in (dims,) if isinstance(dims, int | np.integer) else dims:
                if a.ndim and a.shape[wrap_dim(d, a.ndim)] == 0:
                    raise RuntimeError(
                        f"linalg.vector_norm cannot compute the {_p_name(ord)} norm on the "
                        f"dimension {d}because this dimension is empty and the operation does "
                        "not have an identity"
                    )
    axes = normalize_dims(dims, a.ndim)
    full = dims is None or dims == () or dims == [] or a.ndim == 0
    np_dtype = None if dtype is None else to_dtype(dtype).np
    return _vector_norm(input, ord, None if full else axes, keepdim, np_dtype)


@op("NormBackward1")
def _norm_p_dim(self, p, dim, keepdim):
    # PyTorch's ``norm.ScalarOpt_dim`` (what its C++ ``at::norm(x, p, dim, keepdim)`` records:
    # F.pairwise_distance): the vector norm, with its own node and saved ``p``.
    return _vector_norm.op.forward(self, float(p), dim, keepdim)


@_norm_p_dim.derivative("self")
def _(ops, grad, self, p, dim, keepdim, result):
    grad = unsqueeze_reduced(ops, grad, dim, keepdim)
    norm = unsqueeze_reduced(ops, result, dim, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _norm_backward(ops, grad, self, float(p), dim, norm)


def norm_p_dim(input: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """``at::norm(input, p, dim, keepdim)`` as PyTorch's C++ code calls it (``NormBackward1``);
    the public ``norm`` records ``LinalgVectorNormBackward0`` instead."""
    return _norm_p_dim(input, p, normalize_dims(dim, input._data.ndim), keepdim)


@op("DistBackward0", inputs=("self", "other"), promote=ARITH, complex_ok=True)
def _dist(self, other, p):
    # PyTorch's composition: the difference in the operands' dtype, then its vector norm.
    diff = np.subtract(self, other)
    if diff.size == 0 and math.isinf(float(p)):
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {_p_name(float(p))} norm on an empty tensor "
            "because the operation does not have an identity"
        )
    return _vector_norm.op.forward(diff, float(p), None, False)


@_dist.derivative("self")
def _(ops, grad, self, other, p, result):
    diff = self - other
    return _norm_backward(ops, grad, diff, float(p), tuple(range(len(diff.shape))), result)


@_dist.derivative("other")
def _(ops, grad, self, other, p, result):
    diff = self - other
    out = _norm_backward(ops, grad, diff, float(p), tuple(range(len(diff.shape))), result)
    return None if out is None else -out


@tensor_method
def dist(input: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), as a 0-d tensor (``DistBackward0``).

    Example:
        >>> import chainrule as torch
        >>> torch.dist(torch.tensor([3., 0.]), torch.tensor([0., 4.]))
        tensor(5.)
    """
    if not isinstance(other, Tensor):
        raise TypeError(
            f"dist(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )
    if input._data.dtype.kind not in "fcV" and other._data.dtype.kind not in "fcV":
        promoted = _dtype.result_type(input, other)
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_SCALAR_TYPE_NAMES.get(promoted.name, promoted.name)} instead."
        )
    if isinstance(p, Tensor):
        p = p.item()
    return _dist(input, other, p)


def _matrix_norm_error(p: str, a: np.ndarray, dim: Any) -> None:
    """PyTorch's errors for matrix norms (``p='nuc'``, or ``'fro'`` over more than 2 dims)."""
    if p not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    dims = list(range(a.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if len(dims) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}"
        )
    raise NotImplementedError("norm(p='nuc'): the nuclear norm is not supported by chainrule")


# ----------------------------------------------------------------------------------------------
# logsumexp


@op("LogsumexpBackward0", half_native=True, complex_ok=True)  # bfloat16 step by step as float16
def _logsumexp(self, dim, keepdim=False):
    a = self if self.dtype.kind in "fcV" else self.astype(_dtype.get_default_dtype().np)
    if _count(a.shape, dim) == 0:
        shape = tuple(1 if i in dim else s for i, s in enumerate(a.shape))
        return _squeeze_dims(np.full(shape, -np.inf, a.dtype), dim, keepdim)
    # Shift by the maximum so exp cannot overflow; an infinite maximum is not subtracted. As
    # PyTorch, each step in the input's dtype, the sum accumulated in float32 for half types.
    shift = np.max(a, axis=dim, keepdims=True)
    shift = np.where(np.isinf(shift), 0, shift).astype(a.dtype, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = _accumulate(np.sum, np.exp(a - shift), None, axis=dim, keepdims=True)
        out = np.log(total) + shift
    return c_contiguous(_squeeze_dims(out, dim, keepdim))


@_logsumexp.derivative("self")
def _(ops, grad, self, dim, keepdim, result):
    # d/dx_i log sum_j exp(x_j) = exp(x_i - logsumexp(x)), the softmax.
    grad = unsqueeze_reduced(ops, grad, dim, keepdim)
    with np.errstate(invalid="ignore"):
        # (complex values: its conjugate, as PyTorch's)
        return grad * ops.conj(ops.exp(self - unsqueeze_reduced(ops, result, dim, keepdim)))


@tensor_method
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` over ``dim`` (an int or a tuple), computed stably.

    Integer inputs give the default float dtype; slices of ``-inf`` give ``-inf``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1000., 1000.]).logsumexp(0)
        tensor(1000.6932)
    """
    a = input._data
    given = _dims_arg("logsumexp", dim, allow_none=False)
    if given == () and not keepdim and a.ndim and a.size:
        # PyTorch reduces everything for dim=() but then fails to write the result.
        ones = ", ".join("1" for _ in a.shape)
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape [{ones}]")
    return _logsumexp(input, normalize_dims(given, a.ndim), keepdim)


# ----------------------------------------------------------------------------------------------
# all, any, count_nonzero (no gradient)


def _make_logical(name: str, fn: Any) -> Any:
    @op(name, differentiable=False)
    def logical(self, dim, keepdim=False):
        if dim == ():  # an explicitly empty dim list reduces nothing
            out = self != 0
        else:
            out = fn(self, axis=dim, keepdims=keepdim)
        return c_contiguous(out.astype(np.uint8) if self.dtype == np.uint8 else np.asarray(out))

    logical.__name__ = f"_{name}"
    return logical


_all = _make_logical("all", np.all)
_any = _make_logical("any", np.any)


def _logical_call(name: str, fn: Any, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    dims = _dims_arg(name, dim)
    ndim = input._data.ndim
    if dims is None:
        axes: Any = None if not keepdim else tuple(range(ndim))
    elif dims == () or dims == []:
        axes = ()
    else:
        axes = normalize_dims(dims, ndim)
    return fn(input, axes, keepdim)


@tensor_method
def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether every element (over ``dim``: int or tuple) is non-zero; a bool tensor (uint8 for
    uint8 input).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 0.], [2., 3.]]).all(1)
        tensor([False,  True])
    """
    return _logical_call("all", _all, input, dim, keepdim)


@tensor_method
def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether any element (over ``dim``: int or tuple) is non-zero; see :func:`all`."""
    return _logical_call("any", _any, input, dim, keepdim)


@op("count_nonzero", differentiable=False)
def _count_nonzero(self, dim):
    return c_contiguous(np.asarray(np.count_nonzero(self, axis=dim), np.int64))


@tensor_method
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of non-zero elements over ``dim`` (int or tuple; all by default), int64.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([[1., 0.], [2., 3.]]).count_nonzero(0)
        tensor([2, 1])
    """
    dims = _dims_arg("count_nonzero", dim)
    axes = None if dims is None else normalize_dims(dims, input._data.ndim)
    return _count_nonzero(input, axes)


# Ops the derivatives of other ops call through ``ops`` (see ops/__init__.py).
PRIMITIVES = {
    "mean": _mean_dim,
    "prod": _prod_dim,
}


# ----------------------------------------------------------------------------------------------
# Sorting


def _sort_order(a: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """The indices that sort ``a`` along ``dim``, stably, as PyTorch orders: NaN after
    everything ascending and before everything descending, -0.0 equal to 0.0."""
    if a.ndim == 0:
        return np.zeros((), np.int64)
    if a.dtype.kind == "V":  # (bfloat16: NumPy's sort misplaces its NaNs; float32 is exact)
        a = a.astype(np.float32)
    if not descending:
        return np.argsort(a, axis=dim, kind="stable").astype(np.int64, copy=False)
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            nan_last = ~np.isnan(a)  # (False first: NaNs lead)
        keys = np.where(nan_last, -a, 0)
        order = np.lexsort((np.moveaxis(keys, dim, -1), np.moveaxis(nan_last, dim, -1)))
        return np.moveaxis(order, -1, dim).astype(np.int64, copy=False)
    reversed_keys = ~a  # (order-reversing for integers and booleans, without overflow)
    return np.argsort(reversed_keys, axis=dim, kind="stable").astype(np.int64, copy=False)


def _sort_order_as_pytorch(a: np.ndarray, dim: int, descending: bool, stable: bool) -> np.ndarray:
    """The indices PyTorch's CPU sort returns: a stable sort, then, unless ``stable``, the
    slices with equal values in the order of PyTorch's ``std::sort`` (``ops/selection.py``)."""
    order = _sort_order(a, dim, descending)
    if stable or a.ndim == 0:
        return order
    return unstable_sort_indices(a, dim, descending, order)


def _laid_out_as(out: np.ndarray, self: np.ndarray) -> np.ndarray:
    """``out`` (of ``self``'s shape) in ``self``'s layout, as PyTorch's ``empty_like(self)``."""
    if self.flags.c_contiguous or out.ndim < 2:
        return c_contiguous(out)
    wanted = empty_preserving_layout(self, out.dtype)
    wanted[...] = out
    return wanted


@op("SortBackward0", tensor_params=("indices",))
def _sorted_values(self, dim, indices):
    """``self`` rearranged by ``indices`` along ``dim`` (the values of :func:`sort`)."""
    if self.ndim == 0:
        return self.copy()
    # (laid out as ``self``, as PyTorch's empty_like(self) result)
    return _laid_out_as(np.take_along_axis(self, indices, axis=dim), self)


def _through_indices(
    ops: Any, grad: Any, self_shape: tuple[int, ...], dim: int, indices: Any
) -> Any:
    """The gradient of elements taken at ``indices`` along ``dim`` (sort's, topk's): each
    sent back to the element it came from."""
    if not self_shape:
        return grad
    return ops.scatter_along(grad, self_shape, dim, indices)


_sorted_values.derivative("self")(_through_indices)


# (``stable=`` given, even None or False, is PyTorch's ``sort.stable`` overload)
_sorted_values_stable = recorded_as(_sorted_values, "SortBackward1")
_NOT_GIVEN: Any = object()


@tensor_method
def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: Any = _NOT_GIVEN) -> Any:
    """The elements of ``input`` sorted along ``dim`` and the indices they came from
    (``values``, ``indices``). With ``stable=True`` ties keep their order; by default, equal
    elements are ordered as PyTorch's CPU sort (libstdc++'s ``std::sort``) orders them."""
    a = input._data
    d = wrap_dim(dim, builtins.max(a.ndim, 1))
    if a.dtype.kind == "c":  # (after the dim's range, as PyTorch)
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    order = _sort_order_as_pytorch(
        a, d, bool(descending), bool(stable) and stable is not _NOT_GIVEN
    )
    indices = wrap(_laid_out_as(order, a))
    values = (_sorted_values if stable is _NOT_GIVEN else _sorted_values_stable)(input, d, indices)
    return return_types.sort((values, indices))


@tensor_method
def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (``sort(...).indices``)."""
    a = input._data
    d = wrap_dim(dim, builtins.max(a.ndim, 1))
    if a.dtype.kind == "c":  # (after the dim's range, as PyTorch)
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    return wrap(_laid_out_as(_sort_order_as_pytorch(a, d, bool(descending), bool(stable)), a))


@tensor_method
def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension (``sort(input, dim=0).values``)."""
    return sort(input, dim=0).values


@op("TopkBackward0", tensor_params=("indices",))
def _top_values(self, dim, indices):
    """``self``'s elements at ``indices`` along ``dim`` (the values of :func:`topk`: always
    row-major, where sort's follow ``self``'s layout)."""
    if self.ndim == 0:
        return self.copy()
    return c_contiguous(np.take_along_axis(self, indices, axis=dim))


_top_values.derivative("self")(_through_indices)


@tensor_method
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The ``k`` largest (or smallest) elements along ``dim`` and their indices, in order
    (NaN counts as the largest; among equal elements, and in the order of ``sorted=False``,
    as PyTorch's CPU kernel's libstdc++ selection leaves them)."""
    a = input._data
    d = wrap_dim(dim, builtins.max(a.ndim, 1))
    size = a.shape[d] if a.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    # (the dtype after the dim and k, as PyTorch)
    if a.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")  # (sic)
    if a.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    order = _sort_order(a, d, bool(largest))
    chosen = order if a.ndim == 0 else c_contiguous(np.take(order, np.arange(k), axis=d))
    if a.ndim and k:
        chosen = _topk_as_pytorch(a, d, k, bool(largest), bool(sorted), chosen)
    indices = wrap(chosen)
    return return_types.topk((_top_values(input, d, indices), indices))


def _topk_as_pytorch(
    a: np.ndarray,
    dim: int,
    k: int,
    largest: bool,
    sorted: bool,  # noqa: A002
    chosen: np.ndarray,
) -> np.ndarray:
    """``chosen`` (the first k of a stable sort) with the slices where PyTorch's libstdc++
    selection picks or orders otherwise redone as it does: those with equal values, and all
    of them for ``sorted=False`` unless k * 64 <= n (then PyTorch sorts them too)."""
    n = a.shape[dim]
    moved = np.moveaxis(a, dim, -1)
    rows = moved.reshape(-1, n)
    if rows.dtype.kind == "V":  # (bfloat16, compared as float32: the same order)
        rows = rows.astype(np.float32)
    picked = np.moveaxis(chosen, dim, -1).reshape(-1, k).copy()
    always = not sorted and k * 64 > n
    ordered = np.sort(rows, axis=-1)
    with np.errstate(invalid="ignore"):
        tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=-1)
        if rows.dtype.kind == "f":
            tied |= np.isnan(rows).sum(axis=-1) > 1
    for r in range(rows.shape[0]):
        if always or tied[r]:
            picked[r] = topk_order(rows[r].tolist(), k, largest, sorted)
    shape = moved.shape[:-1] + (k,)
    return c_contiguous(np.moveaxis(picked.reshape(shape), -1, dim))


_kth_along = _make_dim_extreme("kthvalue", "KthvalueBackward0")


@tensor_method
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """The ``k``-th smallest element along ``dim`` (1-based) and its index (NaN counts as the
    largest; among equal elements the one PyTorch's quickselect picks)."""
    a = input._data
    d = wrap_dim(dim, builtins.max(a.ndim, 1))
    if a.ndim:
        _check_dims_not_empty("kthvalue", a, (d,))
    size = a.shape[d] if a.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if a.ndim and a.dtype.kind in "bc":  # (a 0-d tensor of any type is its own k-th value)
        raise _dtype.no_kernel("kthvalue_cpu", a.dtype)
    if a.ndim == 0:
        index = np.zeros((), np.int64)
    else:
        index = kth_smallest_indices(a, d, k)
        if keepdim:
            index = np.expand_dims(index, d)
    index_tensor = wrap(np.asarray(index, np.int64))
    return return_types.kthvalue((_kth_along(input, d, keepdim, index_tensor), index_tensor))
