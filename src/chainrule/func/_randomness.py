"""``randomness=`` of ``vmap`` and ``jacfwd``: what a random op inside the transformed function
does.

Every random draw of chainrule goes through the default generator's NumPy generator; while a
transform runs with ``randomness="error"``, that generator is replaced by a stand-in that raises
PyTorch's vmap error on any draw (a draw with an explicit ``generator=`` is not checked). With
"same", every batch element (``jacfwd``: every column) starts from the same generator state;
with "different", draws go on from one element to the next, and a random factory called without
tensors (``torch.rand(3)``) draws one sample per example: a tensor batched at every running
level whose randomness is "different" (:func:`per_example_draws`, installed in
``ops.creation.PER_EXAMPLE_DRAWS`` while such a vmap runs).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

from ..ops import creation, inplace
from ..ops.creation import default_generator
from ..ops.nn_ops import random_activations
from ..ops.shape import stack
from ._batched import active_levels, rebatch

__all__ = [
    "INPLACE_DIFFERENT_MESSAGE",
    "RANDOMNESS_ERROR",
    "RANDOM_RULE_RUNNING",
    "check_randomness",
    "per_example_draws",
    "random_guard",
    "refuse_unbatched_inplace_draw",
]

#: Non-zero while a batching rule runs a random op on batched values (its draws are already
#: per example: a factory it calls must not batch again).
RANDOM_RULE_RUNNING = [0]

INPLACE_DIFFERENT_MESSAGE = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
    "like same randomness. If this is necessary for your usage, please file an issue with "
    "functorch."
)


def refuse_unbatched_inplace_draw() -> None:
    """An in-place random op outside the batching rules fills a tensor that is not batched: with
    "different" randomness PyTorch refuses it (every example would get the same draws)."""
    if not RANDOM_RULE_RUNNING[0]:
        raise RuntimeError(INPLACE_DIFFERENT_MESSAGE)


RANDOMNESS_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
    "vmap"
)


def check_randomness(randomness: Any) -> None:
    """PyTorch's error for a ``randomness`` that is not one of the three modes."""
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )


class _RefusingGenerator:
    """Stands in for the default NumPy generator: any use is a random op, refused."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(RANDOMNESS_ERROR)


class _Guard:
    """What a transform needs per batch element: :meth:`start_column` before each."""

    def __init__(self, randomness: str) -> None:
        self.randomness = randomness
        self._state: Any = None
        if randomness == "same":
            self._state = default_generator._rng.bit_generator.state

    def start_column(self) -> None:
        if self._state is not None:
            default_generator._rng.bit_generator.state = self._state


def per_example_draws(factory: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``factory(*args, **kwargs)`` (a random factory without tensor arguments) drawn once per
    example of every running vmap level whose randomness is "different", as a batched tensor;
    a plain draw inside a batching rule or where no such level runs."""
    hooks = creation.PER_EXAMPLE_DRAWS
    installed = hooks[:]
    hooks.clear()  # (the draws below are plain)
    try:
        levels = [(lvl, size) for lvl, size, r in active_levels() if r == "different"]
        if RANDOM_RULE_RUNNING[0] or not levels:
            return factory(*args, **kwargs)
        sizes = [size for _, size in levels]
        count = math.prod(sizes)
        draws = [factory(*args, **kwargs) for _ in range(max(count, 1))]
    finally:
        hooks[:] = installed
    if count == 0:  # (an empty batch: one draw tells the shape)
        stacked = draws[0].expand(*sizes, *draws[0].shape).clone()
    else:
        stacked = stack(draws).reshape(*sizes, *draws[0].shape)
    return rebatch(stacked, sorted((lvl for lvl, _ in levels), reverse=True))


@contextlib.contextmanager
def random_guard(randomness: str) -> Iterator[_Guard]:
    """Within: random draws follow ``randomness`` (see the module's docstring); ops PyTorch's
    vmap refuses whatever their inputs (``rrelu``) refuse."""
    check_randomness(randomness)
    random_activations.UNDER_VMAP.append(randomness)
    try:
        with _draws(randomness) as guard:
            yield guard
    finally:
        random_activations.UNDER_VMAP.pop()


@contextlib.contextmanager
def _draws(randomness: str) -> Iterator[_Guard]:
    if randomness == "different":
        creation.PER_EXAMPLE_DRAWS.append(per_example_draws)
        inplace.INPLACE_DRAW_CHECKS.append(refuse_unbatched_inplace_draw)
        try:
            yield _Guard(randomness)
        finally:
            creation.PER_EXAMPLE_DRAWS.remove(per_example_draws)
            inplace.INPLACE_DRAW_CHECKS.remove(refuse_unbatched_inplace_draw)
        return
    real = default_generator._rng
    if randomness == "error" and not isinstance(real, _RefusingGenerator):
        default_generator._rng = _RefusingGenerator()
        try:
            yield _Guard("different")
        finally:
            default_generator._rng = real
        return
    yield _Guard(randomness)
