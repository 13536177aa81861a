"""multinomial and normal under vmap with batched probabilities, means or standard deviations,
against torch.func (issue 15).

They are written by hand in ops/creation.py and were not dispatched to the batching rules: a
batched ``multinomial`` read the batched tensor's values (an error in every mode), a batched
``normal`` returned a batched tensor out of the vmap ("different") or drew without PyTorch's
refusal ("same"). Draws differ from PyTorch's (another generator); shapes, dtypes, errors and
the examples' independence are compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = (chainrule, torch)
PROBS = [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]
MEANS = [[0.0, 1.0], [10.0, 20.0]]

Case = Callable[[Any], Any]

SAME_REFUSED: dict[str, Case] = {
    "multinomial": lambda lib: lib.func.vmap(lambda p: lib.multinomial(p, 2), randomness="same")(
        lib.tensor(PROBS)
    ),
    "multinomial_method": lambda lib: lib.func.vmap(
        lambda p: p.multinomial(2, True), randomness="same"
    )(lib.tensor(PROBS)),
    "normal_mean": lambda lib: lib.func.vmap(lambda m: lib.normal(m, 1.0), randomness="same")(
        lib.tensor(MEANS)
    ),
    "normal_std": lambda lib: lib.func.vmap(
        lambda s: lib.normal(lib.zeros(2), s), randomness="same"
    )(lib.tensor(MEANS) + 1),
    "normal_both": lambda lib: lib.func.vmap(
        lambda m: lib.normal(m, lib.tensor([1.0, 2.0])), randomness="same"
    )(lib.tensor(MEANS)),
    "multinomial_error_mode": lambda lib: lib.func.vmap(lambda p: lib.multinomial(p, 2))(
        lib.tensor(PROBS)
    ),
    "normal_error_mode": lambda lib: lib.func.vmap(lambda m: lib.normal(m, 1.0))(lib.tensor(MEANS)),
    "multinomial_3d": lambda lib: lib.func.vmap(
        lambda p: lib.multinomial(p, 1), randomness="different"
    )(lib.ones(2, 2, 2, 3)),
}


@pytest.mark.parametrize("name", sorted(SAME_REFUSED))
def test_errors_as_pytorch(name: str) -> None:
    found = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            SAME_REFUSED[name](lib)
        found.append(str(info.value))
    assert found[0] == found[1]


DRAWS: dict[str, Case] = {
    "multinomial": lambda lib: lib.func.vmap(
        lambda p: lib.multinomial(p, 2), randomness="different"
    )(lib.tensor(PROBS)),
    "multinomial_rows": lambda lib: lib.func.vmap(
        lambda p: lib.multinomial(p, 3, True), randomness="different"
    )(lib.tensor([PROBS, PROBS[::-1]])),
    "multinomial_in_dims": lambda lib: lib.func.vmap(
        lambda p: p.multinomial(1), in_dims=1, randomness="different"
    )(lib.tensor(PROBS).T),
    "multinomial_same_unbatched": lambda lib: lib.func.vmap(
        lambda x: lib.multinomial(lib.tensor(PROBS[0]), 2) + x, randomness="same"
    )(lib.zeros(3, dtype=lib.long)),
    "normal_mean": lambda lib: lib.func.vmap(lambda m: lib.normal(m, 1.0), randomness="different")(
        lib.tensor(MEANS)
    ),
    "normal_both": lambda lib: lib.func.vmap(
        lambda m: lib.normal(m, lib.tensor([1.0, 2.0])), randomness="different"
    )(lib.tensor(MEANS, dtype=lib.float64)),
    "normal_std": lambda lib: lib.func.vmap(
        lambda s: lib.normal(lib.zeros(2), s), randomness="different"
    )(lib.tensor(MEANS) + 1),
    "normal_same_unbatched": lambda lib: lib.func.vmap(
        lambda x: lib.normal(lib.tensor(MEANS[0]), 1.0) + x, randomness="same"
    )(lib.zeros(3, 2)),
}


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_shaped_as_pytorch(name: str) -> None:
    ours, theirs = (DRAWS[name](lib) for lib in LIBS)
    assert type(ours) is chainrule.Tensor  # (not a batched tensor left over from the vmap)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]


def test_batched_means_and_stds_each_example_its_own() -> None:
    means = chainrule.tensor(MEANS, dtype=chainrule.float64)
    drawn = chainrule.func.vmap(lambda m: chainrule.normal(m, 1e-6), randomness="different")(means)
    np.testing.assert_allclose(drawn.numpy(), MEANS, atol=1e-4)
    spread = chainrule.func.vmap(
        lambda s: chainrule.normal(chainrule.zeros(20000, dtype=chainrule.float64), s),
        randomness="different",
    )(chainrule.tensor([[1.0], [5.0]], dtype=chainrule.float64).expand(2, 20000))
    np.testing.assert_allclose(spread.numpy().std(-1), [1.0, 5.0], rtol=0.05)
    # (draws differ between the examples of a batch of equal means)
    twice = chainrule.func.vmap(lambda m: chainrule.normal(m, 1.0), randomness="different")(
        chainrule.zeros(2, 3)
    )
    assert not np.array_equal(twice[0].numpy(), twice[1].numpy())


def test_batched_probabilities_each_example_its_own() -> None:
    certain = chainrule.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    drawn = chainrule.func.vmap(
        lambda p: chainrule.multinomial(p, 4, True), randomness="different"
    )(certain)
    assert drawn.tolist() == [[2] * 4, [0] * 4, [1] * 4]
    rows = chainrule.func.vmap(lambda p: p.multinomial(1), randomness="different")(
        certain.reshape(3, 1, 3).expand(3, 2, 3)
    )
    assert rows.tolist() == [[[2], [2]], [[0], [0]], [[1], [1]]]


def test_same_randomness_of_unbatched_tensors_gives_equal_draws() -> None:
    for lib in LIBS:
        out = lib.func.vmap(
            lambda x, lib=lib: lib.normal(lib.zeros(4), 1.0) + x, randomness="same"
        )(lib.zeros(3, 4))
        assert all(lib.equal(out[0], row) for row in out)


def _logging_subclass(lib: Any, seen: list[str]) -> type:
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs or {})

    return Logged


def test_torch_function_sees_normal_and_multinomial() -> None:
    """``normal`` and ``multinomial`` dispatch to ``__torch_function__`` as PyTorch's do."""
    for lib in LIBS:
        seen: list[str] = []
        probs = lib.tensor(PROBS[0]).as_subclass(_logging_subclass(lib, seen))
        lib.multinomial(probs, 1)
        lib.normal(probs, 1.0)
        lib.normal(0.0, probs)
        assert seen[:3] == ["multinomial", "normal", "normal"], seen
