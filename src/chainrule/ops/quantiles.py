"""``quantile`` and ``nanquantile``: values at fractions ``q`` of the sorted input, with the
five interpolations of PyTorch (``linear``, ``lower``, ``higher``, ``midpoint``,
``nearest``).

As in PyTorch, each is a composite of other ops, so the graph is PyTorch's node for node
(``SortBackward0``, ``GatherBackward0``, ``LerpBackward1``, ``SqueezeBackward4`` ...) and the
gradient flows to the sorted values that were read, weighted by the interpolation. ``quantile``
gives NaN for a slice holding NaN; ``nanquantile`` ignores NaN (NaN for a slice of NaN only).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, wrap, wrap_dim
from ._registry import tensor_method
from .special_ops import _mul_scalar

__all__ = ["quantile", "nanquantile"]

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _format_number(q: float) -> str:
    """A double as C++'s stream prints it (``1.5``, ``2``, ``nan``)."""
    return f"{q:g}"


def _check(input: Tensor, q: Any, interpolation: Any) -> Tensor:
    """PyTorch's checks, in its order; returns ``q`` as a tensor of the input's dtype."""
    if not isinstance(q, Tensor):
        if isinstance(q, bool) or not isinstance(q, int | float):
            raise TypeError(
                "quantile() received an invalid combination of arguments - got (Tensor, "
                f"{type(q).__name__}), but expected one of:\n"
                " * (Tensor input, Tensor q, int dim = None, bool keepdim = False, *, str "
                'interpolation = "linear", Tensor out = None)\n'
                " * (Tensor input, float q, int dim = None, bool keepdim = False, *, str "
                'interpolation = "linear", Tensor out = None)\n'
            )
        if not 0 <= q <= 1:
            raise RuntimeError(
                f"quantile() q must be in the range [0, 1] but got {_format_number(q)}"
            )
    if interpolation not in _MODES:
        raise RuntimeError(
            "quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    a = input._data
    if a.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q._data.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if not isinstance(q, Tensor):
        return wrap(np.asarray(q, a.dtype))
    if q._data.dtype != a.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    return q


def _output_shape(shape: tuple[int, ...], dim: int | None, keepdim: bool) -> list[int]:
    if dim is None:
        return [1] * len(shape) if keepdim else []
    out = list(shape)
    if keepdim:
        out[dim] = 1
    else:
        del out[dim]
    return out


def _quantile(
    input: Tensor, q: Any, dim: int | None, keepdim: bool, interpolation: str, ignore_nan: bool
) -> Tensor:
    q = _check(input, q, interpolation)
    shape = input._data.shape
    d = None if dim is None else wrap_dim(dim, len(shape))
    if not shape:
        d = None  # (a 0-d input: its one element, whatever dim)
    if q._data.ndim == 1:
        values = q._data
        if values.size and not ((values >= 0) & (values <= 1)).all():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    # Sort along the reduced dimension, moved last (all elements when dim is None).
    if d is None:
        ordered = input.flatten().sort().values
    elif d == len(shape) - 1:
        ordered = input.sort().values
    else:
        ordered = input.unsqueeze(-1).transpose(d, -1).sort().values
    out_shape = _output_shape(shape, d, keepdim)
    ordered = ordered.view(_sorted_view_shape(out_shape, ordered.shape[-1]))
    size = ordered.shape[-1]
    nan = ordered.isnan()
    if ignore_nan:
        ranks = q * (nan.logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = size - 1
        # (a product with a number: PyTorch's Scalar overload, MulBackward1)
        scaled, has_nan = _broadcast(_mul_scalar(q, last), nan.any(-1, True))
        ranks = scaled.masked_fill(has_nan, last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    ranks_below = ranks.long()
    values = ordered.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = wrap(np.full(tuple(ranks.shape), 0.5, ranks._data.dtype))
        else:
            weights = ranks - ranks_below
        ranks_above = ranks.ceil().long()
        values.lerp_(ordered.gather(-1, ranks_above), weights)
    # (in place, as PyTorch's: the last node is SqueezeBackward4)
    if q._data.ndim == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


def _sorted_view_shape(out_shape: list[int], size: int) -> list[int]:
    """The shape the sorted values are viewed as: the output's shape without q's dimension,
    then the sorted dimension (PyTorch's ``in_shape``)."""
    return [*out_shape, size] if out_shape else [size]


def _broadcast(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    return a.expand(shape), b.expand(shape)


@tensor_method
def quantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """The ``q``-th quantiles (``q`` a number or a 1-D tensor in [0, 1]) of all elements, or
    along ``dim``; NaN where a slice holds NaN. With a tensor ``q`` its dimension comes first.

    Example:
        >>> import chainrule as torch
        >>> torch.quantile(torch.tensor([1., 2., 4., 8.]), 0.5)
        tensor(3.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


@tensor_method
def nanquantile(
    input: Tensor,
    q: Any,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """:func:`quantile` of the values that are not NaN (NaN for a slice of NaN only).

    Example:
        >>> import chainrule as torch
        >>> torch.nanquantile(torch.tensor([1., float("nan"), 4., 8.]), 0.5)
        tensor(4.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)
