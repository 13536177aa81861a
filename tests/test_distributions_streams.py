"""Seeded torch.distributions samples are PyTorch's: under ``manual_seed(s)`` each family's
``sample``/``rsample`` draws from the generator what PyTorch's draws (the same random calls in
the same order), so the values equal PyTorch's and the generator is left where PyTorch leaves
it (the ``rand(3)`` drawn after the sample is PyTorch's too).

Families whose sample is a pointwise function of the draws (``exp``, ``log``, ``pow`` ... of a
transformed distribution) may differ from PyTorch's vectorised math in the last bits: those
are compared within a few units in the last place, the draws underneath them exactly."""

from __future__ import annotations

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
