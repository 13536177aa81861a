"""``dtype=`` arguments naming an integer or bool type, against PyTorch.

A reduction or scan of a tensor that requires grad, asked for an integer result under grad
mode, is PyTorch's "Autograd not support dtype: Long" (chainrule used to return an integer
tensor that silently had no history); ``mean``/``nanmean`` refuse such a dtype outright, and
``softmax``/``log_softmax`` fail in their kernel (chainrule leaked NumPy's casting error).
A conversion (``x.to(torch.long)``) and the same calls outside grad mode still compute.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "sum": lambda L, x: x.sum(dtype=L.int32),
    "sum dim": lambda L, x: x.sum(0, dtype=L.int64),
    "sum bool": lambda L, x: x.sum(dtype=L.bool),
    "torch.sum": lambda L, x: L.sum(x, 1, True, dtype=L.int16),
    "nansum": lambda L, x: x.nansum(dtype=L.int64),
    "prod": lambda L, x: x.prod(dtype=L.int64),
    "prod dim": lambda L, x: x.prod(0, dtype=L.int64),
    "cumsum": lambda L, x: x.cumsum(0, dtype=L.int16),
    "torch.cumsum": lambda L, x: L.cumsum(x, 1, dtype=L.int64),
    "cumprod": lambda L, x: x.cumprod(0, dtype=L.uint8),
    "mean": lambda L, x: x.mean(dtype=L.int64),
    "mean dim": lambda L, x: x.mean(0, dtype=L.int64),
    "mean bool": lambda L, x: x.mean(dtype=L.bool),
    "nanmean": lambda L, x: x.nanmean(dtype=L.int64),
    "vector_norm": lambda L, x: L.linalg.vector_norm(x, dtype=L.int64),
    "softmax dim 0": lambda L, x: x.softmax(0, dtype=L.int64),
    "softmax last dim": lambda L, x: x.softmax(1, dtype=L.int64),
    "softmax bool": lambda L, x: x.softmax(-1, dtype=L.bool),
    "log_softmax dim 0": lambda L, x: x.log_softmax(0, dtype=L.int64),
    "log_softmax last dim": lambda L, x: x.log_softmax(-1, dtype=L.int32),
    "softmin": lambda L, x: L.nn.functional.softmin(x, -1, dtype=L.int64),
    "softmax of integers": lambda L, x: x.long().softmax(0),
    "log_softmax of integers": lambda L, x: x.long().log_softmax(-1),
    "to long": lambda L, x: x.to(L.int64),
    "sum float64": lambda L, x: x.sum(dtype=L.float64),
}


def _show(result: Any) -> tuple[str, bool, Any]:
    return str(result.dtype).split(".")[-1], result.requires_grad, result.tolist()


@pytest.mark.parametrize("grad", [True, False], ids=["requires_grad", "plain"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(name: str, grad: bool) -> None:
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor([[1.5, 2.0], [3.0, 4.25]], requires_grad=grad)
        results.append(attempt(lambda lib=lib, x=x: _show(CASES[name](lib, x))))
    assert results[1] == results[0]


@pytest.mark.parametrize("name", ["sum", "cumsum", "prod dim"])
def test_outside_grad_mode_integer_results_compute(name: str) -> None:
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor([[1.5, 2.0], [3.0, 4.25]], requires_grad=True)
        with lib.no_grad():
            results.append(_show(CASES[name](lib, x)))
    assert results[1] == results[0]
    assert results[0][1] is False
