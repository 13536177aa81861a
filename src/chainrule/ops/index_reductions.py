"""Reducing values into a tensor at indices: ``scatter_reduce`` (an index per source element,
as ``scatter``) and ``index_reduce`` (an index per source slice along ``dim``, as
``index_add``), with the reductions ``sum`` (scatter_reduce only), ``prod``, ``mean``,
``amax`` and ``amin``, ``include_self`` deciding whether the written elements of ``self`` take
part. Both have in-place forms.

Gradients are PyTorch's formulas (``scatter_reduce_backward``, ``index_reduce_backward``):

* sum: ``self`` gets ``grad``; ``src`` gets ``grad`` gathered at ``index``;
* mean: both get ``grad / N``, ``N`` the number of values reduced into each element;
* prod: the product of the other values, computed with each zero masked to 1 so that a single
  zero gets the product of the rest (differentiating that again when two or more zeros meet in
  one element raises, as PyTorch's ``DelayedError``);
* amax/amin: the gradient shared evenly among the values equal to the result (PyTorch counts
  an element of ``self`` equal to the result even when ``include_self=False``, then zeroes its
  share: so does chainrule).

Without ``include_self``, ``self``'s gradient is zero where something was written.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._tensor import Tensor, wrap, wrap_dim
from ._registry import op, tensor_method
from .indexing import (
    _as_1d,
    _check_scatter,
    _fmt,
    _grid,
    _index_dtype_ok,
    _leading_part,
    _scalar_name,
    _size_1d,
    _tensor_arg,
)

__all__ = ["scatter_reduce", "index_reduce"]

_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")
# PyTorch's scatter_reduce forward also takes the names "max" and "min" (its backward does not).
_SCATTER_ALIASES = {"max": "amax", "min": "amin"}
_INDEX_REDUCES = ("prod", "mean", "amax", "amin")
_UFUNCS = {
    "sum": np.add,
    "mean": np.add,
    "prod": np.multiply,
    "amax": np.maximum,
    "amin": np.minimum,
}


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a reduction starts from where ``self`` does not take part."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return -np.inf if reduce == "amax" else np.inf


def _reduce_into(
    target: np.ndarray, where: Any, values: np.ndarray, reduce: str, include_self: bool
) -> np.ndarray | None:
    """Reduces ``values`` into ``target[where]`` in place (repeated positions all count); for
    a mean, only sums, and returns the counts to divide by (see :func:`_divided`)."""
    if not include_self:
        target[where] = _identity(reduce, target.dtype)
    _UFUNCS[reduce].at(target, where, values)
    if reduce != "mean":
        return None
    counts = np.ones(target.shape, target.dtype) if include_self else np.zeros_like(target)
    np.add.at(counts, where, np.ones(values.shape, target.dtype))
    counts[counts == 0] = 1
    return counts


def _divided(total: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """A mean from its sum, in the sum's dtype (integers round down, as PyTorch's)."""
    counts = counts.astype(total.dtype)
    return total // counts if total.dtype.kind in "iu" else total / counts


def _data(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else x


def _constant(like: Any, a: np.ndarray) -> Any:
    """``a`` as an operand of a derivative: a Tensor (without history) when the derivative runs
    on Tensors (``create_graph=True``), else the array."""
    return wrap(a) if isinstance(like, Tensor) else a


def _check_same_shape(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """PyTorch's broadcasting error of its formulas when ``src`` is larger than ``index``."""
    for k in range(1, min(len(a), len(b)) + 1):
        if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[-k]}) must match the size of tensor b ({b[-k]}) at "
                f"non-singleton dimension {max(len(a), len(b)) - k}"
            )


# ----------------------------------------------------------------------------------------------
# The error node of PyTorch's DelayedError: differentiating through it raises.


@op("Error")
def _delayed_error(self, message):
    return self.copy()


@_delayed_error.derivative("self")
def _(ops, grad, message):
    raise RuntimeError(message)


# ----------------------------------------------------------------------------------------------
# scatter_reduce


@op(
    "ScatterReduceBackward0",
    inputs=("self", "src"),
    tensor_params=("index",),
    name="scatter_reduce",
)
def _scatter_reduce(self, dim, index, src, reduce, include_self):
    reduce = _SCATTER_ALIASES.get(reduce, reduce)
    if reduce == "mean" and self.dtype.kind == "b":
        raise NotImplementedError(
            "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"
        )
    if reduce in ("amax", "amin") and self.dtype.kind == "c":
        raise NotImplementedError(
            f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented for '
            f"'{_scalar_name(self.dtype)}'"
        )
    # float16 accumulates in float32 and rounds once (a mean's sum, before dividing), as
    # PyTorch's CPU kernel.
    wide = self.dtype == np.float16
    out = np.array(self, dtype=np.float32 if wide else self.dtype, order="C", copy=True)
    idx = _as_1d(index)
    if not idx.size:
        return out.astype(self.dtype)
    values = _leading_part(_as_1d(src), idx.shape)
    counts = _reduce_into(_as_1d(out), _grid(idx, dim), values, reduce, include_self)
    out = out.astype(self.dtype, copy=False)
    return out if counts is None else _divided(out, counts.reshape(out.shape))


def _scatter_counts(
    shape: tuple[int, ...], dtype: np.dtype, dim: int, index: np.ndarray, values: np.ndarray
) -> np.ndarray:
    """``base.scatter_add(dim, index, values)`` on arrays, ``base`` zeros of ``shape``."""
    out = np.zeros(shape, dtype)
    idx = _as_1d(index)
    if idx.size:
        np.add.at(_as_1d(out), _grid(idx, dim), _as_1d(values))
    return out


def _scatter_grads(
    ops: Any,
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    src: Any,
    reduce: str,
    include_self: bool,
    result: Any,
    wanted: str,
) -> Any:
    """PyTorch's ``scatter_reduce_backward``: the gradient of ``wanted`` ("self" or "src")."""
    idx = _data(index)
    dtype = _data(grad).dtype
    if reduce == "sum":
        if wanted == "src":
            return ops.gather(grad, dim, index)
        grad_self = grad
    elif reduce == "mean":
        n = np.ones(grad.shape, dtype) if include_self else np.zeros(grad.shape, dtype)
        n += _scatter_counts(grad.shape, dtype, dim, idx, np.ones(idx.shape, dtype))
        n[n == 0] = 1
        if wanted == "src":
            n_src = _as_1d(n)[_grid(_as_1d(idx), dim)].reshape(idx.shape)
            return ops.gather(grad, dim, index) / _constant(grad, n_src)
        grad_self = grad / _constant(grad, n)
    elif reduce == "prod":
        if wanted == "self":
            self_zero = _constant(grad, _data(self) == 0)
            masked_self = ops.masked_fill(self, self_zero, 1)
            masked_result = ops.scatter_reduce(masked_self, dim, index, src, reduce, include_self)
            grad_self = grad * masked_result / masked_self
        else:
            return _prod_src_grad(ops, grad, self, dim, index, src, include_self, result)
    else:  # amax, amin: shared evenly among the values equal to the result
        r = _data(result)
        value = _as_1d(r)[_grid(_as_1d(idx), dim)].reshape(idx.shape)
        s = _data(src)
        _check_same_shape(s.shape, value.shape)
        self_is = (_data(self) == r).astype(dtype)
        src_is = (s == value).astype(dtype)
        n = self_is + _scatter_counts(r.shape, dtype, dim, idx, src_is)
        distributed = grad / _constant(grad, n)
        if wanted == "src":
            return _constant(grad, src_is) * ops.gather(distributed, dim, index)
        grad_self = _constant(grad, self_is) * distributed
    if not include_self:
        grad_self = ops.scatter_value(grad_self, dim, index, 0)
    return grad_self


def _prod_src_grad(
    ops: Any, grad: Any, self: Any, dim: int, index: Any, src: Any, include_self: bool, result: Any
) -> Any:
    """``src``'s gradient of a product: ``result / src`` where ``src`` is not 0; for the only
    zero of its element, the product of the others (the zero masked to 1)."""
    idx = _data(index)
    s = _data(src)
    dtype = _data(grad).dtype
    src_zero = s == 0
    zeros_at = _scatter_counts(_data(self).shape, dtype, dim, idx, src_zero.astype(dtype))
    num_zeros = _as_1d(zeros_at)[_grid(_as_1d(idx), dim)].reshape(idx.shape)
    single_zero = src_zero & (num_zeros == 1)
    masked_src = ops.masked_fill(src, _constant(grad, single_zero), 1)
    masked_result = ops.scatter_reduce(self, dim, index, masked_src, "prod", include_self)
    with_zero = ops.gather(grad * masked_result, dim, index)
    without = ops.gather(grad * result, dim, index) / ops.masked_fill(
        src, _constant(grad, src_zero), 1
    )
    out = ops.where(_constant(grad, single_zero), with_zero, without)
    if (num_zeros > 1).any():
        out = ops.delayed_error(
            out,
            "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
            "scattered to the same position in self",
        )
    return out


def _check_backward_reduce(reduce: str) -> None:
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(
            "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
            f"{reduce}."
        )


@_scatter_reduce.derivative("self")
def _(ops, grad, self, dim, index, src, reduce, include_self, result):
    _check_backward_reduce(reduce)
    return _scatter_grads(ops, grad, self, dim, index, src, reduce, include_self, result, "self")


@_scatter_reduce.derivative("src")
def _(ops, grad, self, dim, index, src, reduce, include_self, result):
    _check_backward_reduce(reduce)
    return _scatter_grads(ops, grad, self, dim, index, src, reduce, include_self, result, "src")


def _check_include_self(name: str, include_self: Any) -> None:
    if not isinstance(include_self, bool):
        raise TypeError(
            f"{name}(): argument 'include_self' must be bool, not {type(include_self).__name__}"
        )


@tensor_method(inplace=True)
def scatter_reduce(
    input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True
) -> Tensor:
    """A copy of ``input`` with the elements of ``src`` reduced into it at ``index`` along
    ``dim`` (as :func:`scatter_add` for ``reduce="sum"``): ``reduce`` is ``"sum"``,
    ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``; with ``include_self=False`` the written
    elements of ``input`` do not take part.

    Example:
        >>> import chainrule as torch
        >>> src = torch.tensor([1., 2., 3., 4.])
        >>> torch.zeros(2).scatter_reduce(0, torch.tensor([0, 1, 0, 1]), src, "amax")
        tensor([3., 4.])
    """
    src = _tensor_arg("scatter_reduce", "src", 4, src)
    _check_include_self("scatter_reduce", include_self)
    d = _check_scatter("scatter_reduce", input, dim, index, src, check_range=False)
    if _SCATTER_ALIASES.get(reduce, reduce) not in _SCATTER_REDUCES:
        raise RuntimeError(
            f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"
        )
    _check_scatter("scatter_reduce", input, dim, index, src)
    return _scatter_reduce(input, d, index, src, reduce, include_self)


# ----------------------------------------------------------------------------------------------
# index_reduce


def _rows(a: np.ndarray, dim: int) -> np.ndarray:
    """``a`` with ``dim`` first (a view), so that an index picks slices."""
    return np.moveaxis(a, dim, 0) if a.ndim else a.reshape(1)


def _index_reduce_refusal(self: np.ndarray, reduce: str, include_self: bool) -> str | None:
    """The kernel of PyTorch's that has no bool or complex version, if one is reached: the
    fill of ``include_self=False``; the element loop of a 0-d or 1-d ``self``; for more
    dimensions (reduced slice by slice), the floor division of a bool mean and the maximum or
    minimum of complex values."""
    kind = self.dtype.kind
    if kind not in "bc":
        return None
    if not include_self:
        return "index_reduce_func_exclude_input_init"
    if self.ndim <= 1:
        return "index_func_"
    if kind == "b" and reduce == "mean":
        return "div_floor_cpu"
    if kind == "c" and reduce in ("amax", "amin"):
        return "maximum_cpu" if reduce == "amax" else "minimum_cpu"
    return None


@op(
    "IndexReduceBackward0", inputs=("self", "source"), tensor_params=("index",), name="index_reduce"
)
def _index_reduce(self, dim, index, source, reduce, include_self):
    kernel = _index_reduce_refusal(self, reduce, include_self)
    if kernel is not None:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(self.dtype)}'")
    out = np.array(self, order="C", copy=True)
    idx = index.reshape(-1)
    if not idx.size:
        return out
    counts = _reduce_into(_rows(out, dim), idx, _rows(source, dim), reduce, include_self)
    if counts is not None:
        rows = _rows(out, dim)
        rows[...] = _divided(rows, counts)
    return out


def _index_grads(
    ops: Any,
    grad: Any,
    self: Any,
    dim: int,
    index: Any,
    source: Any,
    reduce: str,
    include_self: bool,
    result: Any,
    wanted: str,
) -> Any:
    """PyTorch's ``index_reduce_backward``: the gradient of ``wanted`` ("self" or
    "source")."""
    idx = _data(index).reshape(-1).astype(np.int64)
    dtype = _data(grad).dtype
    index_1d = _constant(grad, idx)

    def added(base: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.array(base, copy=True)
        if idx.size:
            np.add.at(_rows(out, dim), idx, _rows(values, dim))
        return out

    def picked(a: np.ndarray) -> np.ndarray:
        return np.take(a, idx, axis=dim) if a.ndim else a.copy()

    if reduce == "mean":
        base = np.ones(grad.shape, dtype) if include_self else np.zeros(grad.shape, dtype)
        n = added(base, np.ones(_data(source).shape, dtype))
        n[n == 0] = 1
        if wanted == "source":
            return ops.index_select(grad, dim, index_1d) / _constant(grad, picked(n))
        grad_self = grad / _constant(grad, n)
    elif reduce == "prod":
        if wanted == "self":
            self_zero = _constant(grad, _data(self) == 0)
            masked_self = ops.masked_fill(self, self_zero, 1)
            masked_result = ops.index_reduce(masked_self, dim, index, source, reduce, include_self)
            grad_self = grad * masked_result / masked_self
        else:
            s = _data(source)
            src_zero = s == 0
            num_zeros = picked(added(np.zeros(_data(self).shape, dtype), src_zero.astype(dtype)))
            single_zero = src_zero & (num_zeros == 1)
            masked_src = ops.masked_fill(source, _constant(grad, single_zero), 1)
            masked_result = ops.index_reduce(self, dim, index, masked_src, reduce, include_self)
            with_zero = ops.index_select(grad * masked_result, dim, index_1d)
            without = ops.index_select(grad * result, dim, index_1d) / ops.masked_fill(
                source, _constant(grad, src_zero), 1
            )
            out = ops.where(_constant(grad, single_zero), with_zero, without)
            if (num_zeros > 1).any():
                out = ops.delayed_error(
                    out,
                    "index_reduce(): Double backward is unsupported for source when >1 zeros in "
                    "source are scattered to the same position in self",
                )
            return out
    else:  # amax, amin
        r = _data(result)
        self_is = (_data(self) == r).astype(dtype)
        source_is = (_data(source) == picked(r)).astype(dtype)
        distributed = grad / _constant(grad, added(self_is, source_is))
        if wanted == "source":
            return _constant(grad, source_is) * ops.index_select(distributed, dim, index_1d)
        grad_self = _constant(grad, self_is) * distributed
    if not include_self:
        grad_self = ops.index_fill(grad_self, dim, index_1d, 0)
    return grad_self


@_index_reduce.derivative("self")
def _(ops, grad, self, dim, index, source, reduce, include_self, result):
    return _index_grads(ops, grad, self, dim, index, source, reduce, include_self, result, "self")


@_index_reduce.derivative("source")
def _(ops, grad, self, dim, index, source, reduce, include_self, result):
    return _index_grads(ops, grad, self, dim, index, source, reduce, include_self, result, "source")


_BETA_WARNED = False


def _warn_beta() -> None:
    """PyTorch's warning, once per process (TORCH_WARN_ONCE)."""
    global _BETA_WARNED
    if not _BETA_WARNED:
        _BETA_WARNED = True
        warnings.warn(
            "index_reduce() is in beta and the API may change at any time.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def _check_index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: Any) -> int:
    """PyTorch's argument checks of index_reduce, in its order; returns the wrapped dim."""
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got "
            f"{reduce}."
        )
    idx = index._data
    src = source._data
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if idx.ndim > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {idx.ndim} with "
            f"type: {_scalar_name(idx.dtype)} and size: {_fmt(idx.shape)}"
        )
    if not _index_dtype_ok(idx):
        raise RuntimeError(
            "index_reduce_(): Expected dtype int32/int64 for index but got: "
            f"{_scalar_name(idx.dtype)}"
        )
    if src.dtype != input._data.dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({_scalar_name(input._data.dtype)}) and source "
            f"({_scalar_name(src.dtype)}) must have the same scalar type"
        )
    if d != 0 and d >= src.ndim:
        raise RuntimeError(
            f"index_reduce_(): Indexing dim {d} is out of bounds of the source tensor with dim "
            f"{src.ndim}"
        )
    if idx.size != _size_1d(src.shape, d):
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({idx.size}) should be equal to "
            f"source.size(dim): ({_size_1d(src.shape, d)}), for dim: {d}"
        )
    if len(shape) != len(src.shape) or any(
        k != d and a != b for k, (a, b) in enumerate(zip(shape, src.shape, strict=True))
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {_fmt(shape)} source.shape = {_fmt(src.shape)}"
        )
    if idx.size and (idx.min() < 0 or idx.max() >= _size_1d(shape, d)):
        raise IndexError("index out of range in self")
    return d


@tensor_method(inplace=True)
def index_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """A copy of ``input`` with the slices of ``source`` along ``dim`` reduced into its slices
    ``index`` (``reduce`` is ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``); with
    ``include_self=False`` the written slices of ``input`` do not take part.

    Example:
        >>> import chainrule as torch
        >>> x = torch.ones(3)
        >>> x.index_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([2., 3., 4.]), "prod")
        tensor([6., 1., 4.])
    """
    index = _tensor_arg("index_reduce", "index", 3, index)
    source = _tensor_arg("index_reduce", "source", 4, source)
    _check_include_self("index_reduce", include_self)
    _warn_beta()
    d = _check_index_reduce(input, dim, index, source, reduce)
    return _index_reduce(input, d, index, source, reduce, include_self)


# Helpers for derivatives (``ops.<name>``).
PRIMITIVES: dict[str, Any] = {
    "scatter_reduce": _scatter_reduce,
    "index_reduce": _index_reduce,
    "delayed_error": _delayed_error,
}
