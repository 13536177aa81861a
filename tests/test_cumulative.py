"""cummax, cummin, logcumsumexp and aminmax against PyTorch: ties (the latest index), NaN
(taking over from where it appears), infinities, 0-d, empty and transposed inputs, integers,
bool, float16, nodes and errors. Gradients are swept by tests/opinfos/cumulative.py."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

nan, inf = float("nan"), float("inf")


def show(r: Any) -> Any:
    if isinstance(r, tuple):
        nodes = [t.grad_fn.name() if t.grad_fn else None for t in r]
        return str(r), nodes, [t.stride() for t in r]
    return str(r), r.grad_fn.name() if r.grad_fn else None, r.stride()


TIES = [1.0, 3, 3, 2, nan, 5, nan, 4]
CASES: dict[str, Any] = {
    "cummax_ties_nan": lambda L: L.cummax(L.tensor(TIES), 0),
    "cummin_ties_nan": lambda L: L.cummin(L.tensor(TIES), 0),
    "cummax_int": lambda L: L.cummax(L.tensor([2, 2, 1, 2]), 0),
    "cummin_int": lambda L: L.tensor([2, 2, 1, 2, 1]).cummin(0),
    "cummax_bool": lambda L: L.cummax(L.tensor([True, False, True]), 0),
    "cummax_0d": lambda L: L.cummax(L.tensor(3.0), 0),
    "cummax_0d_dim": lambda L: L.cummax(L.tensor(3.0), 1),
    "cummax_empty": lambda L: L.cummax(L.tensor([]), 0),
    "cummax_empty2": lambda L: L.cummax(L.zeros(2, 0), 1),
    "cummax_2d": lambda L: L.cummax(L.tensor([[1.0, 5, 2], [4, 0, 4]]), -1),
    "cummax_2d_dim0": lambda L: L.cummax(L.tensor([[1.0, 5, 2], [4, 0, 4]]).t(), 0),
    "cummax_baddim": lambda L: L.cummax(L.ones(2), 2),
    "cummax_half": lambda L: L.cummax(L.tensor([1.0, 3, 2]).half(), 0),
    "cummax_complex": lambda L: L.cummax(L.tensor([1j]), 0),
    "cummax_inf": lambda L: L.cummax(L.tensor([-inf, -inf, inf, inf]), 0),
    "cummax_grad": lambda L: L.cummax(L.tensor([1.0, 3, 3, 2], requires_grad=True), 0),
    "lcse": lambda L: L.logcumsumexp(L.tensor([-inf, 1.0, inf, 2.0]), 0),
    "lcse_0d": lambda L: L.logcumsumexp(L.tensor(2.0), 0),
    "lcse_int": lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    "lcse_big": lambda L: L.logcumsumexp(L.tensor([1000.0, 1000.0, -1000.0]), 0),
    "lcse_nan": lambda L: L.logcumsumexp(L.tensor([1.0, nan, 2.0]), 0),
    "lcse_2d": lambda L: L.tensor([[1.0, 2], [3, 4]]).logcumsumexp(-2),
    "lcse_half": lambda L: L.logcumsumexp(L.tensor([1.0, 2, 3, 4]).half(), 0),
    "lcse_empty": lambda L: L.logcumsumexp(L.zeros(0, 2), 0),
    "lcse_grad": lambda L: L.logcumsumexp(L.tensor([1.0, 2.0], requires_grad=True), 0),
    "lcse_baddim": lambda L: L.logcumsumexp(L.ones(2), 1),
    "aminmax": lambda L: L.aminmax(L.tensor([[1.0, 3, 3], [2, 2, 0]])),
    "aminmax_dim": lambda L: L.aminmax(L.tensor([[1.0, 3, 3], [2, 2, 0]]), dim=1, keepdim=True),
    "aminmax_keep_nodim": lambda L: L.aminmax(L.tensor([[1.0, 3, 3], [2, 2, 0]]), keepdim=True),
    "aminmax_neg": lambda L: L.tensor([[1.0, 3, 3], [2, 2, 0]]).aminmax(dim=-2),
    "aminmax_empty": lambda L: L.aminmax(L.tensor([])),
    "aminmax_empty_dim": lambda L: L.aminmax(L.zeros(2, 0), dim=1),
    "aminmax_empty_dim0": lambda L: L.aminmax(L.zeros(2, 0), dim=0),
    "aminmax_bool": lambda L: L.aminmax(L.tensor([True, False])),
    "aminmax_0d": lambda L: L.aminmax(L.tensor(3.0), dim=0),
    "aminmax_0d_nodim": lambda L: L.aminmax(L.tensor(3.0)),
    "aminmax_nan": lambda L: L.aminmax(L.tensor([1.0, nan])),
    "aminmax_int": lambda L: L.aminmax(L.tensor([4, -2, 7])),
    "aminmax_half": lambda L: L.aminmax(L.tensor([4, -2, 7.0]).half(), dim=0),
    "aminmax_positional_dim": lambda L: L.aminmax(L.ones(2), 0),
    "aminmax_grad": lambda L: L.aminmax(L.tensor([1.0, 3], requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    assert outcome(lambda lib: show(CASES[name](lib)), chainrule) == outcome(
        lambda lib: show(CASES[name](lib)), torch
    )


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_gradient_goes_to_the_latest_tie(name: str) -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([[2.0, 2.0, 1.0, 2.0], [0.0, nan, 1.0, nan]], requires_grad=True)
        getattr(lib, name)(x, 1).values.backward(lib.arange(8.0).reshape(2, 4))
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_logcumsumexp_gradient_with_large_and_negative_gradients() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([1000.0, -1000.0, 3.0, -inf, 2.0], dtype=lib.float64, requires_grad=True)
        lib.logcumsumexp(x, 0).backward(lib.tensor([1.0, -2.0, 0.0, 5.0, -1.0], dtype=lib.float64))
        grads.append(x.grad.tolist())
    assert grads[0] == pytest.approx(grads[1], rel=1e-12, nan_ok=True)


def test_aminmax_shares_the_gradient_among_ties() -> None:
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor([[1.0, 3, 3], [2, 2, 0]], requires_grad=True)
        low, high = lib.aminmax(x, dim=1)
        (low * 2 + high * 3).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
