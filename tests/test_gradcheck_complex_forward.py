"""``gradcheck(..., check_forward_ad=True)`` with complex inputs against PyTorch 2.13: forward
mode is checked on real inputs, each complex input through its imaginary part and then its real
part (the other part held constant), in slow and fast mode; a wrong JVP is reported with
PyTorch's message naming the part of the complex input."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def _inputs(lib: Any) -> tuple[Any, Any]:
    c = lib.tensor(
        [[0.5 + 1j, -1.0 + 0.25j], [2.0 - 0.5j, 0.75 + 0j], [0.1 - 2j, 1.5 + 1.5j]],
        dtype=lib.complex128,
        requires_grad=True,
    )
    r = lib.tensor([[0.3, -1.2], [2.5, 0.0], [-0.7, 1.1]], dtype=lib.float64, requires_grad=True)
    return c, r


FUNCTIONS: dict[str, Any] = {
    "cat_real_first": lambda lib, c, r: lib.cat((r, c), dim=-1),
    "cat_complex_first": lambda lib, c, r: lib.cat((c, r), dim=-1),
    "stack": lambda lib, c, r: lib.stack((c, r), dim=-1),
    "sin_times_real": lambda lib, c, r: c.sin() * r,
    "abs_and_real_output": lambda lib, c, r: (c.abs() + r, c * c),
}


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_complex_inputs_pass(name: str, fast_mode: bool) -> None:
    def case(lib: Any) -> Any:
        c, r = _inputs(lib)
        return lib.autograd.gradcheck(
            lambda a, b: FUNCTIONS[name](lib, a, b),
            (c, r),
            check_forward_ad=True,
            fast_mode=fast_mode,
        )

    assert attempt(lambda: case(chainrule)) == attempt(lambda: case(torch)) == ("ok", True)


def _wrong_jvp(lib: Any) -> Any:
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return t * 3

    return Double


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
@pytest.mark.parametrize("complex_first", [True, False])
def test_wrong_jvp_names_the_part(fast_mode: bool, complex_first: bool) -> None:
    def case(lib: Any) -> Any:
        c, r = _inputs(lib)
        double = _wrong_jvp(lib)
        if complex_first:
            args, fn = (c, r), lambda a, b: double.apply(a) * b
        else:
            args, fn = (r, c), lambda b, a: b * double.apply(a)
        kind, message = attempt(
            lambda: lib.autograd.gradcheck(
                fn, args, check_forward_ad=True, check_backward_ad=False, fast_mode=fast_mode
            )
        )
        return kind, message.split("\n")[0]

    assert case(chainrule) == case(torch)
