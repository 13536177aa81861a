"""Special functions as ops: erfinv, lgamma, digamma and polygamma (with PyTorch's nodes).

Their forwards are the vectorised implementations in :mod:`chainrule._special`; each derivative
is the next function of the family (``lgamma' = digamma``, ``digamma' = polygamma(1, .)``,
``polygamma(n, .)' = polygamma(n + 1, .)``), so gradients of any order are available.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _special
from .._backend import special
from .._tensor import Tensor
from ._registry import FLOAT, op, recorded_as, tensor_method
from .pointwise import laid_out_like

__all__ = ["erfinv", "lgamma", "digamma", "polygamma"]

_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


@op("ErfinvBackward0", promote=FLOAT, method=True, inplace=True)
def erfinv(self):
    """The inverse error function: ``erf(erfinv(x)) = x`` on [-1, 1].

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([0., 0.5]).erfinv()
        tensor([0.0000, 0.4769])
    """
    return special.erfinv(self)


@erfinv.derivative("self")
def _(ops, grad, self):
    # d/dx erfinv(x) = sqrt(pi) / 2 * exp(erfinv(x)**2): PyTorch's formula, which saves the
    # input and recomputes erfinv from it.
    return _HALF_SQRT_PI * ops.exp(ops.pow(ops.erfinv(self), 2)) * grad


@op("LgammaBackward0", promote=FLOAT, method=True, inplace=True)
def lgamma(self):
    """``log(|Gamma(x)|)`` (+inf at the poles and at +-inf, as C's and PyTorch's lgamma).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([0.5, 3.]).lgamma()
        tensor([0.5724, 0.6931])
    """
    out = special.lgamma(self)
    return np.where(np.isneginf(self), np.inf, out).astype(out.dtype, copy=False)


@lgamma.derivative("self")
def _(ops, grad, self):
    return grad * ops.digamma(self)


@op("DigammaBackward0", promote=FLOAT, method=True, inplace=True)
def digamma(self):
    """The digamma function ``d/dx log(Gamma(x))`` (-inf at +0, as PyTorch).

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1., 2.]).digamma()
        tensor([-0.5772,  0.4228])
    """
    return special.digamma(self)


@digamma.derivative("self")
def _(ops, grad, self):
    return grad * ops.polygamma(1, self)


@op("PolygammaBackward0", inputs=("self",), promote=FLOAT)
def _polygamma(n, self):
    if n == 1:
        # PyTorch's own algorithm: its numbers, not exact ones.
        return laid_out_like(_special.trigamma(self), self)
    out = special.polygamma(n, self)
    if n >= 2:
        # PyTorch's zeta(n + 1, x) (Cephes) is NaN at x = +inf, where the limit is 0.
        out = np.where(np.isposinf(self), np.nan, out).astype(out.dtype, copy=False)
    return laid_out_like(out, self)


@_polygamma.derivative("self")
def _(ops, grad, n, self):
    return grad * ops.polygamma(n + 1, self)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    """``self.polygamma(n)`` is ``polygamma(n, self)``."""
    return polygamma(n, self)


_polygamma_in_place = recorded_as(_polygamma, "PolygammaBackward1")


def polygamma_in_place_op(self: Tensor, n: int) -> Tensor:
    """``self.polygamma_(n)``'s op: ``polygamma(n, self)`` recorded as PyTorch's in-place
    ``PolygammaBackward1`` (``Tensor.polygamma_`` writes it into ``self``)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma_in_place(n, self)


@tensor_method(method=_polygamma_method, inplace=polygamma_in_place_op)
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of the digamma function (``n >= 0``).

    Example:
        >>> import chainrule as torch
        >>> torch.polygamma(1, torch.tensor([1.]))
        tensor([1.6449])
    """
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma(n, input)


# Ops the derivatives of other ops call through ``ops`` (see ops/__init__.py).
PRIMITIVES: dict[str, Any] = {"erfinv": erfinv}
