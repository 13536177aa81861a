"""The sampling ops of ``torch.distributions``, with PyTorch's nodes: ``_standard_gamma``
(``StandardGammaBackward0``: implicit reparameterisation, its derivative is
``_standard_gamma_grad``), ``_sample_dirichlet``, ``_dirichlet_grad``, ``poisson``
(``PoissonBackward0``, a zero derivative) and ``binomial``.

The draws are PyTorch's (its CPU kernels' scalar samplers on its random stream). The implicit
gradients ``d sample / d concentration = -(d cdf / d alpha) / pdf`` are the approximations
PyTorch computes (Jankowiak and Obermeyer, "Pathwise derivatives beyond the
reparameterization trick", 2018): a Taylor series for small samples, Rice saddle-point
expansions for large concentrations, and fitted rational corrections elsewhere; they are
evaluated here in float64, element-wise on arrays.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _special, _strides
from .._dtype import SCALAR_TYPE_NAMES, from_numpy_dtype
from .._finfo import finfo
from .._tensor import Tensor, wrap
from . import random_streams
from ._registry import KEEP, op, tensor_method, zero_derivative
from .creation import PER_EXAMPLE_DRAWS, Generator, _format_scalar, _gen
from .inplace import apply_inplace, check_inplace, check_inplace_draw
from .pointwise import _edges_of_inputs_needing_grad, _not_implemented_node
from .reduction import topk

__all__ = [
    "_standard_gamma",
    "_standard_gamma_grad",
    "_sample_dirichlet",
    "_dirichlet_grad",
    "poisson",
    "binomial",
    "multinomial",
]


def _float_or_double(a: np.ndarray, kernel: str) -> None:
    """PyTorch's CPU kernels of these ops exist for float and double only."""
    if a.dtype not in (np.float32, np.float64):
        name = SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


# The scalar samplers of PyTorch's CPU kernels (aten/src/ATen/native/Distributions.h and .cpp),
# element after element in double with the C library's functions, drawing from the generator
# PyTorch's 53-bit double uniforms and its double normals (whose second value is cached).

_FLOAT_ONE_THIRD = float(np.float32(1.0 / 3.0))  # (the kernels' 1.0f / 3.0f and 0.0331f)
_FLOAT_0331 = float(np.float32(0.0331))


def _c_log(x: float) -> float:
    """C's ``log``: -inf at 0, NaN below (Python's raises)."""
    if x > 0 or x != x:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _c_pow(base: float, exponent: float) -> float:
    """C's ``pow`` for a base in (0, 1]: infinity on overflow (Python's raises)."""
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return math.inf


def _sample_gamma(alpha: float, single: bool, rng: Any) -> float:
    """One standard gamma draw as PyTorch's ``sample_gamma`` (Marsaglia and Tsang's
    rejection method, small concentrations boosted by one): in double, but for the steps on
    ``alpha`` itself, which a float32 concentration (``single``) takes in float32."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        if single:
            exponent = float(np.float32(1.0) / np.float32(alpha))
            alpha = float(np.float32(alpha) + np.float32(1.0))
        else:
            exponent = 1.0 / alpha
            alpha = alpha + 1.0
        scale *= _c_pow(1.0 - random_streams.scalar_uniform(rng), exponent)
    if single:
        d = float(np.float32(alpha) - np.float32(_FLOAT_ONE_THIRD))
    else:
        d = alpha - _FLOAT_ONE_THIRD
    root = math.sqrt(9.0 * d) if 9.0 * d >= 0 else math.nan
    c = 1.0 / root if root != 0 else math.inf
    while True:
        while True:
            x = random_streams.scalar_normal(rng)
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1.0 - random_streams.scalar_uniform(rng)
        xx = x * x
        if u < 1.0 - _FLOAT_0331 * xx * xx:
            return scale * d * v
        if _c_log(u) < 0.5 * xx + d * (1.0 - v + _c_log(v)):
            return scale * d * v


def _c_int64(value: float) -> float:
    """``static_cast<int64_t>`` of a double on x86: int64's minimum when out of range (NaN,
    infinities), as a float."""
    return float(int(value)) if -(2.0**63) <= value < 2.0**63 else -(2.0**63)


def _sample_poisson(rate: float, rng: Any) -> float:
    """One Poisson draw as PyTorch's ``sample_poisson``: Hoermann's transformed rejection
    (1993) from rate 10, multiplied uniforms below, converted to int64."""
    if rate >= 10:
        slam = math.sqrt(rate)
        loglam = _c_log(rate)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = random_streams.scalar_uniform(rng) - 0.5
            v = random_streams.scalar_uniform(rng)
            us = 0.5 - abs(u)
            if us == 0:  # (k = floor(-inf): rejected)
                continue
            k = math.floor((2 * a / us + b) * u + rate + 0.43) if rate < math.inf else math.nan
            if us >= 0.07 and v <= vr:
                return _c_int64(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            bound = -rate + k * loglam - math.lgamma(k + 1)
            if _c_log(v) + _c_log(invalpha) - _c_log(a / (us * us) + b) <= bound:
                return _c_int64(k)
    if rate == 0:
        return 0.0
    enlam = math.exp(-rate)
    count = 0
    product = 1.0
    while True:
        product *= random_streams.scalar_uniform(rng)
        if not product > enlam:
            return float(count)
        count += 1


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_tail(k: float) -> float:
    """The tail of Stirling's series of ``log(k!)`` (tabulated up to 9)."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _sample_binomial(count: float, prob: float, single: bool, rng: Any) -> float:
    """One binomial draw as PyTorch's ``sample_binomial``: BTRS (Hoermann's transformed
    rejection) when the mean of the rarer outcome is 10 or more, else inversion by
    geometric waiting times; the steps PyTorch takes in the tensor's precision (float32
    for a float32 tensor) taken so."""
    scalar = np.float32 if single else np.float64
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if float(scalar(count) * scalar(prob)) >= 10.0:
            return _btrs(count, prob, scalar, rng)
        return _binomial_inversion(count, prob, scalar, rng)
    if prob > 0.5:
        qprob = float(scalar(1.0 - prob))
        if float(scalar(count) * scalar(qprob)) >= 10.0:
            return float(scalar(count) - scalar(_btrs(count, qprob, scalar, rng)))
        return float(scalar(count) - scalar(_binomial_inversion(count, qprob, scalar, rng)))
    return math.nan  # (a NaN probability)


def _binomial_inversion(count: float, prob: float, scalar: Any, rng: Any) -> float:
    if count != count:
        return math.nan  # (PyTorch's loop never ends: no waiting-time sum exceeds NaN)
    with np.errstate(all="ignore"):
        logprob = float(np.log1p(-scalar(prob)))
    geom_sum = 0.0
    num_geom = 0.0
    while True:
        log_u = _c_log(random_streams.scalar_uniform(rng))
        geom = float(np.ceil(log_u / logprob)) if logprob else math.inf
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _btrs(count: float, prob: float, scalar: Any, rng: Any) -> float:
    n, p = scalar(count), scalar(prob)
    with np.errstate(all="ignore"):
        stddev = float(np.sqrt(n * p * (scalar(1) - p)))
        c = float(n * p) + 0.5
        r = float(p / (scalar(1) - p))
        m = float(np.floor((n + scalar(1)) * p))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * stddev
    while True:
        u = random_streams.scalar_uniform(rng) - 0.5
        v = random_streams.scalar_uniform(rng)
        us = 0.5 - abs(u)
        if us == 0:  # (k = floor(-inf): rejected)
            continue
        with np.errstate(all="ignore"):
            k = float(scalar(np.floor((2 * a / us + b) * u + c)))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _c_log(v * alpha / (a / (us * us) + b))
        count_plus_1 = float(n + scalar(1))
        count_minus_k_plus_1 = float(n - scalar(k) + scalar(1))
        bound = (
            (m + 0.5) * _c_log((m + 1) / (r * (count - m + 1)))
            + count_plus_1 * _c_log((count - m + 1) / count_minus_k_plus_1)
            + (k + 0.5) * _c_log(r * count_minus_k_plus_1 / float(scalar(k) + scalar(1)))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(float(n - scalar(k)))
        )
        if v <= bound:
            return k


def _draw_gamma(alpha: np.ndarray, generator: Any, dtype: Any = None) -> np.ndarray:
    """Standard gamma draws of concentration ``alpha``, element after element in row-major
    order, as PyTorch's ``_standard_gamma`` kernel (``dtype=float64``: as its Dirichlet
    kernel, which draws in double whatever ``alpha``'s dtype). Each is at least the dtype's
    smallest normal number (a NaN draw too, as ``std::max`` keeps its first argument)."""
    dtype = np.dtype(alpha.dtype if dtype is None else dtype)
    single = dtype == np.float32
    rng = _gen(generator)
    draws = [_sample_gamma(a, single, rng) for a in np.asarray(alpha).ravel().tolist()]
    tiny = np.finfo(dtype).tiny
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.array(draws, np.float64).astype(dtype)
        values = np.where(values > tiny, values, tiny).astype(dtype)
    return values.reshape(np.shape(alpha))


@op("StandardGammaBackward0", promote=KEEP, half_native=True)
def _standard_gamma(self, generator: Generator | None = None):
    """Standard gamma samples (rate 1) of concentration ``self``.

    Example:
        >>> import chainrule as torch
        >>> torch._standard_gamma(torch.tensor([2.0])).shape
        chainrule.Size([1])
    """
    _float_or_double(self, "gamma_cpu")
    return _draw_gamma(self, generator)


@_standard_gamma.derivative("self")
def _(ops, grad, self, result):
    # implicit reparameterisation: d x / d alpha at the drawn x
    return grad * ops.standard_gamma_grad(self, result)


def _digamma64(x: np.ndarray) -> np.ndarray:
    return np.asarray(_special.digamma(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def _gamma_grad_small_x(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Taylor series of the regularised lower incomplete gamma function around x = 0."""
    numer = np.ones_like(x)
    denom = alpha.copy()
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x**alpha
    gamma_pdf = x ** (alpha - 1) * np.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (np.log(x) - _digamma64(alpha)) * gamma_cdf - pow_x_alpha * series2
    result = -gamma_cdf_alpha / gamma_pdf
    return np.where(np.isnan(result), 0.0, result)


def _gamma_grad_large_alpha(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Rice saddle-point expansion (with a polynomial near x = alpha)."""
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = (
        1440 * alpha * alpha
        + 6 * x * (53 - 120 * x)
        - 65 * x * x / alpha
        + alpha * (107 + 3600 * x)
    )
    near_value = numer_1 * numer_2 / (1244160 * alpha**4)
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / (alpha - x) ** 2
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far_value = -stirling * x * term1 / denom
    return np.where(near, near_value, far_value)


_GAMMA_COEFFICIENTS = np.array(
    [
        [
            0.16009398,
            -0.094634809,
            0.025146376,
            -0.0030648343,
            1,
            0.32668115,
            0.10406089,
            0.0014179084,
        ],
        [
            0.53487893,
            0.1298071,
            0.065735949,
            -0.0015649758,
            0.16639465,
            0.020070113,
            -0.0035938915,
            -0.00058392623,
        ],
        [
            0.040121004,
            -0.0065914022,
            -0.0026286047,
            -0.0013441777,
            0.017050642,
            -0.0021309326,
            0.00085092367,
            -1.5247877e-07,
        ],
    ]
)


def _gamma_grad_rational(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """A bivariate rational approximation in log(x / alpha) and log(alpha)."""
    u = np.log(x / alpha)
    v = np.log(alpha)
    c = [
        _GAMMA_COEFFICIENTS[0, i] + u * (_GAMMA_COEFFICIENTS[1, i] + u * _GAMMA_COEFFICIENTS[2, i])
        for i in range(8)
    ]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return np.exp(p / q)


def _gamma_grad_values(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, s = np.broadcast_arrays(np.asarray(alpha, dtype=np.float64), np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        small = _gamma_grad_small_x(s, a)
        large = _gamma_grad_large_alpha(s, a)
        rational = _gamma_grad_rational(s, a)
    return np.where(s < 0.8, small, np.where(a > 8.0, large, rational))


@op("StandardGammaGradBackward0", inputs=("self", "output"), promote=KEEP, half_native=True)
def _standard_gamma_grad(self, output):
    """``d x / d alpha`` of a standard gamma sample ``output`` of concentration ``self``."""
    _float_or_double(self, "_standard_gamma_grad_cpu")
    if self.dtype != output.dtype:
        raise RuntimeError(f"Found dtype {_dtype_name(output)} but expected {_dtype_name(self)}")
    return _gamma_grad_values(self, output).astype(self.dtype)


def _dtype_name(a: np.ndarray) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half"}.get(
        a.dtype.name, a.dtype.name
    )


@_standard_gamma_grad.derivative("self")
def _(ops, grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


@_standard_gamma_grad.derivative("output")
def _(ops, grad):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


@op("NotImplemented", promote=KEEP)
def _sample_dirichlet_draws(self, generator):
    # gamma draws in double, divided by their sum in double, cast, kept in [tiny, 1)
    gammas = _draw_gamma(self, generator, np.float64)
    totals = gammas.sum(-1, keepdims=True)
    out = (gammas / totals).astype(self.dtype)
    below_one = np.nextafter(self.dtype.type(1), self.dtype.type(0))
    return np.minimum(np.maximum(out, np.finfo(self.dtype).tiny), below_one)


_not_implemented_node(_sample_dirichlet_draws, "_sample_dirichlet")


def _sample_dirichlet(input: Any, generator: Generator | None = None) -> Any:
    """Dirichlet samples of concentration ``input`` (along the last dimension)."""
    _float_or_double(input._data, "dirichlet")
    return _edges_of_inputs_needing_grad(_sample_dirichlet_draws(input, generator))


def _digamma_as(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """digamma evaluated in double and rounded to ``dtype`` (PyTorch's digamma_one)."""
    return _digamma64(x).astype(dtype)


def _beta_grad_alpha_small(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Taylor expansion of the Beta gradient in alpha for x near 0."""
    factor = _digamma_as(alpha, x.dtype) - _digamma_as(alpha + beta, x.dtype) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * (i - beta) * x / i
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Taylor expansion of the Beta gradient in beta for x near 0."""
    factor = _digamma_as(alpha + beta, x.dtype) - _digamma_as(beta, x.dtype)
    numer = np.ones_like(x)
    betas = np.ones_like(x)
    dbetas = np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -((1 - x) ** (1 - beta)) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Rice saddle-point expansion for large alpha and beta (a polynomial near the mean)."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta
        + alpha
        * (
            3 * (59 + 180 * beta - 90 * x) * b2
            + alpha
            * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta
                + alpha * (8 * (1 - x) * (135 * beta - 11))
            )
        )
    )
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha**3 * b2 * (1 + 12 * total)
    near_value = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = (
        (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
        * (1 + 1 / (12 * beta) + 1 / (288 * b2))
        / (1 + 1 / (12 * total) + 1 / (288 * total * total))
    )
    term1_num = 2 * alpha * alpha * (x - 1) + alpha * beta * (x - 1) - x * b2
    axbx = alpha * (x - 1) + beta * x
    term1_den = np.sqrt(2 * alpha / beta) * total**1.5 * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))
    term4 = term4_base**-1.5
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    return np.where(near, near_value, stirling * prefactor * term1234)


_DIRICHLET_COEFFICIENTS = np.array(
    [
        [
            [
                [1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
                [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
                [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013],
            ],
            [
                [0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
                [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
                [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05],
            ],
            [
                [-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
                [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
                [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05],
            ],
        ],
        [
            [
                [1, -0.02924021934, -0.04438342661, 0.007285809825],
                [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
                [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149],
            ],
            [
                [0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
                [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
                [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05],
            ],
            [
                [0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
                [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
                [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06],
            ],
        ],
    ]
)


def _dirichlet_grad_rational(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """A rational correction (in log x, log(alpha / x), log(total)) to an analytic
    approximation."""
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    pow_u = [np.ones_like(u), u, u * u]
    pow_a = [np.ones_like(a), a, a * a]
    p = np.zeros_like(x)
    q = np.zeros_like(x)
    c = _DIRICHLET_COEFFICIENTS
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            p = p + ua * (
                c[0, i, j, 0] + b * (c[0, i, j, 1] + b * (c[0, i, j, 2] + b * c[0, i, j, 3]))
            )
            q = q + ua * (
                c[1, i, j, 0] + b * (c[1, i, j, 1] + b * (c[1, i, j, 2] + b * c[1, i, j, 3]))
            )
    approx = x * (_digamma64(total) - _digamma64(alpha)) / (total - alpha)
    return p / q * approx


@op("NotImplemented", inputs=("x", "alpha", "total"), promote=KEEP)
def _dirichlet_grad_values(x, alpha, total):
    # PyTorch evaluates the branch tests and the small-x series in the input's precision, the
    # saddle-point and rational branches in double
    scalar = np.float32 if x.dtype == np.float32 else np.float64
    xs, a, t = np.broadcast_arrays(*(np.asarray(v, dtype=scalar) for v in (x, alpha, total)))
    beta = t - a
    boundary = t * xs * (1 - xs)
    xs64, a64, t64 = (v.astype(np.float64) for v in (xs, a, t))
    with np.errstate(all="ignore"):
        small_x = _beta_grad_alpha_small(xs, a, beta)
        large_x = -_beta_grad_beta_small(1 - xs, beta, a)
        mid = _beta_grad_alpha_mid(xs64, a64, t64 - a64)
        rational = _dirichlet_grad_rational(xs64, a64, t64)
    out = np.where(
        (xs <= 0.5) & (boundary < 2.5),
        small_x,
        np.where(
            (xs >= 0.5) & (boundary < 0.75), large_x, np.where((a > 6) & (beta > 6), mid, rational)
        ),
    )
    return out.astype(x.dtype)


_not_implemented_node(_dirichlet_grad_values, "_dirichlet_grad")


def _dirichlet_grad(x: Any, alpha: Any, total: Any) -> Any:
    """The implicit gradient of a Dirichlet (Beta) sample ``x`` in ``alpha``, given the total
    concentration ``total``: ``-(d cdf / d alpha) / pdf / (1 - x)`` of the Beta marginal."""
    if tuple(x.shape) != tuple(alpha.shape) or tuple(x.shape) != tuple(total.shape):
        raise RuntimeError("_dirichlet_grad: expected x, alpha and total to have the same shape")
    _float_or_double(x._data, "_dirichlet_grad_cpu")
    return _edges_of_inputs_needing_grad(_dirichlet_grad_values(x, alpha, total))


@op("PoissonBackward0", inputs=("input",), promote=KEEP)
def poisson(input, generator: Generator | None = None):
    """Poisson counts of rate ``input``, in ``input``'s dtype (derivative zero).

    Example:
        >>> import chainrule as torch
        >>> torch.poisson(torch.tensor([0.0]))
        tensor([0.])
    """
    if not np.all(input >= 0):  # (a NaN rate too, as PyTorch's check)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = _gen(generator)
    rates = np.asarray(input, dtype=np.float64).ravel().tolist()
    draws = np.array([_sample_poisson(rate, rng) for rate in rates], np.float64)
    return random_streams.cast_from_double(draws, input.dtype).reshape(np.shape(input))


poisson.derivative("input")(zero_derivative)
_poisson_op = poisson


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson counts of rate ``input``, in ``input``'s dtype (derivative zero).

    Example:
        >>> import chainrule as torch
        >>> torch.poisson(torch.tensor([0.0]))
        tensor([0.])
    """
    if PER_EXAMPLE_DRAWS and type(input) is Tensor:
        # (vmap with "different" randomness, rates not batched: a draw per example; batched
        # rates reach the batching rule through the op)
        return PER_EXAMPLE_DRAWS[-1](_poisson_op, (input,), {"generator": generator})
    return _poisson_op(input, generator)


@op("NotImplemented", inputs=("count", "prob"), promote=KEEP)
def _binomial_draws(count, prob, generator):
    rng = _gen(generator)
    counts, probs = np.broadcast_arrays(count, prob)
    single = count.dtype == np.float32
    draws = [
        _sample_binomial(n, p, single, rng)
        for n, p in zip(counts.ravel().tolist(), probs.ravel().tolist(), strict=True)
    ]
    return np.array(draws, np.float64).astype(count.dtype).reshape(counts.shape)


_not_implemented_node(_binomial_draws, "binomial")


def binomial(count: Any, prob: Any, generator: Generator | None = None) -> Any:
    """Binomial counts: successes in ``count`` trials of probability ``prob``."""
    for name, t in (("count", count), ("prob", prob)):
        if t._data.dtype.kind not in "fV":
            dtype_name = SCALAR_TYPE_NAMES[from_numpy_dtype(t._data.dtype)]
            raise ValueError(
                f"binomial only supports floating-point dtypes for {name}, got: {dtype_name}"
            )
    if prob._data.dtype != count._data.dtype:
        raise RuntimeError(
            f"Found dtype {_dtype_name(prob._data)} but expected {_dtype_name(count._data)}"
        )
    _float_or_double(count._data, "binomial_cpu")
    return _edges_of_inputs_needing_grad(_binomial_draws(count, prob, generator))


# ----------------------------------------------------------------------------------------------
# multinomial: PyTorch's two CPU algorithms, so that a seed gives PyTorch's indices


@tensor_method
def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """Indices drawn from the categorical distribution(s) in the rows of ``input`` (int64),
    as PyTorch's CPU kernels draw them: one sample, or samples without replacement, are the
    largest of ``p / q`` (``q = empty_like(input).exponential_()``, so categories of
    probability 0 come last); several samples with replacement search a double uniform in
    each row's normalised cumulative sum.

    Example:
        >>> import chainrule as torch
        >>> torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
        tensor([1, 1])
    """
    if PER_EXAMPLE_DRAWS:
        return PER_EXAMPLE_DRAWS[-1](
            multinomial, (input, num_samples, replacement), {"generator": generator}
        )
    data = input._data
    if data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if data.dtype.kind not in "fV":
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{SCALAR_TYPE_NAMES[from_numpy_dtype(data.dtype)]}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > data.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if data.shape[-1] > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = data.shape[0] if data.ndim == 2 else 1
    if rows * num_samples == 0:
        return wrap(np.zeros((*data.shape[:-1], num_samples), np.int64))
    rng = _gen(generator)
    if not replacement or num_samples == 1:
        result = _multinomial_by_exponentials(data, num_samples, rng)
    else:
        result = _multinomial_with_replacement(data.reshape(rows, -1), num_samples, rng)
    return wrap(result.reshape(*data.shape[:-1], num_samples))


def _multinomial_by_exponentials(p: np.ndarray, num_samples: int, rng: Any) -> np.ndarray:
    """The ``num_samples`` largest of ``p / q`` along the last dimension, ``q`` exponential
    draws laid out as ``empty_like(p)`` (the Gumbel-max trick with ``exp`` applied)."""
    if p.size == 0:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
            "identity."
        )
    with np.errstate(invalid="ignore"):
        valid = bool(np.all(p >= 0) and np.all(p < np.inf))  # (NaN fails both)
    if not valid:
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(np.all(p == 0, axis=-1)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    layout = _strides.empty_preserving_layout(p)
    q = random_streams.exponential(rng, p.shape, p.dtype, 1.0, layout.strides)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = p / q
    if num_samples == 1:
        return np.argmax(keys, axis=-1)[..., None]  # (the first of equal largest, as PyTorch)
    return topk(wrap(keys), num_samples).indices._data


def _multinomial_with_replacement(p: np.ndarray, num_samples: int, rng: Any) -> np.ndarray:
    """PyTorch's kernel for several samples with replacement, row after row: the cumulative
    sum of the row in its precision (float for the half types), divided by its total, the
    last bucket set to 1; each sample is the first bucket not below a double uniform. A
    row's probabilities are checked before its draws (a bad row leaves the draws of the rows
    before it taken)."""
    accumulate = np.dtype(np.float32) if p.dtype.itemsize == 2 else p.dtype  # (the halves)
    out = np.empty((p.shape[0], num_samples), np.int64)
    for i, row in enumerate(p.astype(accumulate)):
        with np.errstate(invalid="ignore"):
            bad = ~(row >= 0) | ~np.isfinite(row)
        if bad.any():
            first = row[np.flatnonzero(bad)[0]]
            what = "< 0" if not first >= 0 else "= infinity or NaN"
            raise RuntimeError(
                f"invalid multinomial distribution (encountering probability entry {what})"
            )
        cumulative = np.cumsum(row, dtype=accumulate)  # (sequential, as the kernel's loop)
        total = cumulative[-1] if cumulative.size else 0.0
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cumulative = cumulative / total
        cumulative[-1] = 1
        uniforms = random_streams.uniform_unit64(rng, num_samples)
        out[i] = np.searchsorted(cumulative.astype(np.float64), uniforms, side="left")
    return out


#: Helpers the derivatives call (``ops.standard_gamma_grad``).
PRIMITIVES: dict[str, Any] = {"standard_gamma_grad": _standard_gamma_grad}


# ----------------------------------------------------------------------------------------------
# In-place random fills: Tensor.exponential_, cauchy_, geometric_ and log_normal_ (their nodes
# have zero derivatives, as PyTorch's).

# C++ type names, which cauchy_'s message shows (exponential_'s shows PyTorch's scalar names)
_CPP_TYPE_NAMES = {
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "uint16": "short unsigned int",
    "uint32": "unsigned int",
    "uint64": "unsigned long",
}


def _continuous_only(self: Any, distribution: str, cpp_names: bool = False) -> None:
    a = self._data
    if a.dtype.kind not in "fcV":
        name = (
            _CPP_TYPE_NAMES.get(a.dtype.name, a.dtype.name)
            if cpp_names
            else SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]
        )
        raise RuntimeError(
            f"{distribution} distribution is a continuous probability distribution. dtype must "
            f"be a floating point but you specified {name}"
        )


def _serial_draws(
    self: np.ndarray, generator: Any, transform: Any, normal: tuple[float, float] | None = None
) -> np.ndarray:
    """``random_streams.serial_fill`` of ``self``'s shape, dtype and layout."""
    return random_streams.serial_fill(
        _gen(generator), self.shape, self.dtype, self.strides, transform, normal
    )


@op("ExponentialBackward0", promote=KEEP)
def _exponential(self, lambd, generator):
    return random_streams.exponential(_gen(generator), self.shape, self.dtype, lambd, self.strides)


@op("CauchyBackward0", promote=KEEP)
def _cauchy(self, median, sigma, generator):
    # median + sigma * tan(pi * (u - 0.5)), the multiply-add fused as PyTorch's build does

    def transform(u):
        return random_streams.fma64(
            random_streams.libm(math.tan, math.pi * (u - 0.5)), sigma, median
        )

    return _serial_draws(self, generator, transform)


@op("GeometricBackward0", promote=KEEP)
def _geometric(self, p, generator):
    # trials until the first success: ceil(log(u) / log1p(-p))
    denominator = math.log1p(-p)

    def transform(u):
        return np.ceil(random_streams.libm(_log_or_minus_inf, u) / denominator)

    return _serial_draws(self, generator, transform)


def _log_or_minus_inf(value: float) -> float:
    return math.log(value) if value > 0 else -math.inf


@op("LogNormalBackward0", promote=KEEP)
def _log_normal(self, mean, std, generator):
    # exp of normal_distribution<double>(mean, std)

    def transform(z):
        return random_streams.libm(_exp_or_inf, z)

    return _serial_draws(self, generator, transform, normal=(mean, std))


def _exp_or_inf(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


for _fill in (_exponential, _cauchy, _geometric, _log_normal):
    _fill.derivative("self")(zero_derivative)


@tensor_method(method=True)
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with exponential samples of rate ``lambd``.

    Example:
        >>> import chainrule as torch
        >>> bool((torch.empty(3).exponential_() >= 0).all())
        True
    """
    check_inplace_draw()
    check_inplace(self)
    if not lambd > 0:
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={_format_scalar(lambd)}"
        )
    _continuous_only(self, "Exponential")
    return apply_inplace(self, _exponential, lambd, generator)


@tensor_method(method=True)
def cauchy_(
    self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Generator | None = None
) -> Tensor:
    """Fill ``self`` with Cauchy samples of location ``median`` and scale ``sigma``.

    Example:
        >>> import chainrule as torch
        >>> torch.empty(2).cauchy_().shape
        chainrule.Size([2])
    """
    check_inplace_draw()
    check_inplace(self)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_format_scalar(sigma)}")
    _continuous_only(self, "Cauchy", cpp_names=True)
    return apply_inplace(self, _cauchy, median, sigma, generator)


@tensor_method(method=True)
def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill ``self`` with the number of Bernoulli(``p``) trials until the first success.

    Example:
        >>> import chainrule as torch
        >>> bool((torch.empty(3).geometric_(0.5) >= 1).all())
        True
    """
    check_inplace_draw()
    check_inplace(self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_format_scalar(p)}")
    if self._data.dtype.kind == "b":
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    return apply_inplace(self, _geometric, p, generator)


@tensor_method(method=True)
def log_normal_(
    self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Generator | None = None
) -> Tensor:
    """Fill ``self`` with samples of ``exp(N(mean, std**2))``.

    Example:
        >>> import chainrule as torch
        >>> bool((torch.empty(3).log_normal_() > 0).all())
        True
    """
    check_inplace_draw()
    check_inplace(self)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_format_scalar(std)}")
    if self._data.dtype.kind not in "fcV":
        name = SCALAR_TYPE_NAMES[from_numpy_dtype(self._data.dtype)]
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for '{name}'")
    return apply_inplace(self, _log_normal, mean, std, generator)


# random_: integers drawn uniformly from [from, to) (RandomBackward0), [0, to)
# (RandomBackward1) or the dtype's whole range (RandomBackward2: [0, 2^digits] for floating
# types, whose integers are exact only up to there).

_TYPE_NAMES = {
    "uint8": "unsigned char",
    "uint16": "short unsigned int",
    "uint32": "unsigned int",
    "uint64": "long unsigned int",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
}
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _value_range(a: np.ndarray) -> tuple[int, int]:
    """The lowest and highest values ``a``'s dtype holds."""
    if a.dtype.kind == "b":
        return 0, 1
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        return int(info.min), int(info.max)
    top = float(finfo(from_numpy_dtype(a.dtype)).max)
    return -int(top), int(top)


def _check_in_range(a: np.ndarray, value: int, what: str) -> None:
    name = _TYPE_NAMES.get(a.dtype.name, a.dtype.name)
    lowest, highest = _value_range(a)
    if not lowest <= value <= highest:
        raise RuntimeError(f"{what} is out of bounds for {name}")
    digits = _DIGITS.get(a.dtype.name)
    if digits is not None and not -(2**digits) <= value <= 2**digits:
        warnings.warn(
            f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
            f"{name} can support discrete uniform distribution only within this range. This "
            "warning will become an error in version 1.7 release, please fix the code in advance"
            " (Triggered internally at "
            f"/__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:"
            f"{110 if what == 'from' else 111}.)",
            UserWarning,
            stacklevel=4,
        )


def _integers(
    self: np.ndarray, low: int, high: int, generator: Any, wide: bool = False
) -> np.ndarray:
    """Integers of [low, high] (inclusive) in ``self``'s dtype, as PyTorch's
    ``random_from_to`` kernel draws them (``(bits % span) + low``, 64 bits when the span needs
    them); the whole 64-bit range is one 64-bit draw per element. Drawn in ``self``'s memory
    order, as the kernel fills a strided tensor."""
    rng = _gen(generator)

    def draw(sizes: tuple[int, ...]) -> np.ndarray:
        if high - low + 1 >= 2**64:
            draws = random_streams.random64(rng, math.prod(sizes)).view(np.int64)
            return draws.astype(self.dtype).reshape(sizes)
        return random_streams.integers(rng, sizes, low, high + 1, self.dtype, wide)

    return random_streams.in_memory_order(self.shape, self.strides, draw)


# ``random_()``'s draw per element (PyTorch's uniform_int_distribution): 64 bits for int64 and
# float64, 32 otherwise, reduced modulo the dtype's count of values (bool: the lowest bit).
_FULL_RANGE_MODULUS = {
    "int64": 2**63,
    "int32": 2**31,
    "int16": 2**15,
    "int8": 2**7,
    "uint8": 2**8,
    "uint16": 2**16,
    "uint32": 2**32,
    "uint64": 2**64,
    "bool": 2,
    "float64": 2**53 + 1,
    "float32": 2**24 + 1,
    "float16": 2**11 + 1,
    "bfloat16": 2**8 + 1,
}


def _full_range(self: np.ndarray, generator: Any) -> np.ndarray:
    """``random_()``'s fill of ``self``, in its memory order."""
    rng = _gen(generator)
    name = self.dtype.name
    wide = name in ("int64", "float64", "uint64")
    modulus = _FULL_RANGE_MODULUS[name]

    def draw(sizes: tuple[int, ...]) -> np.ndarray:
        n = math.prod(sizes)
        bits = random_streams.random64(rng, n) if wide else random_streams.random32(rng, n)
        values = bits if modulus == 2**64 else bits % np.uint64(modulus)
        with np.errstate(over="ignore"):
            return values.astype(self.dtype).reshape(sizes)

    return random_streams.in_memory_order(self.shape, self.strides, draw)


@op("RandomBackward0", promote=KEEP, half_native=True)
def _random_from_to(self, low, high, generator, from_only):
    # (``random_(from, to=None)`` of an int32 or uint32 tensor draws 64 bits per element, as
    # PyTorch's)
    wide = from_only and self.dtype in (np.int32, np.uint32)
    return _integers(self, low, high, generator, wide)


@op("RandomBackward1", promote=KEEP, half_native=True)
def _random_to(self, high, generator):
    return _integers(self, 0, high, generator)


@op("RandomBackward2", promote=KEEP, half_native=True)
def _random_full(self, generator):
    return _full_range(self, generator)


for _fill in (_random_from_to, _random_to, _random_full):
    _fill.derivative("self")(zero_derivative)


@tensor_method(method=True)
def random_(self: Tensor, *args: Any, generator: Generator | None = None, **kwargs: Any) -> Tensor:
    """Fill ``self`` with integers drawn uniformly: ``random_(from, to)`` from ``[from, to)``
    (``to=None``: up to the dtype's largest), ``random_(to)`` from ``[0, to)``, ``random_()``
    from the dtype's range (``[0, 2^mantissa digits]`` for floating types).

    Example:
        >>> import chainrule as torch
        >>> bool(((torch.empty(5).random_(3) >= 0) & (torch.empty(5).random_(3) < 3)).all())
        True
    """
    check_inplace_draw()
    check_inplace(self)
    a = self._data
    names = (
        ("from", "to")[: len(args)]
        if len(args) == 2
        else (("from",) if "to" in kwargs else ("to",))[: len(args)]
    )
    given = dict(zip(names, args, strict=True)) | kwargs
    if "from" in given:
        low, high = given["from"], given.get("to")
        if high is None and "to" not in given and len(args) < 2:
            raise TypeError(
                "random_() received an invalid combination of arguments - got (from=int, ), "
                "but expected one of:\n * (*, torch.Generator generator = None)\n * (int from, "
                "int to, *, torch.Generator generator = None)\n * (int to, *, torch.Generator "
                "generator = None)\n"
            )
        if high is None:
            _check_in_range(a, int(low), "from")
            if a.dtype == np.uint64:  # (PyTorch's largest value, as int64, is -1)
                _check_in_range(a, -1, "to - 1")
            digits = _DIGITS.get(a.dtype.name)
            top = 2**digits if digits is not None else _value_range(a)[1]
            return apply_inplace(self, _random_from_to, int(low), top, generator, True)
        if not low < high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        _check_in_range(a, int(low), "from")
        _check_in_range(a, int(high) - 1, "to - 1")
        return apply_inplace(self, _random_from_to, int(low), int(high) - 1, generator, False)
    if "to" in given:
        high = given["to"]
        if not 0 < high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from=0 >= to={high}"
            )
        _check_in_range(a, int(high) - 1, "to - 1")
        return apply_inplace(self, _random_to, int(high) - 1, generator)
    if a.dtype in (np.uint16, np.uint32, np.uint64):
        name = SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{name}'")
    return apply_inplace(self, _random_full, generator)
