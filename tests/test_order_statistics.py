"""nanmedian and mode against PyTorch: values, indices (ties by position, NaN skipped by
nanmedian), gradients at ties, dtypes, empty inputs, return types and errors. Random gradients
are swept by tests/opinfos/order_statistics.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

NAN = float("nan")
ROWS = [
    [2.0, NAN, 1.0, 2.0, 3.0, 1.0],
    [5.0, 5.0, 1.0, 1.0, NAN, 7.0],
    [3.0, 3, 3, 1, 1, 1],
    [0.0, -0.0, 0.0, 5, 5, 4],
]
MODE_ROWS = [
    [1.0, 2, 2, 1, 3, 9],
    [4, 4, 4, 1, 1, 0],
    [0.0, -0.0, 0.0, 5, 5, 4],
    [7.0, 6, 5, 4, 3, 2],
]


def show(r: Any) -> str:
    return str(r).replace("chainrule", "torch")


CASES: dict[str, Any] = {
    "nanmedian": lambda L: L.tensor(ROWS).nanmedian(),
    "nanmedian_dim": lambda L: L.tensor(ROWS).nanmedian(1),
    "nanmedian_dim0": lambda L: L.tensor(ROWS).nanmedian(0, keepdim=True),
    "nanmedian_torch": lambda L: L.nanmedian(L.tensor(ROWS), -1),
    "nanmedian_all_nan": lambda L: L.tensor([NAN, NAN]).nanmedian(),
    "nanmedian_empty": lambda L: L.tensor([]).nanmedian(),
    "nanmedian_empty_dim": lambda L: L.empty(2, 0).nanmedian(1),
    "nanmedian_int": lambda L: L.tensor([3, 1, 2, 2]).nanmedian(),
    "nanmedian_int_dim": lambda L: L.tensor([[1, 2], [3, 4]]).nanmedian(1, keepdim=True),
    "nanmedian_half": lambda L: L.tensor(ROWS).half().nanmedian(1),
    "nanmedian_0d": lambda L: L.tensor(2.0).nanmedian(0),
    "nanmedian_bool": lambda L: L.tensor([True]).nanmedian(),
    "nanmedian_bool_dim": lambda L: L.tensor([True]).nanmedian(0),
    "nanmedian_complex": lambda L: L.tensor([1j]).nanmedian(),
    "nanmedian_dim_type": lambda L: L.nanmedian(L.tensor([1.0]), 1.5),
    "nanmedian_bad_dim": lambda L: L.tensor([1.0]).nanmedian(2),
    "nanmedian_transposed": lambda L: L.tensor(ROWS).t().nanmedian(0),
    "mode": lambda L: L.tensor(MODE_ROWS).mode(),
    "mode_dim0": lambda L: L.tensor(MODE_ROWS).mode(0),
    "mode_keepdim": lambda L: L.tensor(MODE_ROWS).mode(1, keepdim=True),
    "mode_torch": lambda L: L.mode(L.tensor([[3, 3, 1, 1, 2, 2, 2, 1]])),
    "mode_0d": lambda L: L.tensor(5.0).mode(),
    "mode_bool": lambda L: L.tensor([True, False, True]).mode(),
    "mode_empty_dim": lambda L: L.empty(2, 0).mode(),
    "mode_empty_rows": lambda L: L.empty(0, 2).mode(),
    "mode_empty_keepdim": lambda L: L.empty(0, 2).mode(1, True),
    "mode_complex": lambda L: L.tensor([1 + 1j]).mode(),
    "mode_half": lambda L: L.tensor([1.0, 2, 2]).half().mode(),
    "mode_int8": lambda L: L.tensor([[-1, 5, -1], [2, 2, 3]], dtype=L.int8).mode(1),
    "mode_bad_dim": lambda L: L.tensor([1.0]).mode(3),
    "mode_transposed": lambda L: L.tensor(MODE_ROWS).t().mode(0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(lambda lib: show(CASES[name](lib)), lib) for lib in (chainrule, torch)]
    assert seen[0] == seen[1]


CALLS = {
    "nanmedian": (lambda x: x.nanmedian(), (ROWS, MODE_ROWS)),
    "nanmedian_dim": (lambda x: x.nanmedian(1).values, (ROWS, MODE_ROWS)),
    "nanmedian_dim0": (lambda x: x.nanmedian(0, True).values, (ROWS, MODE_ROWS)),
    # (mode of NaN is left out: PyTorch sorts NaNs with an undefined order)
    "mode": (lambda x: x.mode().values, (MODE_ROWS,)),
    "mode_dim0": (lambda x: x.mode(0).values, (MODE_ROWS,)),
}


@pytest.mark.parametrize(
    ("call", "rows"),
    [
        pytest.param(call, rows, id=f"{name}-{k}")
        for name, (call, all_rows) in CALLS.items()
        for k, rows in enumerate(all_rows)
    ],
)
def test_gradients_and_nodes(call: Any, rows: list) -> None:
    seen = []
    for L in (chainrule, torch):
        x = L.tensor(rows, requires_grad=True)
        out = call(x)
        (g,) = L.autograd.grad(out, x, L.ones_like(out) * 3)
        seen.append((out.grad_fn.name(), show(g)))
    assert seen[0] == seen[1]


def test_all_nan_gradient_is_shared() -> None:
    seen = []
    for L in (chainrule, torch):
        x = L.tensor([NAN, NAN, NAN], requires_grad=True)
        x.nanmedian().backward()
        seen.append(x.grad.tolist())
    assert seen[0] == seen[1]


def test_forward_ad() -> None:
    seen = []
    for L in (chainrule, torch):
        fwad = L.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(L.tensor(MODE_ROWS), L.arange(24.0).reshape(4, 6))
            row = [
                fwad.unpack_dual(v).tangent.tolist()
                for v in (x.nanmedian(), x.nanmedian(1).values, x.mode(0).values)
            ]
        seen.append(row)
    assert seen[0] == seen[1]
