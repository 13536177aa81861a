"""Argument errors of Tensor methods number the arguments after ``self`` as PyTorch's do
(``x.scatter_add(0, i, 1.0)``: ``src`` is position 3; ``torch.scatter_add(x, 0, i, 1.0)``: 4).
The methods of plain public functions are copies of them with a code object of their own, by
which the error tells the two calls apart (ops/_registry.argument_position)."""

from __future__ import annotations

import pytest

import chainrule
from chainrule.ops._registry import argument_position

from .conftest import torch
from .outcomes import outcome

CALLS = [
    "lib.index_select(x, 0, [0])",
    "x.index_select(0, [0])",
    "lib.gather(x, 0, [0])",
    "x.gather(0, [0])",
    "lib.scatter_add(x, 0, i, 1.0)",
    "x.scatter_add(0, i, 1.0)",
    "lib.masked_select(x, [0])",
    "x.masked_select([0])",
    "lib.take(x, [0])",
    "x.take([0])",
    "lib.put(x, [0], x)",
    "x.put([0], x)",
    "x.put(i1, 1.0)",
    "lib.index_add(x, 0, [0], x)",
    "x.index_add(0, [0], x)",
    "x.index_add(0, i1, 1.0)",
    "lib.index_put(x, (i1,), 1.0)",
    "x.index_put((i1,), 1.0)",
    "lib.scatter_reduce(x, 0, i, 1.0, 'sum')",
    "x.scatter_reduce(0, i, 1.0, 'sum')",
    "lib.index_reduce(x, 0, [0], x, 'prod')",
    "x.index_reduce(0, [0], x, 'prod')",
    "x.index_reduce(0, i1, 1.0, 'prod')",
    "lib.masked_scatter(x, [0], x)",
    "x.masked_scatter([0], x)",
    "x.masked_scatter_([0], x)",
]


@pytest.mark.parametrize("call", CALLS)
def test_argument_error_positions_as_pytorch(call: str) -> None:
    def run(lib):
        x = lib.zeros(3, 3)
        i, i1 = lib.tensor([[0]]), lib.tensor([0])
        return eval(call, {"lib": lib, "x": x, "i": i, "i1": i1})

    assert outcome(run, chainrule) == outcome(run, torch)


def test_method_is_a_copy_of_the_function() -> None:
    method = chainrule.Tensor.scatter_add
    function = chainrule.scatter_add
    assert method is not function
    assert method.__code__ is not function.__code__
    assert method.__name__ == function.__name__ and method.__doc__ == function.__doc__
    assert method.__defaults__ == function.__defaults__


def test_position_outside_any_public_function_is_unchanged() -> None:
    assert argument_position(4) == 4
