"""diff, trapezoid, trapz and cumulative_trapezoid against PyTorch: values, dtypes (bool xor,
integers, promotion of prepend), the graph's last node, float16, empty and 0-d inputs, layouts
and errors. Gradients are swept by tests/opinfos/differences.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(r: Any) -> Any:
    return str(r), r.grad_fn.name() if r.grad_fn else None, tuple(r.shape), r.stride()


X = [[1.0, 4, 9, 16], [2, -1, 0.5, 3], [0, 0, 1, 7]]
CASES: dict[str, Any] = {
    "diff": lambda L, x: L.diff(x),
    "diff_n3": lambda L, x: L.diff(x, n=3),
    "diff_n4": lambda L, x: L.diff(x, n=4),
    "diff_n9": lambda L, x: L.diff(x, n=9),
    "diff_n0": lambda L, x: L.diff(x, n=0),
    "diff_neg": lambda L, x: L.diff(x, n=-1),
    "diff_0d": lambda L, x: L.diff(L.tensor(1.0)),
    "diff_dim0": lambda L, x: x.diff(dim=0),
    "diff_prepend": lambda L, x: L.diff(x, dim=0, prepend=L.ones(1, 4)),
    "diff_append": lambda L, x: L.diff(x, append=L.zeros(3, 2), n=2),
    "diff_prepend_dims": lambda L, x: L.diff(x, dim=0, prepend=L.ones(4)),
    "diff_prepend_shape": lambda L, x: L.diff(x, dim=0, prepend=L.ones(1, 3)),
    "diff_bool": lambda L, x: L.diff(L.tensor([True, False, False, True])),
    "diff_int": lambda L, x: L.diff(L.tensor([1, 3, 2])),
    "diff_promote": lambda L, x: L.diff(x, prepend=L.ones(3, 1, dtype=L.float64)),
    "diff_prepend_long": lambda L, x: L.diff(x, prepend=L.ones(3, 1, dtype=L.long)),
    "diff_half": lambda L, x: L.diff(x.half()),
    "diff_empty": lambda L, x: L.diff(L.zeros(0, 3)),
    "diff_empty_dim": lambda L, x: L.diff(L.zeros(3, 0)),
    "diff_t": lambda L, x: L.diff(x.t(), dim=0),
    "trap": lambda L, x: L.trapezoid(x),
    "trap_dx": lambda L, x: L.trapezoid(x, dx=2),
    "trap_x": lambda L, x: L.trapezoid(x, x),
    "trap_x1d": lambda L, x: L.trapezoid(x, L.tensor([0.0, 1, 3, 6])),
    "trap_x_bad": lambda L, x: L.trapezoid(x, L.arange(3.0)),
    "trap_empty": lambda L, x: L.trapezoid(L.zeros(3, 0)),
    "trap_0d": lambda L, x: L.trapezoid(L.tensor(1.0)),
    "trapz": lambda L, x: L.trapz(x),
    "trapz_dx": lambda L, x: L.trapz(x, dx=0.5),
    "trapz_x": lambda L, x: L.trapz(x, x, dim=0),
    "trap_int": lambda L, x: L.trapezoid(L.tensor([1, 2, 3])),
    "trap_both": lambda L, x: L.trapezoid(x, x, dx=1),
    "trap_dim0": lambda L, x: L.trapezoid(x, dim=0),
    "trap_half": lambda L, x: L.trapezoid(x.half()),
    "trap_x_int": lambda L, x: L.trapezoid(x, L.arange(4)),
    "trap_x_bcast": lambda L, x: L.trapezoid(x, L.ones(2, 3, 4)),
    "trap_baddim": lambda L, x: L.trapezoid(x, dim=2),
    "ctrap": lambda L, x: L.cumulative_trapezoid(x),
    "ctrap_dx": lambda L, x: L.cumulative_trapezoid(x, dx=2),
    "ctrap_x": lambda L, x: L.cumulative_trapezoid(x, x),
    "ctrap_x1d": lambda L, x: L.cumulative_trapezoid(x, L.tensor([0.0, 1, 3, 6])),
    "ctrap_empty": lambda L, x: L.cumulative_trapezoid(L.zeros(3, 0)),
    "ctrap_int": lambda L, x: L.cumulative_trapezoid(L.tensor([1, 2, 3])),
    "ctrap_dim0": lambda L, x: L.cumulative_trapezoid(x, dim=0),
    "ctrap_x_bad": lambda L, x: L.cumulative_trapezoid(x, L.arange(3.0)),
    "ctrap_0d": lambda L, x: L.cumulative_trapezoid(L.tensor(1.0)),
    "ctrap_one": lambda L, x: L.cumulative_trapezoid(L.ones(3, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor(X, requires_grad=True)
        seen.append(outcome(lambda lib, x=x: show(CASES[name](lib, x)), lib))
    assert seen[0] == seen[1]


def test_trapezoid_of_too_few_samples_warns_nothing_and_gradients_match() -> None:
    grads = []
    for lib in (chainrule, torch):
        y = lib.tensor([[2.0], [3.0]], requires_grad=True)
        x = lib.tensor([[1.0], [4.0]], requires_grad=True)
        out = lib.trapezoid(y, x, dim=0) + lib.cumulative_trapezoid(y, dim=1).sum()
        out.sum().backward()
        grads.append((y.grad.tolist(), x.grad.tolist()))
    assert grads[0] == grads[1]
