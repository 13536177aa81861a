"""``grad_fn._raw_saved_tensors`` of a custom Function, compared with PyTorch: one
``torch._C._autograd.SavedTensor`` handle per value given to ``save_for_backward`` (None ones
included), ``register_hooks(pack_hook, unpack_hook)`` once per value (the hooks then run as a
``saved_tensors_hooks`` pair would: pack now, unpack on each use), and PyTorch's errors: a None
value, a second registration, wrong arguments, use after the graph was freed.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


def _function(lib: Any, save: bool) -> Any:
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            out = x * 3
            if save:
                ctx.save_for_backward(x, None, out)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            if not save:
                return grad * 3
            x, none, out = ctx.saved_tensors
            return grad * out / x

    return Scale


def test_handles_and_hooks() -> None:
    def program(lib: Any) -> Any:
        calls = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = _function(lib, True).apply(a)
        raw = y.grad_fn._raw_saved_tensors
        kinds = [isinstance(r, lib._C._autograd.SavedTensor) for r in raw]
        raw[0].register_hooks(
            lambda t: calls.append(("pack x", t.tolist())) or t * 2,
            lambda t: calls.append(("unpack x", t.tolist())) or t / 2,
        )
        raw[2].register_hooks(lambda t: calls.append(("pack out", t.tolist())) or t, lambda t: t)
        y.sum().backward()
        return kinds, calls, a.grad

    same_outcome(program)


@pytest.mark.parametrize(
    "case", ["none value", "twice", "one hook", "not callable", "after backward", "nothing saved"]
)
def test_errors(case: str) -> None:
    def program(lib: Any) -> Any:
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = _function(lib, case != "nothing saved").apply(a)
        raw = y.grad_fn._raw_saved_tensors
        if case == "none value":
            raw[1].register_hooks(lambda t: t, lambda t: t)
        elif case == "twice":
            raw[0].register_hooks(lambda t: t, lambda t: t)
            raw[0].register_hooks(lambda t: t, lambda t: t)
        elif case == "one hook":
            raw[0].register_hooks(lambda t: t)
        elif case == "not callable":
            raw[0].register_hooks(1, 1)
        elif case == "after backward":
            y.sum().backward()
            return y.grad_fn._raw_saved_tensors
        return raw

    def first_line(lib: Any) -> Any:
        try:
            return program(lib)
        except TypeError as error:  # the rest names the handle's class and address
            raise TypeError(str(error).splitlines()[0]) from None

    same_outcome(first_line)
