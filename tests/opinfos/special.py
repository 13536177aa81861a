"""torch.special (and the top-level names it shares: i0, sinc, logit, mvlgamma): values,
first- and second-order gradients against PyTorch. Functions PyTorch gives no derivative (the
Bessel functions, the orthogonal polynomials) are swept for values (``grad=False``): their
results never require grad, in both libraries. Edge values and errors: tests/test_special.py.
"""

from __future__ import annotations

from . import OpInfo

UNARY = [((3, 4),), ((),), ((0, 2),), ((2, 1, 3),)]
BINARY = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3))]
ONE = [((3, 4),)]


def _special(name: str, low: float = -2.0, high: float = 2.0, shapes=UNARY, **kw) -> OpInfo:
    return OpInfo(f"special.{name}", lambda lib, x, n=name: getattr(lib.special, n)(x), shapes,
                  low, high, **kw)


def _positive(rng, shapes, dtype):
    return [rng.uniform(0.3, 3.0, s).astype(dtype) for s in shapes]


def _away_from_zero(rng, shapes, dtype):
    return [(rng.uniform(0.2, 3.0, s) * rng.choice([-1.0, 1.0], size=s)).astype(dtype)
            for s in shapes]


def _zeta_inputs(rng, shapes, dtype):
    return [rng.uniform(1.5, 4.0, shapes[0]).astype(dtype),
            rng.uniform(0.5, 3.0, shapes[1]).astype(dtype)]


def _polynomial_inputs(rng, shapes, dtype):
    x = rng.uniform(-1.5, 1.5, shapes[0]).astype(dtype)
    n = rng.integers(0, 12, shapes[1]).astype(dtype)
    return [x, n]


_POLYNOMIALS = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
)
_NOT_DIFFERENTIABLE = (
    "airy_ai", "bessel_j0", "bessel_j1", "modified_bessel_i0", "modified_bessel_i1",
    "spherical_bessel_j0",
)
_POSITIVE_ONLY = ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")

OPS = [
    _special("erfcx", -3.0, 3.0),
    _special("log_ndtr", -4.0, 4.0),
    _special("ndtri", 0.05, 0.95),
    _special("ndtr"),
    _special("i0", -3.0, 3.0),
    _special("i0e", make_inputs=_away_from_zero),
    _special("i1", -3.0, 3.0),
    _special("i1e", make_inputs=_away_from_zero),
    _special("entr", make_inputs=_positive),
    _special("sinc", make_inputs=_away_from_zero),
    _special("logit", 0.1, 0.9),
    _special("expit"),
    _special("psi", make_inputs=_positive),
    _special("gammaln", make_inputs=_positive),
    _special("erf"),
    _special("erfc"),
    _special("erfinv", -0.9, 0.9),
    _special("exp2"),
    _special("expm1"),
    _special("log1p", -0.5, 3.0),
    _special("digamma", make_inputs=_positive),
    _special("round", shapes=ONE, second_order=False, gradcheck=False),
    OpInfo("special.round_decimals", lambda lib, x: lib.special.round(x, decimals=2), ONE,
           second_order=False, gradcheck=False),
    OpInfo("special.logit_eps", lambda lib, x: lib.special.logit(x, eps=0.2), ONE, 0.0, 1.0),
    OpInfo("special.polygamma", lambda lib, x: lib.special.polygamma(2, x), ONE,
           make_inputs=_positive),
    OpInfo("special.multigammaln", lambda lib, x: lib.special.multigammaln(x, 3), UNARY, 1.5,
           4.0),
    OpInfo("special.xlogy", lambda lib, x, y: lib.special.xlogy(x, y), BINARY,
           make_inputs=_positive),
    OpInfo("special.xlog1py", lambda lib, x, y: lib.special.xlog1py(x, y), BINARY,
           make_inputs=_positive),
    OpInfo("special.xlog1py_number_self", lambda lib, y: lib.special.xlog1py(2.5, y), ONE,
           make_inputs=_positive),
    OpInfo("special.xlog1py_number_other", lambda lib, x: lib.special.xlog1py(x, 1.5), ONE),
    # (zeta's derivative in x is not implemented, in PyTorch too: only q requires grad)
    OpInfo("special.zeta", lambda lib, x, q: lib.special.zeta(x, q), [((3, 4), (3, 4)),
           ((3, 1), (1, 4))], make_inputs=_zeta_inputs, grad_inputs=(1,)),
    # (the incomplete gamma functions' derivative in a is not implemented, in PyTorch too)
    OpInfo("special.gammainc", lambda lib, a, x: lib.special.gammainc(a, x), BINARY,
           make_inputs=_positive, grad_inputs=(1,)),
    OpInfo("special.gammaincc", lambda lib, a, x: lib.special.gammaincc(a, x), BINARY,
           make_inputs=_positive, grad_inputs=(1,)),
    OpInfo("igamma", lambda lib, a, x: lib.igamma(a, x), BINARY, make_inputs=_positive,
           grad_inputs=(1,)),
    OpInfo("igammac", lambda lib, a, x: lib.igammac(a, x), BINARY, make_inputs=_positive,
           grad_inputs=(1,)),
    OpInfo("Tensor.igamma", lambda lib, a, x: a.igamma(x), [((3, 4), (3, 4))],
           make_inputs=_positive, grad_inputs=(1,)),
    OpInfo("Tensor.igammac", lambda lib, a, x: a.igammac(x), [((3, 4), (3, 4))],
           make_inputs=_positive, grad_inputs=(1,)),
    OpInfo("Tensor.igamma_", lambda lib, a, x: a.detach().clone().igamma_(x), [((3, 4), (3, 4))],
           make_inputs=_positive, grad_inputs=(1,)),
    OpInfo("Tensor.igammac_", lambda lib, a, x: a.detach().clone().igammac_(x),
           [((3, 4), (3, 4))], make_inputs=_positive, grad_inputs=(1,)),
    OpInfo("special.zeta_number_x", lambda lib, q: lib.special.zeta(2.5, q), ONE,
           make_inputs=_positive),
    OpInfo("special.softmax", lambda lib, x: lib.special.softmax(x, 1), ONE),
    OpInfo("special.log_softmax", lambda lib, x: lib.special.log_softmax(x, 0), ONE),
    OpInfo("special.logsumexp", lambda lib, x: lib.special.logsumexp(x, 1), ONE),
    OpInfo("i0", lambda lib, x: lib.i0(x), ONE),
    OpInfo("Tensor.i0", lambda lib, x: x.i0(), ONE),
    OpInfo("Tensor.i0_", lambda lib, x: (x * 1).i0_(), ONE),
    OpInfo("sinc", lambda lib, x: lib.sinc(x), ONE, make_inputs=_away_from_zero),
    OpInfo("Tensor.sinc", lambda lib, x: x.sinc(), ONE, make_inputs=_away_from_zero),
    OpInfo("Tensor.sinc_", lambda lib, x: (x * 1).sinc_(), ONE, make_inputs=_away_from_zero),
    OpInfo("logit", lambda lib, x: lib.logit(x), ONE, 0.1, 0.9),
    OpInfo("Tensor.logit", lambda lib, x: x.logit(0.25), ONE, 0.0, 1.0),
    OpInfo("Tensor.logit_", lambda lib, x: (x * 1).logit_(), ONE, 0.1, 0.9),
    OpInfo("mvlgamma", lambda lib, x: lib.mvlgamma(x, p=2), ONE, 1.0, 4.0),
    OpInfo("Tensor.mvlgamma", lambda lib, x: x.mvlgamma(3), ONE, 1.5, 4.0),
    OpInfo("Tensor.mvlgamma_", lambda lib, x: (x * 1).mvlgamma_(2), ONE, 1.0, 4.0),
    *[_special(name, -8.0, 8.0, grad=False) for name in _NOT_DIFFERENTIABLE],
    *[_special(name, grad=False, make_inputs=_positive) for name in _POSITIVE_ONLY],
    *[OpInfo(f"special.{name}", lambda lib, x, n, f=name: getattr(lib.special, f)(x, n),
             [((3, 4), (3, 4)), ((2, 1), (1, 3))], grad=False, make_inputs=_polynomial_inputs)
      for name in _POLYNOMIALS],
    *[OpInfo(f"special.{name}_number_n", lambda lib, x, f=name: getattr(lib.special, f)(x, 5),
             ONE, -1.5, 1.5, grad=False) for name in _POLYNOMIALS[:2]],
]
