"""torch.special against PyTorch at the values where special functions go wrong: 0, -0, +-inf,
NaN, poles, both tails, huge and tiny arguments; every dtype (integers and bool promoted, half
precision computed or refused as PyTorch's kernels are); number overloads; node names,
first-order gradients at those values, errors and their messages. The OpInfo sweep
(tests/opinfos/special.py) covers random values, second order and layouts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

EDGES = np.array([
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 4.999, 5.0, 5.001, 8.0, 8.5, 1e-9, -1e-9, 1e-300,
    9.9e-6, 1.1e-5, 0.999, 1.001, 30.0, -30.0, 50.0, -50.0, 700.0, 710.0, -710.0, 1e5, -1e5,
    1e10, 1e300, np.inf, -np.inf, np.nan,
])
UNIT = np.array([0.0, -0.0, 1.0, 1e-300, 1e-20, 1e-14, 0.1353352832366127, 0.5, 0.8646647167633873,
                 0.975, 1 - 1e-16, 1.0 + 1e-15, -0.1, np.inf, np.nan])

UNARY = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e",
    "log1p", "log_ndtr", "logit", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "spherical_bessel_j0",
]
#: PyTorch's torch.special names chainrule does not have yet.
MISSING: set[str] = set()
POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]
NOT_DIFFERENTIABLE = {
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "spherical_bessel_j0", "round",
}
DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "bool", "complex64"]


def _numpy(t: Any) -> np.ndarray:
    t = t.detach()
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).resolve_conj().numpy()
    return (t.float() if t.dtype == chainrule.bfloat16 else t).numpy()


def _tensor(lib: Any, values: np.ndarray, dtype: str, requires_grad: bool = False) -> Any:
    if dtype == "bfloat16":
        return lib.tensor(values.astype(np.float32)).to(lib.bfloat16)
    return lib.tensor(values.astype(dtype), requires_grad=requires_grad)


def _tolerance(dtype: str) -> tuple[float, float]:
    # (float32: PyTorch computes in float32, chainrule in float64 rounded once; near the zeros
    # of the Bessel functions the difference is absolute, a few float32 ulps of 1)
    return {"float64": (1e-10, 1e-300), "float32": (1e-5, 1e-6), "int64": (1e-5, 1e-6),
            "bool": (1e-5, 1e-6), "float16": (2e-3, 1e-7), "bfloat16": (1.6e-2, 1e-30),
            "complex64": (2e-6, 1e-37)}[dtype]


def _same(fn: Callable[[Any], Any], dtype: str, what: str,
          tolerance: tuple[float, float] | None = None) -> tuple[Any, Any] | None:
    """Run ``fn`` with both libraries: the same error (type and message), or the same dtype,
    shape and values (NaN where PyTorch's are); returns the two results."""
    try:
        theirs = fn(torch)
    except Exception as error:  # noqa: BLE001 - any error of PyTorch's must be chainrule's too
        with pytest.raises(type(error)) as caught:
            fn(chainrule)
        assert str(caught.value) == str(error), what
        return None
    ours = fn(chainrule)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], what
    a, b = _numpy(ours), _numpy(theirs)
    assert a.shape == b.shape, what
    rtol, atol = tolerance or _tolerance(dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    return ours, theirs


def test_namespace_has_pytorchs_names() -> None:
    ours = {n for n in dir(chainrule.special) if not n.startswith("_")}
    theirs = set(torch.special.__all__)
    assert theirs - ours == MISSING
    assert not {n for n in ours - theirs if callable(getattr(chainrule.special, n))} - {"Tensor"}


@pytest.mark.parametrize(("alias", "node"), [
    ("expit", "SigmoidBackward0"), ("psi", "DigammaBackward0"), ("gammaln", "LgammaBackward0"),
    ("digamma", "DigammaBackward0"), ("erf", "ErfBackward0"), ("erfc", "ErfcBackward0"),
    ("erfinv", "ErfinvBackward0"), ("exp2", "Exp2Backward0"), ("expm1", "Expm1Backward0"),
    ("log1p", "Log1PBackward0"), ("i0", "I0Backward0"), ("sinc", "SincBackward0"),
    ("logit", "LogitBackward0"),
])
def test_aliases_record_pytorchs_nodes(alias: str, node: str) -> None:
    for lib in (torch, chainrule):
        x = lib.tensor([0.25, 0.5], requires_grad=True)
        assert getattr(lib.special, alias)(x).grad_fn.name() == node


#: Where chainrule's top-level ops (which torch.special shares) differ from PyTorch's: strict
#: xfails, each with its reason.
KNOWN = {
    "erf-bfloat16": "PyTorch's vectorised half-precision erf gives 0 at 1e-9 and 1.1563e-05 at "
                    "1e-05 (its float32 kernel: 1.128e-09, 1.128e-05); chainrule rounds the "
                    "float32 result",
}


def _edge_cases() -> list[Any]:
    cases = []
    for name in sorted(set(UNARY) - MISSING):
        for dtype in DTYPES:
            key = f"{name}-{dtype}"
            marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
            cases.append(pytest.param(name, dtype, id=key, marks=marks))
    return cases


@pytest.mark.parametrize(("name", "dtype"), _edge_cases())
def test_unary_values_at_the_edges(name: str, dtype: str) -> None:
    values = UNIT if name in ("ndtri", "logit", "erfinv") else EDGES
    if dtype != "float64":
        # (huge arguments in float64 only: PyTorch's float32 kernels lose the phase of the
        # Bessel functions' cos(x - pi/4) there; test_large_arguments_and_overflow)
        values = values[~(np.abs(values) >= 1e5) | np.isinf(values) | np.isnan(values)]
        if name == "airy_ai":  # (likewise the phase 2/3 |x|**1.5 of Ai's oscillations)
            values = values[~(values <= -20)]
    if dtype in ("int64", "bool"):
        values = np.array([0, 1, 2, 3, 0, 5]) if dtype == "int64" else np.array([0, 1, 1, 0])

    def run(lib: Any) -> Any:
        return getattr(lib.special, name)(_tensor(lib, values, dtype))

    _same(run, dtype, f"{name} {dtype}")


def _edge_pairs() -> tuple[np.ndarray, np.ndarray]:
    x = np.array([0.0, -0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 2.5, 1.5, 0.5, 2.0, np.inf, 2.0, np.nan,
                  4.0, 1.0001, 30.0, 2.0, 3.0])
    q = np.array([0.0, 1.0, 1.0, -2.0, 0.0, -2.0, -2.5, -2.5, 1e-8, 1.0, np.inf, 2.0, np.nan,
                  1.0, -1.0, 1.0, 1e5, -1e-300, 1e-300])
    return x, q


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma(name: str, dtype: str) -> None:
    rng = np.random.default_rng(4)
    # each of the algorithm's regimes: series, continued fraction, 1 - the other, Temme's
    # expansion for large a near x (20 < a < 200 and a > 200), and the boundaries
    a = np.concatenate([rng.uniform(0, 5, 60), rng.uniform(20, 60, 40), rng.uniform(150, 400, 40),
                        10 ** rng.uniform(-5, 4, 40),
                        [0, 0, 1, 1, np.inf, np.inf, 1, -1, 1, np.nan, 2, 1e-300, 25, 250]])
    x = np.concatenate([rng.uniform(0, 5, 60), rng.uniform(15, 70, 40), rng.uniform(140, 420, 40),
                        10 ** rng.uniform(-5, 4, 40),
                        [0, 1, 0, np.inf, 1, np.inf, -1, 1, np.nan, 1, 1e-300, 2, 24, 251]])
    if dtype == "int64":
        a, x = np.array([1, 2, 3]), np.array([1, 2, 5])
    _same(lambda lib: getattr(lib.special, name)(_tensor(lib, a, dtype), _tensor(lib, x, dtype)),
          dtype, f"{name} {dtype}", (1e-9, 1e-300) if dtype == "float64" else None)
    _same(lambda lib: getattr(lib.special, name)(_tensor(lib, a, dtype), 2.0), dtype, name)
    top = "igamma" if name == "gammainc" else "igammac"
    _same(lambda lib: getattr(lib, top)(_tensor(lib, a, dtype), 2), dtype, top)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_derivative_in_a_is_not_implemented(name: str) -> None:
    messages = []
    for lib in (torch, chainrule):
        a = lib.tensor([1.5, 30.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.5, 29.0], dtype=lib.float64, requires_grad=True)
        out = getattr(lib.special, name)(a, x)
        assert out.grad_fn.name() == ("IgammaBackward0" if name == "gammainc" else
                                      "IgammacBackward0")
        with pytest.raises(NotImplementedError) as caught:
            out.sum().backward()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64"])
@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "zeta"])
def test_binary_values_at_the_edges(name: str, dtype: str) -> None:
    x, q = _edge_pairs()
    if dtype == "int64":
        x, q = np.array([0, 1, 2, 3, 4]), np.array([1, 2, 0, -1, 3])
    fn = getattr(torch.special, name)
    _same(lambda lib: getattr(lib.special, name)(_tensor(lib, x, dtype), _tensor(lib, q, dtype)),
          dtype, f"{name} {dtype}")
    _same(lambda lib: getattr(lib.special, name)(2.5, _tensor(lib, q, dtype)), dtype, name)
    _same(lambda lib: getattr(lib.special, name)(_tensor(lib, x, dtype), 1.5), dtype, name)
    assert fn is not None


@pytest.mark.parametrize("name", ["xlog1py", "zeta"])
def test_two_numbers_are_refused(name: str) -> None:
    _same(lambda lib: getattr(lib.special, name)(2.0, 3.0), "float64", name)


#: Both evaluate the polynomials in the tensor's dtype, but PyTorch's compiled recurrences may
#: fuse multiply-adds: float32 results with cancellation differ by up to ~1e-4 relative; the
#: trigonometric forms of high degrees are 0 to within 1e-15 where they vanish.
_POLYNOMIAL_TOLERANCE = {"float64": (1e-9, 1e-12), "float32": (1e-3, 1e-5),
                         "int64": (1e-3, 1e-5)}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64"])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials(name: str, dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-1.3, 1.3, 24), [1.0, -1.0, 0.0, 0.5, 2.0, -3.0, np.inf,
                                                     -np.inf, 1 - 1e-16, 1e-20]])
    n = np.concatenate([np.arange(-1, 23), np.arange(2, 12)])
    if dtype == "int64":
        x = np.tile(np.arange(-2, 3), 7)[: len(n)]
    tolerance = _POLYNOMIAL_TOLERANCE.get(dtype)

    def run(lib: Any) -> Any:
        return getattr(lib.special, name)(_tensor(lib, x, dtype), _tensor(lib, n, "int64"))

    _same(run, dtype, f"{name} {dtype}", tolerance)
    # a floating degree is truncated (NaN, inf and huge degrees give 0)
    degrees = np.array([2.7, 3.2, -0.5, np.nan, np.inf, -np.inf, 1e30, 600.0, 130.0])
    _same(lambda lib: getattr(lib.special, name)(lib.tensor(0.3, dtype=lib.float64),
                                                 lib.tensor(degrees)), "float64", name,
          _POLYNOMIAL_TOLERANCE["float64"])
    for degree in (0, 1, 5, 9, 40):
        _same(lambda lib, k=degree: getattr(lib.special, name)(_tensor(lib, x, dtype), k),
              dtype, f"{name} n={degree}", tolerance)
    _same(lambda lib: getattr(lib.special, name)(0.25, lib.tensor(n)), "float32", name,
          _POLYNOMIAL_TOLERANCE["float32"])
    _same(lambda lib: getattr(lib.special, name)(0.25, 3), "float64", name)


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "hermite_polynomial_h",
                                  "hermite_polynomial_he"])
def test_polynomials_at_nan(name: str) -> None:
    # (the other polynomials' PyTorch kernels return an uninitialised value at NaN with n >= 2;
    # chainrule gives NaN there)
    x = np.array([np.nan] * 4)
    _same(lambda lib: getattr(lib.special, name)(lib.tensor(x), lib.tensor([0, 1, 2, 5])),
          "float64", name)


@pytest.mark.parametrize("name", sorted(set(UNARY) - MISSING - NOT_DIFFERENTIABLE))
def test_gradients_at_the_edges(name: str) -> None:
    values = UNIT if name in ("ndtri", "logit", "erfinv") else EDGES
    rng = np.random.default_rng(1)
    cotangent = rng.uniform(-1, 1, values.shape)
    results = {}
    for lib in (torch, chainrule):
        x = lib.tensor(values.copy(), requires_grad=True)
        out = getattr(lib.special, name)(x)
        (grad,) = lib.autograd.grad(out, x, lib.tensor(cotangent))
        results[lib] = out, grad
    ours, theirs = results[chainrule], results[torch]
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    np.testing.assert_allclose(_numpy(ours[1]), _numpy(theirs[1]), rtol=1e-9, atol=1e-300,
                               equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE - {"round"}) + POLYNOMIALS)
def test_no_derivative_means_no_graph(name: str) -> None:
    for lib in (torch, chainrule):
        x = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
        out = getattr(lib.special, name)(x, 3) if "polynomial" in name else getattr(
            lib.special, name)(x)
        assert not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize("number_q", [False, True])
def test_zeta_derivative_in_x_is_not_implemented(number_q: bool) -> None:
    messages = []
    for lib in (torch, chainrule):
        x = lib.tensor([2.0, 3.0], dtype=lib.float64, requires_grad=True)
        q = lib.tensor([1.0, 2.5], dtype=lib.float64, requires_grad=True)
        out = lib.special.zeta(x, 2.0) if number_q else lib.special.zeta(x, q)
        with pytest.raises(NotImplementedError) as caught:
            out.sum().backward()
        messages.append(str(caught.value))
    assert messages[0] == messages[1] == "the derivative for 'zeta' is not implemented."


@pytest.mark.parametrize(("call", "node"), [
    (lambda lib, x: lib.special.zeta(2.5, x), "SpecialZetaBackward1"),
    (lambda lib, x: lib.special.gammainc(x.detach() + 1, x), "IgammaBackward0"),
    (lambda lib, x: lib.special.gammaincc(x.detach() * 40, x * 39), "IgammacBackward0"),
    (lambda lib, x: lib.igamma(x.detach() * 300, x * 290), "IgammaBackward0"),
    (lambda lib, x: lib.special.zeta(x.detach() + 2, x), "SpecialZetaBackward0"),
    (lambda lib, x: lib.special.xlog1py(2.5, x), "SpecialXlog1PyBackward1"),
    (lambda lib, x: lib.special.xlog1py(x, 1.5), "SpecialXlog1PyBackward2"),
    (lambda lib, x: lib.special.ndtr(x), "MulBackward1"),
    (lambda lib, x: lib.special.multigammaln(x + 2, 3), "MvlgammaBackward0"),
    (lambda lib, x: lib.special.round(x), "RoundBackward1"),
    (lambda lib, x: lib.special.softmax(x, 0), "SoftmaxBackward0"),
    (lambda lib, x: lib.special.log_softmax(x, 0), "LogSoftmaxBackward0"),
])
def test_nodes_and_gradients(call: Callable[..., Any], node: str) -> None:
    grads = []
    for lib in (torch, chainrule):
        x = lib.tensor([0.3, 1.7, 2.2], dtype=lib.float64, requires_grad=True)
        out = call(lib, x)
        assert out.grad_fn.name() == node
        (grad,) = lib.autograd.grad(out, x, lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64))
        grads.append(_numpy(grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10)


def test_ndtr_graph_is_pytorchs() -> None:
    names = []
    for lib in (torch, chainrule):
        node = lib.special.ndtr(lib.tensor([0.5], requires_grad=True)).grad_fn
        chain = []
        while node is not None and node.name() != "torch::autograd::AccumulateGrad" and (
                not node.name().endswith("AccumulateGrad")):
            chain.append(node.name())
            node = node.next_functions[0][0]
        names.append(chain)
    assert names[0] == names[1] == ["MulBackward1", "AddBackward1", "ErfBackward0",
                                    "MulBackward1"]


@pytest.mark.parametrize(("call", "dtype"), [
    (lambda lib, x: lib.special.multigammaln(x, 0), "float64"),
    (lambda lib, x: lib.special.multigammaln(x.bool(), 2), "float64"),
    (lambda lib, x: lib.mvlgamma(x, p=-1), "float64"),
    (lambda lib, x: lib.special.i1(x.half()), "float16"),
    (lambda lib, x: lib.special.logit(x, eps=0.3), "float64"),
    (lambda lib, x: lib.special.logit(x.half(), 0.1), "float16"),
    (lambda lib, x: lib.special.softmax(x.long(), 0), "float64"),
    (lambda lib, x: lib.special.log_softmax(x, 0, dtype=lib.float32), "float32"),
    (lambda lib, x: lib.special.round(x, decimals=1), "float64"),
    (lambda lib, x: lib.special.logsumexp(x, 0, keepdim=True), "float64"),
    (lambda lib, x: lib.special.polygamma(3, x), "float64"),
    (lambda lib, x: lib.special.zeta(x.half(), 2.0), "float16"),
])
def test_more_calls(call: Callable[..., Any], dtype: str) -> None:
    _same(lambda lib: call(lib, lib.tensor([0.25, 1.5, 3.75], dtype=lib.float64)), dtype,
          "call")


@pytest.mark.parametrize("name", ["i0", "sinc", "logit", "mvlgamma", "igamma", "igammac"])
def test_tensor_methods_and_in_place(name: str) -> None:
    args: tuple[Any, ...] = (2,) if name == "mvlgamma" else ()
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor([0.3, 0.6, 0.9], dtype=lib.float64) + (1.0 if name == "mvlgamma" else 0)
        if name.startswith("igamma"):
            args = (lib.tensor([0.5, 1.0, 2.5], dtype=lib.float64),)
        method = getattr(x, name)(*args)
        y = x.clone()
        returned = getattr(y, name + "_")(*args)
        assert returned is y
        results.append((_numpy(method), _numpy(y)))
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_large_arguments_and_overflow() -> None:
    x = np.array([1e3, 5e3, -5e3, 1e8, 1e15, 1e200])
    for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "i0", "i0e", "i1", "i1e",
                 "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                 "scaled_modified_bessel_k1", "spherical_bessel_j0", "erfcx", "log_ndtr"):
        _same(lambda lib, n=name: getattr(lib.special, n)(lib.tensor(x)), "float64", name)


def test_zeta_long_direct_sums() -> None:
    # q far below 0 (x an integer): many terms of the direct sum before the tail
    x = np.array([2.0, 4.0, 3.0, 1.5])
    q = np.array([-40.5, -12.25, 1e-3, 1e4])
    _same(lambda lib: lib.special.zeta(lib.tensor(x), lib.tensor(q)), "float64", "zeta")


def test_pure_numpy_kernels() -> None:
    """chainrule's ports need no SciPy: compared with PyTorch directly (not through the
    optional SciPy backend)."""
    from chainrule import _cephes

    x = np.linspace(-20, 20, 2001)
    np.testing.assert_allclose(_cephes.bessel_j0(x), torch.special.bessel_j0(
        torch.tensor(x)).numpy(), rtol=1e-10, atol=1e-15)
    y = np.linspace(1e-6, 1 - 1e-6, 1001)
    np.testing.assert_allclose(_cephes.ndtri(y), torch.special.ndtri(torch.tensor(y)).numpy(),
                               rtol=1e-12)
    assert math.isinf(float(_cephes.zeta(1.0, 2.0)))
