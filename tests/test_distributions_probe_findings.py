"""Findings of a random-program probe of torch.distributions against PyTorch.

Each test compares chainrule with the reference PyTorch on a case the probe found to differ.
"""

from __future__ import annotations

import pytest
import torch

import chainrule


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("rate", [0.0, 2.5, 40.0])
def test_poisson_of_a_0d_rate_gives_a_0d_tensor_of_its_dtype(dtype, rate):
    t = torch.poisson(torch.tensor(rate, dtype=getattr(torch, dtype)))
    c = chainrule.poisson(chainrule.tensor(rate, dtype=getattr(chainrule, dtype)))
    assert tuple(c.shape) == tuple(t.shape) == ()
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1] == dtype
    if rate == 0.0:
        assert c.item() == t.item() == 0.0
    else:
        assert c.item() == int(c.item()) and c.item() >= 0


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.distributions.Poisson(2.5),
        lambda lib: lib.distributions.Poisson(lib.tensor(0.7, dtype=lib.float64)),
        lambda lib: lib.distributions.NegativeBinomial(2.5, logits=1.0),
        lambda lib: lib.distributions.NegativeBinomial(lib.tensor(3.0), probs=lib.tensor(0.4)),
    ],
)
@pytest.mark.parametrize("sample_shape", [(), (2,), (2, 1)])
def test_scalar_count_distributions_sample(make, sample_shape):
    t = make(torch).sample(sample_shape)
    c = make(chainrule).sample(sample_shape)
    assert tuple(c.shape) == tuple(t.shape)
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert bool((c >= 0).all()) and bool((c == c.round()).all())


def _raises_like(f_torch, f_chainrule):
    with pytest.raises(Exception) as et:
        f_torch()
    with pytest.raises(Exception) as ec:
        f_chainrule()
    assert type(ec.value).__name__ == type(et.value).__name__
    assert str(ec.value) == str(et.value)


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
@pytest.mark.parametrize(
    "family",
    [
        lambda lib, s: lib.distributions.Normal(lib.tensor([0.0, 1.0]), s, validate_args=False),
        lambda lib, s: lib.distributions.LogNormal(lib.tensor([0.0, 1.0]), s, validate_args=False),
        lambda lib, s: lib.distributions.LogisticNormal(
            lib.tensor([0.0, 1.0]), s, validate_args=False
        ),
        lambda lib, s: lib.distributions.HalfNormal(s, validate_args=False),
    ],
)
def test_sampling_a_normal_with_a_negative_or_nan_scale_raises(bad, family):
    def run(lib):
        scale = lib.tensor([1.0, bad])
        return lambda: family(lib, scale).sample((3,))

    _raises_like(run(torch), run(chainrule))


@pytest.mark.parametrize("scale", [0.0, float("inf"), 2.0])
def test_sampling_a_normal_with_zero_inf_or_positive_scale_does_not_raise(scale):
    for lib in (torch, chainrule):
        d = lib.distributions.Normal(
            lib.tensor([0.0, 1.0]), lib.tensor([1.0, scale]), validate_args=False
        )
        assert tuple(d.sample((3,)).shape) == (3, 2)


def test_rsample_with_a_negative_scale_does_not_raise_as_in_pytorch():
    for lib in (torch, chainrule):
        d = lib.distributions.Normal(0.0, lib.tensor(-1.0), validate_args=False)
        assert tuple(d.rsample((4,)).shape) == (4,)


_LIKE = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]


@pytest.mark.parametrize("name", _LIKE)
@pytest.mark.parametrize("arg", [1.0, None, [1.0], "x"])
def test_like_factories_refuse_a_non_tensor_as_pytorch(name, arg):
    _raises_like(lambda: getattr(torch, name)(arg), lambda: getattr(chainrule, name)(arg))


@pytest.mark.parametrize("arg", [1.0, None, 3])
def test_full_like_refuses_a_non_tensor_as_pytorch(arg):
    _raises_like(lambda: torch.full_like(arg, 2.0), lambda: chainrule.full_like(arg, 2.0))


@pytest.mark.parametrize("temperature", [0.5, 2])
def test_relaxed_one_hot_categorical_log_prob_with_a_number_temperature(temperature):
    # PyTorch keeps a number temperature as given and its log_prob passes it to full_like
    def run(lib):
        d = lib.distributions.RelaxedOneHotCategorical(temperature, probs=lib.tensor([0.2, 0.8]))
        return lambda: d.log_prob(lib.tensor([0.3, 0.7]))

    _raises_like(run(torch), run(chainrule))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relaxed_one_hot_categorical_log_prob_and_grad_with_a_tensor_temperature(dtype):
    out = []
    for lib in (torch, chainrule):
        dt = getattr(lib, dtype)
        logits = lib.tensor([[0.3, -1.2, 2.0], [0.0, 0.0, 1e-3]], dtype=dt, requires_grad=True)
        temp = lib.tensor(0.7, dtype=dt, requires_grad=True)
        d = lib.distributions.RelaxedOneHotCategorical(temp, logits=logits)
        lp = d.log_prob(lib.tensor([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], dtype=dt))
        grads = lib.autograd.grad(lp.sum(), [logits, temp])
        out.append([lp.detach().numpy()] + [g.numpy() for g in grads])
    for a, b in zip(*out, strict=True):
        assert a.dtype == b.dtype
        assert abs(a - b).max() <= (1e-5 if dtype == "float32" else 1e-12) * (1 + abs(a).max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_of_huge_or_infinite_rates_gives_pytorchs_int64_overflow(dtype):
    rates = [float("inf"), 1e30, 1e19, 0.0]
    t = torch.poisson(torch.tensor(rates, dtype=getattr(torch, dtype)))
    c = chainrule.poisson(chainrule.tensor(rates, dtype=getattr(chainrule, dtype)))
    assert c.tolist() == t.tolist()
    assert str(c.dtype).split(".")[-1] == dtype


def test_poisson_of_a_nan_rate_raises_as_pytorch():
    _raises_like(
        lambda: torch.poisson(torch.tensor([1.0, float("nan")])),
        lambda: chainrule.poisson(chainrule.tensor([1.0, float("nan")])),
    )


def test_poisson_distribution_with_an_infinite_rate_samples_without_validation():
    t = torch.distributions.Poisson(torch.tensor([float("inf")]), validate_args=False).sample()
    c = chainrule.distributions.Poisson(
        chainrule.tensor([float("inf")]), validate_args=False
    ).sample()
    assert c.tolist() == t.tolist()
