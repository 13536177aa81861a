"""quantile and nanquantile against PyTorch: every interpolation with q as a number, a 0-d and a
1-D tensor, over all elements and along each dim with keepdim; NaN (propagated or ignored), ties,
infinities, gradients (also to a q that requires grad) and the graph node for node; errors (type
and message, in PyTorch's order). Random gradients are swept by tests/opinfos/quantiles.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

NAN = float("nan")
INF = float("inf")
DATA = [[1.0, 5, 2, 8, 2], [3, NAN, 1, 0, NAN], [NAN, NAN, NAN, NAN, NAN], [-INF, 4, 4, INF, 0]]
MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def show(r: Any) -> str:
    return str(r).replace("chainrule", "torch")


def _call(fn_name: str, q: Any, dim: Any, keepdim: bool, mode: str) -> Any:
    def run(L: Any) -> Any:
        qq = q(L) if callable(q) else q
        return getattr(L, fn_name)(L.tensor(DATA), qq, dim=dim, keepdim=keepdim, interpolation=mode)

    return run


CASES: dict[str, Any] = {}
for _fn in ("quantile", "nanquantile"):
    for _mode in MODES:
        for _qname, _q in (
            ("num", 0.4),
            ("0d", lambda L: L.tensor(0.75)),
            ("1d", lambda L: L.tensor([0.0, 0.25, 0.5, 1.0])),
        ):
            for _dim, _keep in ((None, False), (None, True), (1, False), (0, True), (-1, True)):
                CASES[f"{_fn}_{_mode}_{_qname}_{_dim}_{_keep}"] = _call(_fn, _q, _dim, _keep, _mode)

CASES.update(
    {
        "int_input": lambda L: L.quantile(L.tensor([1, 2]), 0.5),
        "half_input": lambda L: L.quantile(L.tensor([1.0, 2]).half(), 0.5),
        "q_dtype": lambda L: L.quantile(L.tensor([1.0, 2]), L.tensor(0.5).double()),
        "q_2d": lambda L: L.quantile(L.tensor([1.0, 2]), L.tensor([[0.5]])),
        "empty": lambda L: L.quantile(L.tensor([]), 0.5),
        "empty_dim": lambda L: L.quantile(L.empty(2, 0), 0.5, dim=1),
        "q_above": lambda L: L.quantile(L.tensor([1.0, 2]), 1.5),
        "q_below": lambda L: L.nanquantile(L.tensor([1.0, 2]), -0.5),
        "q_int": lambda L: L.quantile(L.tensor([1.0, 2]), 2),
        "q_nan": lambda L: L.quantile(L.tensor([1.0, 2]), NAN),
        "q_tensor_range": lambda L: L.quantile(L.tensor([1.0, 2]), L.tensor([0.5, 1.5])),
        "q_tensor_nan": lambda L: L.quantile(L.tensor([1.0, 2]), L.tensor([NAN])),
        "q_list": lambda L: L.quantile(L.tensor([1.0, 2]), [0.5]),
        "bad_mode": lambda L: L.nanquantile(L.tensor([1.0, 2]), 0.5, interpolation="foo"),
        "bad_dim": lambda L: L.quantile(L.tensor([[1.0, 2]]), 0.5, dim=2),
        "int_and_empty": lambda L: L.quantile(L.tensor([], dtype=L.long), 0.5),
        "range_before_mode": lambda L: L.quantile(L.tensor([1.0]), 3.0, interpolation="foo"),
        "method": lambda L: L.tensor(DATA).quantile(0.5, 0),
        "method_nan": lambda L: L.tensor(DATA).nanquantile(L.tensor([0.1, 0.9]), 1, True),
        "scalar_input": lambda L: L.quantile(L.tensor(3.0), 0.2),
        "double": lambda L: L.quantile(L.tensor(DATA).double(), 0.33, dim=1),
        "empty_q": lambda L: L.quantile(L.tensor([1.0, 2]), L.tensor([])),
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


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn_name", ["quantile", "nanquantile"])
def test_gradients_and_graph(fn_name: str, mode: str) -> None:
    seen = []
    for L in (chainrule, torch):
        x = L.tensor([[1.0, 5, 2, 8, 2], [3, NAN, 1, 0, 7], [4, 4, 4, 1, 0]], requires_grad=True)
        q = L.tensor([0.1, 0.5, 0.8], requires_grad=True)
        out = getattr(L, fn_name)(x, q, dim=1, interpolation=mode)
        grads = L.autograd.grad(out, [x, q], L.arange(9.0).reshape(3, 3), allow_unused=True)
        seen.append((_graph(out.grad_fn), [None if g is None else show(g) for g in grads]))
    assert seen[0] == seen[1]


def test_forward_ad() -> None:
    seen = []
    for L in (chainrule, torch):
        fwad = L.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(L.tensor([[1.0, 5, 2, 8], [3, 0, 1, 0]]), L.ones(2, 4) * 2)
            seen.append(show(fwad.unpack_dual(L.quantile(x, 0.3, dim=1)).tangent))
    assert seen[0] == seen[1]
