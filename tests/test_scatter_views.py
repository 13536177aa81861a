"""select_scatter, slice_scatter and diagonal_scatter against PyTorch: values, nodes, layouts
(strided inputs keep their strides), dtype casts of src, float16, empty slices and errors.
Gradients are swept by tests/opinfos/scatter_views.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(r: Any) -> Any:
    return str(r), r.grad_fn.name() if r.grad_fn else None, r.stride()


X = [[1.0, 4, 9, 16], [2, -1, 0.5, 3], [0, 0, 1, 7]]
CASES: dict[str, Any] = {
    "sel": lambda L, x: L.select_scatter(x, L.ones(4), 0, 1),
    "sel_neg": lambda L, x: L.select_scatter(x, L.ones(3), -1, -1),
    "sel_bad": lambda L, x: L.select_scatter(x, L.ones(3), 0, 0),
    "sel_range": lambda L, x: L.select_scatter(x, L.ones(4), 0, 5),
    "sel_dim": lambda L, x: L.select_scatter(x, L.ones(4), 2, 0),
    "sel_f64": lambda L, x: L.select_scatter(x, L.ones(4, dtype=L.float64), 0, 0),
    "sel_long": lambda L, x: L.select_scatter(x.long(), L.full((4,), 2.7), 0, 0),
    "sel_t": lambda L, x: L.select_scatter(x.t(), L.ones(3), 0, 1),
    "sel_grad": lambda L, x: L.select_scatter(x, L.ones(4, requires_grad=True), 0, 1),
    "sl": lambda L, x: L.slice_scatter(x, L.ones(1, 4), 0, 1, 2),
    "sl_default_bad": lambda L, x: L.slice_scatter(x, L.ones(1, 4)),
    "sl_full": lambda L, x: L.slice_scatter(x, L.zeros(3, 4)),
    "sl_step": lambda L, x: L.slice_scatter(x, L.zeros(3, 2), 1, 0, 4, 2),
    "sl_negstart": lambda L, x: L.slice_scatter(x, L.zeros(3, 2), dim=1, start=-2),
    "sl_end_big": lambda L, x: L.slice_scatter(x, L.zeros(2, 4), start=1, end=10),
    "sl_half": lambda L, x: L.slice_scatter(x.half(), L.zeros(2, 4).half(), start=1),
    "sl_empty": lambda L, x: L.slice_scatter(x, L.zeros(0, 4), start=3),
    "diag": lambda L, x: L.diagonal_scatter(x, L.zeros(3)),
    "diag_bad": lambda L, x: L.diagonal_scatter(x, L.zeros(4)),
    "diag_off": lambda L, x: L.diagonal_scatter(x, L.zeros(3), 1),
    "diag_neg": lambda L, x: L.diagonal_scatter(x, L.zeros(2), -1),
    "diag_swap": lambda L, x: L.diagonal_scatter(x, L.zeros(3), 0, 1, 0),
    "diag_same": lambda L, x: L.diagonal_scatter(x, L.zeros(3), 0, 1, 1),
    "diag_long_src": lambda L, x: L.diagonal_scatter(x, L.tensor([1, 2, 3])),
    "diag_3d": lambda L, x: L.diagonal_scatter(x.reshape(3, 2, 2), L.zeros(3, 2), 0, 1, 2),
    "sel_method": lambda L, x: x.select_scatter(L.ones(4), 0, 0),
    "sl_method": lambda L, x: x.slice_scatter(L.ones(3, 1), 1, 3),
    "diag_method": lambda L, x: x.diagonal_scatter(L.ones(3), 0),
    "sel_0d_src": lambda L, x: L.select_scatter(x[0], L.tensor(5.0), 0, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor(X, requires_grad=True)
        seen.append(outcome(lambda lib, x=x: show(CASES[name](lib, x)), lib))
    assert seen[0] == seen[1]


def test_gradients_of_base_and_source() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(X, requires_grad=True)
        s = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = lib.diagonal_scatter(lib.slice_scatter(x, x[:1] * 2, start=2), s)
        out.backward(lib.arange(12.0).reshape(3, 4))
        grads.append((x.grad.tolist(), s.grad.tolist()))
    assert grads[0] == grads[1]
