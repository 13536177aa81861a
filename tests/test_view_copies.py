"""The copy variants of views against PyTorch: values, nodes, contiguous new memory (no view
base, no shared storage), gradients, and the views' errors. Random gradients are swept by
tests/opinfos/view_copies.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

Z = [1 + 2j, 3 - 1j]


def _x(L: Any) -> Any:
    return L.arange(24.0).reshape(2, 3, 4).requires_grad_()


CASES: dict[str, Any] = {
    "alias_copy": lambda L: L.alias_copy(_x(L)),
    "t_copy": lambda L: L.t_copy(_x(L)[0]),
    "t_copy_3d": lambda L: L.t_copy(_x(L)),
    "transpose_copy": lambda L: L.transpose_copy(_x(L), 0, 2),
    "transpose_copy_bad": lambda L: L.transpose_copy(_x(L), 0, 3),
    "permute_copy": lambda L: L.permute_copy(_x(L), (2, 0, 1)),
    "permute_copy_list": lambda L: L.permute_copy(_x(L), [-1, 1, 0]),
    "permute_copy_dup": lambda L: L.permute_copy(_x(L), (0, 0, 1)),
    "unsqueeze_copy": lambda L: L.unsqueeze_copy(_x(L), 1),
    "unsqueeze_copy_bad": lambda L: L.unsqueeze_copy(_x(L), 5),
    "select_copy": lambda L: L.select_copy(_x(L), 1, -1),
    "select_copy_range": lambda L: L.select_copy(_x(L), 1, 3),
    "select_copy_0d": lambda L: L.select_copy(L.tensor(1.0), 0, 0),
    "diagonal_copy": lambda L: L.diagonal_copy(_x(L), 1, 1, 2),
    "diagonal_copy_same": lambda L: L.diagonal_copy(_x(L), 0, 1, 1),
    "t_copy_int": lambda L: L.t_copy(L.tensor([[1, 2]])),
    "expand_copy": lambda L: L.expand_copy(_x(L)[:, :1], (2, 3, 4)),
    "expand_copy_bad": lambda L: L.expand_copy(_x(L), (3, 3, 4)),
    "view_copy": lambda L: L.view_copy(_x(L), (4, -1)),
    "view_copy_transposed": lambda L: L.view_copy(_x(L).mT, (-1,)),
    "view_copy_bad": lambda L: L.view_copy(_x(L), (5, -1)),
    "view_copy_dtype": lambda L: L.view_copy(_x(L), L.int32),
    "squeeze_copy": lambda L: L.squeeze_copy(_x(L)[:, :1]),
    "squeeze_copy_dim": lambda L: L.squeeze_copy(_x(L)[:, :1], 1),
    "squeeze_copy_dims": lambda L: L.squeeze_copy(_x(L)[:1, :1], (0, 1)),
    "slice_copy": lambda L: L.slice_copy(_x(L), 2, -3, None, 2),
    "slice_copy_default": lambda L: L.slice_copy(_x(L)),
    "slice_copy_step": lambda L: L.slice_copy(_x(L), 1, 0, 3, 0),
    "narrow_copy": lambda L: L.narrow_copy(_x(L), 2, 1, 2),
    "narrow_copy_negative": lambda L: _x(L).narrow_copy(0, -1, 1),
    "narrow_copy_bad": lambda L: L.narrow_copy(_x(L), 2, 3, 2),
    "unfold_copy": lambda L: L.unfold_copy(_x(L), 2, 2, 1),
    "unfold_copy_bad": lambda L: L.unfold_copy(_x(L), 2, 5, 1),
    "split_copy": lambda L: L.split_copy(_x(L), 2, 2),
    "split_copy_one": lambda L: L.split_copy(_x(L), 9),
    "split_copy_zero": lambda L: L.split_copy(_x(L), 0),
    "split_with_sizes_copy": lambda L: L.split_with_sizes_copy(_x(L), [1, 2], 1),
    "split_with_sizes_copy_bad": lambda L: L.split_with_sizes_copy(_x(L), [1, 1], 1),
    "unbind_copy": lambda L: L.unbind_copy(_x(L), 1),
    "unbind_copy_one": lambda L: L.unbind_copy(_x(L)[:1]),
    "unbind_copy_0d": lambda L: L.unbind_copy(L.tensor(1.0)),
    "view_as_real_copy": lambda L: L.view_as_real_copy(L.tensor(Z, requires_grad=True)),
    "view_as_real_copy_conj": lambda L: L.view_as_real_copy(L.tensor(Z).conj()),
    "view_as_real_copy_real": lambda L: L.view_as_real_copy(L.ones(2)),
    "view_as_complex_copy": lambda L: L.view_as_complex_copy(L.ones(2, 2)),
    "view_as_complex_copy_grad": lambda L: L.view_as_complex_copy(L.ones(2, 2, requires_grad=True)),
    "view_as_complex_copy_bad": lambda L: L.view_as_complex_copy(L.ones(3)),
}


def show(r: Any) -> Any:
    if isinstance(r, tuple):
        return [show(piece) for piece in r]
    return (
        str(r).replace("chainrule", "torch"),
        r.grad_fn.name() if r.grad_fn else None,
        r.stride(),
        r.is_contiguous(),
        r._base is None,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(lambda lib: show(CASES[name](lib)), lib) for lib in (chainrule, torch)]
    assert seen[0] == seen[1]


GRAD_CALLS = {
    "alias_copy": lambda L, x: L.alias_copy(x),
    "t_copy": lambda L, x: L.t_copy(x[0].detach().requires_grad_()),
    "permute_copy": lambda L, x: L.permute_copy(x, (1, 2, 0)),
    "select_copy": lambda L, x: L.select_copy(x, 2, 1),
    "diagonal_copy": lambda L, x: L.diagonal_copy(x, -1, 2, 1),
    "expand_copy": lambda L, x: L.expand_copy(x, (3, 2, 3, 4)),
    "view_copy": lambda L, x: L.view_copy(x, (6, 4)),
    "squeeze_copy": lambda L, x: L.squeeze_copy(x, 0),
    "slice_copy": lambda L, x: L.slice_copy(x, 1, 1, 3),
    "narrow_copy": lambda L, x: L.narrow_copy(x, 2, 1, 2),
    "unfold_copy": lambda L, x: L.unfold_copy(x, 2, 2, 2),
}


@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_new_memory_and_gradients(name: str) -> None:
    seen = []
    for L in (chainrule, torch):
        out = GRAD_CALLS[name](L, _x(L))
        src = out.grad_fn.next_functions[0][0].variable
        weights = L.arange(float(out.numel())).reshape(out.shape)
        (g,) = L.autograd.grad(out, src, weights)
        seen.append((out.data_ptr() == src.data_ptr(), g.tolist()))
    assert seen[0] == seen[1]
