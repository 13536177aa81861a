"""``set_`` changed a leaf's shape after its ``.grad`` was made: the next backward adds the new
gradient into ``.grad`` as PyTorch's ``grad += new`` does -- shapes that do not broadcast raise
PyTorch's 'size of tensor a' error, a broadcast that is not ``.grad``'s shape its 'output with
shape' error (NumPy's ValueError leaked, or the sum took the broadcast shape), and ``.grad`` is
left as it was. Under ``create_graph`` PyTorch sums out of place (no second error)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import chainrule

SHAPES = [((3,), (5,)), ((1,), (4,)), ((4,), (1,)), ((2, 3), (3,)), ((2, 1), (2, 3)), ((), (2,))]


def _run(lib: Any, first: tuple, second: tuple, create_graph: bool) -> list[Any]:
    a = lib.ones(first, dtype=lib.float64, requires_grad=True)
    (a * 2).sum().backward()
    with lib.no_grad():
        a.set_(lib.ones(second, dtype=lib.float64))
    try:
        (a * 3).sum().backward(create_graph=create_graph)
    except RuntimeError as error:
        return ["error", str(error), a.grad.tolist(), list(a.grad.shape)]
    return ["ok", a.grad.tolist(), list(a.grad.shape)]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("first", "second"), SHAPES)
def test_as_pytorch(first: tuple, second: tuple, create_graph: bool) -> None:
    ours = _run(chainrule, first, second, create_graph)
    theirs = _run(torch, first, second, create_graph)
    assert ours == theirs
