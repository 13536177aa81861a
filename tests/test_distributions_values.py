"""torch.distributions: every family's log_prob, cdf, icdf, entropy, mean, mode, variance and
stddev, and their gradients with respect to the parameters, against PyTorch's (same parameters
and values, float32 and float64, including edge values)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
from tests.conftest import torch

RNG = np.random.default_rng(1234)


def _pos(*shape: int, low: float = 0.5, high: float = 3.0) -> np.ndarray:
    return RNG.uniform(low, high, shape)


def _real(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape)


def _unit(*shape: int) -> np.ndarray:
    return RNG.uniform(0.05, 0.95, shape)


def _simplex(*shape: int) -> np.ndarray:
    p = RNG.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = RNG.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _tril(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    return np.linalg.cholesky(_spd(n, batch))


# (id, constructor(D, **params), parameters, values to score, methods, options)
#: values: the points for log_prob/cdf (icdf gets probabilities in (0, 1))
Case = tuple[str, Callable[..., Any], dict[str, np.ndarray], np.ndarray, tuple[str, ...]]

UNIVARIATE = ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev")

CASES: list[Case] = [
    (
        "Normal",
        lambda D, loc, scale: D.Normal(loc, scale),
        {"loc": _real(3), "scale": _pos(3)},
        _real(2, 3),
        UNIVARIATE,
    ),
    (
        "Bernoulli_probs",
        lambda D, probs: D.Bernoulli(probs=probs),
        {"probs": _unit(4)},
        np.array([0.0, 1.0, 1.0, 0.0]),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "Bernoulli_logits",
        lambda D, logits: D.Bernoulli(logits=logits),
        {"logits": _real(4)},
        np.array([0.0, 1.0, 1.0, 0.0]),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "Categorical_probs",
        lambda D, probs: D.Categorical(probs=probs),
        {"probs": _simplex(2, 4)},
        np.array([[0, 3], [2, 1]]).T,
        ("log_prob", "entropy", "mode"),
    ),
    (
        "Categorical_logits",
        lambda D, logits: D.Categorical(logits=logits),
        {"logits": _real(2, 4)},
        np.array([[0, 3], [2, 1]]).T,
        ("log_prob", "entropy", "mode"),
    ),
    (
        "OneHotCategorical",
        lambda D, probs: D.OneHotCategorical(probs=probs),
        {"probs": _simplex(2, 3)},
        np.eye(3)[[[0, 2], [1, 1]]],
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Uniform",
        lambda D, low, high: D.Uniform(low, low + high),
        {"low": _real(3), "high": _pos(3)},
        None,
        ("entropy", "mean", "variance", "stddev"),
    ),
    ("Exponential", lambda D, rate: D.Exponential(rate), {"rate": _pos(3)}, _pos(2, 3), UNIVARIATE),
    (
        "Laplace",
        lambda D, loc, scale: D.Laplace(loc, scale),
        {"loc": _real(3), "scale": _pos(3)},
        _real(2, 3),
        UNIVARIATE,
    ),
    (
        "LogNormal",
        lambda D, loc, scale: D.LogNormal(loc, scale),
        {"loc": _real(3), "scale": _pos(3)},
        _pos(2, 3),
        UNIVARIATE,
    ),
    (
        "Gamma",
        lambda D, concentration, rate: D.Gamma(concentration, rate),
        {"concentration": _pos(3), "rate": _pos(3)},
        _pos(2, 3),
        ("log_prob", "cdf", "entropy", "mean", "mode", "variance", "stddev"),
    ),
    (
        "Chi2",
        lambda D, df: D.Chi2(df),
        {"df": _pos(3, low=1.0, high=5.0)},
        _pos(2, 3),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "Beta",
        lambda D, c1, c0: D.Beta(c1, c0),
        {"c1": _pos(3), "c0": _pos(3)},
        _unit(2, 3),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Dirichlet",
        lambda D, concentration: D.Dirichlet(concentration),
        {"concentration": _pos(2, 3)},
        _simplex(2, 3),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Poisson",
        lambda D, rate: D.Poisson(rate),
        {"rate": _pos(3)},
        np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]]),
        ("log_prob", "mean", "mode", "variance"),
    ),
    (
        "Binomial",
        lambda D, probs: D.Binomial(5, probs=probs),
        {"probs": _unit(3)},
        np.array([[0.0, 1.0, 5.0], [2.0, 3.0, 4.0]]),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Binomial_logits",
        lambda D, logits: D.Binomial(4, logits=logits),
        {"logits": _real(3)},
        np.array([[0.0, 1.0, 4.0], [2.0, 3.0, 4.0]]),
        ("log_prob", "entropy", "mean"),
    ),
    (
        "Multinomial",
        lambda D, probs: D.Multinomial(4, probs=probs),
        {"probs": _simplex(2, 3)},
        np.array([[[4.0, 0.0, 0.0], [1.0, 2.0, 1.0]]]),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "Geometric",
        lambda D, probs: D.Geometric(probs=probs),
        {"probs": _unit(3)},
        np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]]),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Cauchy",
        lambda D, loc, scale: D.Cauchy(loc, scale),
        {"loc": _real(3), "scale": _pos(3)},
        _real(2, 3),
        UNIVARIATE,
    ),
    (
        "Gumbel",
        lambda D, loc, scale: D.Gumbel(loc, scale),
        {"loc": _real(3), "scale": _pos(3)},
        _real(2, 3),
        ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev"),
    ),
    (
        "HalfNormal",
        lambda D, scale: D.HalfNormal(scale),
        {"scale": _pos(3)},
        _pos(2, 3),
        UNIVARIATE,
    ),
    (
        "HalfCauchy",
        lambda D, scale: D.HalfCauchy(scale),
        {"scale": _pos(3)},
        _pos(2, 3),
        ("log_prob", "cdf", "icdf", "entropy", "mode"),
    ),
    (
        "StudentT",
        lambda D, df, loc, scale: D.StudentT(df, loc, scale),
        {"df": np.array([0.5, 1.5, 3.0, 8.0]), "loc": _real(4), "scale": _pos(4)},
        _real(2, 4),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "MultivariateNormal_cov",
        lambda D, loc, cov: D.MultivariateNormal(loc, cov),
        {"loc": _real(2, 3), "cov": _spd(3, (2,))},
        _real(4, 2, 3),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "MultivariateNormal_tril",
        lambda D, loc, tril: D.MultivariateNormal(loc, scale_tril=tril),
        {"loc": _real(3), "tril": _tril(3)},
        _real(4, 3),
        ("log_prob", "entropy", "variance"),
    ),
    (
        "MultivariateNormal_precision",
        lambda D, loc, prec: D.MultivariateNormal(loc, precision_matrix=prec),
        {"loc": _real(3), "prec": _spd(3)},
        _real(4, 3),
        ("log_prob", "entropy", "variance"),
    ),
    (
        "Weibull",
        lambda D, scale, concentration: D.Weibull(scale, concentration),
        {"scale": _pos(3), "concentration": _pos(3, low=1.2)},
        _pos(2, 3),
        ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Pareto",
        lambda D, scale, alpha: D.Pareto(scale, alpha),
        {"scale": _pos(3, low=0.1, high=0.4), "alpha": _pos(3, low=2.5)},
        _pos(2, 3, low=0.5),
        ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Kumaraswamy",
        lambda D, c1, c0: D.Kumaraswamy(c1, c0),
        {"c1": _pos(3, low=1.1), "c0": _pos(3, low=1.1)},
        _unit(2, 3),
        ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance"),
    ),
    (
        "LogisticNormal",
        lambda D, loc, scale: D.LogisticNormal(loc, scale),
        {"loc": _real(2, 3), "scale": _pos(2, 3)},
        _simplex(2, 4),
        ("log_prob",),
    ),
    (
        "FisherSnedecor",
        lambda D, df1, df2: D.FisherSnedecor(df1, df2),
        {"df1": np.array([1.0, 3.0, 6.0]), "df2": np.array([1.5, 4.5, 9.0])},
        _pos(2, 3),
        ("log_prob", "mean", "mode", "variance"),
    ),
    (
        "ContinuousBernoulli",
        lambda D, probs: D.ContinuousBernoulli(probs=probs),
        {"probs": np.array([0.1, 0.4995, 0.5003, 0.8])},
        _unit(2, 4),
        ("log_prob", "cdf", "icdf", "entropy", "mean", "variance"),
    ),
    (
        "NegativeBinomial",
        lambda D, total_count, probs: D.NegativeBinomial(total_count, probs),
        {"total_count": _pos(3), "probs": _unit(3)},
        np.array([[0.0, 1.0, 4.0], [2.0, 0.0, 7.0]]),
        ("log_prob", "mean", "mode", "variance"),
    ),
    (
        "InverseGamma",
        lambda D, concentration, rate: D.InverseGamma(concentration, rate),
        {"concentration": np.array([0.5, 1.5, 3.0]), "rate": _pos(3)},
        _pos(2, 3),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "GeneralizedPareto",
        lambda D, loc, scale, c: D.GeneralizedPareto(loc, scale, c),
        {"loc": np.zeros(3), "scale": _pos(3), "c": np.array([-0.2, 0.0, 0.3])},
        _pos(2, 3, low=0.0, high=1.0),
        UNIVARIATE,
    ),
    (
        "RelaxedBernoulli",
        lambda D, t, probs: D.RelaxedBernoulli(t, probs=probs),
        {"t": np.array(0.7), "probs": _unit(3)},
        _unit(2, 3),
        ("log_prob",),
    ),
    (
        "RelaxedOneHotCategorical",
        lambda D, t, probs: D.RelaxedOneHotCategorical(t, probs=probs),
        {"t": np.array(0.7), "probs": _simplex(2, 3)},
        _simplex(2, 3),
        ("log_prob",),
    ),
    (
        "LowRankMultivariateNormal",
        lambda D, loc, factor, diag: D.LowRankMultivariateNormal(loc, factor, diag),
        {"loc": _real(2, 3), "factor": _real(2, 3, 2), "diag": _pos(2, 3)},
        _real(4, 2, 3),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "VonMises",
        lambda D, loc, concentration: D.VonMises(loc, concentration),
        {"loc": _real(4), "concentration": np.array([0.3, 2.0, 3.7, 10.0])},
        _real(2, 4),
        ("log_prob", "mean", "variance"),
    ),
    (
        "LKJCholesky",
        lambda D, concentration: D.LKJCholesky(3, concentration),
        {"concentration": np.array([0.5, 1.0, 4.0])},
        np.linalg.cholesky(np.array([[[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]]])),
        ("log_prob",),
    ),
    (
        "Wishart",
        lambda D, df, cov: D.Wishart(df, cov),
        {"df": np.array([3.5, 6.0]), "cov": _spd(3, (2,))},
        _spd(3, (2,)),
        ("log_prob", "entropy", "mean", "mode", "variance"),
    ),
    (
        "Wishart_tril",
        lambda D, df, tril: D.Wishart(df, scale_tril=tril),
        {"df": np.array(4.0), "tril": _tril(2)},
        _spd(2),
        ("log_prob", "entropy", "mean"),
    ),
    (
        "Independent",
        lambda D, loc, scale: D.Independent(D.Normal(loc, scale), 1),
        {"loc": _real(2, 3), "scale": _pos(2, 3)},
        _real(2, 3),
        ("log_prob", "entropy", "mean", "variance"),
    ),
    (
        "MixtureSameFamily",
        lambda D, logits, loc, scale: D.MixtureSameFamily(
            D.Categorical(logits=logits), D.Normal(loc, scale)
        ),
        {"logits": _real(2, 3), "loc": _real(2, 3), "scale": _pos(2, 3)},
        _real(4, 2),
        ("log_prob", "cdf", "mean", "variance"),
    ),
]


def _tensors(lib: Any, params: dict[str, np.ndarray], dtype: Any) -> dict[str, Any]:
    return {k: lib.tensor(v, dtype=dtype, requires_grad=True) for k, v in params.items()}


def _evaluate(lib: Any, case: Case, dtype: Any, method: str) -> tuple[Any, dict[str, Any]]:
    _, build, params, values, _ = case
    tensors = _tensors(lib, params, dtype)
    d = build(lib.distributions, **tensors)
    if method in ("log_prob", "cdf"):
        out = getattr(d, method)(lib.tensor(values, dtype=dtype))
    elif method == "icdf":
        probs = np.linspace(0.05, 0.95, int(np.prod(d.batch_shape)))
        out = d.icdf(lib.tensor(probs.reshape(tuple(d.batch_shape)), dtype=dtype))
    elif method == "entropy":
        out = d.entropy()
    else:
        out = getattr(d, method)
    grads = {}
    if out.requires_grad:
        finite = out.detach().isfinite()
        weights = lib.linspace(0.5, 1.5, out.numel(), dtype=dtype).reshape(out.shape)
        try:
            (lib.where(finite, out, 0.0) * weights).sum().backward()
        except NotImplementedError as error:  # (Gamma.cdf in the concentration)
            return out.detach().numpy(), {"error": np.array(str(error))}
        grads = {k: (None if t.grad is None else t.grad.numpy()) for k, t in tensors.items()}
    return out.detach().numpy(), grads


def _tolerance(dtype_name: str) -> dict[str, float]:
    return (
        {"rtol": 1e-4, "atol": 1e-5} if dtype_name == "float32" else {"rtol": 1e-9, "atol": 1e-10}
    )


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_pytorch(case: Case, dtype_name: str) -> None:
    for method in case[4]:
        try:
            expected, expected_grads = _evaluate(torch, case, getattr(torch, dtype_name), method)
        except RuntimeError as error:  # (GeneralizedPareto in float64: PyTorch's isclose)
            with pytest.raises(RuntimeError, match=str(error)):
                _evaluate(chainrule, case, getattr(chainrule, dtype_name), method)
            continue
        actual, actual_grads = _evaluate(chainrule, case, getattr(chainrule, dtype_name), method)
        tolerance = _tolerance(dtype_name)
        assert actual.dtype == expected.dtype, (case[0], method)
        np.testing.assert_allclose(
            actual, expected, equal_nan=True, err_msg=f"{case[0]}.{method}", **tolerance
        )
        assert actual_grads.keys() == expected_grads.keys(), (case[0], method)
        for name, g in expected_grads.items():
            if g is None:
                assert actual_grads[name] is None or not np.any(actual_grads[name]), (
                    case[0],
                    method,
                    name,
                )
                continue
            assert actual_grads[name] is not None, (case[0], method, name)
            if name == "error":
                assert actual_grads[name] == g
                continue
            np.testing.assert_allclose(
                actual_grads[name],
                g,
                equal_nan=True,
                err_msg=f"d {case[0]}.{method} / d {name}",
                **tolerance,
            )


def test_uniform_log_prob_and_cdf_inside_and_outside_the_support() -> None:
    for lib in (torch, chainrule):
        d = lib.distributions.Uniform(
            lib.tensor([0.0, -1.0]), lib.tensor([1.0, 2.0]), validate_args=False
        )
        values = lib.tensor([[0.5, -2.0], [1.0, 1.5]])
        result = (
            d.log_prob(values).numpy(),
            d.cdf(values).numpy(),
            d.icdf(lib.tensor([0.25, 0.5])).numpy(),
        )
        if lib is torch:
            expected = result
    for a, b in zip(result, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_edge_values_match_pytorch() -> None:
    """Zero probabilities, values on the boundary of the support, infinite values."""

    def run(lib: Any) -> list[np.ndarray]:
        D = lib.distributions
        out = []
        out.append(
            D.Bernoulli(probs=lib.tensor([0.0, 1.0, 0.5])).log_prob(lib.tensor([0.0, 1.0, 1.0]))
        )
        out.append(D.Bernoulli(probs=lib.tensor([0.0, 1.0])).entropy())
        out.append(D.Categorical(probs=lib.tensor([0.0, 0.3, 0.7])).entropy())
        out.append(D.Geometric(probs=lib.tensor([1.0, 0.5])).log_prob(lib.tensor([0.0, 0.0])))
        out.append(D.Poisson(lib.tensor([0.0, 2.0])).log_prob(lib.tensor([0.0, 0.0])))
        out.append(D.Exponential(lib.tensor(2.0)).log_prob(lib.tensor([0.0, math.inf])))
        out.append(D.Normal(0.0, 1.0).cdf(lib.tensor([-math.inf, 0.0, math.inf])))
        out.append(D.Normal(0.0, 1.0).icdf(lib.tensor([0.0, 0.5, 1.0])))
        out.append(
            D.Gamma(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0])).log_prob(lib.tensor([0.0, 0.0]))
        )
        out.append(D.Beta(lib.tensor([1.0]), lib.tensor([2.0])).log_prob(lib.tensor([0.0])))
        out.append(D.Dirichlet(lib.tensor([1.0, 2.0])).log_prob(lib.tensor([0.0, 1.0])))
        out.append(D.Laplace(0.0, 1.0).icdf(lib.tensor([0.0, 1.0])))
        out.append(D.HalfNormal(lib.tensor(1.0)).log_prob(lib.tensor(0.0)))
        return [t.numpy() for t in out]

    for a, b in zip(run(chainrule), run(torch), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)


_WISHART_VALUE = _spd(3)

GRADCHECKED = [
    ("Normal", lambda D, a, b: D.Normal(a, b.exp()), 1),
    ("Gamma", lambda D, a, b: D.Gamma(a.exp(), b.exp()), 1),
    ("Beta", lambda D, a, b: D.Beta(a.exp(), b.exp()), 0.5),
    ("StudentT", lambda D, a, b: D.StudentT(a.exp() + 2, b, a.exp()), 1),
    ("VonMises", lambda D, a, b: D.VonMises(a, b.exp() * 3), 1),
    ("Kumaraswamy", lambda D, a, b: D.Kumaraswamy(a.exp(), b.exp()), 0.5),
    ("Binomial", lambda D, a, b: D.Binomial(3, logits=a + b), 2),
    ("NegativeBinomial", lambda D, a, b: D.NegativeBinomial(a.exp(), logits=b), 2),
    ("Categorical", lambda D, a, b: D.Categorical(logits=a.outer(b)), 1),
    ("Dirichlet", lambda D, a, b: D.Dirichlet((a.outer(b) * 0.3).exp()), None),
    (
        "MultivariateNormal",
        lambda D, a, b: D.MultivariateNormal(a, (b.outer(b) + chainrule.eye(3, dtype=b.dtype) * 2)),
        0.3,
    ),
    (
        "LowRankMultivariateNormal",
        lambda D, a, b: D.LowRankMultivariateNormal(a, b.outer(a)[:, :2], b.exp()),
        0.3,
    ),
    (
        "Wishart",
        lambda D, a, b: D.Wishart(
            a.exp().sum() + 3, b.outer(b) + chainrule.eye(3, dtype=b.dtype) * 2
        ),
        None,
    ),
    ("LogNormal", lambda D, a, b: D.LogNormal(a, b.exp()), 1.5),
    ("Gumbel", lambda D, a, b: D.Gumbel(a, b.exp()), 0.2),
]


@pytest.mark.parametrize("entry", GRADCHECKED, ids=[g[0] for g in GRADCHECKED])
def test_log_prob_and_entropy_pass_gradcheck_and_gradgradcheck(entry: Any) -> None:
    """Finite differences (float64), first and second order, of log_prob + entropy in the
    parameters."""
    name, build, point = entry

    def function(a: Any, b: Any) -> Any:
        d = build(chainrule.distributions, a, b)
        if name == "Dirichlet":
            value = chainrule.tensor([[0.2, 0.3, 0.5]] * 3, dtype=a.dtype)
        elif name == "Wishart":
            value = chainrule.tensor(_WISHART_VALUE, dtype=a.dtype)
        else:
            value = chainrule.full(
                tuple(d.batch_shape) + tuple(d.event_shape), float(point), dtype=a.dtype
            )
        if name == "Categorical":
            value = chainrule.tensor([0, 2, 1])
        out = d.log_prob(value).sum()
        if name not in ("VonMises", "NegativeBinomial", "Kumaraswamy"):
            out = out + d.entropy().sum()
        return out

    a = chainrule.tensor([0.3, -0.2, 0.5], dtype=chainrule.float64, requires_grad=True)
    b = chainrule.tensor([0.1, 0.4, -0.3], dtype=chainrule.float64, requires_grad=True)
    assert chainrule.autograd.gradcheck(function, (a, b))
    assert chainrule.autograd.gradgradcheck(function, (a, b))


EDGES = [
    # (id, constructor from a parameter tensor p, values): log_prob and its gradient in p
    ("Beta_at_0_and_1", lambda D, p: D.Beta(p, p + 1), [0.0, 1.0, 0.5]),
    ("Gamma_concentration_below_1_at_0", lambda D, p: D.Gamma(p * 0.5, p), [0.0, 1e-30, 2.0]),
    (
        "Dirichlet_on_a_face",
        lambda D, p: D.Dirichlet(p.unsqueeze(0).expand(3, 3)),
        [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]],
    ),
    ("Binomial_probs_1", lambda D, p: D.Binomial(3, probs=p / p), [3.0, 0.0, 2.0]),
    ("Binomial_probs_0", lambda D, p: D.Binomial(3, probs=p * 0), [0.0, 1.0, 3.0]),
    (
        "Categorical_zero_probability",
        lambda D, p: D.Categorical(
            probs=chainrule.where(p > 1.0, 0.0, p)
            if isinstance(p, chainrule.Tensor)
            else torch.where(p > 1.0, 0.0, p)
        ),
        [0, 1, 2],
    ),
    ("Geometric_probs_1", lambda D, p: D.Geometric(probs=p / p), [0.0, 1.0, 2.0]),
    ("Poisson_rate_0", lambda D, p: D.Poisson(p * 0), [0.0, 1.0, 2.0]),
    ("Exponential_infinite_value", lambda D, p: D.Exponential(p), [0.0, math.inf, 1.0]),
    ("Normal_infinite_value", lambda D, p: D.Normal(p, p), [-math.inf, math.inf, 0.0]),
    ("Uniform_edges", lambda D, p: D.Uniform(p - 2, p + 1), [-0.5, 1.0, 2.5]),
    ("Laplace_at_loc", lambda D, p: D.Laplace(p, p), [0.5, 1.5, 0.0]),
    ("StudentT_large_df", lambda D, p: D.StudentT(p * 100), [0.0, 1.0, -3.0]),
    (
        "NegativeBinomial_total_0",
        lambda D, p: D.NegativeBinomial(p * 0, probs=p / 4),
        [0.0, 1.0, 2.0],
    ),
    (
        "ContinuousBernoulli_at_half",
        lambda D, p: D.ContinuousBernoulli(probs=p * 0 + 0.5),
        [0.0, 1.0, 0.3],
    ),
    ("VonMises_wrapped", lambda D, p: D.VonMises(p, p), [math.pi, -math.pi, 7.0]),
]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("edge", EDGES, ids=[e[0] for e in EDGES])
def test_log_prob_and_gradient_at_edge_values_match_pytorch(edge: Any, dtype_name: str) -> None:
    name, build, values = edge
    results = []
    for lib in (chainrule, torch):
        dtype = getattr(lib, dtype_name)
        p = lib.tensor([0.5, 1.0, 2.0], dtype=dtype, requires_grad=True)
        d = build(lib.distributions, p)
        value = lib.tensor(values, dtype=lib.int64 if name.startswith("Categorical") else dtype)
        if name.startswith("Categorical"):
            d = build(lib.distributions, p)
        out = d.log_prob(value)
        finite = out.detach().isfinite()
        grad = None
        if out.requires_grad:
            lib.where(finite, out, 0.0).sum().backward()
            grad = p.grad.numpy() if p.grad is not None else None
        results.append((out.detach().numpy(), grad))
    (ours, our_grad), (theirs, their_grad) = results
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype_name == "float32" else {"rtol": 1e-10}
    if name == "StudentT_large_df" and dtype_name == "float32":
        # d/d df is a difference of two digammas near 4: float32 digamma's rounding (chainrule's
        # evaluates it in double, PyTorch in float) shows at 1e-3
        tolerance = {"rtol": 5e-3, "atol": 1e-6}
    np.testing.assert_allclose(ours, theirs, equal_nan=True, err_msg=name, **tolerance)
    if their_grad is None:
        assert our_grad is None or not np.any(our_grad)
    else:
        np.testing.assert_allclose(our_grad, their_grad, equal_nan=True, err_msg=name, **tolerance)
