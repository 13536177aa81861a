"""Special functions as ops: erfinv, lgamma, digamma and polygamma (with PyTorch's nodes).

Their forwards are the vectorised implementations in :mod:`chainrule._special`; each derivative
is the next function of the family (``lgamma' = digamma``, ``digamma' = polygamma(1, .)``,
``polygamma(n, .)' = polygamma(n + 1, .)``), so gradients of any order are available.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _cephes, _dtype, _special
from .._backend import special
from .._tensor import Tensor
from ._registry import ARITH, FLOAT, op, recorded_as, tensor_method
from .pointwise import _no_kernel, erf, half_in_float32, laid_out_like

__all__ = [
    "erfinv",
    "lgamma",
    "digamma",
    "polygamma",
    "i0",
    "sinc",
    "logit",
    "mvlgamma",
    "igamma",
    "igammac",
]

_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)


@op("ErfinvBackward0", promote=FLOAT, method=True, inplace=True)
def erfinv(self):
    """The inverse error function: ``erf(erfinv(x)) = x`` on [-1, 1].

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([0., 0.5]).erfinv()
        tensor([0.0000, 0.4769])
    """
    if self.dtype.kind == "c":
        raise _no_kernel("erfinv_vml_cpu", self.dtype)
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
    if self.dtype.kind == "c":
        raise _no_kernel("lgamma_vml_cpu", self.dtype)
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
    if self.dtype.kind == "c":
        raise _no_kernel("digamma", self.dtype)
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


# ------------------------------------------------------------------------------------------------
# torch.special: differentiable functions (PyTorch's nodes and formulas, derivatives.yaml)

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_REDUCED = (np.dtype(np.float16), _dtype.BFLOAT16)


def _refuse(kernel: str, x: np.ndarray, halves: bool = True) -> None:
    """PyTorch's error where its CPU kernel ``kernel`` has no loop for ``x``'s dtype: complex
    always, float16 and bfloat16 too when ``halves``."""
    if x.dtype.kind == "c" or (halves and x.dtype in _REDUCED):
        raise _no_kernel(kernel, x.dtype)


@op("SpecialErfcxBackward0", promote=FLOAT, half_native=True)
def erfcx(self):
    """The scaled complementary error function ``exp(x**2) * erfc(x)``.

    Example:
        >>> import chainrule as torch
        >>> torch.special.erfcx(torch.tensor([0., 1.]))
        tensor([1.0000, 0.4276])
    """
    _refuse("erfcx_cpu", self)
    return laid_out_like(special.erfcx(self), self)


@erfcx.derivative("self")
def _(ops, grad, self, result):
    # d/dx erfcx(x) = 2 x erfcx(x) - 2 / sqrt(pi)
    return (ops.mul(ops.mul(self, result), 2.0) - _TWO_OVER_SQRT_PI) * grad


@op("SpecialLogNdtrBackward0", promote=FLOAT, half_native=True)
def log_ndtr(self):
    """``log(Phi(x))``, the log of the standard normal CDF, accurate in both tails.

    Example:
        >>> import chainrule as torch
        >>> torch.special.log_ndtr(torch.tensor([0.]))
        tensor([-0.6931])
    """
    _refuse("log_ndtr_cpu", self)
    return laid_out_like(special.log_ndtr(self), self)


@log_ndtr.derivative("self")
def _(ops, grad, self, result):
    # d/dx log(Phi(x)) = phi(x) / Phi(x) = exp(-(result + x**2 / 2)) / sqrt(2 pi)
    return grad / _SQRT_2PI * ops.exp(-(result + ops.mul(ops.pow(self, 2), 0.5)))


@op("SpecialNdtriBackward0", promote=FLOAT, half_native=True)
def ndtri(self):
    """The inverse of the standard normal CDF (``-inf`` at 0, ``inf`` at 1, NaN outside).

    Example:
        >>> import chainrule as torch
        >>> torch.special.ndtri(torch.tensor([0.5, 0.975]))
        tensor([0.0000, 1.9600])
    """
    _refuse("ndtri_cpu", self)
    return laid_out_like(_cephes.ndtri(self), self)


@ndtri.derivative("self")
def _(ops, grad, result):
    # d/dy ndtri(y) = sqrt(2 pi) exp(ndtri(y)**2 / 2)
    return grad * _SQRT_2PI * ops.exp(ops.mul(ops.pow(result, 2), 0.5))


@op("I0Backward0", promote=FLOAT, method=True, inplace=True)
def i0(self):
    """The modified Bessel function of the first kind of order 0.

    Example:
        >>> import chainrule as torch
        >>> torch.i0(torch.tensor([0., 1.]))
        tensor([1.0000, 1.2661])
    """
    _refuse("i0_vml_cpu", self, halves=False)
    return laid_out_like(_cephes.i0(self), self)


@i0.derivative("self")
def _(ops, grad, self):
    return grad * ops.special_i1(self)


@op("SpecialI0EBackward0", promote=FLOAT)
def i0e(self):
    """``exp(-|x|) * i0(x)``, the exponentially scaled modified Bessel function of order 0.

    Example:
        >>> import chainrule as torch
        >>> torch.special.i0e(torch.tensor([0., 1.]))
        tensor([1.0000, 0.4658])
    """
    _refuse("i0e_cpu", self, halves=False)
    return laid_out_like(_cephes.i0e(self), self)


@i0e.derivative("self")
def _(ops, grad, self, result):
    return grad * (ops.special_i1e(self) - ops.sgn(self) * result)


@op("SpecialI1Backward0", promote=FLOAT)
def i1(self):
    """The modified Bessel function of the first kind of order 1.

    Example:
        >>> import chainrule as torch
        >>> torch.special.i1(torch.tensor([0., 1.]))
        tensor([0.0000, 0.5652])
    """
    _refuse("i1_cpu", self, halves=False)
    return laid_out_like(_cephes.i1(self), self)


def _not_tiny(ops: Any, self: Any, kernel: str) -> tuple[Any, Any]:
    """PyTorch's guard in ``i1_backward``/``i1e_backward``: where ``|x| <= eps`` the gradient is
    the limit 1/2, and ``x`` is replaced by ``eps`` so that the other branch stays finite.
    (Those kernels have no half-precision loop: PyTorch's error.)"""
    dtype = _numpy_dtype(self)
    if dtype in _REDUCED:
        raise _no_kernel(kernel, dtype)
    eps = float(np.finfo(dtype).eps)
    not_tiny = ops.abs(self) > eps
    return not_tiny, ops.where(not_tiny, self, eps)


def _numpy_dtype(value: Any) -> np.dtype:
    return value._data.dtype if isinstance(value, Tensor) else value.dtype


@i1.derivative("self")
def _(ops, grad, self, result):
    # d/dx I1(x) = I0(x) - I1(x) / x, 1/2 at 0
    not_tiny, safe = _not_tiny(ops, self, "i1_backward")
    slope = ops.i0(safe) - result * ops.reciprocal(safe)
    return grad * ops.where(not_tiny, slope, 0.5)


@op("SpecialI1EBackward0", promote=FLOAT)
def i1e(self):
    """``exp(-|x|) * i1(x)``, the exponentially scaled modified Bessel function of order 1.

    Example:
        >>> import chainrule as torch
        >>> torch.special.i1e(torch.tensor([0., 1.]))
        tensor([0.0000, 0.2079])
    """
    _refuse("i1e_cpu", self, halves=False)
    return laid_out_like(_cephes.i1e(self), self)


@i1e.derivative("self")
def _(ops, grad, self, result):
    # d/dx i1e(x) = i0e(x) - i1e(x) (sgn(x) + 1 / x), 1/2 at 0
    not_tiny, safe = _not_tiny(ops, self, "i1e_backward")
    slope = ops.special_i0e(safe) - result * (ops.sgn(safe) + ops.reciprocal(safe))
    return grad * ops.where(not_tiny, slope, 0.5)


@op("SpecialEntrBackward0", promote=FLOAT)
def entr(self):
    """The entropy term ``-x * log(x)``: 0 at 0, ``-inf`` for negative ``x``.

    Example:
        >>> import chainrule as torch
        >>> torch.special.entr(torch.tensor([0., 0.5]))
        tensor([0.0000, 0.3466])
    """
    _refuse("entr_cpu", self, halves=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(self > 0, -self * np.log(np.where(self > 0, self, 1)), 0)
        out = np.where(self < 0, -np.inf, out)
        out = np.where(np.isnan(self), self, out)
    return laid_out_like(out.astype(self.dtype, copy=False), self)


@entr.derivative("self")
def _(ops, grad, self):
    return grad * -(1 + ops.log(self))


@op("SincBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def sinc(self):
    """The normalised sinc function ``sin(pi x) / (pi x)``, 1 at 0.

    Example:
        >>> import chainrule as torch
        >>> torch.sinc(torch.tensor([0., 0.5]))
        tensor([1.0000, 0.6366])
    """
    work = np.float32 if self.dtype in _REDUCED else self.dtype.type
    x = self.astype(work, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        product = x * work(math.pi)
        out = np.where(x == 0, work(1), np.sin(product) / product)
    return laid_out_like(out.astype(self.dtype, copy=False), self)


@sinc.derivative("self")
def _(ops, grad, self):
    # d/dx sinc(x) = (pi x cos(pi x) - sin(pi x)) / (pi x**2), 0 at 0
    self_pi = ops.mul(self, math.pi)
    squared_pi = ops.mul(self * self, math.pi)
    # (complex values: the conjugate of the derivative, as PyTorch's)
    out = grad * ops.conj((self_pi * ops.cos(self_pi) - ops.sin(self_pi)) / squared_pi)
    return ops.where(squared_pi == 0.0, 0.0, out)


@op("LogitBackward0", promote=FLOAT, method=True, inplace=True, half_native=True)
def logit(self, eps=None):
    """The log-odds ``log(x / (1 - x))``; with ``eps``, ``x`` is first clamped to
    ``[eps, 1 - eps]``.

    Example:
        >>> import chainrule as torch
        >>> torch.logit(torch.tensor([0.25, 0.5]))
        tensor([-1.0986,  0.0000])
    """
    if self.dtype.kind == "c":
        raise _no_kernel("logit_cpu", self.dtype)
    work = np.float32 if self.dtype in _REDUCED else self.dtype.type
    x = self.astype(work, copy=False)
    if eps is not None and eps >= 0:
        x = np.clip(x, *_logit_bounds(eps, self.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):
        if self.dtype in _REDUCED:
            # PyTorch's kernel rounds 1 - x and the ratio to the half type, then the log
            one_minus = (work(1) - x).astype(self.dtype).astype(work)
            out = np.log((x / one_minus).astype(self.dtype).astype(work))
        else:
            out = np.log(x / (work(1) - x))
    return laid_out_like(np.asarray(out).astype(self.dtype, copy=False), self)


def _logit_bounds(eps: float, dtype: Any) -> tuple[float, float]:
    """PyTorch's clamp bounds ``eps`` and ``1 - eps`` in the tensor's dtype (its kernel's
    ``scalar_t``): eps rounded to it, then 1 - eps computed (in float32 for float16/bfloat16)
    and rounded, so a float16 eps=1e-6 leaves 1 unclamped (logit 1 = inf) and a float32
    eps=0.3 clamps at float32's 0.7."""
    name = str(dtype).rsplit(".", 1)[-1]
    store = _dtype.BFLOAT16.type if name == "bfloat16" else np.dtype(name).type
    work = np.float64 if name == "float64" else np.float32
    lo = store(eps)
    return float(lo), float(store(work(1) - work(lo)))


@logit.derivative("self")
def _(ops, grad, self, eps):
    if eps is None or eps < 0:
        outside, fill = (self < 0.0) | (self > 1.0), math.nan
    else:
        lo, hi = _logit_bounds(eps, self.dtype)
        outside, fill = (self < lo) | (self > hi), 0.0
    # (at 0 and 1 PyTorch's kernel gives grad * inf, whatever the sign of the zero: grad / +0)
    denominator = ops.where((self == 0.0) | (self == 1.0), 0.0, self * (1.0 - self))
    return ops.where(outside, fill, grad / denominator)


@half_in_float32
def _xlog1py_values(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    dtype = np.result_type(self, other)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(self == 0, 0, self * np.log1p(other))
    return np.where(np.isnan(other), np.nan, out).astype(dtype, copy=False)


def _xlog1py_self_derivative(ops, grad, self, other):
    # xlog1py(grad, other), 0 where self == 0 and other <= -1
    return ops.where((self == 0.0) & (other <= -1.0), 0.0, ops.special_xlog1py(grad, other))


def _xlog1py_other_derivative(ops, grad, self, other):
    return grad * self / (other + 1.0)


_BINARY_SIGNATURES = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Number self, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)


@op(
    "SpecialXlog1PyBackward0",
    inputs=("self", "other"),
    promote=FLOAT,
    name="special_xlog1py",
    signatures=_BINARY_SIGNATURES,
    elementwise=True,
)
def _xlog1py(self, other):
    return _xlog1py_values(self, other)


_xlog1py.derivative("self")(_xlog1py_self_derivative)
_xlog1py.derivative("other")(_xlog1py_other_derivative)


@op(
    "SpecialXlog1PyBackward1",
    inputs=("other",),
    promote=FLOAT,
    promote_with=("self",),
    name="special_xlog1py",
)
def _xlog1py_number_self(self, other):
    return _xlog1py_values(self, other)


_xlog1py_number_self.derivative("other")(_xlog1py_other_derivative)


@op(
    "SpecialXlog1PyBackward2",
    inputs=("self",),
    promote=FLOAT,
    promote_with=("other",),
    name="special_xlog1py",
)
def _xlog1py_number_other(self, other):
    return _xlog1py_values(self, other)


_xlog1py_number_other.derivative("self")(_xlog1py_self_derivative)

_NUMBER = (int, float, np.generic)


def _binary(both: Any, number_first: Any, number_second: Any, input: Any, other: Any) -> Tensor:
    """Pick PyTorch's overload (Tensor-Tensor, Number-Tensor, Tensor-Number) of a binary op."""
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return both(input, other)
    if isinstance(input, Tensor) and isinstance(other, _NUMBER):
        return number_second(input, other)
    if isinstance(input, _NUMBER) and isinstance(other, Tensor):
        return number_first(input, other)
    raise TypeError(both.op.invalid_arguments_message((input, other), {}))


def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, 0 where ``input == 0`` (NaN where ``other`` is NaN); either
    may be a number.

    Example:
        >>> import chainrule as torch
        >>> torch.special.xlog1py(torch.tensor([0., 2.]), torch.tensor([5., 1.]))
        tensor([0.0000, 1.3863])
    """
    return _binary(_xlog1py, _xlog1py_number_self, _xlog1py_number_other, input, other)


def _zeta_values(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    _refuse("zeta_cpu", np.asarray(self))
    _refuse("zeta_cpu", np.asarray(other))
    out = _cephes.zeta(self, other).astype(np.result_type(self, other), copy=False)
    return _like_the_tensor(out, self, other)


def _like_the_tensor(out: np.ndarray, first: Any, second: Any) -> np.ndarray:
    """``out`` laid out as the one array argument of a number overload (two arrays: the
    dispatch lays the result out as PyTorch's TensorIterator, ``elementwise=True``)."""
    if type(first) is np.ndarray and type(second) is not np.ndarray:
        return laid_out_like(out, first)
    if type(second) is np.ndarray and type(first) is not np.ndarray:
        return laid_out_like(out, second)
    return out


def _zeta_x_derivative(ops, grad):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta_q_derivative(ops, grad, self, other):
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return grad * -self * ops.special_zeta(self + 1.0, other)


@op(
    "SpecialZetaBackward0",
    inputs=("self", "other"),
    promote=FLOAT,
    name="special_zeta",
    signatures=_BINARY_SIGNATURES,
    half_native=True,
    elementwise=True,
)
def _zeta(self, other):
    return _zeta_values(self, other)


_zeta.derivative("self")(_zeta_x_derivative)
_zeta.derivative("other")(_zeta_q_derivative)


@op(
    "SpecialZetaBackward1",
    inputs=("other",),
    promote=FLOAT,
    promote_with=("self",),
    name="special_zeta",
    half_native=True,
)
def _zeta_number_self(self, other):
    return _zeta_values(self, other)


_zeta_number_self.derivative("other")(_zeta_q_derivative)


@op(
    "SpecialZetaBackward2",
    inputs=("self",),
    promote=FLOAT,
    promote_with=("other",),
    name="special_zeta",
    half_native=True,
)
def _zeta_number_other(self, other):
    return _zeta_values(self, other)


_zeta_number_other.derivative("self")(_zeta_x_derivative)


def zeta(input: Any, other: Any) -> Tensor:
    """The Hurwitz zeta function ``sum_k (k + other)**-input``; either may be a number (its
    derivative in ``input`` is not implemented, as in PyTorch).

    Example:
        >>> import chainrule as torch
        >>> torch.special.zeta(torch.tensor([2.]), torch.tensor([1.]))
        tensor([1.6449])
    """
    return _binary(_zeta, _zeta_number_self, _zeta_number_other, input, other)


def _incomplete_gamma(name: str, node: str, lower: bool, public_name: str, method: bool) -> Any:
    """An op of the regularised incomplete gamma function (``lower``: P, else Q) under PyTorch's
    ``name`` (its argument errors say ``igamma()`` or ``special_gammainc()``), both arguments
    tensors."""
    kernel = "igamma_cpu" if lower else "igammac_cpu"
    compute = _cephes.gammainc if lower else _cephes.gammaincc
    sign = 1.0 if lower else -1.0

    def forward(self, other):
        dtype = np.result_type(self, other)
        if dtype.kind not in "f" and dtype not in _REDUCED:
            raise _no_kernel(kernel, dtype)
        return compute(self, other).astype(dtype, copy=False)

    forward.__name__ = name
    public = op(
        node,
        inputs=("self", "other"),
        promote=ARITH,
        tensor_only=("self", "other"),
        name=name,
        elementwise=True,
        half_native=True,
        method=method,
        inplace=method,
    )(forward)
    message = f"the derivative for '{'igamma' if lower else 'igammac'}: input' is not implemented."

    @public.derivative("self")
    def _(ops, grad):
        raise NotImplementedError(message)

    @public.derivative("other")
    def _(ops, grad, self, other):
        # d/dx P(a, x) = x**(a - 1) exp(-x) / Gamma(a) (and minus that for Q)
        density = ops.exp((self - 1.0) * ops.log(other) - other - ops.lgamma(self))
        return ops.mul(grad, sign) * density

    public.__name__ = public.__qualname__ = public_name
    return public


igamma = _incomplete_gamma("igamma", "IgammaBackward0", True, "igamma", method=True)
igammac = _incomplete_gamma("igammac", "IgammacBackward0", False, "igammac", method=True)
gammainc = _incomplete_gamma("special_gammainc", "IgammaBackward0", True, "gammainc", method=False)
gammaincc = _incomplete_gamma(
    "special_gammaincc", "IgammacBackward0", False, "gammaincc", method=False
)
igamma.__doc__ = gammainc.__doc__ = (
    "The regularised lower incomplete gamma function ``P(input, other)`` (its derivative in "
    "``input`` is not implemented, as in PyTorch)."
)
igammac.__doc__ = gammaincc.__doc__ = (
    "The regularised upper incomplete gamma function ``Q(input, other) = 1 - P``."
)

_LOG_PI = math.log(math.pi)


@op("MvlgammaBackward0", promote=FLOAT, method=True)
def _mvlgamma(self, p):
    offsets = np.arange(p, dtype=np.float64) * -0.5  # (1 - j) / 2 for j = 1 .. p
    work = np.float32 if self.dtype in _REDUCED else self.dtype.type
    terms = lgamma.op.forward(self.astype(work, copy=False)[..., None] + offsets.astype(work))
    out = terms.sum(-1) + work(p * (p - 1) / 4 * _LOG_PI)
    # (C order whatever the input's layout: PyTorch's is a sum over a new last dim)
    return np.ascontiguousarray(np.asarray(out).astype(self.dtype, copy=False)).reshape(self.shape)


@_mvlgamma.derivative("self")
def _(ops, grad, self, p):
    # sum_j digamma(x + (1 - j) / 2), the offsets added to x as PyTorch adds them (so that
    # -0.0 + 0.0 is +0.0, where digamma's sign of infinity depends on the zero's)
    total = ops.digamma(self + 0.0)
    for j in range(2, p + 1):
        total = total + ops.digamma(self + (1 - j) / 2)
    return grad * total


def _check_mvlgamma(input: Tensor, p: int) -> None:
    if input.dtype == _dtype.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@tensor_method(name="mvlgamma", inplace=True)
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_j lgamma(x + (1 - j) / 2)``.

    Example:
        >>> import chainrule as torch
        >>> torch.mvlgamma(torch.tensor([3.]), p=2)
        tensor([1.5502])
    """
    _check_mvlgamma(input, p)
    return _mvlgamma(input, p)


def multigammaln(input: Tensor, p: int) -> Tensor:
    """``torch.special.multigammaln``: :func:`mvlgamma`."""
    _check_mvlgamma(input, p)
    return _mvlgamma(input, p)


_SQRT1_2 = math.sqrt(0.5)


# PyTorch's ndtr is composite C++ (``(1 + erf(x * M_SQRT1_2)) * 0.5``), whose number operands
# take the Scalar overloads: nodes MulBackward1 and AddBackward1, which Python's ``x * 0.5``
# (MulBackward0) never records.
@op("MulBackward1", promote=ARITH, promote_with=("other",))
@half_in_float32
def _mul_scalar(self, other):
    return np.asarray(np.multiply(self, other)).astype(np.result_type(self, other), copy=False)


@_mul_scalar.derivative("self")
def _(ops, grad, other):
    return ops.mul(grad, other)


@op("AddBackward1", promote=ARITH, promote_with=("other",))
@half_in_float32
def _add_scalar(self, other):
    return np.asarray(np.add(self, other)).astype(np.result_type(self, other), copy=False)


@_add_scalar.derivative("self")
def _(ops, grad):
    return grad


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF ``(1 + erf(x / sqrt(2))) / 2`` (composed of PyTorch's own ops,
    so its graph is theirs: ``MulBackward1 -> AddBackward1 -> ErfBackward0 -> MulBackward1``).

    Example:
        >>> import chainrule as torch
        >>> torch.special.ndtr(torch.tensor([0.]))
        tensor([0.5000])
    """
    return _mul_scalar(_add_scalar(erf(_mul_scalar(input, _SQRT1_2)), 1), 0.5)


# ------------------------------------------------------------------------------------------------
# torch.special: functions PyTorch gives no derivative (its results never require grad)


def _not_differentiable(name: str, compute: Any) -> Any:
    kernel = f"{name}_cpu"

    def forward(self):
        _refuse(kernel, self)
        return laid_out_like(compute(self), self)

    forward.__name__ = f"special_{name}"
    forward.__doc__ = compute.__doc__
    public = op(f"special_{name}", promote=FLOAT, differentiable=False, half_native=True)(forward)
    public.__name__ = public.__qualname__ = name
    return public


bessel_j0 = _not_differentiable("bessel_j0", _cephes.bessel_j0)
bessel_j1 = _not_differentiable("bessel_j1", _cephes.bessel_j1)
bessel_y0 = _not_differentiable("bessel_y0", _cephes.bessel_y0)
bessel_y1 = _not_differentiable("bessel_y1", _cephes.bessel_y1)
modified_bessel_i0 = _not_differentiable("modified_bessel_i0", _cephes.i0)
modified_bessel_i1 = _not_differentiable("modified_bessel_i1", _cephes.i1)
modified_bessel_k0 = _not_differentiable("modified_bessel_k0", _cephes.modified_bessel_k0)
modified_bessel_k1 = _not_differentiable("modified_bessel_k1", _cephes.modified_bessel_k1)
scaled_modified_bessel_k0 = _not_differentiable(
    "scaled_modified_bessel_k0", _cephes.scaled_modified_bessel_k0
)
scaled_modified_bessel_k1 = _not_differentiable(
    "scaled_modified_bessel_k1", _cephes.scaled_modified_bessel_k1
)
spherical_bessel_j0 = _not_differentiable("spherical_bessel_j0", _cephes.spherical_bessel_j0)
airy_ai = _not_differentiable("airy_ai", _cephes.airy_ai)

_POLYNOMIAL_SIGNATURES = (
    "(Tensor x, Tensor n, *, Tensor out = None)",
    "(Number x, Tensor n, *, Tensor out = None)",
    "(Tensor x, Number n, *, Tensor out = None)",
)


def _polynomial(name: str) -> Any:
    kernel = f"{name}_cpu"

    def forward(x, n):
        dtype = np.result_type(x, n)
        if dtype.kind == "c" or dtype in _REDUCED:
            raise _no_kernel(kernel, dtype)
        return _like_the_tensor(_cephes.orthogonal_polynomial(name, x, n, dtype), x, n)

    forward.__name__ = f"special_{name}"
    public = op(
        f"special_{name}",
        inputs=("x", "n"),
        promote=FLOAT,
        differentiable=False,
        half_native=True,
        signatures=_POLYNOMIAL_SIGNATURES,
        elementwise=True,
    )(forward)
    op_function = public

    def polynomial(x: Any, n: Any) -> Tensor:
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise TypeError(op_function.op.invalid_arguments_message((x, n), {}))
        return op_function(x, n)

    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = (
        f"PyTorch's ``special.{name}(x, n)``: the polynomial of degree ``n`` "
        "(a tensor or a number, truncated to an integer) at ``x``; no "
        "derivative, as in PyTorch."
    )
    return polynomial


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")

PRIMITIVES.update(
    {
        "special_i1": i1,
        "special_i1e": i1e,
        "special_i0e": i0e,
        "i0": i0,
        "lgamma": lgamma,
        "special_xlog1py": _xlog1py,
        "special_zeta": _zeta,
    }
)
