"""Random ops PyTorch's vmap refuses, refused the same way (issue 15): ``rrelu`` (it has no
batching rule: any input, training or not, any randomness) and "same"
randomness for draws from a batched tensor argument (bernoulli, poisson)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import torch
from .outcomes import same_outcome

CASES: dict[str, Callable[[Any], Any]] = {
    "rrelu_train_unbatched_different": lambda lib: lib.func.vmap(
        lambda x: lib.nn.functional.rrelu(-lib.ones(3), training=True) + x,
        randomness="different",
    )(lib.zeros(4, 3)),
    "rrelu_train_unbatched_same": lambda lib: lib.func.vmap(
        lambda x: lib.rrelu(-lib.ones(3), training=True) + x, randomness="same"
    )(lib.zeros(4, 3)),
    "rrelu_eval_unbatched": lambda lib: lib.func.vmap(
        lambda x: lib.nn.functional.rrelu(lib.ones(3)) + x
    )(lib.zeros(4, 3)),
    "rrelu_batched": lambda lib: lib.func.vmap(
        lambda x: lib.nn.functional.rrelu(x, training=True), randomness="different"
    )(-lib.ones(4, 3)),
    "rrelu_inplace_unbatched": lambda lib: lib.func.vmap(
        lambda x: lib.nn.functional.rrelu(-lib.ones(3), training=True, inplace=True) + x,
        randomness="different",
    )(lib.zeros(4, 3)),
    "rrelu_module": lambda lib: lib.func.vmap(
        lambda x: lib.nn.RReLU()(-lib.ones(3)) + x, randomness="different"
    )(lib.zeros(4, 3)),
    "bernoulli_same_batched": lambda lib: lib.func.vmap(lib.bernoulli, randomness="same")(
        lib.full((4, 3), 0.5)
    ),
    "poisson_same_batched": lambda lib: lib.func.vmap(lib.poisson, randomness="same")(
        lib.full((4, 3), 2.0)
    ),
    "poisson_same_unbatched": lambda lib: (
        lib.func.vmap(lambda x: lib.poisson(lib.ones(3)) + x, randomness="same")(
            lib.zeros(4, 3)
        ).shape
    ),
    "rrelu_outside_vmap_after": lambda lib: (
        _swallow(lambda: CASES["rrelu_batched"](lib)),
        lib.nn.functional.rrelu(lib.tensor([-2.0, 3.0])),
    )[1],
}


def _swallow(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except RuntimeError:
        pass


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(name: str) -> None:
    assert torch is not None
    same_outcome(CASES[name])


def test_poisson_of_unbatched_rates_draws_per_example() -> None:
    """poisson of rates that are not batched, under randomness="different", draws for each
    example (as PyTorch's: it drew once for all before); "same" draws once."""
    import chainrule

    chainrule.manual_seed(0)
    rates = chainrule.tensor([50.0, 200.0])
    different = chainrule.func.vmap(lambda x: chainrule.poisson(rates) + x, randomness="different")(
        chainrule.zeros(400, 2)
    )
    rows = {tuple(r) for r in different.tolist()}
    assert len(rows) > 300
    means = different.mean(0).tolist()
    assert abs(means[0] - 50.0) < 2.0 and abs(means[1] - 200.0) < 4.0
    same = chainrule.func.vmap(lambda x: chainrule.poisson(rates) + x, randomness="same")(
        chainrule.zeros(5, 2)
    )
    assert len({tuple(r) for r in same.tolist()}) == 1
    batched = chainrule.func.vmap(chainrule.poisson, randomness="different")(
        chainrule.full((6, 3), 50.0)
    )
    assert tuple(batched.shape) == (6, 3)
