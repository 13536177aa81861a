"""torch.fill, conj_physical(_) and the unsafe splits against PyTorch: values, dtypes, nodes,
layouts, gradients (complex conj_physical included), in-place forms, memory sharing without
view tracking, and errors (type and message). Random gradients are swept by
tests/opinfos/fill_and_splits.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(r: Any) -> Any:
    pieces = r if isinstance(r, tuple) else (r,)
    return [
        (str(t).replace("chainrule", "torch"), t.grad_fn.name() if t.grad_fn else None, t.stride())
        for t in pieces
    ]


def _x(L: Any) -> Any:
    return L.tensor([[1.0, 2], [3, 4]], requires_grad=True)


Z = [1 + 2j, 3 - 1j]
CASES: dict[str, Any] = {
    "fill": lambda L: L.fill(_x(L), 2),
    "fill_tensor": lambda L: L.fill(_x(L), L.tensor(3.0)),
    "fill_tensor_1d": lambda L: L.fill(_x(L), L.tensor([3.0])),
    "fill_transposed": lambda L: L.fill(_x(L).t(), 5),
    "fill_long": lambda L: L.fill(_x(L).long(), 2.5),
    "fill_long_tensor": lambda L: L.fill(_x(L).detach().long(), L.tensor(2.5)),
    "fill_complex_into_float": lambda L: L.fill(_x(L), 1j),
    "fill_str": lambda L: L.fill(_x(L), "a"),
    "fill_half": lambda L: L.fill(_x(L).half(), 1 / 3),
    "fill_bool": lambda L: L.fill(_x(L).bool(), 0.5),
    "fill_overflow": lambda L: L.fill(L.zeros(2, dtype=L.int8), 300),
    "fill_inf": lambda L: L.fill(L.zeros(2), float("-inf")),
    "conj_physical": lambda L: L.conj_physical(L.tensor(Z, requires_grad=True)),
    "conj_physical_method": lambda L: L.tensor(Z, requires_grad=True).conj_physical(),
    "conj_physical_in_place": lambda L: L.tensor(Z).conj_physical_(),
    "torch_conj_physical_": lambda L: L.conj_physical_(L.tensor(Z)),
    "conj_physical_real_in_place": lambda L: (_x(L) * 1).conj_physical_(),
    "conj_physical_of_conj": lambda L: L.conj_physical(L.tensor(Z, requires_grad=True).conj()),
    "conj_physical_int": lambda L: L.conj_physical(L.tensor([1, 2])),
    "conj_physical_number": lambda L: L.conj_physical(3),
    "unsafe_split": lambda L: L.unsafe_split(_x(L), 1),
    "unsafe_split_dim": lambda L: L.unsafe_split(_x(L), 1, 1),
    "unsafe_split_big": lambda L: L.unsafe_split(_x(L), 5),
    "unsafe_split_0d": lambda L: L.unsafe_split(L.tensor(1.0), 1),
    "unsafe_chunk": lambda L: L.unsafe_chunk(_x(L), 2, 1),
    "unsafe_chunk_more": lambda L: _x(L).unsafe_chunk(3),
    "unsafe_chunk_zero": lambda L: _x(L).unsafe_chunk(0),
    "unsafe_split_with_sizes": lambda L: L.unsafe_split_with_sizes(_x(L), [1, 1]),
    "unsafe_split_with_sizes_bad": lambda L: L.unsafe_split_with_sizes(_x(L), [1, 2]),
    "unsafe_split_method": lambda L: _x(L).unsafe_split(1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(lambda lib: show(CASES[name](lib)), lib) for lib in (chainrule, torch)]
    assert seen[0] == seen[1]


def test_fill_gradients() -> None:
    seen = []
    for L in (chainrule, torch):
        x, v = _x(L), L.tensor(3.0, requires_grad=True)
        grads = L.autograd.grad(L.fill(x, v), [x, v], L.ones(2, 2) * 2)
        seen.append([g.tolist() for g in grads])
    assert seen[0] == seen[1]


def test_conj_physical_gradients() -> None:
    seen = []
    for L in (chainrule, torch):
        z = L.tensor(Z, requires_grad=True)
        (g,) = L.autograd.grad(L.conj_physical(z), z, L.tensor([1 + 1j, 2j]))
        w = z * 1
        w.conj_physical_()
        (h,) = L.autograd.grad(w, z, L.tensor([1 - 1j, 3.0 + 0j]))
        seen.append((str(g), w.grad_fn.name(), str(h)))
    assert seen[0] == seen[1]


def test_conj_physical_of_a_real_tensor_is_the_tensor() -> None:
    for L in (chainrule, torch):
        x = _x(L)
        assert L.conj_physical(x) is x and x.conj_physical() is x


def test_unsafe_split_shares_memory_without_view_tracking() -> None:
    seen = []
    for L in (chainrule, torch):
        x = _x(L) * 1
        pieces = L.unsafe_split(x, 1)
        pieces[0].mul_(2)  # (a plain in-place op, not a write through a view)
        seen.append(
            (
                x.tolist(),
                [p._base is None for p in pieces],
                pieces[0].grad_fn.name(),
                [g.tolist() for g in L.autograd.grad(sum(p.sum() for p in pieces), [x])],
            )
        )
    assert seen[0] == seen[1]


def test_unsafe_split_gradient_of_one_piece() -> None:
    seen = []
    for L in (chainrule, torch):
        x = _x(L)
        seen.append(L.autograd.grad(L.unsafe_chunk(x, 2)[1].sum(), x)[0].tolist())
    assert seen[0] == seen[1]
