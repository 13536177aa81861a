"""PyTorch's private unique ops that its own autograd tests call: ``torch._unique`` (values and
an inverse, or an empty int64 tensor; node ``UniqueBackward0``), ``torch._unique2`` (values,
inverse, counts, empty where not asked) and ``torch._VF.unique_dim`` (all three computed
whatever is asked, as PyTorch's CPU kernel): values, dtypes, which outputs require grad, node
names and the refusals in backward, against PyTorch."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import torch

import chainrule

FLAGS = list(itertools.product([True, False], repeat=3))


def _describe(res: tuple) -> list[Any]:
    return [
        [t.tolist(), str(t.dtype).split(".")[-1], t.requires_grad, list(t.shape)] for t in res
    ] + [type(res[0].grad_fn).__name__ if res[0].grad_fn is not None else None]


def _inputs(lib: Any, requires_grad: bool) -> tuple[Any, Any]:
    x = lib.tensor([5.0, 3, 9, 3, 1, 5, float("nan"), 7], requires_grad=requires_grad)
    m = lib.tensor([[2, 1], [0, 3], [2, 1.0]], dtype=lib.float64, requires_grad=requires_grad)
    return x, m


@pytest.mark.parametrize(("sort", "inverse", "counts"), FLAGS)
@pytest.mark.parametrize("requires_grad", [True, False])
def test_as_pytorch(sort: bool, inverse: bool, counts: bool, requires_grad: bool) -> None:
    results = []
    for lib in (torch, chainrule):
        x, m = _inputs(lib, requires_grad)
        results.append(
            [
                _describe(lib._unique(x, sorted=sort, return_inverse=inverse)),
                _describe(lib._unique(m, sorted=sort, return_inverse=inverse)),
                _describe(
                    lib._unique2(m, sorted=sort, return_inverse=inverse, return_counts=counts)
                ),
                _describe(
                    lib._VF.unique_dim(
                        m, dim=0, sorted=sort, return_inverse=inverse, return_counts=counts
                    )
                ),
                _describe(lib._VF.unique_dim(m, 1, sort, inverse, counts)),
            ]
        )
    mine, theirs = results[1], results[0]
    assert repr(mine).replace("nan", "NaN") == repr(theirs).replace("nan", "NaN")


def test_integer_and_empty_inputs() -> None:
    for make in (
        lambda lib: lib._unique(lib.tensor([[1, 1], [0, 2]]), return_inverse=True),
        lambda lib: lib._unique(lib.ones(0)),
        lambda lib: lib._unique2(lib.tensor([True, False, True]), return_counts=True),
        lambda lib: lib._VF.unique_dim(lib.zeros(0, 2), 0),
    ):
        assert _describe(make(chainrule)) == _describe(make(torch))


@pytest.mark.parametrize("which", ["_unique", "_unique2", "unique_dim"])
def test_backward_refused_as_pytorch(which: str) -> None:
    messages = []
    for lib in (torch, chainrule):
        x, m = _inputs(lib, True)
        calls = {
            "_unique": lambda lib=lib, x=x: lib._unique(x)[0],
            "_unique2": lambda lib=lib, x=x: lib._unique2(x)[0],
            "unique_dim": lambda lib=lib, m=m: lib._VF.unique_dim(m, 0)[0],
        }
        with pytest.raises(NotImplementedError) as error:
            calls[which]().sum().backward()
        messages.append(str(error.value))
    assert messages[1] == messages[0]
