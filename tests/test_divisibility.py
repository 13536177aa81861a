"""gcd and lcm against PyTorch: signs and zeros, dtypes (int32 and uint8 wrap-around,
promotion), broadcasting, in-place forms, and the errors for floating, bool and number
operands."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

A = [12, -18, 0, 0, 7, -5]
B = [8, 12, 0, 5, 0, -15]


def a(L):
    return L.tensor(A)


def b(L):
    return L.tensor(B)


CASES: dict[str, Any] = {
    "gcd": lambda L: L.gcd(a(L), b(L)),
    "lcm": lambda L: L.lcm(a(L), b(L)),
    "gcd_float": lambda L: L.gcd(a(L).float(), b(L)),
    "lcm_float": lambda L: L.lcm(a(L), b(L).double()),
    "gcd_number": lambda L: L.gcd(a(L), 2),
    "gcd_int32": lambda L: L.gcd(a(L).int(), b(L)),
    "gcd_bool": lambda L: L.gcd(a(L).bool(), b(L).bool()),
    "gcd_bcast": lambda L: L.gcd(a(L)[:, None], b(L)[:2]),
    "gcd_": lambda L: a(L).gcd_(b(L)),
    "torch_gcd_": lambda L: L.gcd_(a(L), b(L)),
    "lcm_": lambda L: a(L).lcm_(b(L)),
    "torch_lcm_": lambda L: L.lcm_(a(L), b(L)),
    "lcm_uint8": lambda L: L.lcm(a(L).to(L.uint8), b(L).to(L.uint8)),
    "gcd_int32_inplace": lambda L: a(L).int().gcd_(b(L)),
    "lcm_big": lambda L: L.lcm(L.tensor([2**40]), L.tensor([3**20])),
    "gcd_method": lambda L: a(L).gcd(b(L)),
    "lcm_method": lambda L: a(L).lcm(b(L)),
    "gcd_0d": lambda L: L.gcd(L.tensor(12), L.tensor(18)),
    "lcm_int8": lambda L: L.lcm(L.tensor([100], dtype=L.int8), L.tensor([3], dtype=L.int8)),
    "gcd_empty": lambda L: L.gcd(L.zeros(0, dtype=L.long), L.zeros(0, dtype=L.long)),
    # in place: the cast error before the kernel's error for floats, then shape, number
    "gcd__float_other": lambda L: a(L).gcd_(b(L).float()),
    "lcm__float_other": lambda L: a(L).lcm_(b(L).double()),
    "gcd__float_self": lambda L: a(L).float().gcd_(b(L)),
    "gcd__bool_other": lambda L: a(L).gcd_(b(L).bool()),
    "lcm__broadcast_self": lambda L: a(L)[:1].lcm_(b(L)),
    "gcd__number": lambda L: a(L).gcd_(2),
    "lcm__int32_float": lambda L: a(L).int().lcm_(b(L).half()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    assert outcome(lambda lib: str(CASES[name](lib)), chainrule) == outcome(
        lambda lib: str(CASES[name](lib)), torch
    )
