"""torch.distributions sampling: the sampling ops (their nodes, implicit-reparameterisation
gradients and errors against PyTorch's), sample shapes and dtypes, sample statistics (seeded,
with generous tolerances: chainrule's random streams are not PyTorch's) and reparameterised
gradients."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import chainrule
from tests.conftest import torch
from tests.test_distributions_values import CASES, Case


def _pair(values: Any, dtype: str = "float64", requires_grad: bool = False) -> tuple[Any, Any]:
    array = np.asarray(values)
    return (
        chainrule.tensor(array, dtype=getattr(chainrule, dtype), requires_grad=requires_grad),
        torch.tensor(array, dtype=getattr(torch, dtype), requires_grad=requires_grad),
    )


# The ops


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_grad_values_match_pytorch(dtype: str) -> None:
    rng = np.random.default_rng(0)
    alpha = np.exp(rng.uniform(-3, 4, 3000))
    # samples in all the regimes: small x, x near alpha, large alpha, the rational fit
    x = np.concatenate(
        [
            rng.gamma(alpha[:1000]),
            alpha[1000:2000] * rng.uniform(0.85, 1.15, 1000),
            rng.uniform(0.01, 30.0, 1000),
        ]
    )
    x = np.maximum(x, 1e-30)
    a_cr, a_t = _pair(alpha, dtype)
    x_cr, x_t = _pair(x, dtype)
    actual = chainrule._standard_gamma_grad(a_cr, x_cr).numpy()
    expected = torch._standard_gamma_grad(a_t, x_t).numpy()
    rtol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_grad_values_match_pytorch(dtype: str) -> None:
    rng = np.random.default_rng(1)
    alpha = np.exp(rng.uniform(-3, 4, 3000))
    total = alpha + np.exp(rng.uniform(-3, 4, 3000))
    x = np.clip(rng.beta(alpha, total - alpha), 1e-6, 1 - 1e-6)
    x[:500] = rng.uniform(0.01, 0.99, 500)
    pairs = [_pair(v, dtype) for v in (x, alpha, total)]
    actual = chainrule._dirichlet_grad(*(p[0] for p in pairs)).numpy()
    expected = torch._dirichlet_grad(*(p[1] for p in pairs)).numpy()
    # PyTorch evaluates some branches in float for float32 inputs
    rtol = 1e-3 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(
        actual, expected, rtol=rtol, atol=1e-6 if dtype == "float32" else 1e-12
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_records_its_node_and_implicit_gradient(dtype: str) -> None:
    chainrule.manual_seed(0)
    alpha = chainrule.tensor(
        [0.3, 1.0, 4.0, 20.0], dtype=getattr(chainrule, dtype), requires_grad=True
    )
    x = chainrule._standard_gamma(alpha)
    assert x.grad_fn.name() == "StandardGammaBackward0"
    assert x.dtype == alpha.dtype and bool((x > 0).all())
    x.backward(chainrule.tensor([1.0, 2.0, 3.0, 4.0], dtype=alpha.dtype))
    sample = torch.tensor(x.detach().numpy())
    reference = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()), sample)
    expected = reference * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=reference.dtype)
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=1e-5)


def test_standard_gamma_edge_concentrations_match_pytorch() -> None:
    for dtype in ("float32", "float64"):
        values = [-1.0, 0.0, float("nan"), float("inf")]
        actual = chainrule._standard_gamma(_pair(values, dtype)[0]).numpy()
        expected = torch._standard_gamma(_pair(values, dtype)[1]).numpy()
        np.testing.assert_array_equal(actual, expected)


def test_the_derivatives_pytorch_lacks_raise_its_errors() -> None:
    for function in (
        lambda lib, a: lib._standard_gamma_grad(a, a * 1),
        lambda lib, a: lib._sample_dirichlet(a),
        lambda lib, a: lib._dirichlet_grad(a * 0.1, a * 1, a * 3),
        lambda lib, a: lib.binomial(a.detach() + 3, a.sigmoid()),
    ):
        messages = []
        for lib in (chainrule, torch):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            out = function(lib, a)
            with pytest.raises((NotImplementedError, RuntimeError)) as info:
                out.sum().backward()
            messages.append((type(info.value), str(info.value).split("\n")[0]))
        assert messages[0] == messages[1]


def test_sample_dirichlet_and_binomial_record_pytorchs_fallback_node() -> None:
    a = chainrule.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    d = chainrule._sample_dirichlet(a)
    assert d.grad_fn.name() == "chainrule::autograd::NotImplemented"
    np.testing.assert_allclose(d.detach().sum(-1).numpy(), [1.0], rtol=1e-6)
    count = chainrule.tensor([5.0, 0.0, 10.0])
    draws = chainrule.binomial(count, chainrule.tensor([0.5, 0.5, 1.0]))
    assert draws.dtype == chainrule.float32
    np.testing.assert_array_equal(draws.numpy()[1:], [0.0, 10.0])
    assert bool((draws >= 0).all()) and bool((draws <= count).all())


def test_poisson_node_gradient_and_errors_match_pytorch() -> None:
    rate = chainrule.tensor([0.0, 1.5, 30.0], requires_grad=True)
    draws = chainrule.poisson(rate)
    assert draws.grad_fn.name() == "PoissonBackward0"
    draws.sum().backward()
    np.testing.assert_array_equal(rate.grad.numpy(), [0.0, 0.0, 0.0])
    assert draws[0].item() == 0.0
    for lib in (chainrule, torch):
        with pytest.raises(
            RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"
        ):
            lib.poisson(lib.tensor([-1.0]))


# Samples


def _distribution(lib: Any, case: Case, dtype: str) -> Any:
    _, build, params, _, _ = case
    tensors = {k: lib.tensor(v, dtype=getattr(lib, dtype)) for k, v in params.items()}
    return build(lib.distributions, **tensors)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_sample_shapes_and_dtypes_match_pytorch(case: Case, dtype: str) -> None:
    chainrule.manual_seed(0)
    ours = _distribution(chainrule, case, dtype)
    theirs = _distribution(torch, case, dtype)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    for shape in ((), (5,), (2, 3)):
        a = ours.sample(shape)
        b = theirs.sample(shape)
        assert tuple(a.shape) == tuple(b.shape), (case[0], shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], case[0]
        assert not a.requires_grad
        assert bool(ours.support.check(a).all()) if case[0] != "Uniform" else True
    if theirs.has_rsample:
        assert tuple(ours.rsample((4,)).shape) == tuple(theirs.rsample((4,)).shape)


#: (id, constructor, the distribution's own mean and variance are compared with the samples')
STATISTICS = [
    ("Normal", lambda D, t: D.Normal(t([0.5, -2.0]), t([1.0, 3.0]))),
    ("Exponential", lambda D, t: D.Exponential(t([0.5, 4.0]))),
    ("Laplace", lambda D, t: D.Laplace(t([1.0, -1.0]), t([0.5, 2.0]))),
    ("Uniform", lambda D, t: D.Uniform(t([0.0, -3.0]), t([1.0, 5.0]))),
    ("Gamma", lambda D, t: D.Gamma(t([0.2, 1.0, 7.5]), t([1.0, 2.0, 0.5]))),
    ("Beta", lambda D, t: D.Beta(t([0.3, 2.0, 9.0]), t([0.5, 2.0, 1.5]))),
    ("Dirichlet", lambda D, t: D.Dirichlet(t([[0.4, 1.0, 3.0]]))),
    ("Chi2", lambda D, t: D.Chi2(t([1.0, 6.0]))),
    ("StudentT", lambda D, t: D.StudentT(t([5.0, 9.0]), t([1.0, 0.0]), t([1.0, 2.0]))),
    ("Poisson", lambda D, t: D.Poisson(t([0.5, 12.0]))),
    ("Bernoulli", lambda D, t: D.Bernoulli(probs=t([0.1, 0.8]))),
    ("Binomial", lambda D, t: D.Binomial(t([10.0, 3.0]), probs=t([0.3, 0.9]))),
    ("Geometric", lambda D, t: D.Geometric(probs=t([0.3, 0.7]))),
    ("Categorical", lambda D, t: D.OneHotCategorical(probs=t([0.2, 0.5, 0.3]))),
    ("Multinomial", lambda D, t: D.Multinomial(6, probs=t([0.2, 0.5, 0.3]))),
    ("NegativeBinomial", lambda D, t: D.NegativeBinomial(t([3.0, 1.0]), probs=t([0.3, 0.6]))),
    ("Gumbel", lambda D, t: D.Gumbel(t([0.0, 2.0]), t([1.0, 0.5]))),
    ("LogNormal", lambda D, t: D.LogNormal(t([0.0, 0.5]), t([0.25, 0.5]))),
    ("HalfNormal", lambda D, t: D.HalfNormal(t([1.0, 2.0]))),
    ("Weibull", lambda D, t: D.Weibull(t([1.0, 2.0]), t([1.5, 3.0]))),
    ("Pareto", lambda D, t: D.Pareto(t([1.0, 2.0]), t([5.0, 6.0]))),
    ("Kumaraswamy", lambda D, t: D.Kumaraswamy(t([2.0, 0.5]), t([3.0, 1.5]))),
    ("FisherSnedecor", lambda D, t: D.FisherSnedecor(t([5.0, 10.0]), t([12.0, 20.0]))),
    ("ContinuousBernoulli", lambda D, t: D.ContinuousBernoulli(probs=t([0.2, 0.5, 0.9]))),
    ("InverseGamma", lambda D, t: D.InverseGamma(t([5.0, 7.0]), t([1.0, 2.0]))),
    (
        "GeneralizedPareto",
        lambda D, t: D.GeneralizedPareto(t([0.0, 1.0]), t([1.0, 2.0]), t([0.1, -0.2])),
    ),
    (
        "MultivariateNormal",
        lambda D, t: D.MultivariateNormal(t([1.0, -1.0]), t([[2.0, 0.5], [0.5, 1.0]])),
    ),
    (
        "LowRankMultivariateNormal",
        lambda D, t: D.LowRankMultivariateNormal(
            t([1.0, -1.0, 0.0]), t([[1.0, 0.5], [0.0, -1.0], [2.0, 0.3]]), t([0.5, 1.0, 2.0])
        ),
    ),
    ("Wishart", lambda D, t: D.Wishart(t(5.0), t([[2.0, 0.5], [0.5, 1.0]]))),
    (
        "MixtureSameFamily",
        lambda D, t: D.MixtureSameFamily(
            D.Categorical(t([0.3, 0.7])), D.Normal(t([-2.0, 2.0]), t([1.0, 0.5]))
        ),
    ),
]


@pytest.mark.parametrize("builder", [s[1] for s in STATISTICS], ids=[s[0] for s in STATISTICS])
def test_sample_mean_and_variance_are_the_distributions(builder: Any) -> None:
    chainrule.manual_seed(2024)
    d = builder(chainrule.distributions, lambda v: chainrule.tensor(v, dtype=chainrule.float64))
    n = 40000
    samples = d.sample((n,))
    mean = d.mean.numpy()
    variance = d.variance.numpy()
    sample_mean = samples.mean(0).numpy()
    sample_variance = samples.var(0).numpy()
    # 6 standard errors of the mean; the variance within 15% (heavy tails: Pareto, F, t)
    np.testing.assert_array_less(np.abs(sample_mean - mean), 6 * np.sqrt(variance / n) + 1e-12)
    np.testing.assert_allclose(sample_variance, variance, rtol=0.15)


def test_sampling_is_reproducible_with_manual_seed() -> None:
    d = chainrule.distributions.Gamma(chainrule.tensor([0.5, 3.0]), chainrule.tensor(1.0))
    chainrule.manual_seed(7)
    first = d.sample((3,)).numpy()
    chainrule.manual_seed(7)
    np.testing.assert_array_equal(d.sample((3,)).numpy(), first)


# Reparameterised gradients


def test_normal_rsample_gradients_flow_to_the_parameters() -> None:
    chainrule.manual_seed(3)
    loc = chainrule.tensor([0.5, -1.0], requires_grad=True)
    scale = chainrule.tensor([2.0, 0.5], requires_grad=True)
    x = chainrule.distributions.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    eps = (x.detach() - loc.detach()) / scale.detach()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_rsample_gradient_is_pytorchs_implicit_gradient(dtype: str) -> None:
    chainrule.manual_seed(4)
    c_cr, c_t = _pair([0.4, 2.0, 12.0], dtype, requires_grad=True)
    r_cr, r_t = _pair([1.5, 0.5, 2.0], dtype, requires_grad=True)
    x = chainrule.distributions.Gamma(c_cr, r_cr).rsample()
    x.sum().backward()
    # PyTorch: x = standard_gamma(c) / rate, d x / d c = standard_gamma_grad(c, x rate) / rate
    standard = torch.tensor(x.detach().numpy()) * r_t.detach()
    d_c = torch._standard_gamma_grad(c_t.detach(), standard) / r_t.detach()
    d_r = -standard / r_t.detach() ** 2
    rtol = 1e-5 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(c_cr.grad.numpy(), d_c.numpy(), rtol=rtol)
    np.testing.assert_allclose(r_cr.grad.numpy(), d_r.numpy(), rtol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_and_beta_rsample_gradients_are_pytorchs(dtype: str) -> None:
    chainrule.manual_seed(5)
    conc_cr, conc_t = _pair([[0.5, 2.0, 7.0], [3.0, 1.0, 0.2]], dtype, requires_grad=True)
    x = chainrule.distributions.Dirichlet(conc_cr).rsample()
    assert x.grad_fn.name() == "_DirichletBackward"
    weights = np.array([[1.0, -2.0, 0.5], [0.3, 0.2, 4.0]])
    x.backward(chainrule.tensor(weights, dtype=x.dtype))
    xs = torch.tensor(x.detach().numpy())
    g = torch.tensor(weights, dtype=xs.dtype)
    total = conc_t.detach().sum(-1, True).expand_as(conc_t)
    expected = torch._dirichlet_grad(xs, conc_t.detach(), total) * (g - (xs * g).sum(-1, True))
    rtol = 1e-3 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(conc_cr.grad.numpy(), expected.numpy(), rtol=rtol, atol=1e-7)

    a_cr = chainrule.tensor([0.7, 5.0], dtype=getattr(chainrule, dtype), requires_grad=True)
    b_cr = chainrule.tensor([1.5, 2.0], dtype=getattr(chainrule, dtype), requires_grad=True)
    y = chainrule.distributions.Beta(a_cr, b_cr).rsample()
    y.sum().backward()
    ys = torch.tensor(np.stack([y.detach().numpy(), 1 - y.detach().numpy()], -1))
    conc = torch.tensor(np.stack([a_cr.detach().numpy(), b_cr.detach().numpy()], -1))
    upstream = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=ys.dtype)
    total = conc.sum(-1, True).expand_as(conc)
    grad = torch._dirichlet_grad(ys, conc, total) * (upstream - (ys * upstream).sum(-1, True))
    np.testing.assert_allclose(a_cr.grad.numpy(), grad[:, 0].numpy(), rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(b_cr.grad.numpy(), grad[:, 1].numpy(), rtol=rtol, atol=1e-6)


def test_rsample_of_transformed_and_relaxed_distributions_reaches_the_parameters() -> None:
    chainrule.manual_seed(6)
    D = chainrule.distributions
    for build in (
        lambda p: D.LogNormal(p, p.exp()),
        lambda p: D.Gumbel(p, p.exp()),
        lambda p: D.RelaxedBernoulli(chainrule.tensor(0.5), logits=p),
        lambda p: D.RelaxedOneHotCategorical(chainrule.tensor(0.5), logits=p),
        lambda p: D.StudentT(p.exp() + 2, p, p.exp()),
        lambda p: D.FisherSnedecor(p.exp() + 1, p.exp() + 3),
        lambda p: D.Kumaraswamy(p.exp(), p.exp() + 1),
        lambda p: D.ContinuousBernoulli(logits=p),
        lambda p: D.MultivariateNormal(p, chainrule.eye(3) * 2),
        lambda p: D.LogisticNormal(p, p.exp()),
        lambda p: D.OneHotCategoricalStraightThrough(logits=p),
    ):
        p = chainrule.tensor([0.1, -0.3, 0.4], requires_grad=True)
        build(p).rsample((2,)).sum().backward()
        assert p.grad is not None and bool(p.grad.isfinite().all())


def test_von_mises_samples_have_its_circular_mean_and_variance() -> None:
    chainrule.manual_seed(11)
    d = chainrule.distributions.VonMises(
        chainrule.tensor([0.5, -2.0]), chainrule.tensor([0.5, 8.0])
    )
    samples = d.sample((40000,))
    assert samples.dtype == chainrule.float32
    assert bool((samples.abs() <= np.pi).all())
    resultant = np.exp(1j * samples.numpy().astype(np.float64)).mean(0)
    np.testing.assert_allclose(np.angle(resultant), d.mean.numpy(), atol=0.05)
    np.testing.assert_allclose(1 - np.abs(resultant), d.variance.numpy(), atol=0.01)


def test_lkj_cholesky_samples_are_correlation_factors_with_beta_marginals() -> None:
    chainrule.manual_seed(12)
    for concentration in (0.5, 2.0):
        d = chainrule.distributions.LKJCholesky(2, chainrule.tensor(concentration))
        samples = d.sample((40000,))
        assert tuple(samples.shape) == (40000, 2, 2)
        assert bool(chainrule.distributions.constraints.corr_cholesky.check(samples).all())
        r = samples[:, 1, 0].numpy().astype(np.float64)
        # (r + 1) / 2 ~ Beta(eta, eta): mean 0, variance 1 / (2 eta + 1)
        assert abs(r.mean()) < 0.02
        np.testing.assert_allclose(r.var(), 1 / (2 * concentration + 1), rtol=0.05)
    three = chainrule.distributions.LKJCholesky(3, 1.5).sample((10,))
    assert bool(chainrule.distributions.constraints.corr_cholesky.check(three).all())


def test_wishart_rsample_reaches_the_scale_and_warns_on_low_df() -> None:
    chainrule.manual_seed(13)
    cov = chainrule.tensor([[2.0, 0.5], [0.5, 1.0]], requires_grad=True)
    df = chainrule.tensor(4.0, requires_grad=True)
    sample = chainrule.distributions.Wishart(df, cov).rsample()
    assert bool(chainrule.distributions.constraints.positive_definite.check(sample).all())
    sample.sum().backward()
    assert cov.grad is not None and df.grad is not None
    # PyTorch's redraw writes into the mask its indexing saved: a sample shape's backward fails
    for lib in (chainrule, torch):
        lib.manual_seed(13)
        df = lib.tensor(4.0, requires_grad=True)
        samples = lib.distributions.Wishart(df, lib.tensor([[2.0, 0.5], [0.5, 1.0]])).rsample((3,))
        assert bool(lib.distributions.constraints.positive_definite.check(samples).all())
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            samples.sum().backward()
    for lib in (chainrule, torch):
        with pytest.warns(UserWarning, match="Low df values detected"):
            lib.distributions.Wishart(lib.tensor(1.5), lib.eye(2))
        with pytest.raises(ValueError) as info:
            lib.distributions.Wishart(lib.tensor(0.5), lib.eye(2))
        assert "expected to be greater than ndim - 1 = 1" in str(info.value)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int64"])
def test_sampling_ops_refuse_the_dtypes_pytorchs_kernels_lack(dtype: str) -> None:
    calls = [
        lambda lib, a: lib._standard_gamma(a),
        lambda lib, a: lib._standard_gamma_grad(a, a),
        lambda lib, a: lib._sample_dirichlet(a),
        lambda lib, a: lib._dirichlet_grad(a, a, a),
        lambda lib, a: lib.binomial(a, a),
    ]
    for call in calls:
        messages = []
        for lib in (chainrule, torch):
            a = lib.tensor([1, 2], dtype=getattr(lib, dtype))
            with pytest.raises((NotImplementedError, ValueError)) as info:
                call(lib, a)
            messages.append((type(info.value), str(info.value)))
        assert messages[0] == messages[1]
    for lib in (chainrule, torch):
        draws = (
            lib.poisson(lib.tensor([1.0, 2.0], dtype=getattr(lib, dtype)))
            if dtype != ("int64")
            else None
        )
        assert draws is None or str(draws.dtype).endswith(dtype)


# The in-place random fills

FILLS = [
    ("exponential_", (2.0,), lambda n: (0.5, 0.25)),
    ("geometric_", (0.25,), lambda n: (4.0, 12.0)),
    (
        "log_normal_",
        (0.5, 0.4),
        lambda n: (math.exp(0.5 + 0.08), (math.exp(0.16) - 1) * math.exp(1.0 + 0.16)),
    ),
]


@pytest.mark.parametrize("name, args, moments", FILLS, ids=[f[0] for f in FILLS])
def test_random_fills_have_the_distributions_moments(name: str, args: Any, moments: Any) -> None:
    chainrule.manual_seed(21)
    x = getattr(chainrule.empty(100000, dtype=chainrule.float64), name)(*args)
    mean, variance = moments(x.numel())
    assert abs(x.mean().item() - mean) < 6 * math.sqrt(variance / x.numel())
    np.testing.assert_allclose(x.var().item(), variance, rtol=0.1)


def test_cauchy_fill_has_its_median_and_quartiles() -> None:
    chainrule.manual_seed(22)
    x = chainrule.empty(100000, dtype=chainrule.float64).cauchy_(1.5, 2.0).numpy()
    np.testing.assert_allclose(np.percentile(x, [25, 50, 75]), [-0.5, 1.5, 3.5], atol=0.1)


@pytest.mark.parametrize(
    "name, args",
    [("exponential_", ()), ("cauchy_", ()), ("geometric_", (0.3,)), ("log_normal_", ())],
)
def test_random_fills_record_pytorchs_nodes_and_errors(name: str, args: Any) -> None:
    for dtype in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"):
        outcomes = []
        for lib in (chainrule, torch):
            x = lib.ones(3, dtype=getattr(lib, dtype))
            try:
                y = getattr(x, name)(*args)
                outcomes.append((str(y.dtype).split(".")[-1], y is x, tuple(y.shape)))
            except (RuntimeError, NotImplementedError) as error:
                outcomes.append((type(error), str(error)))
        assert outcomes[0] == outcomes[1], (name, dtype)
    nodes = []
    for lib in (chainrule, torch):
        leaf = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            getattr(leaf, name)(*args)
        y = leaf * 2
        getattr(y, name)(*args)
        nodes.append(y.grad_fn.name().split("::")[-1])
        y.sum().backward()
        assert not leaf.grad.any()
    assert nodes[0] == nodes[1]


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.exponential_(-1.0),
        lambda x: x.exponential_(0),
        lambda x: x.cauchy_(0.0, -2.5),
        lambda x: x.cauchy_(sigma=0.0),
        lambda x: x.geometric_(0.0),
        lambda x: x.geometric_(1),
        lambda x: x.geometric_(1.5),
        lambda x: x.log_normal_(0.0, -1.0),
        lambda x: x.log_normal_(std=0),
    ],
)
def test_random_fills_refuse_bad_parameters_as_pytorch(call: Any) -> None:
    messages = []
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError) as info:
            call(lib.ones(2))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


RANDOM_CALLS = [
    ("full", lambda x: x.random_()),
    ("to", lambda x: x.random_(7)),
    ("to_keyword", lambda x: x.random_(to=7)),
    ("from_to", lambda x: x.random_(-3, 4)),
    ("from_none", lambda x: x.random_(3, None)),
    ("huge_to", lambda x: x.random_(0, 2**40)),
    ("huge_from", lambda x: x.random_(-(2**40), 3)),
    ("from_after_to", lambda x: x.random_(5, 2)),
    ("negative_to", lambda x: x.random_(-1)),
    ("from_and_to_keyword", lambda x: x.random_(2, to=5)),
    ("keywords", lambda x: x.random_(**{"from": -2, "to": 3})),
]


@pytest.mark.parametrize("call", [c[1] for c in RANDOM_CALLS], ids=[c[0] for c in RANDOM_CALLS])
def test_random_fill_ranges_errors_and_warnings_match_pytorch(call: Any) -> None:
    import warnings

    for dtype in (
        "float32",
        "float64",
        "float16",
        "bfloat16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
    ):
        outcomes = []
        for lib in (chainrule, torch):
            x = lib.zeros(2000, dtype=getattr(lib, dtype))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    y = call(x)
                    values = y.double().numpy()
                    outcome: Any = (str(y.dtype).split(".")[-1], y is x)
                except RuntimeError as error:
                    values = None
                    outcome = str(error)
            messages = [str(w.message) for w in caught if "out of bounds" in str(w.message)]
            outcomes.append((outcome, messages, values))
        (ours, our_warnings, our_values), (theirs, their_warnings, their_values) = outcomes
        assert ours == theirs and our_warnings == their_warnings, dtype
        if our_values is not None:
            # the same range: both fill inside [min, max] of PyTorch's draws' support
            low, high = np.min(their_values), np.max(their_values)
            if np.isfinite(low) and high - low < 100:
                assert np.min(our_values) >= low and np.max(our_values) <= high, dtype
                assert set(np.unique(our_values)) == set(np.unique(their_values)), dtype


def test_random_fill_with_from_only_refuses_as_pytorch() -> None:
    messages = []
    for lib in (chainrule, torch):
        with pytest.raises(TypeError) as info:
            lib.ones(2).random_(**{"from": 2})
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_random_fill_nodes_match_pytorch() -> None:
    for call in (lambda y: y.random_(), lambda y: y.random_(4), lambda y: y.random_(1, 4)):
        nodes = []
        for lib in (chainrule, torch):
            x = lib.ones(3, requires_grad=True)
            y = x * 2
            call(y)
            nodes.append(y.grad_fn.name().split("::")[-1])
            y.sum().backward()
            assert not x.grad.any()
        assert nodes[0] == nodes[1]
