"""sort, argsort, msort, topk and kthvalue against PyTorch where the order is defined: NaN
after everything ascending and first descending, ties in their original order (stable=True, and
PyTorch's default on short inputs), -0.0 equal to 0.0, integer and bool dtypes, 0-d inputs,
errors, and the gradient routed back through the indices."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

nan, inf = float("nan"), float("inf")
VALUES = {
    "specials": [1.0, 0.0, 1.0, 0.0, 1.0, nan, -0.0, 0.0, -inf, inf, nan],
    "ints": [3, -1, 3, 0, -128, 127, 0],
    "uint8": [3, 1, 255, 0, 3],
    "bools": [True, False, True, False],
}


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        r = call()
    except (RuntimeError, IndexError, TypeError, NotImplementedError) as error:
        return type(error).__name__, str(error)
    if isinstance(r, tuple):
        return [(str(v.tolist()), str(v.dtype).split(".")[-1], v.stride()) for v in r]
    return str(r.tolist()), str(r.dtype).split(".")[-1], r.stride()  # (str: NaN == NaN)


def _tensor(lib: ModuleType, kind: str) -> Any:
    dtype = {"ints": lib.int8, "uint8": lib.uint8, "bools": lib.bool}.get(kind, lib.float32)
    return lib.tensor(VALUES[kind], dtype=dtype)


CALLS: dict[str, Callable[[ModuleType, Any], Any]] = {
    "sort": lambda lib, x: lib.sort(x),
    "sort descending": lambda lib, x: lib.sort(x, descending=True),
    "sort stable": lambda lib, x: x.sort(stable=True),
    "sort stable descending": lambda lib, x: x.sort(stable=True, descending=True),
    "argsort": lambda lib, x: lib.argsort(x),
    "argsort descending": lambda lib, x: x.argsort(descending=True),
    "msort": lambda lib, x: lib.msort(x),
    "topk": lambda lib, x: lib.topk(x, 3),
    "topk smallest": lambda lib, x: x.topk(3, largest=False),
    "kthvalue": lambda lib, x: lib.kthvalue(x, 2),
    "kthvalue last": lambda lib, x: x.kthvalue(len(x)),
}


# PyTorch's topk and kthvalue pick among equal elements by their partial sort: with ties the
# values and the picked elements' values agree, the indices need not.
PARTIAL = ("topk", "topk smallest", "kthvalue", "kthvalue last")


@pytest.mark.parametrize("kind", list(VALUES))
@pytest.mark.parametrize("call", list(CALLS))
def test_order(call: str, kind: str) -> None:
    ours = _outcome(lambda: CALLS[call](chainrule, _tensor(chainrule, kind)))
    theirs = _outcome(lambda: CALLS[call](torch, _tensor(torch, kind)))
    if call not in PARTIAL or isinstance(theirs[0], str) and theirs[0].endswith("Error"):
        assert ours == theirs
        return
    assert ours[0] == theirs[0]  # the values
    x = _tensor(chainrule, kind)
    values, indices = CALLS[call](chainrule, x)
    assert str(x[indices].tolist()) == str(values.tolist())  # each index holds its value


@pytest.mark.parametrize("case", ["0-d", "0-d dim 1", "complex", "complex argsort",
                                  "dim out of range", "2-d dim 0", "empty", "topk k too big",
                                  "topk k negative", "topk k 0", "topk complex",
                                  "kthvalue k 0", "kthvalue k too big", "kthvalue 0-d"])
def test_shapes_and_errors(case: str) -> None:
    def run(lib: ModuleType) -> Any:
        return {
            "0-d": lambda: lib.sort(lib.tensor(3.0)),
            "0-d dim 1": lambda: lib.sort(lib.tensor(3.0), 1),
            "complex": lambda: lib.sort(lib.tensor([1j, 2])),
            "complex argsort": lambda: lib.argsort(lib.tensor([1j, 2])),
            "dim out of range": lambda: lib.sort(lib.ones(2, 3), 2),
            "2-d dim 0": lambda: lib.sort(lib.tensor([[3.0, 1.0], [nan, 2.0], [1.0, 1.0]]), 0,
                                          descending=True),
            "empty": lambda: lib.sort(lib.ones(0, 3), 0),
            "topk k too big": lambda: lib.topk(lib.ones(2, 3), 4),
            "topk k negative": lambda: lib.topk(lib.ones(2, 3), -1),
            "topk k 0": lambda: lib.topk(lib.ones(2, 3), 0),
            "topk complex": lambda: lib.topk(lib.tensor([1j]), 1),
            "kthvalue k 0": lambda: lib.kthvalue(lib.ones(2, 3), 0),
            "kthvalue k too big": lambda: lib.kthvalue(lib.ones(2, 3), 4, 0),
            "kthvalue 0-d": lambda: lib.kthvalue(lib.tensor(2.0), 1),
        }[case]()

    assert _outcome(lambda: run(chainrule)) == _outcome(lambda: run(torch))


def test_gradient_follows_the_indices() -> None:
    """Each value's gradient goes back to the element it came from (with ties, to the one
    whose index was returned), values and gradients as PyTorch's."""
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor([[3.0, 1.0, 2.0, 1.0], [0.5, 9.0, -1.0, 0.5]], requires_grad=True)
        values, indices = x.sort(dim=1, descending=True, stable=True)
        (values * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        seen.append((values.grad_fn.name(), indices.tolist(), x.grad.tolist(),
                     np.round(values.detach().numpy(), 6).tolist()))
    assert seen[0] == seen[1]
