"""Grad-mode context managers decorating generator functions, compared with PyTorch: the mode
holds while the generator runs (also when an exception is thrown into it and it recovers),
and a generator that ends, right away or after a ``throw``, ends the decorated one with its
return value (no RuntimeError from a leaked StopIteration).
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


class Recoverable(Exception):
    pass


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode"])
def test_throw_into_a_decorated_generator_until_it_ends(mode: str) -> None:
    def program(lib: Any) -> Any:
        seen = []

        @getattr(lib, mode)()
        def gen(n: int) -> Any:
            raised = False
            for i in range(n):
                try:
                    seen.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
                    yield -i if raised else i
                except Recoverable:
                    seen.append(("thrown", lib.is_grad_enabled()))
                    raised = True
            return "done"

        outer = lib.no_grad() if mode == "enable_grad" else lib.enable_grad()
        with outer:
            g = gen(4)
            values = [next(g)]
            try:
                while True:
                    values.append(g.throw(Recoverable))
            except StopIteration as stop:
                values.append(("stop", stop.value))
        return values, seen

    same_outcome(program)


def test_decorated_generator_that_yields_nothing() -> None:
    def program(lib: Any) -> Any:
        @lib.no_grad()
        def empty() -> Any:
            return "nothing"
            yield  # pragma: no cover

        g = empty()
        try:
            next(g)
        except StopIteration as stop:
            return "stop", stop.value, lib.is_grad_enabled()

    same_outcome(program)


def test_exception_not_recovered_propagates() -> None:
    def program(lib: Any) -> Any:
        @lib.no_grad()
        def gen() -> Any:
            yield 1
            yield 2

        g = gen()
        next(g)
        try:
            g.throw(ValueError("boom"))
        except ValueError as error:
            return str(error), lib.is_grad_enabled()

    same_outcome(program)
