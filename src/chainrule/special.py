"""``torch.special``: special functions, as PyTorch's (values, dtypes, nodes and errors).

Most names are PyTorch's aliases of functions ``torch`` already has (``expit`` is ``sigmoid``,
``psi`` is ``digamma``, ``gammaln`` is ``lgamma`` ...): they are the same functions here and
record the same nodes (``SigmoidBackward0`` ...). The others (``erfcx``, ``ndtri``, the Bessel
functions, the orthogonal polynomials ...) are ops of :mod:`chainrule.ops.special_ops`, whose
numerics are ports of PyTorch's Cephes-derived kernels (:mod:`chainrule._cephes`). Functions
PyTorch gives no derivative (the Bessel functions of ``bessel_*``/``modified_bessel_*``, the
polynomials) return results that never require grad, as PyTorch's.

Example:
    >>> import chainrule as torch
    >>> torch.special.erfcx(torch.tensor([1.0]))
    tensor([0.4276])
"""

from __future__ import annotations

from typing import Any as _Any

from . import _overrides
from ._tensor import Tensor
from .ops import special_ops as _ops
from .ops.activation import log_softmax as _log_softmax
from .ops.activation import softmax as _softmax
from .ops.pointwise import erf, erfc, exp2, expm1, log1p, xlogy
from .ops.pointwise import round as _round
from .ops.pointwise import sigmoid as _sigmoid
from .ops.reduction import logsumexp

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta",
]

airy_ai = _ops.airy_ai
bessel_j0 = _ops.bessel_j0
bessel_j1 = _ops.bessel_j1
bessel_y0 = _ops.bessel_y0
bessel_y1 = _ops.bessel_y1
chebyshev_polynomial_t = _ops.chebyshev_polynomial_t
chebyshev_polynomial_u = _ops.chebyshev_polynomial_u
chebyshev_polynomial_v = _ops.chebyshev_polynomial_v
chebyshev_polynomial_w = _ops.chebyshev_polynomial_w
digamma = _ops.digamma
entr = _ops.entr
erfcx = _ops.erfcx
erfinv = _ops.erfinv
hermite_polynomial_h = _ops.hermite_polynomial_h
hermite_polynomial_he = _ops.hermite_polynomial_he
i0 = _ops.i0
i0e = _ops.i0e
i1 = _ops.i1
i1e = _ops.i1e
laguerre_polynomial_l = _ops.laguerre_polynomial_l
legendre_polynomial_p = _ops.legendre_polynomial_p
log_ndtr = _ops.log_ndtr
logit = _ops.logit
modified_bessel_i0 = _ops.modified_bessel_i0
modified_bessel_i1 = _ops.modified_bessel_i1
modified_bessel_k0 = _ops.modified_bessel_k0
modified_bessel_k1 = _ops.modified_bessel_k1
multigammaln = _ops.multigammaln
ndtr = _ops.ndtr
ndtri = _ops.ndtri
polygamma = _ops.polygamma
scaled_modified_bessel_k0 = _ops.scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _ops.scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t = _ops.shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _ops.shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _ops.shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _ops.shifted_chebyshev_polynomial_w
sinc = _ops.sinc
spherical_bessel_j0 = _ops.spherical_bessel_j0
xlog1py = _ops.xlog1py
zeta = _ops.zeta
expit = _sigmoid
gammainc = _ops.gammainc
gammaincc = _ops.gammaincc
psi = digamma
gammaln = _ops.lgamma


def softmax(input: Tensor, dim: int, *, dtype: _Any = None) -> Tensor:
    """``torch.special.softmax``: :func:`chainrule.softmax` (``dim`` required, ``dtype`` by
    keyword only).

    Example:
        >>> import chainrule as torch
        >>> torch.special.softmax(torch.tensor([0.0, 0.0]), 0)
        tensor([0.5000, 0.5000])
    """
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: _Any = None) -> Tensor:
    """``torch.special.log_softmax``: :func:`chainrule.log_softmax` (``dim`` required, ``dtype``
    by keyword only)."""
    return _log_softmax(input, dim, dtype=dtype)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - torch-style name
    """``torch.special.round``: round half to even, to ``decimals`` places (it always takes
    PyTorch's ``round.decimals`` overload, so its node is ``RoundBackward1``)."""
    return _round(input, decimals=decimals)


def _make_overridable() -> None:
    """The functions written by hand (not ops of the table) check their arguments for
    ``__torch_function__`` overrides, as PyTorch's ``torch.special`` functions do."""
    namespace = globals()
    for name in __all__:
        namespace[name] = _overrides.overridable(namespace[name])


_make_overridable()
