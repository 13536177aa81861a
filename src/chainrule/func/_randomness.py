"""``randomness=`` of ``vmap`` and ``jacfwd``: what a random op inside the transformed function
does.

Every random draw of chainrule goes through the default generator's NumPy generator; while a
transform runs with ``randomness="error"``, that generator is replaced by a stand-in that raises
PyTorch's vmap error on any draw (a draw with an explicit ``generator=`` is not checked). With
"same", every batch element (``jacfwd``: every column) starts from the same generator state;
with "different", draws go on from one element to the next.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..ops.creation import default_generator

__all__ = ["RANDOMNESS_ERROR", "check_randomness", "random_guard"]

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


@contextlib.contextmanager
def random_guard(randomness: str) -> Iterator[_Guard]:
    """Within: random draws follow ``randomness`` (see the module's docstring)."""
    check_randomness(randomness)
    real = default_generator._rng
    if randomness == "error" and not isinstance(real, _RefusingGenerator):
        default_generator._rng = _RefusingGenerator()
        try:
            yield _Guard("different")
        finally:
            default_generator._rng = real
        return
    yield _Guard(randomness)
