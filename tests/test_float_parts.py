"""ldexp and frexp against PyTorch: special values (0, -0, inf, NaN, subnormals), integer and
fractional exponents, float16 overflow, the int32 exponent, nodes, in-place forms and errors;
ldexp's gradient with a negative integer exponent is PyTorch's (an integer power: 0).
Gradients are swept by tests/opinfos/float_parts.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(r: Any) -> Any:
    if isinstance(r, tuple):
        return str(r), [t.grad_fn.name() if t.grad_fn else None for t in r]
    return str(r), r.grad_fn.name() if r.grad_fn else None


nan, inf = float("nan"), float("inf")
V = [1.5, -3.0, 0.0, float("inf"), float("nan"), 1e-40, 6e4, -0.0]
CASES: dict[str, Any] = {
    "ldexp": lambda L: L.ldexp(L.tensor(V, requires_grad=True), L.tensor([2])),
    "ldexp_int": lambda L: L.ldexp(L.tensor([1, 2]), L.tensor([2])),
    "ldexp_frac": lambda L: L.ldexp(L.tensor([1.0]), L.tensor([2.5])),
    "ldexp_half": lambda L: L.ldexp(L.tensor([1.0]).half(), L.tensor([20])),
    "ldexp_half_ok": lambda L: L.ldexp(L.tensor([1e-3]).half(), L.tensor([16])),
    "ldexp_method": lambda L: L.tensor(V).ldexp(L.tensor([1])),
    "ldexp_number": lambda L: L.ldexp(L.tensor(V), 2),
    "ldexp_inplace": lambda L: L.tensor(V).ldexp_(L.tensor([-1])),
    "ldexp_torch_inplace": lambda L: L.ldexp_(L.tensor(V), L.tensor([3])),
    "ldexp_f64": lambda L: L.ldexp(L.tensor(V), L.tensor([2.0], dtype=L.float64)),
    "frexp": lambda L: L.frexp(L.tensor(V, requires_grad=True)),
    "frexp_int": lambda L: L.frexp(L.tensor([1, 2])),
    "frexp_half": lambda L: L.frexp(L.tensor([1.0, 2, 1e-5, 6e4]).half()),
    "frexp_method": lambda L: L.tensor(V).frexp(),
    "frexp_f64": lambda L: L.frexp(L.tensor([1.0, 1e-310], dtype=L.float64)),
    "frexp_0d": lambda L: L.frexp(L.tensor(5.0)),
    "frexp_fields": lambda L: L.frexp(L.tensor([6.0])).exponent,
    "nextafter": lambda L: L.nextafter(
        L.tensor([1.0, 0.0, -0.0, inf, nan, 1.0], requires_grad=True),
        L.tensor([2.0, -1.0, 1.0, 0.0, 1.0, nan]),
    ),
    "nextafter_number": lambda L: L.nextafter(L.tensor([1.0]), 2.0),
    "nextafter_long": lambda L: L.nextafter(L.tensor([1, 2]), L.tensor([3, 4])),
    "nextafter_f64": lambda L: L.nextafter(L.tensor([1.0, 0.0]).double(), L.tensor([2.0, -1.0])),
    "nextafter_half": lambda L: L.nextafter(
        L.tensor([1.0, 0.0]).half(), L.tensor([2.0, -1.0]).half()
    ),
    "nextafter_bf16": lambda L: L.nextafter(
        L.tensor([1.0, 0.0]).bfloat16(), L.tensor([2.0, -1.0]).bfloat16()
    ),
    "nextafter_inplace": lambda L: L.tensor([1.0, 0.0]).nextafter_(L.tensor([2.0, -1.0])),
    "nextafter_method": lambda L: L.tensor([1.0]).nextafter(L.tensor([0.0])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    assert outcome(lambda lib: show(CASES[name](lib)), chainrule) == outcome(
        lambda lib: show(CASES[name](lib)), torch
    )


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_ldexp_gradient_with_integer_exponents(dtype: str) -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 1.0, 1.0, 2.0], requires_grad=True)
        other = lib.tensor([-2, 3, 70, 0], dtype=getattr(lib, dtype))
        lib.ldexp(x, other).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_frexp_mantissa_gradient() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([1.5, -3.0, 0.0, 1e-3], dtype=lib.float64, requires_grad=True)
        lib.frexp(x).mantissa.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
