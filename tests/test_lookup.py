"""isin and unravel_index against PyTorch: NaN, numbers on either side, invert, promotion,
empty sets, wrap-around of out-of-range and negative indices, and the errors."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

nan = float("nan")
A = [12, -18, 0, 0, 7, -5]
B = [8, 12, 0, 5, 0, -15]
CASES: dict[str, Any] = {
    "isin": lambda L: L.isin(L.tensor(A), L.tensor(B)),
    "isin_number": lambda L: L.isin(L.tensor(A), 5),
    "isin_number_first": lambda L: L.isin(5, L.tensor(B)),
    "isin_invert": lambda L: L.isin(L.tensor(A), L.tensor(B), invert=True),
    "isin_float": lambda L: L.isin(L.tensor(A).float(), L.tensor(B)),
    "isin_nan": lambda L: L.isin(L.tensor([nan, 1.0]), L.tensor([nan])),
    "isin_unique": lambda L: L.isin(L.tensor(A), L.tensor(B), assume_unique=True),
    "isin_2d": lambda L: L.isin(L.tensor(A).reshape(2, 3), L.tensor(B)),
    "isin_complex": lambda L: L.isin(L.tensor([1 + 1j]), L.tensor([1 + 1j])),
    "isin_numbers": lambda L: L.isin(5, 5),
    "isin_empty": lambda L: L.isin(L.tensor([1, 2]), L.tensor([], dtype=L.long)),
    "isin_bool": lambda L: L.isin(L.tensor([True, False]), L.tensor([True])),
    "ui": lambda L: L.unravel_index(L.tensor([5, 11, 0]), (3, 4)),
    "ui_0d": lambda L: L.unravel_index(L.tensor(5), (3, 4)),
    "ui_over": lambda L: L.unravel_index(L.tensor([12]), (3, 4)),
    "ui_neg": lambda L: L.unravel_index(L.tensor([-1]), (3, 4)),
    "ui_float": lambda L: L.unravel_index(L.tensor([1.0]), (3, 4)),
    "ui_int_shape": lambda L: L.unravel_index(L.tensor([1]), 4),
    "ui_empty_shape": lambda L: L.unravel_index(L.tensor([1]), ()),
    "ui_2d": lambda L: L.unravel_index(L.tensor([[1, 7]]), L.Size([2, 4])),
    "ui_negshape": lambda L: L.unravel_index(L.tensor([1]), (2, -1)),
    "ui_int32": lambda L: L.unravel_index(L.tensor([1], dtype=L.int32), (3, 4)),
    "ui_zero": lambda L: L.unravel_index(L.tensor([0]), (0, 4)),
    "ui_number": lambda L: L.unravel_index(5, (3, 4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    assert outcome(lambda lib: str(CASES[name](lib)), chainrule) == outcome(
        lambda lib: str(CASES[name](lib)), torch
    )
