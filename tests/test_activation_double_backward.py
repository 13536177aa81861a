"""The first derivative of a piecewise-linear activation is a node of its own, as in PyTorch
(``ThresholdBackwardBackward0`` ...): connected to the saved input even when the incoming
gradient is a constant, so differentiating it again gives zeros, and gradients with respect to
the incoming gradient (double-backward tricks such as jvp-by-vjp) are the mask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "relu": lambda lib, t: lib.relu(t),
    "relu_": lambda lib, t: (t * 1).relu_(),
    "nn.ReLU(inplace=True)": lambda lib, t: lib.nn.ReLU(inplace=True)(t * 1),
    "leaky_relu": lambda lib, t: lib.nn.functional.leaky_relu(t, 0.1),
    "leaky_relu inplace": lambda lib, t: lib.nn.functional.leaky_relu(t * 1, 0.2, inplace=True),
    "hardtanh": lambda lib, t: lib.nn.functional.hardtanh(t, -0.5, 1.0),
    "relu6": lambda lib, t: lib.nn.functional.relu6(t * 4),
    "threshold": lambda lib, t: lib.nn.functional.threshold(t, 0.1, 2.0),
    "threshold inplace": lambda lib, t: lib.nn.functional.threshold(t * 1, 0.1, 2.0, True),
    "hardshrink": lambda lib, t: lib.nn.functional.hardshrink(t, 0.5),
}


def _names(fn: Any) -> list:
    return [None if n is None else type(n).__name__ for n, _ in fn.next_functions]


def _run(lib: Any, case: str) -> tuple:
    x = lib.tensor([-1.0, -0.2, 0.3, 0.7, 2.0], dtype=lib.float64, requires_grad=True)
    y = CASES[case](lib, x)
    (g,) = lib.autograd.grad(y, x, lib.ones_like(y) * 2, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
    v = lib.ones(5, dtype=lib.float64, requires_grad=True)
    (g2,) = lib.autograd.grad(y, x, v, create_graph=True)
    (gv,) = lib.autograd.grad((g2 * lib.arange(1.0, 6.0, dtype=lib.float64)).sum(), v)
    return (
        g.detach().numpy().copy(), type(g.grad_fn).__name__, _names(g.grad_fn),
        g.requires_grad, gg.detach().numpy().copy(), gg.requires_grad,
        gv.numpy().copy(), type(g2.grad_fn).__name__,
    )


@pytest.mark.parametrize("case", CASES)
def test_first_derivative_node_matches_torch(case: str) -> None:
    ours, theirs = _run(chainrule, case), _run(torch, case)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        else:
            assert a == b
