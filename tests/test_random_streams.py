"""chainrule's generator gives PyTorch's random numbers: the same seed and the same calls give
the same values, bit for bit, as PyTorch's CPU generator (ops/random_streams.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

SEEDS = [0, 1, 42, 2**40 + 3]


def _same(program, seed=0):
    """Run ``program(lib)`` after seeding each library; the arrays it returns must be equal."""
    torch.manual_seed(seed)
    expected = program(torch)
    chainrule.manual_seed(seed)
    got = program(chainrule)
    assert len(expected) == len(got)
    for e, g in zip(expected, got, strict=True):
        assert str(e.dtype).split(".")[-1] == str(g.dtype).split(".")[-1]
        # (bfloat16 compared through float32: NumPy has no bfloat16 for PyTorch)
        e = e.detach().float().numpy() if e.dtype == torch.bfloat16 else e.detach().numpy()
        g = g.detach().float().numpy() if g.dtype == chainrule.bfloat16 else g.detach().numpy()
        assert e.shape == g.shape
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 5, 15, 16, 17, 37, 1000])
def test_randn_rand_randint_randperm(seed, n):
    _same(
        lambda lib: [
            lib.randn(n),
            lib.rand(n),
            lib.randint(0, 10, (n,)),
            lib.randperm(n),
            lib.randn(n, dtype=lib.float64),
            lib.rand(n, dtype=lib.float64),
        ],
        seed,
    )


def test_randn_shapes_and_the_cached_normal_across_calls():
    # Under 16 elements PyTorch draws pairs and keeps the second value for the next call.
    _same(
        lambda lib: [
            lib.randn(()),
            lib.randn(3),
            lib.randn(1),
            lib.randn(2, 3),
            lib.randn(4, 5),
            lib.randn(3, dtype=lib.float64),
            lib.randn(100, 7),
        ]
    )


def test_manual_seed_forgets_the_cached_normal():
    def program(lib):
        lib.randn(1)  # (leaves a cached value)
        lib.manual_seed(3)
        return [lib.randn(1)]

    _same(program)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_uniform_and_small_normal(dtype):
    _same(
        lambda lib: [
            lib.rand(40, dtype=getattr(lib, dtype)),
            lib.randn(7, dtype=getattr(lib, dtype)),
            lib.empty(33, dtype=getattr(lib, dtype)).uniform_(-2, 3),
        ]
    )


def test_randint_ranges_and_dtypes():
    _same(
        lambda lib: [
            lib.randint(-5, 5, (20,)),
            lib.randint(3, (4, 4)),
            lib.randint(0, 2**40, (10,)),  # (wide range: 64-bit draws)
            lib.randint(0, 2**33, (5,), dtype=lib.float64),
            lib.randint(0, 200, (9,), dtype=lib.uint8),
            lib.randint(-(2**62), 2**62, (6,)),
        ]
    )


def test_in_place_uniform_and_normal():
    _same(
        lambda lib: [
            lib.empty(100).uniform_(-0.37, 0.37),
            lib.empty(10, dtype=lib.float64).uniform_(-3, 5),
            lib.empty(50).normal_(2.5, 0.3),
            lib.empty(7).normal_(-1, 4),
            lib.empty(40, dtype=lib.float64).normal_(1, 2),
            lib.empty(3, 4).t().normal_(),  # (not contiguous: drawn element by element)
        ]
    )


def test_normal_function_overloads():
    def program(lib):
        mean = lib.arange(20.0)
        std = lib.linspace(0.1, 2, 20)
        return [
            lib.normal(2.0, 3.0, (5, 4)),
            lib.normal(mean, 0.5),
            lib.normal(1.0, std),
            lib.normal(mean, std),
        ]

    _same(program)


def test_bernoulli_and_dropout():
    def program(lib):
        p32 = lib.full((30,), 0.3)
        p64 = lib.linspace(0, 1, 25, dtype=lib.float64)
        return [
            lib.bernoulli(p32),
            lib.bernoulli(p64),
            lib.empty(40).bernoulli_(0.7),
            lib.nn.functional.dropout(lib.ones(50), 0.4),
            lib.nn.Dropout(p=0.25)(lib.arange(1.0, 33.0)),
            lib.nn.functional.dropout2d(lib.ones(2, 6, 3, 3), 0.5),
        ]

    _same(program)


def test_module_initialisation():
    def program(lib):
        lib.nn.init.kaiming_uniform_(weight := lib.empty(8, 5), a=5**0.5)
        lib.nn.init.normal_(w2 := lib.empty(17, 3), std=0.02)
        lib.nn.init.xavier_uniform_(w3 := lib.empty(4, 6, dtype=lib.float64))
        modules = [
            lib.nn.Linear(7, 3),
            lib.nn.Conv2d(3, 6, 5),
            lib.nn.Embedding(10, 4),
            lib.nn.LSTM(6, 4),
            lib.nn.Linear(2, 2, dtype=lib.float64),
        ]
        return [weight, w2, w3] + [p for m in modules for p in m.parameters()]

    _same(program, seed=1)


def test_generators_and_states():
    def program(lib):
        g = lib.Generator().manual_seed(123)
        first = lib.randn(3, generator=g)
        state = lib.get_rng_state()
        a = lib.randn(5)  # (leaves a cached normal in the default generator)
        lib.set_rng_state(state)
        b = lib.randn(5)
        state = lib.get_rng_state()  # (with the cached normal)
        c = lib.randn(1)
        lib.set_rng_state(state)
        d = lib.randn(1)
        return [first, a, b, c, d, lib.rand(4, generator=g), lib.randperm(6, generator=g)]

    _same(program)


def test_initial_seed_and_low_32_bits():
    chainrule.manual_seed(2**40 + 7)
    torch.manual_seed(2**40 + 7)
    assert chainrule.initial_seed() == torch.initial_seed()
    np.testing.assert_array_equal(chainrule.rand(5).numpy(), torch.rand(5).numpy())
