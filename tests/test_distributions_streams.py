"""Seeded torch.distributions samples are PyTorch's: under ``manual_seed(s)`` each family's
``sample``/``rsample`` draws from the generator what PyTorch's draws (the same random calls in
the same order), so the values equal PyTorch's and the generator is left where PyTorch leaves
it (the ``rand(3)`` drawn after the sample is PyTorch's too).

Families whose sample is a pointwise function of the draws (``exp``, ``log``, ``pow`` ... of a
transformed distribution) may differ from PyTorch's vectorised math in the last bits: those
are compared within a few units in the last place, the draws underneath them exactly."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
from tests.conftest import torch

Builder = Callable[[Any, Any], Any]


def _t(lib: Any, values: Any, dtype: Any) -> Any:
    return lib.tensor(values, dtype=dtype)


# name -> (builder(lib, dtype), methods, units in the last place allowed)
FAMILIES: dict[str, tuple[Builder, tuple[str, ...], int]] = {
    "Normal": (
        lambda T, d: T.distributions.Normal(_t(T, [0.0, 1.0], d), _t(T, [[1.0], [2.0], [0.5]], d)),
        ("sample", "rsample"),
        0,
    ),
    "Uniform": (
        lambda T, d: T.distributions.Uniform(_t(T, [0.0, 1.0], d), _t(T, [[1.5], [2.0]], d)),
        ("sample", "rsample"),
        0,
    ),
    "Exponential": (
        lambda T, d: T.distributions.Exponential(_t(T, [0.5, 1.0, 2.0], d)),
        ("sample", "rsample"),
        0,
    ),
    "Cauchy": (
        lambda T, d: T.distributions.Cauchy(_t(T, [0.0, 1.0], d), _t(T, [[1.0], [2.0]], d)),
        ("sample", "rsample"),
        0,
    ),
    "HalfNormal": (
        lambda T, d: T.distributions.HalfNormal(_t(T, [1.0, 2.0], d)),
        ("sample", "rsample"),
        0,
    ),
    "HalfCauchy": (
        lambda T, d: T.distributions.HalfCauchy(_t(T, [1.0, 2.0], d)),
        ("sample", "rsample"),
        0,
    ),
    "Geometric": (
        lambda T, d: T.distributions.Geometric(_t(T, [0.2, 0.7], d)),
        ("sample",),
        0,
    ),
    "Bernoulli": (
        lambda T, d: T.distributions.Bernoulli(_t(T, [0.2, 0.7], d)),
        ("sample",),
        0,
    ),
    "VonMises": (
        lambda T, d: T.distributions.VonMises(_t(T, [0.0, 1.0], d), _t(T, [1.0, 5.0], d)),
        ("sample",),
        0,
    ),
    "LowRankMultivariateNormal": (
        lambda T, d: T.distributions.LowRankMultivariateNormal(
            _t(T, [0.0, 1.0], d), _t(T, [[1.0], [0.5]], d), _t(T, [1.0, 2.0], d)
        ),
        ("sample", "rsample"),
        0,
    ),
    "Categorical": (
        lambda T, d: T.distributions.Categorical(_t(T, [[0.2, 0.3, 0.5], [0.0, 0.9, 0.1]], d)),
        ("sample",),
        0,
    ),
    "OneHotCategorical": (
        lambda T, d: T.distributions.OneHotCategorical(_t(T, [0.2, 0.0, 0.3, 0.5], d)),
        ("sample",),
        0,
    ),
    "Multinomial": (
        lambda T, d: T.distributions.Multinomial(7, _t(T, [[0.2, 0.3, 0.5], [0.6, 0.0, 0.4]], d)),
        ("sample",),
        0,
    ),
    # PyTorch's gamma sampler (Marsaglia and Tsang on its double uniforms and normals)
    "Gamma": (
        lambda T, d: T.distributions.Gamma(
            _t(T, [0.5, 1.0, 3.0], d), _t(T, [[1.0, 2.0, 0.5], [3.0, 1.0, 1.0]], d)
        ),
        ("sample", "rsample"),
        0,
    ),
    "Chi2": (
        lambda T, d: T.distributions.Chi2(_t(T, [0.5, 1.0, 3.0], d)),
        ("sample", "rsample"),
        0,
    ),
    "InverseGamma": (
        lambda T, d: T.distributions.InverseGamma(_t(T, [0.5, 1.0, 3.0], d), _t(T, 2.0, d)),
        ("sample", "rsample"),
        0,
    ),
    "Beta": (
        lambda T, d: T.distributions.Beta(_t(T, [0.5, 1.0, 3.0], d), _t(T, [[1.0], [0.2]], d)),
        ("sample", "rsample"),
        0,
    ),
    "Dirichlet": (
        lambda T, d: T.distributions.Dirichlet(_t(T, [[0.5, 1.0, 3.0], [2.0, 2.0, 0.1]], d)),
        ("sample", "rsample"),
        0,
    ),
    "StudentT": (
        lambda T, d: T.distributions.StudentT(_t(T, [0.5, 1.0, 3.0], d), _t(T, [[0.0], [1.0]], d)),
        ("sample", "rsample"),
        0,
    ),
    "FisherSnedecor": (
        lambda T, d: T.distributions.FisherSnedecor(_t(T, [0.5, 1.0, 3.0], d), _t(T, 5.0, d)),
        ("sample", "rsample"),
        0,
    ),
    "LKJCholesky": (
        lambda T, d: T.distributions.LKJCholesky(3, _t(T, [0.5, 2.0], d)),
        ("sample",),
        4,
    ),
    "Wishart": (
        lambda T, d: T.distributions.Wishart(
            _t(T, [3.0, 4.5], d), covariance_matrix=_t(T, [[2.0, 0.5], [0.5, 1.0]], d)
        ),
        ("sample", "rsample"),
        4,
    ),
    # PyTorch's Poisson and binomial samplers
    "Poisson": (
        lambda T, d: T.distributions.Poisson(_t(T, [[0.5, 4.0, 30.0], [0.0, 9.9, 1e4]], d)),
        ("sample",),
        0,
    ),
    "Binomial": (
        lambda T, d: T.distributions.Binomial(
            _t(T, [5.0, 10.0, 100.0, 3000.0], d), _t(T, [[0.2], [0.5], [0.9], [0.03]], d)
        ),
        ("sample",),
        0,
    ),
    "NegativeBinomial": (
        lambda T, d: T.distributions.NegativeBinomial(_t(T, [5.0, 10.0], d), _t(T, [0.2, 0.5], d)),
        ("sample",),
        0,
    ),
    # pointwise math on the draws: a few ulps of PyTorch's vectorised exp/log/pow/matmul
    "Laplace": (
        lambda T, d: T.distributions.Laplace(_t(T, [0.0, 1.0], d), _t(T, [[1.0], [2.0]], d)),
        ("sample", "rsample"),
        2,
    ),
    "LogNormal": (
        lambda T, d: T.distributions.LogNormal(_t(T, [0.0, 1.0], d), _t(T, [[1.0], [0.5]], d)),
        ("sample", "rsample"),
        2,
    ),
    "Gumbel": (
        lambda T, d: T.distributions.Gumbel(_t(T, [0.0, 1.0], d), _t(T, [[1.0], [2.0]], d)),
        ("sample", "rsample"),
        4,
    ),
    "Pareto": (
        lambda T, d: T.distributions.Pareto(_t(T, [1.0, 2.0], d), _t(T, [[1.0], [3.0]], d)),
        ("sample", "rsample"),
        4,
    ),
    "Weibull": (
        lambda T, d: T.distributions.Weibull(_t(T, [1.0, 2.0], d), _t(T, [[1.0], [3.0]], d)),
        ("sample", "rsample"),
        4,
    ),
    "Kumaraswamy": (
        lambda T, d: T.distributions.Kumaraswamy(_t(T, [1.0, 2.0], d), _t(T, [[1.0], [3.0]], d)),
        ("sample", "rsample"),
        8,
    ),
    "LogisticNormal": (
        lambda T, d: T.distributions.LogisticNormal(_t(T, [0.0, 1.0], d), _t(T, [1.0, 2.0], d)),
        ("sample", "rsample"),
        8,
    ),
    "RelaxedBernoulli": (
        lambda T, d: T.distributions.RelaxedBernoulli(_t(T, 0.5, d), probs=_t(T, [0.2, 0.7], d)),
        ("sample", "rsample"),
        4,
    ),
    "RelaxedOneHotCategorical": (
        lambda T, d: T.distributions.RelaxedOneHotCategorical(
            _t(T, 0.5, d), probs=_t(T, [0.2, 0.3, 0.5], d)
        ),
        ("sample", "rsample"),
        8,
    ),
    "ContinuousBernoulli": (
        lambda T, d: T.distributions.ContinuousBernoulli(_t(T, [0.2, 0.7], d)),
        ("sample", "rsample"),
        8,
    ),
    "GeneralizedPareto": (
        lambda T, d: T.distributions.GeneralizedPareto(
            _t(T, [0.0, 1.0], d), _t(T, [1.0, 2.0], d), _t(T, [0.1, -0.2], d)
        ),
        ("sample", "rsample"),
        2,
    ),
    "MultivariateNormal": (
        lambda T, d: T.distributions.MultivariateNormal(
            _t(T, [0.0, 1.0], d), _t(T, [[2.0, 0.5], [0.5, 1.0]], d)
        ),
        ("sample", "rsample"),
        4,
    ),
}


def _cases() -> list[Any]:
    cases = []
    for name, (_, methods, _ulps) in FAMILIES.items():
        for method in methods:
            for dtype in ("float32", "float64"):
                for shape in ((), (3, 2)):
                    cases.append(
                        pytest.param(
                            name, method, dtype, shape, id=f"{name}-{method}-{dtype}-{shape}"
                        )
                    )
    return cases


def _seeded_draw(lib: Any, name: str, method: str, dtype: str, shape: tuple[int, ...]):
    """The sample under ``manual_seed(7)`` and the ``rand(3)`` drawn after it."""
    build = FAMILIES[name][0]
    lib.manual_seed(7)
    distribution = build(lib, getattr(lib, dtype))
    with warnings.catch_warnings():
        # (PyTorch's Wishart warns "Singular sample detected." of every sample, chainrule too)
        warnings.simplefilter("ignore")
        value = getattr(distribution, method)(shape)
    after = lib.rand(3)
    return value.detach().numpy().copy(), after.numpy().copy()


def _assert_within_ulps(ours: np.ndarray, theirs: np.ndarray, ulps: int) -> None:
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if ulps == 0:
        np.testing.assert_array_equal(ours, theirs)
        return
    spacing = np.spacing(np.abs(theirs)).astype(np.float64)
    error = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    assert np.all(error <= ulps * spacing), (ours, theirs)


@pytest.mark.parametrize(("name", "method", "dtype", "shape"), _cases())
def test_seeded_sample_is_pytorchs(name: str, method: str, dtype: str, shape: tuple[int, ...]):
    ours, ours_after = _seeded_draw(chainrule, name, method, dtype, shape)
    theirs, theirs_after = _seeded_draw(torch, name, method, dtype, shape)
    _assert_within_ulps(ours, theirs, FAMILIES[name][2])
    np.testing.assert_array_equal(ours_after, theirs_after)


# torch.multinomial: one sample and samples without replacement take the largest of
# p / exponential draws (laid out as the input); several with replacement search double
# uniforms in each row's cumulative sum


def _probabilities(lib: Any, dtype: str, shape: tuple[int, ...], zeros: bool, transposed: bool):
    p = np.random.default_rng(sum(shape)).random(shape)
    if zeros:
        p[..., ::3] = 0.0
    if transposed:
        return lib.tensor(np.ascontiguousarray(p.T), dtype=getattr(lib, dtype)).t()
    return lib.tensor(p, dtype=getattr(lib, dtype))


def _seeded_multinomial(lib: Any, dtype: str, shape, zeros, transposed, n: int, replacement: bool):
    lib.manual_seed(11)
    p = _probabilities(lib, dtype, shape, zeros, transposed)
    drawn = lib.multinomial(p, n, replacement)
    return drawn.numpy().copy(), lib.rand(3).numpy().copy()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (4, 40)], ids=str)
@pytest.mark.parametrize("zeros", [False, True], ids=["positive", "with_zeros"])
@pytest.mark.parametrize(
    ("n", "replacement"), [(1, False), (1, True), (3, False), (3, True), (12, True)]
)
def test_multinomial_draws_pytorchs_indices(dtype, shape, zeros, n, replacement) -> None:
    for transposed in (False, True) if len(shape) == 2 else (False,):
        args = (dtype, shape, zeros, transposed, n, replacement)
        ours, ours_after = _seeded_multinomial(chainrule, *args)
        theirs, theirs_after = _seeded_multinomial(torch, *args)
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(ours_after, theirs_after)


def test_multinomial_without_replacement_orders_all_categories_as_pytorch() -> None:
    # every category drawn: the zero-probability ones last, in PyTorch's topk order
    for lib in (chainrule, torch):
        lib.manual_seed(5)
    p = [0.0, 0.25, 0.0, 0.5, 0.0, 0.25, 0.0]
    ours = chainrule.multinomial(chainrule.tensor(p), 7)
    theirs = torch.multinomial(torch.tensor(p), 7)
    assert ours.tolist() == theirs.tolist()


_NAN, _INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("p", "n", "replacement"),
    [
        ([[1.0, 1.0], [1.0, _NAN]], 3, True),
        ([[1.0, 1.0], [0.0, 0.0]], 3, True),
        ([[1.0, -1.0], [1.0, 1.0]], 3, True),
        ([[1.0, _INF], [1.0, 1.0]], 3, True),
        ([1.0, _NAN], 1, False),
        ([1.0, -1.0], 2, False),
        ([1.0, _INF], 1, True),
        ([[1.0, 1.0], [0.0, 0.0]], 1, False),
        ([2.0, 1.0], 3, False),
        ([2.0, 1.0], 0, True),
    ],
)
def test_multinomial_refuses_as_pytorch_after_the_same_draws(p, n, replacement) -> None:
    # a bad row of the with-replacement kernel is found after the rows before it have drawn
    messages = []
    for lib in (chainrule, torch):
        lib.manual_seed(0)
        with pytest.raises(RuntimeError) as error:
            lib.multinomial(lib.tensor(p), n, replacement)
        messages.append((str(error.value), lib.rand(2).tolist()))
    assert messages[0] == messages[1]


# The gamma kernels themselves


_CONCENTRATIONS = [
    -0.5, -0.8, 0.0, -0.0, math.nan, math.inf, -2.0, 1e-30, 1e-3, 0.1, 0.5, 0.999, 1.0,
    1.0 / 3.0, 0.3333333432674408, 1.5, 7.0, 100.0, 1e6, 3e38,
]  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", _CONCENTRATIONS)
def test_standard_gamma_draws_pytorchs_numbers(dtype: str, alpha: float) -> None:
    # edge concentrations: 0 (no draw), NaN and d < 0 (the sampler's NaN kept out by max),
    # infinity, concentrations below 1 (boosted, in float32 for a float32 tensor)
    drawn = []
    for lib in (chainrule, torch):
        lib.manual_seed(1)
        values = lib._standard_gamma(lib.tensor([alpha] * 5, dtype=getattr(lib, dtype)))
        drawn.append((values.tolist(), lib.rand(2).tolist()))
    assert drawn[0] == drawn[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_and_dirichlet_draw_pytorchs_numbers_over_concentrations(dtype):
    alpha = np.exp(np.random.default_rng(0).uniform(-5, 5, 600))
    for draw, shape in (
        (chainrule._standard_gamma, (600,)),
        (chainrule._sample_dirichlet, (-1, 3)),
    ):
        results = []
        for lib in (chainrule, torch):
            lib.manual_seed(2)
            function = getattr(lib, draw.__name__)
            values = function(lib.tensor(alpha.reshape(shape), dtype=getattr(lib, dtype)))
            results.append((values.numpy(), lib.rand(2).numpy()))
        np.testing.assert_array_equal(results[0][0], results[1][0])
        np.testing.assert_array_equal(results[0][1], results[1][1])


def test_wishart_warns_and_redraws_as_pytorch() -> None:
    # PyTorch redraws the samples its check calls singular (the positive-definite ones)
    caught = []
    for lib in (chainrule, torch):
        lib.manual_seed(5)
        df = lib.tensor([3.0, 4.5], requires_grad=True)
        cov = lib.tensor([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 0.0], [0.0, 3.0]]])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            sample = lib.distributions.Wishart(df, covariance_matrix=cov).rsample()
        sample.sum().backward()
        caught.append((sample.detach().numpy(), [str(w.message) for w in seen], df.grad.numpy()))
    np.testing.assert_allclose(caught[0][0], caught[1][0], rtol=1e-6)
    assert caught[0][1] == caught[1][1] == ["Singular sample detected."]
    np.testing.assert_allclose(caught[0][2], caught[1][2], rtol=1e-6)


# torch.poisson and torch.binomial


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_poisson_draws_pytorchs_numbers(dtype: str) -> None:
    rng = np.random.default_rng(0)
    small = rng.uniform(0, 12, 100)  # (multiplied uniforms below 10)
    large = np.exp(rng.uniform(2, 12, 100))  # (transformed rejection)
    edges = [0.0, 10.0, 9.999, 1e-300, 1e20, math.inf]  # (1e20, inf: int64's minimum)
    rates = np.concatenate([small, large, edges])
    drawn = []
    for lib in (chainrule, torch):
        lib.manual_seed(4)
        values = lib.poisson(lib.tensor(rates, dtype=getattr(lib, dtype)))
        drawn.append((values.float().numpy(), lib.rand(2).numpy()))
    np.testing.assert_array_equal(drawn[0][0], drawn[1][0])
    np.testing.assert_array_equal(drawn[0][1], drawn[1][1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_draws_pytorchs_numbers(dtype: str) -> None:
    rng = np.random.default_rng(1)
    counts = np.concatenate(
        [rng.integers(0, 30, 100), rng.integers(0, 5000, 100), [0, 5, 1e9, 7, 20, 20, 3]]
    ).astype(np.float64)
    probs = np.concatenate([rng.uniform(0, 1, 200), [0.5, 0.0, 0.3, 1.0, 0.5, 0.51, 0.999]])
    drawn = []
    for lib in (chainrule, torch):
        lib.manual_seed(4)
        count = lib.tensor(counts, dtype=getattr(lib, dtype))
        values = lib.binomial(count, lib.tensor(probs, dtype=getattr(lib, dtype)))
        special = lib.binomial(
            lib.tensor([math.inf, 5.0, 5.0, -1.0, 5.0]), lib.tensor([0.7, math.nan, 1.5, 0.3, -0.2])
        )
        drawn.append((values.numpy(), special.numpy(), lib.rand(2).numpy()))
    for ours, theirs in zip(drawn[0], drawn[1], strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_weighted_random_sampler_draws_pytorchs_indices() -> None:
    # (torch.multinomial with the sampler's generator, with and without replacement)
    drawn = []
    for lib in (chainrule, torch):
        generator = lib.Generator()
        generator.manual_seed(3)
        weights = [0.1, 0.5, 2.0, 0.0, 1.0]
        sampler = lib.utils.data.WeightedRandomSampler
        with_replacement = list(sampler(weights, 12, replacement=True, generator=generator))
        without = list(sampler(weights, 4, replacement=False, generator=generator))
        drawn.append((with_replacement, without, lib.rand(2, generator=generator).tolist()))
    assert drawn[0] == drawn[1]
