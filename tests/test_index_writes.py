"""index_copy and index_fill against PyTorch: values, nodes, layouts, in-place forms, index
and dtype errors (type and message), negative indices, casts. Gradients are swept by
tests/opinfos/index_writes.py."""

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
    "ic": lambda L, x: x.index_copy(0, L.tensor([2, 0]), L.ones(2, 4)),
    "ic_float_idx": lambda L, x: x.index_copy(0, L.tensor([2.0, 0]), L.ones(2, 4)),
    "ic_slice": lambda L, x: x.index_copy(0, L.tensor([2, 0]), L.ones(2, 3)),
    "ic_count": lambda L, x: x.index_copy(0, L.tensor([2, 0]), L.ones(1, 4)),
    "ic_dtype": lambda L, x: x.index_copy(0, L.tensor([2, 0]), L.ones(2, 4, dtype=L.float64)),
    "ic_2didx": lambda L, x: x.index_copy(0, L.tensor([[2, 0]]), L.ones(2, 4)),
    "ic_range": lambda L, x: x.index_copy(0, L.tensor([5, 0]), L.ones(2, 4)),
    "ic_neg_idx": lambda L, x: x.index_copy(0, L.tensor([-1]), L.ones(1, 4)),
    "ic_dim": lambda L, x: x.index_copy(-1, L.tensor([2, 0]), L.ones(3, 2)),
    "ic_baddim": lambda L, x: L.index_copy(x, 2, L.tensor([2, 0]), L.ones(3, 2)),
    "ic_0d_idx": lambda L, x: x.index_copy(0, L.tensor(1), L.ones(4)),
    "ic_dims": lambda L, x: x.index_copy(0, L.tensor([2, 0]), L.ones(2, 4, 1)),
    "ic_t": lambda L, x: x.t().index_copy(0, L.tensor([2, 0]), L.ones(2, 3)),
    "ic_inplace": lambda L, x: x.detach().clone().index_copy_(1, L.tensor([3]), L.zeros(3, 1)),
    "ic_grad_src": lambda L, x: x.detach().index_copy(
        0, L.tensor([1]), L.ones(1, 4, requires_grad=True)
    ),
    "if": lambda L, x: x.index_fill(0, L.tensor([2, 0]), 2.0),
    "if_t": lambda L, x: x.index_fill(0, L.tensor([2, 0]), L.tensor(2.0)),
    "if_t1": lambda L, x: x.index_fill(0, L.tensor([2, 0]), L.tensor([2.0])),
    "if_float_idx": lambda L, x: x.index_fill(0, L.tensor([2.0, 0]), 2.0),
    "if_range": lambda L, x: x.index_fill(0, L.tensor([5]), 2.0),
    "if_2d": lambda L, x: x.index_fill(1, L.tensor([[2, 0]]), 2.0),
    "if_0d_idx": lambda L, x: x.index_fill(-1, L.tensor(1), -1),
    "if_long": lambda L, x: x.detach().long().index_fill(0, L.tensor([2, 0]), 2.5),
    "if_long_t": lambda L, x: x.index_fill(0, L.tensor([2, 0]), L.tensor(2)),
    "if_neg": lambda L, x: x.index_fill(0, L.tensor([-1]), 1.0),
    "if_transposed": lambda L, x: x.t().index_fill(0, L.tensor([2, 0]), 1.0),
    "if_torch": lambda L, x: L.index_fill(x, 0, L.tensor([1]), 1.0),
    "if_inplace": lambda L, x: x.detach().clone().index_fill_(1, L.tensor([0, 0]), 9),
    "if_grad_value": lambda L, x: x.detach().index_fill(
        0, L.tensor([1]), L.tensor(3.0, requires_grad=True)
    ),
    "if_half": lambda L, x: x.half().index_fill(0, L.tensor([1]), 1 / 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor(X, requires_grad=True)
        seen.append(outcome(lambda lib, x=x: show(CASES[name](lib, x)), lib))
    assert seen[0] == seen[1]


def test_a_repeated_index_counts_once_for_the_value() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(2.0, requires_grad=True)
        out = x.index_fill(1, lib.tensor([3, 3, 0]), v)
        out.backward(lib.arange(12.0).reshape(3, 4))
        grads.append((x.grad.tolist(), v.grad.item()))
    assert grads[0] == grads[1]
