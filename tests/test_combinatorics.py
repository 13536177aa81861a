"""combinations and vander against PyTorch: values and dtypes for r = 0 ... 4 with and without
replacement, N from 0 up, increasing, integer and bool inputs, empty vectors, the graph node for
node, gradients, and errors (type and message). Random gradients are swept by
tests/opinfos/combinatorics.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome


def show(r: Any) -> str:
    return (str(r) + str(r.dtype)).replace("chainrule", "torch")


def _comb(r: int, rep: bool) -> Any:
    return lambda L: L.combinations(L.tensor([1.0, 2, 3, 4]), r, rep)


CASES: dict[str, Any] = {
    f"comb_r{r}_{rep}": _comb(r, rep) for r in range(5) for rep in (False, True)
}
CASES.update(
    {
        "comb_int": lambda L: L.combinations(L.tensor([3, 1, 2])),
        "comb_bool": lambda L: L.combinations(L.tensor([True, False]), with_replacement=True),
        "comb_empty": lambda L: L.combinations(L.tensor([])),
        "comb_one": lambda L: L.combinations(L.tensor([5.0])),
        "comb_2d": lambda L: L.combinations(L.ones(2, 2)),
        "comb_negative": lambda L: L.combinations(L.ones(2), -1),
        "comb_half": lambda L: L.combinations(L.tensor([0.1, 0.2, 0.3]).half()),
        "vander": lambda L: L.vander(L.tensor([1.0, 2, 3, 4])),
        "vander_n0": lambda L: L.vander(L.tensor([1.0, 2]), 0),
        "vander_n1": lambda L: L.vander(L.tensor([1.0, 2]), 1),
        "vander_n5": lambda L: L.vander(L.tensor([1.0, -2]), 5),
        "vander_increasing": lambda L: L.vander(L.tensor([1.0, 2, 3]), increasing=True),
        "vander_int": lambda L: L.vander(L.tensor([1, 2, 3])),
        "vander_int8": lambda L: L.vander(L.tensor([1, 2, 3], dtype=L.int8), 4),
        "vander_bool": lambda L: L.vander(L.tensor([True, False])),
        "vander_double": lambda L: L.vander(L.tensor([0.5, 2], dtype=L.float64), 3),
        "vander_half": lambda L: L.vander(L.tensor([0.5, 3]).half(), 3),
        "vander_empty": lambda L: L.vander(L.tensor([])),
        "vander_special": lambda L: L.vander(L.tensor([0.0, float("inf"), float("nan")]), 3),
        "vander_2d": lambda L: L.vander(L.ones(2, 2)),
        "vander_negative": lambda L: L.vander(L.ones(2), -1),
    }
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    seen = [outcome(lambda lib: show(CASES[name](lib)), lib) for lib in (chainrule, torch)]
    assert seen[0] == seen[1]


def _graph(fn: Any) -> list[str]:
    names, stack = [], [(fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            continue
        names.append("  " * depth + node.name().replace("chainrule", "torch"))
        stack.extend((f, depth + 1) for f, _ in reversed(node.next_functions))
    return names


def _backward(L: Any, x: Any, out: Any) -> tuple[str, str]:
    try:
        (g,) = L.autograd.grad(out, x, L.arange(float(out.numel())).reshape(out.shape))
    except RuntimeError as error:
        return "RuntimeError", str(error).split(",")[0].replace("chainrule", "torch")
    return "ok", show(g)


@pytest.mark.parametrize(
    "call",
    [
        lambda L, x: L.combinations(x),
        lambda L, x: L.combinations(x, 3, True),
        lambda L, x: L.vander(x),
        lambda L, x: L.vander(x, 2, True),
    ],
    ids=["combinations", "combinations_r3", "vander", "vander_increasing"],
)
def test_graph_and_gradients(call: Any) -> None:
    """(vander's backward fails in PyTorch: cumprod saved the slice that the next copy_
    overwrites. chainrule's graph is the same, so it fails the same way.)"""
    seen = []
    for L in (chainrule, torch):
        x = L.tensor([1.0, -2, 0.5], requires_grad=True)
        out = call(L, x)
        seen.append((_graph(out.grad_fn), _backward(L, x, out)))
    assert seen[0] == seen[1]
