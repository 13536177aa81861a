"""masked_scatter against PyTorch: values, nodes and layouts; broadcasting of the mask (both
ways out of place, only to self's shape in place); gradients when self broadcasts and when the
source has unused elements; errors (type and message) and the uint8 deprecation warning.
Random gradients are swept by tests/opinfos/masked_writes.py."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(r: Any) -> Any:
    return str(r), r.grad_fn.name() if r.grad_fn is not None else None, r.stride()


def _inputs(L: Any) -> tuple[Any, Any, Any]:
    x = L.zeros(2, 3, requires_grad=True)
    m = L.tensor([[True, False, True], [False, True, True]])
    s = L.arange(1.0, 7, requires_grad=True).reshape(2, 3)
    return x, m, s


def _case(fn: Any) -> Any:
    return lambda L: fn(L, *_inputs(L))


CASES: dict[str, Any] = {
    "basic": _case(lambda L, x, m, s: x.masked_scatter(m, s)),
    "mask_broadcasts": _case(lambda L, x, m, s: L.masked_scatter(x, m[0], s)),
    "self_broadcasts": _case(lambda L, x, m, s: L.masked_scatter(x[0], m, s)),
    "too_few": _case(lambda L, x, m, s: L.masked_scatter(x, m, s[0])),
    "int_mask": _case(lambda L, x, m, s: L.masked_scatter(x, m.int(), s)),
    "dtype": _case(lambda L, x, m, s: L.masked_scatter(x, m, s.double())),
    "number": _case(lambda L, x, m, s: L.masked_scatter(x, m, 1.0)),
    "mask_number": _case(lambda L, x, m, s: L.masked_scatter(x, True, s)),
    "not_broadcastable": _case(lambda L, x, m, s: L.masked_scatter(x, m[:, :2], s)),
    "in_place": _case(lambda L, x, m, s: x.detach().masked_scatter_(m[0], s)),
    "in_place_larger_mask": _case(lambda L, x, m, s: x.detach()[0].masked_scatter_(m, s)),
    "in_place_expand": _case(lambda L, x, m, s: x.detach()[:1].masked_scatter_(m, s)),
    "in_place_long": _case(lambda L, x, m, s: x.detach().long().masked_scatter_(m, s)),
    "in_place_number": _case(lambda L, x, m, s: x.detach().masked_scatter_(m, 2)),
    "transposed": _case(lambda L, x, m, s: x.t().masked_scatter(m.t(), s)),
    "empty": lambda L: L.zeros(0).masked_scatter(L.zeros(0, dtype=L.bool), L.ones(0)),
    "half": lambda L: (
        L.zeros(3).half().masked_scatter(L.tensor([True, False, True]), L.ones(2).half() / 3)
    ),
    "nan_inf": lambda L: L.tensor([1.0, 2, 3]).masked_scatter(
        L.tensor([True, False, True]), L.tensor([float("nan"), float("-inf")])
    ),
    "int64": lambda L: L.tensor([1, 2, 3]).masked_scatter(
        L.tensor([False, False, True]), L.tensor([7, 8])
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(lambda lib: show(CASES[name](lib)), lib) for lib in (chainrule, torch)]
    assert seen[0] == seen[1]


def test_uint8_mask_warns_then_raises() -> None:
    seen = []
    for L in (chainrule, torch):
        x, m, s = _inputs(L)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = outcome(lambda L, x=x, m=m, s=s: x.masked_scatter(m.to(L.uint8), s), L)
        seen.append((result, [str(w.message).split(" (Triggered")[0] for w in caught]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("pick", ["same", "self_broadcasts", "mask_broadcasts"])
def test_gradients(pick: str) -> None:
    seen = []
    for L in (chainrule, torch):
        x, m, s = _inputs(L)
        base = {"same": (x, m), "self_broadcasts": (x[0], m), "mask_broadcasts": (x, m[1])}[pick]
        y = L.masked_scatter(*base, s)
        y = y * y * L.arange(6.0).reshape(2, 3)
        g = L.autograd.grad(y.sum(), [x, s], create_graph=True)
        gg = L.autograd.grad((g[0] * g[1]).sum(), [x, s], allow_unused=True)
        seen.append(([t.tolist() for t in g], [None if t is None else t.tolist() for t in gg]))
    assert seen[0] == seen[1]


def test_node_saves_the_mask_and_source_sizes() -> None:
    seen = []
    for L in (chainrule, torch):
        x, m, s = _inputs(L)
        node = x.masked_scatter(m, s).grad_fn
        seen.append((node._saved_mask.tolist(), tuple(node._saved_source_sym_sizes)))
    assert seen[0] == seen[1]
