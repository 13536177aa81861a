"""``torch.random``: its functions are the package's, and ``fork_rng`` restores the state.

chainrule had no ``random`` module (``torch.random.fork_rng``, used to draw without moving a
seeded program's stream, and ``torch.random.manual_seed`` failed on the attribute).
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


def test_functions_and_seed() -> None:
    def program(lib: Any) -> Any:
        generator = lib.random.manual_seed(3)
        first = lib.rand(2).tolist()
        state = lib.random.get_rng_state()
        second = lib.rand(2).tolist()
        lib.random.set_rng_state(state)
        return (
            generator is lib.random.default_generator,
            lib.random.initial_seed(),
            first,
            lib.rand(2).tolist() == second,
            lib.random.thread_safe_generator(),
            sorted(set(lib.random.__all__) & {"fork_rng", "manual_seed", "seed"}),
        )

    same_outcome(program)


def _forked(lib: Any, **options: Any) -> Any:
    lib.manual_seed(0)
    with lib.random.fork_rng(**options):
        inside = lib.rand(3).tolist()
    return inside, lib.rand(3).tolist()


@pytest.mark.parametrize(
    "options",
    [{}, {"enabled": False}, {"devices": []}, {"device_type": "meta"}, {"device_type": "mps"},
     {"device_type": "cuda:0"}],
    ids=repr,
)
def test_fork_rng(options: dict) -> None:
    same_outcome(lambda lib: _forked(lib, **options))


def test_fork_rng_restores_after_an_error() -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(5)
        try:
            with lib.random.fork_rng():
                lib.rand(3)
                raise ValueError("inside")
        except ValueError:
            pass
        return lib.rand(1).tolist()

    same_outcome(program)


@pytest.mark.parametrize(
    "options", [{"devices": [0]}, {"device_type": "xyz"}], ids=repr
)
def test_fork_rng_errors(options: dict) -> None:
    same_outcome(lambda lib: _forked(lib, **options))
