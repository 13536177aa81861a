"""Special functions NumPy lacks, vectorised over ndarrays: ``erf``, ``erfc``, ``erfcx``,
``erfinv``, ``expit``, ``lgamma``, ``digamma``, ``polygamma`` and ``log_ndtr``.

Every function takes an array (or a number) and returns an array of the same shape, in the
input's floating dtype (integers give float64). The work is done in float64, where the results
are within 1 to 3 ulp of the exact values (checked against mpmath and PyTorch in
``tests/test_reduction.py``); float32 and float16 inputs are computed in float64 and rounded
once, so they are correctly rounded nearly always (``expit`` excepted: see there).

How the approximations were made
--------------------------------
Each function is split into a few intervals. On each, a well-behaved factor of the function is
approximated by a polynomial in ``t = (v - center) * scale`` (``t`` in [-1, 1], or the raw
variable for the first two erf intervals), and the known structure is kept exact around it:

* ``erf(x) = x + x * P(x**2)`` near 0; ``erf(x) = erf(1) + P(x - 1)`` near 1; beyond 1.25,
  ``erfc(y) = exp(-y**2) * erfcx(y)`` with ``erfcx`` approximated on [1.25, 4.5] in ``y`` and
  beyond in ``u = 1 / y**2`` (``y * erfcx(y) -> 1 / sqrt(pi)`` as ``u -> 0``), and ``y**2``
  split exactly into two parts so that ``exp(-y**2)`` keeps full relative accuracy.
* ``lgamma(1 + z) = z (z - 1) Q(z)`` on [0, 1] and ``lgamma(2 + w) = w R(w)`` on [0, 1], so the
  zeros of ``lgamma`` at 1 and 2 are exact; other arguments are moved there by the recurrence
  ``Gamma(x + 1) = x Gamma(x)``, Stirling's series (Bernoulli numbers, computed exactly below)
  handles ``x >= 8`` and the reflection formula handles ``x < 0``.
* ``digamma(x) = (x - x0) Q(x)`` on [1, 2] with ``x0`` its positive zero (in two parts), the
  recurrence ``psi(x + 1) = psi(x) + 1 / x`` elsewhere below 10, the asymptotic series above,
  and the reflection formula for ``x <= 0``.
* ``polygamma(n, x) = (-1)**(n+1) n! zeta(n + 1, x)``: the Hurwitz zeta function summed directly
  up to ``x + m >= 10 + n``, then the Euler-Maclaurin tail (Bernoulli numbers); reflection, with
  the derivatives of ``pi cot(pi x)`` as exact polynomials in ``cot``, for ``x < 0``.
* ``erfinv`` starts from Winitzki's closed-form approximation (2008) and takes three Halley steps
  on ``erf`` (on ``erfc`` for ``|y| > 0.5``, where ``1 - |y|`` is exact).

The polynomial coefficients were fitted for this module with mpmath at 45 significant digits:
weighted least squares on Chebyshev nodes, iteratively reweighted towards the minimax error
(Lawson's method), minimising the relative error of the function being computed; the constant
term was rounded to float64 first and the other coefficients refitted around it. The comment
on each table gives its interval, degree and the fit's maximum relative error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

__all__ = [
    "erf", "erfc", "erfcx", "erfinv", "expit", "lgamma", "digamma", "polygamma", "log_ndtr",
    "trigamma",
]


class _Poly:
    """A polynomial in ``t = (v - center) * scale`` with coefficients from degree 0 up."""

    __slots__ = ("center", "scale", "coefficients")

    def __init__(self, center: float, scale: float, coefficients: Sequence[float]) -> None:
        self.center = center
        self.scale = scale
        self.coefficients = tuple(coefficients)

    def __call__(self, v: np.ndarray) -> np.ndarray:
        t = v - self.center
        if self.scale != 1.0:
            t *= self.scale
        return _horner(t, self.coefficients)

    def at(self, v: float) -> float:
        """The polynomial at one Python float (the same operations as ``__call__``)."""
        t = v - self.center
        if self.scale != 1.0:
            t *= self.scale
        c = self.coefficients
        acc = c[-1]
        for k in range(len(c) - 2, -1, -1):
            acc = acc * t + c[k]
        return acc


# Below this many elements, Horner's rule runs on Python floats: the same IEEE operations in the
# same order (so the same results), without a NumPy call per coefficient.
_SMALL = 32


def _horner(t: np.ndarray, c: Sequence[float]) -> np.ndarray:
    """``sum_k c[k] * t**k`` by Horner's rule."""
    if t.size <= _SMALL:
        values = []
        for point in t.tolist():
            acc = c[-1]
            for k in range(len(c) - 2, -1, -1):
                acc = acc * point + c[k]
            values.append(acc)
        return np.array(values, dtype=np.float64).reshape(t.shape)
    acc = np.full(t.shape, c[-1])
    for k in range(len(c) - 2, -1, -1):  # in place: no temporary per coefficient
        acc *= t
        acc += c[k]
    return acc


# ----------------------------------------------------------------------------------------------
# Fitted coefficients (see the module docstring)

_ERF_A = _Poly(  # [0, 0.7119140625], degree 11, max relative error 1.35e-17
    0.0, 1.0, (
        0.1283791670955126, -0.376126389031839, 0.11283791670960237, -0.026866170645945448,
        0.005223977632553116, -0.0008548327394454463, 0.00012055344919113318,
        -1.4925881877681749e-05, 1.646443915057423e-06, -1.6367040021202355e-07,
        1.4563003193686295e-08, -9.74867517317498e-10,
    ),
)
_ERF_B = _Poly(  # [-0.15625, 0.25], degree 15, max relative error 3.37e-17
    0.0, 1.0, (
        -2.4801226956107934e-17, 0.4151074974205947, -0.4151074974205947, 0.13836916580686492,
        0.06918458290343196, -0.06918458290343915, 0.00461230552701111, 0.01515471816044986,
        -0.004777030737507654, -0.0018851883853760122, 0.0012262883424621587, 8.55227458790591e-05,
        -0.0002000753927070498, 1.8794550948358133e-05, 2.3842807385930878e-05,
        -6.684170015167622e-06,
    ),
)
_ERFCX_1 = _Poly(  # [1.25, 2.0], degree 13, max relative error 7.06e-17
    1.625, 2.6666666666666665, (
        0.30226120936348594, -0.054761338749068744, 0.009135291766524877, -0.0014226632275740599,
        0.00020885750020576015, -2.9115790880800986e-05, 3.87605016290597e-06,
        -4.949828376132108e-07, 6.086023071422756e-08, -7.226796103902441e-09,
        8.303710360237141e-10, -9.267226924984197e-11, 1.0452172994729998e-11,
        -1.098083044955093e-12,
    ),
)
_ERFCX_2 = _Poly(  # [2.0, 3.0], degree 14, max relative error 2.98e-17
    2.5, 2.0, (
        0.2108063640611436, -0.03717367339489736, 0.006234499271664012, -0.0010001961727617407,
        0.00015418980098363226, -2.2924716795978048e-05, 3.297184743967987e-06,
        -4.5991373725506856e-07, 6.235101214394428e-08, -8.231167434656101e-09,
        1.0597630674389377e-09, -1.3312028998529707e-10, 1.6399633720454795e-11,
        -2.0778353791768046e-12, 2.378028737980217e-13,
    ),
)
_ERFCX_3 = _Poly(  # [3.0, 4.5], degree 15, max relative error 9.64e-17
    3.75, 1.3333333333333333, (
        0.14558972127503853, -0.027342193149542646, 0.004994299984121085, -0.0008890099608527122,
        0.00015447661307723608, -2.624105146984624e-05, 4.363379243358943e-06,
        -7.110249951405695e-07, 1.1366061964797803e-07, -1.784012774838343e-08,
        2.7519885950191597e-09, -4.174548788354155e-10, 6.20741701728433e-11,
        -9.123276909294657e-12, 1.453065889172014e-12, -2.0801786848721946e-13,
    ),
)
_ERFCX_U = _Poly(  # [0, 0.04938271604938271], degree 12, max relative error 1.87e-17
    0.024691358024691357, 40.5, (
        0.5574675711302604, -0.00649228265654447, 0.0002171843331422626, -1.162366886763684e-05,
        8.379009602825075e-07, -7.486116268859144e-08, 7.894285478546508e-09,
        -9.516641676724825e-10, 1.2823649964177998e-10, -1.8901299231040642e-11,
        3.021286328536208e-12, -5.94686310198748e-13, 1.1517095300211867e-13,
    ),
)
_LGAMMA_1P_A = _Poly(  # [0, 0.5], degree 15, max relative error 7.71e-17
    0.25, 4.0, (
        0.5241164609163369, -0.04613959610920402, 0.0059103586270622685, -0.0008792719886533766,
        0.00014124530459282624, -2.3739067417119417e-05, 4.108320137684812e-06,
        -7.256005126246335e-07, 1.3008264385519254e-07, -2.3589825708374036e-08,
        4.318032224541311e-09, -7.962719156411604e-10, 1.465393095733927e-10,
        -2.7259129938870845e-11, 5.9117945793367924e-12, -1.1320899699473977e-12,
    ),
)
_LGAMMA_1P_B = _Poly(  # [0.5, 1.0], degree 13, max relative error 3.19e-17
    0.75, 4.0, (
        0.4501393121092563, -0.02987039665631069, 0.002782527949906843, -0.00029771809109741903,
        3.4282696978273864e-05, -4.127142703291803e-06, 5.116049120747068e-07,
        -6.473180544208776e-08, 8.314597620896944e-09, -1.080312946645085e-09,
        1.4143125455000145e-10, -1.867185534900262e-11, 2.641655508540107e-12,
        -3.552284917279578e-13,
    ),
)
_LGAMMA_2P = _Poly(  # [0, 1.0], degree 15, max relative error 7.40e-17
    0.5, 2.0, (
        0.5693657409458384, 0.13379089969940483, -0.011201460674348324, 0.0013596251892752163,
        -0.0001934488933187827, 3.0034310261674212e-05, -4.922800999547565e-06,
        8.367204179927922e-07, -1.4591086261843015e-07, 2.5929058333014754e-08,
        -4.675636082376625e-09, 8.524489814693911e-10, -1.5518456793140437e-10,
        2.8675246415082124e-11, -6.2822093237940035e-12, 1.1967979344510877e-12,
    ),
)
_DIGAMMA_A = _Poly(  # [1, 1.5], degree 16, max relative error 3.94e-17
    1.25, 4.0, (
        1.0747589096650145, -0.1447916204558852, 0.025014951933928394, -0.004684679197782374,
        0.000907291021582506, -0.00017849350501002685, 3.5390226601520864e-05,
        -7.045186005016154e-06, 1.4054849839207428e-06, -2.8070649050506574e-07,
        5.60996211201629e-08, -1.1220966918514588e-08, 2.242774621200651e-09, -4.4232939728098e-10,
        8.896720082084607e-11, -2.1316779520584247e-11, 4.14530448994913e-12,
    ),
)
_DIGAMMA_B = _Poly(  # [1.5, 2.0], degree 14, max relative error 1.31e-17
    1.75, 4.0, (
        0.8581832171262995, -0.08156365696702651, 0.009820007084502416, -0.001285712286805987,
        0.00017499865020834406, -2.4306688010317735e-05, 3.4144985729400355e-06,
        -4.828165421125092e-07, 6.853964347422179e-08, -9.753364085589321e-09,
        1.3898794880323062e-09, -1.977516978954208e-10, 2.8245894069151958e-11,
        -4.3630922498067134e-12, 6.169926189120525e-13,
    ),
)

_ERX = 0.8427007929497149  # erf(1) rounded to float64
# The positive zero of digamma, 1.46163214496836234126..., as a sum of two float64s.
_DIGAMMA_ROOT_HI = 1.4616321449683622
_DIGAMMA_ROOT_LO = 9.549995429965697e-17


# ----------------------------------------------------------------------------------------------
# Plumbing: float64 views in, the input's dtype out; interval selection


def _prepare(x: np.ndarray | float) -> tuple[np.ndarray, tuple[int, ...], np.dtype]:
    """``x`` as a flat float64 array, its shape and the dtype of the result."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind in "fV" else np.dtype(np.float64)
    return x.astype(np.float64, copy=False).reshape(-1), x.shape, dtype


def _finish(values: np.ndarray, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return values.reshape(shape).astype(dtype, copy=False)


def _pieces(key: np.ndarray, edges: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(interval, positions)`` for each interval of ``edges`` that holds elements of ``key``.

    Interval ``j`` is ``[edges[j - 1], edges[j])``; NaN falls in the last one.
    """
    region = np.searchsorted(edges, key, side="right")
    if region.size == 1:
        return [(int(region[0]), np.zeros(1, np.intp))]
    out = []
    for j in range(len(edges) + 1):
        positions = np.flatnonzero(region == j)
        if positions.size:
            out.append((j, positions))
    return out


def _exp_square(y: np.ndarray, factor: float) -> np.ndarray:
    """``exp(factor * y**2)`` (``factor`` a power of two times +-1) without the error of rounding
    ``y**2``, which would be amplified by the size of the exponent.

    Veltkamp's split gives ``y = hi + lo`` with ``hi`` on 26 bits, so ``hi * hi`` is exact and
    ``y**2 = hi**2 + e`` with ``e = 2 hi lo + lo**2`` small:
    ``exp(f y**2) = exp(f hi**2) * (1 + expm1(f e))``.
    """
    y = np.minimum(np.abs(y), 40.0)  # exp(+-1600) is already 0 or inf; NaN stays NaN
    c = y * 134217729.0  # 2**27 + 1
    hi = c - (c - y)
    lo = y - hi
    base = np.exp(factor * (hi * hi))
    return base + base * np.expm1(factor * (2.0 * hi * lo + lo * lo))


def _exp_neg_square(y: np.ndarray) -> np.ndarray:
    """``exp(-y**2)``, accurately (see :func:`_exp_square`)."""
    return _exp_square(y, -1.0)


# ----------------------------------------------------------------------------------------------
# erf, erfc, erfcx

_ERF_EDGES = np.array([0.84375, 1.25, 2.0, 3.0, 4.5])


def _erfcx_tail(y: np.ndarray, region: int) -> np.ndarray:
    """``erfcx(y) = exp(y**2) erfc(y)`` for ``y >= 1.25`` (``region`` of ``_ERF_EDGES``)."""
    if region == 2:
        return _ERFCX_1(y)
    if region == 3:
        return _ERFCX_2(y)
    if region == 4:
        return _ERFCX_3(y)
    with np.errstate(divide="ignore", over="ignore"):
        u = 1.0 / (y * y)  # 0 for huge or infinite y
        return _ERFCX_U(u) / y


def _erf_or_erfc(x: np.ndarray, complement: bool) -> np.ndarray:
    """``erf(x)``, or ``erfc(x)`` if ``complement``, for a flat float64 array."""
    if x.size <= _SMALL:
        return np.array([_erf_or_erfc_scalar(v, complement) for v in x.tolist()], np.float64)
    out = np.empty_like(x)
    for region, index in _pieces(np.abs(x), _ERF_EDGES):
        xs = x[index]
        if region == 0:
            r = xs * _ERF_A(xs * xs)  # erf(x) = x + r
            if not complement:
                value = xs + r
            else:
                # 1 - erf(x), regrouped above 0.25 so that nothing cancels: x - 0.5 is exact.
                value = np.where(xs < 0.25, 1.0 - (xs + r), 0.5 - ((xs - 0.5) + r))
        elif region == 1:
            d = _ERF_B(np.abs(xs) - 1.0)  # erf(|x|) = ERX + d; 1 - ERX is exact
            if not complement:
                value = np.copysign(_ERX + d, xs)
            else:
                value = np.where(xs > 0, (1.0 - _ERX) - d, (1.0 + _ERX) + d)
        else:
            y = np.abs(xs)
            tail = _exp_neg_square(y) * _erfcx_tail(y, region)  # erfc(|x|)
            if not complement:
                value = np.copysign(1.0 - tail, xs)
            else:
                value = np.where(xs > 0, tail, 2.0 - tail)
        out[index] = value
    return out


def _erf_or_erfc_scalar(x: float, complement: bool) -> float:
    """:func:`_erf_or_erfc` for one Python float, step for step: small arrays (GELU on a few
    values) would otherwise pay a NumPy call per operation."""
    y = abs(x)
    if y < 0.84375:
        r = x * _ERF_A.at(x * x)
        if not complement:
            return x + r
        return 1.0 - (x + r) if x < 0.25 else 0.5 - ((x - 0.5) + r)
    if y < 1.25:
        d = _ERF_B.at(y - 1.0)
        if not complement:
            return math.copysign(_ERX + d, x)
        return (1.0 - _ERX) - d if x > 0 else (1.0 + _ERX) + d
    # The tail (NaN included: every comparison above was false).
    if y < 2.0:
        scaled = _ERFCX_1.at(y)
    elif y < 3.0:
        scaled = _ERFCX_2.at(y)
    elif y < 4.5:
        scaled = _ERFCX_3.at(y)
    else:
        scaled = _ERFCX_U.at(1.0 / (y * y)) / y
    clipped = min(y, 40.0)  # as in _exp_square
    c = clipped * 134217729.0
    hi = c - (c - clipped)
    lo = clipped - hi
    base = math.exp(-(hi * hi))
    tail = (base + base * math.expm1(-(2.0 * hi * lo + lo * lo))) * scaled
    if not complement:
        return math.copysign(1.0 - tail, x)
    return tail if x > 0 else 2.0 - tail


def erf(x: np.ndarray | float) -> np.ndarray:
    """The error function ``2 / sqrt(pi) * integral_0^x exp(-t**2) dt``, element-wise."""
    flat, shape, dtype = _prepare(x)
    return _finish(_erf_or_erfc(flat, complement=False), shape, dtype)


def erfc(x: np.ndarray | float) -> np.ndarray:
    """The complementary error function ``1 - erf(x)``, accurate in the tail (no cancellation:
    ``erfc(26)`` is about ``5.6e-296``, to full relative precision)."""
    flat, shape, dtype = _prepare(x)
    return _finish(_erf_or_erfc(flat, complement=True), shape, dtype)


def erfcx(x: np.ndarray | float) -> np.ndarray:
    """The scaled complementary error function ``exp(x**2) * erfc(x)``, element-wise."""
    flat, shape, dtype = _prepare(x)
    out = np.empty_like(flat)
    for region, index in _pieces(np.abs(flat), _ERF_EDGES):
        xs = flat[index]
        if region < 2:
            value = _exp_square(xs, 1.0) * _erf_or_erfc(xs, complement=True)
        else:
            y = np.abs(xs)
            tail = _erfcx_tail(y, region)
            with np.errstate(over="ignore", invalid="ignore"):
                # erfcx(-y) = 2 exp(y**2) - erfcx(y), +inf once exp(y**2) overflows (below
                # -26.7, as PyTorch's)
                value = np.where(xs > 0, tail, 2.0 * _exp_square(y, 1.0) - tail)
                value = np.where(xs < -26.7, np.inf, value)
        out[index] = value
    return _finish(out, shape, dtype)


def log_ndtr(x: np.ndarray | float) -> np.ndarray:
    """``log(Phi(x))``, the log of the standard normal CDF, accurate in both tails.

    Below ``-1.25 sqrt(2)`` it is ``log(erfcx(-x / sqrt(2)) / 2) - x**2 / 2`` (no underflow);
    above ``1.25 sqrt(2)``, ``log1p(-exp(-x**2 / 2) erfcx(x / sqrt(2)) / 2)`` with ``exp(-x**2
    / 2)`` taken from ``x`` itself, so the rounding of ``x / sqrt(2)`` is not amplified.
    """
    flat, shape, dtype = _prepare(x)
    out = np.empty_like(flat)
    edge = 1.25 / _SQRT1_2
    for region, index in _pieces(flat, np.array([-edge, 0.0, edge])):
        xs = flat[index]
        z = np.abs(xs) * _SQRT1_2
        if region == 0:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # (z * z as PyTorch's t * t: its gradient exp(-(log_ndtr(x) + x**2 / 2))
                # cancels the two large terms, and takes the rounding of this one along)
                value = np.log(0.5 * _erfcx_above(z)) - z * z
            value = np.where(np.isneginf(xs), -np.inf, value)
        elif region == 1:
            value = np.log(0.5 * _erf_or_erfc(z, complement=True))
        elif region == 2:
            value = np.log1p(-0.5 * _erf_or_erfc(z, complement=True))
        else:
            value = np.log1p(-0.5 * _exp_square(xs, -0.5) * _erfcx_above(z))
        out[index] = value
    return _finish(out, shape, dtype)


def _erfcx_above(y: np.ndarray) -> np.ndarray:
    """``erfcx(y)`` for ``y >= 1.25`` (any mix of the tail intervals)."""
    out = np.empty_like(y)
    for region, index in _pieces(y, _ERF_EDGES):
        out[index] = _erfcx_tail(y[index], max(region, 2))
    return out



_SQRT1_2 = math.sqrt(0.5)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ----------------------------------------------------------------------------------------------
# erfinv

_WINITZKI_A = 0.147


def erfinv(y: np.ndarray | float) -> np.ndarray:
    """The inverse error function: ``erf(erfinv(y)) = y`` on [-1, 1] (+-inf at +-1, NaN
    outside)."""
    flat, shape, dtype = _prepare(y)
    a = np.abs(flat)
    with np.errstate(divide="ignore", invalid="ignore"):
        one_minus = 1.0 - a  # exact for a >= 0.5, where it matters
        log_term = np.log(one_minus * (1.0 + a))  # ln(1 - y**2) <= 0
        # Winitzki's approximation (relative error below 2e-3).
        b = 2.0 / (math.pi * _WINITZKI_A) + 0.5 * log_term
        x = np.sqrt(np.sqrt(b * b - log_term / _WINITZKI_A) - b)
        x = np.where(a < 1.0, x, 0.0)  # keep the iteration finite; fixed below
        tail = a > 0.5
        for _ in range(3):  # the error goes 2e-3 -> ~1e-8 -> ~1e-16 (and a margin in the tails)
            # Halley's method on f(x) = erf(x) - a, with f'' = -2 x f'.
            residual = np.where(
                tail,
                one_minus - _erf_or_erfc(x, complement=True),
                _erf_or_erfc(x, complement=False) - a,
            )
            slope = _TWO_OVER_SQRT_PI * np.exp(-(x * x))
            x = x - residual / (slope + x * residual)
    x = np.where(a == 1.0, np.inf, x)
    x = np.where(a > 1.0, np.nan, x)
    return _finish(np.copysign(x, flat), shape, dtype)


# ----------------------------------------------------------------------------------------------
# expit


def expit(x: np.ndarray | float) -> np.ndarray:
    """The logistic sigmoid ``1 / (1 + exp(-x))``, element-wise, never overflowing.

    With ``e = exp(-|x|)`` (at most 1) it is ``1 / (1 + e)`` for ``x >= 0`` and ``e / (1 + e)``
    below: one exponential, one division and no boolean indexing, so small arrays stay cheap.
    Unlike the other functions here it computes in the input's dtype (it is on the hot path of
    training): within 1.5 ulp in float64, about 3 ulp in float32 (NumPy's float32 ``exp``);
    float16 in float32, rounded once.
    """
    x = np.asarray(x)
    if x.dtype.kind not in "fV":
        x = x.astype(np.float64)
    elif x.dtype == np.float16:
        # Half precision is computed in float32 and rounded once, as PyTorch's kernel does.
        return expit(x.astype(np.float32)).astype(np.float16)
    e = np.exp(-np.abs(x))
    return np.asarray(np.where(x >= 0, 1.0, e) / (e + 1.0))  # asarray: 0-d stays an array


# ----------------------------------------------------------------------------------------------
# lgamma, digamma


def _bernoulli(count: int) -> list[Fraction]:
    """The Bernoulli numbers B_0 .. B_{count-1} (B_1 = +1/2), by the Akiyama-Tanigawa
    algorithm, exactly."""
    numbers = []
    row: list[Fraction] = []
    for m in range(count):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        numbers.append(row[0])
    return numbers


_B = _bernoulli(20)
# Stirling: lgamma(x) = (x - 1/2) log x - x + log(2 pi) / 2 + sum_k B_2k / (2k (2k - 1) x^(2k-1))
_STIRLING = tuple(float(_B[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, 10))
# digamma(x) = log x - 1 / (2x) - sum_k B_2k / (2k x^2k)
_DIGAMMA_ASYMPTOTIC = tuple(float(_B[2 * k] / (2 * k)) for k in range(1, 9))
_HALF_LOG_2PI_MINUS_HALF = 0.5 * math.log(2.0 * math.pi) - 0.5
_LOG_PI = math.log(math.pi)


def _series(z: np.ndarray, coefficients: Sequence[float]) -> np.ndarray:
    """``sum_k coefficients[k] * z**k``."""
    return _horner(z, coefficients)


def _lgamma_1p(z: np.ndarray) -> np.ndarray:
    """``lgamma(1 + z)`` for ``z`` in [0, 1], as ``z (z - 1) Q(z)``: exact zeros at 0 and 1."""
    out = np.empty_like(z)
    for region, index in _pieces(z, np.array([0.5])):
        zs = z[index]
        out[index] = zs * (zs - 1.0) * (_LGAMMA_1P_A(zs) if region == 0 else _LGAMMA_1P_B(zs))
    return out


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """``lgamma(x)`` for ``x > 0`` (and NaN)."""
    out = np.empty_like(x)
    for region, index in _pieces(x, np.array([1.0, 2.0, 3.0, 8.0])):
        xs = x[index]
        if region == 0:  # lgamma(x) = lgamma(1 + x) - log(x), without rounding 1 + x
            with np.errstate(divide="ignore"):
                value = _lgamma_1p(xs) - np.log(xs)
        elif region == 1:
            value = _lgamma_1p(xs - 1.0)
        elif region == 2:
            value = (xs - 2.0) * _LGAMMA_2P(xs - 2.0)
        elif region == 3:
            # Down to [2, 3): lgamma(x) = lgamma(x - k) + log((x - 1) ... (x - k)).
            r = xs.copy()
            product = np.ones_like(xs)
            for _ in range(5):
                step = r >= 3.0
                r = np.where(step, r - 1.0, r)
                product = np.where(step, product * r, product)
            value = (r - 2.0) * _LGAMMA_2P(r - 2.0) + np.log(product)
        else:
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                inv = 1.0 / xs
                value = (xs - 0.5) * (np.log(xs) - 1.0) + _HALF_LOG_2PI_MINUS_HALF
                value += inv * _series(inv * inv, _STIRLING)
            value = np.where(np.isposinf(xs), np.inf, value)
        out[index] = value
    return out


def _sin_pi(x: np.ndarray) -> np.ndarray:
    """``sin(pi x)`` with the argument reduced exactly first (0 at every integer)."""
    return np.sin(math.pi * (x - np.round(x))) * np.where(np.round(x) % 2 == 0, 1.0, -1.0)


def lgamma(x: np.ndarray | float) -> np.ndarray:
    """``log(|Gamma(x)|)``, element-wise (inf at 0 and the negative integers)."""
    flat, shape, dtype = _prepare(x)
    negative = flat <= 0
    if not np.any(negative):
        return _finish(_lgamma_positive(flat) + 0.0, shape, dtype)  # + 0.0: no -0.0
    out = np.empty_like(flat)
    positive = ~negative
    out[positive] = _lgamma_positive(flat[positive])
    xs = flat[negative]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # On (-1, 0): Gamma(x) = Gamma(1 + x) / x (1 + x is exact near -1, and near 0 the
        # -log|x| term dominates). Below: the reflection Gamma(x) Gamma(1 - x) = pi / sin(pi x).
        near_zero = _lgamma_positive(1.0 + xs) - np.log(-xs)
        s = np.abs(_sin_pi(xs))
        reflected = _LOG_PI - np.log(s) - _lgamma_positive(1.0 - xs)
    value = np.where(xs > -1.0, near_zero, reflected)
    out[negative] = np.where((s == 0) | np.isinf(xs), np.inf, value)
    return _finish(out + 0.0, shape, dtype)


def _digamma_1_2(v: np.ndarray) -> np.ndarray:
    """``digamma(v)`` for ``v`` in [1, 2], as ``(v - x0) Q(v)`` around its zero ``x0``."""
    out = np.empty_like(v)
    for region, index in _pieces(v, np.array([1.5])):
        vs = v[index]
        q = _DIGAMMA_A(vs) if region == 0 else _DIGAMMA_B(vs)
        out[index] = ((vs - _DIGAMMA_ROOT_HI) - _DIGAMMA_ROOT_LO) * q
    return out


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """``digamma(x)`` for ``x > 0`` (and NaN)."""
    out = np.empty_like(x)
    for region, index in _pieces(x, np.array([1.0, 2.0, 10.0])):
        xs = x[index]
        if region == 0:  # psi(x) = psi(x + 1) - 1 / x
            with np.errstate(divide="ignore", over="ignore"):
                value = _digamma_1_2(xs + 1.0) - 1.0 / xs
        elif region == 1:
            value = _digamma_1_2(xs)
        elif region == 2:
            # Down to [1, 2): psi(x) = psi(x - k) + 1 / (x - 1) + ... + 1 / (x - k).
            r = xs.copy()
            total = np.zeros_like(xs)
            for _ in range(8):
                step = r >= 2.0
                r = np.where(step, r - 1.0, r)
                total += np.where(step, 1.0 / r, 0.0)
            value = _digamma_1_2(r) + total
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                inv = 1.0 / xs
                inv2 = inv * inv
                value = np.log(xs) - 0.5 * inv - inv2 * _series(inv2, _DIGAMMA_ASYMPTOTIC)
        out[index] = value
    return out


def digamma(x: np.ndarray | float) -> np.ndarray:
    """The digamma function ``d/dx log Gamma(x)``, element-wise.

    As PyTorch: ``-inf`` at ``+0``, ``+inf`` at ``-0``, NaN at the negative integers and -inf.
    """
    flat, shape, dtype = _prepare(x)
    nonpositive = flat <= 0
    if not np.any(nonpositive):
        return _finish(_digamma_positive(flat), shape, dtype)
    out = np.empty_like(flat)
    positive = ~nonpositive
    out[positive] = _digamma_positive(flat[positive])
    xs = flat[nonpositive]
    # Reflection: psi(1 - x) - psi(x) = pi / tan(pi x).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = xs - np.round(xs)
        value = _digamma_positive(1.0 - xs) - math.pi / np.tan(math.pi * r)
    value = np.where(r == 0, np.nan, value)
    value = np.where(xs == 0, np.copysign(np.inf, -np.copysign(1.0, xs)), value)
    out[nonpositive] = value
    return _finish(out, shape, dtype)


# ----------------------------------------------------------------------------------------------
# polygamma

# Euler-Maclaurin tail of the Hurwitz zeta function: B_2j / (2j)!
_EULER_MACLAURIN = tuple(float(_B[2 * j] / math.factorial(2 * j)) for j in range(1, 10))


def _hurwitz_zeta(s: int, q: np.ndarray) -> np.ndarray:
    """``zeta(s, q) = sum_k (q + k)**-s`` for an integer ``s >= 2`` and ``q > 0``.

    The first terms are summed until ``q + m >= 10 + s``; the rest is the Euler-Maclaurin
    formula ``a**(1-s) / (s-1) + a**-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2) a**(1-s-2j)``
    with ``a = q + m``.
    """
    start = 10.0 + s
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        shift = np.ceil(np.clip(start - q, 0.0, start + 1.0))
        total = np.zeros_like(q)
        for k in range(int(np.nanmax(shift, initial=0.0))):
            total += np.where(k < shift, (q + k) ** -s, 0.0)
        a = q + shift
        inv = 1.0 / a
        power = inv ** (s - 1)  # a**(1-s)
        total += power * inv * 0.5 + power / (s - 1)
        term = power * inv  # a**-s
        rising = float(s)  # s (s+1) ... (s+2j-2)
        inv2 = inv * inv
        for j, coefficient in enumerate(_EULER_MACLAURIN, start=1):
            term = term * inv if j == 1 else term * inv2
            total += (coefficient * rising) * term
            rising *= (s + 2 * j - 1) * (s + 2 * j)
    return np.where(np.isposinf(q), 0.0, total)


def _cot_derivative_polynomial(n: int) -> list[int]:
    """Integer coefficients of ``P_n`` with ``d^n/dx^n cot(pi x) = pi**n P_n(cot(pi x))``.

    ``P_0(c) = c`` and ``P_(k+1)(c) = -(1 + c**2) P_k'(c)``.
    """
    poly = [0, 1]
    for _ in range(n):
        derivative = [k * poly[k] for k in range(1, len(poly))]
        poly = [0] * (len(derivative) + 2)
        for k, c in enumerate(derivative):
            poly[k] -= c
            poly[k + 2] -= c
    return poly


def polygamma(n: int, x: np.ndarray | float) -> np.ndarray:
    """The ``n``-th derivative of digamma, element-wise (``n >= 0``; ``n = 0`` is digamma).

    At the poles (0 and the negative integers) it is inf for odd ``n``; for even ``n``, -inf at 0
    and NaN at the negative integers (where the sign is undefined).
    """
    if n == 0:
        return digamma(x)
    flat, shape, dtype = _prepare(x)
    sign = 1.0 if n % 2 else -1.0
    scale = sign * math.factorial(n)
    out = np.empty_like(flat)
    positive = flat > 0
    out[positive] = scale * _hurwitz_zeta(n + 1, flat[positive])
    rest = ~positive
    if np.any(rest):
        xs = flat[rest]
        # Reflection: psi_n(x) = (-1)**n psi_n(1 - x) - pi**(n+1) P_n(cot(pi x)).
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r = xs - np.round(xs)
            cot = 1.0 / np.tan(math.pi * r)
            value = (-1.0) ** n * scale * _hurwitz_zeta(n + 1, 1.0 - xs)
            coefficients = [float(c) for c in _cot_derivative_polynomial(n)]
            value -= math.pi ** (n + 1) * _series(cot, coefficients)
        pole = np.inf if n % 2 else np.nan
        value = np.where(r == 0, pole, value)
        value = np.where(xs == 0, sign * np.inf, value)
        out[rest] = np.where(np.isneginf(xs), np.nan, value)
    return _finish(out, shape, dtype)


# ----------------------------------------------------------------------------------------------
# trigamma as PyTorch computes it


def trigamma(x: np.ndarray | float) -> np.ndarray:
    """``polygamma(1, x)`` by PyTorch's algorithm (its ``trigamma`` in ATen's Math.h), in its
    precision: six steps of the recurrence, a short asymptotic series, and the reflection
    formula below 0.5, in float32 for float32 and float16 inputs (rounded to float16 once).

    It is less accurate than :func:`polygamma` (about 5e-10 relative in float64, and finite
    where ``sin(pi x)`` does not vanish exactly at the negative integers), but it is what
    PyTorch returns, and the derivative of ``digamma`` there: chainrule gives the same numbers.
    """
    x = np.asarray(x)
    out_dtype = x.dtype if x.dtype.kind in "fV" else np.dtype(np.float64)
    work = np.float64 if out_dtype == np.float64 else np.float32
    x = x.astype(work)
    pi = work(math.pi)
    one = work(1)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        reflect = x < work(0.5)
        sin_pi_x = np.sin(pi * x)
        result = np.where(reflect, -(pi * pi) / (sin_pi_x * sin_pi_x), work(0)).astype(work)
        x = np.where(reflect, one - x, x)
        for _ in range(6):
            result = result + one / (x * x)
            x = x + one
        ixx = one / (x * x)
        sixth, thirtieth, fortysecond = work(1.0 / 6), work(1.0 / 30), work(1.0 / 42)
        tail = (one + one / (work(2) * x) + ixx * (sixth - ixx * (thirtieth - ixx * fortysecond)))
        result = result + tail / x
        result = np.where(reflect, -result, result)
    return np.asarray(result).astype(out_dtype, copy=False)
