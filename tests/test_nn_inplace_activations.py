"""In-place activations (``inplace=True`` and the ``*_`` functions) against PyTorch: the node
PyTorch's in-place kernel records (``EluBackward1``, ``LeakyReluBackward1`` ... which keep the
output, not the input), values, first and second derivatives, and the negative-slope errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

VALUES = [-2.0, -1.0, -0.25, 0.5, 2.0]

CASES: dict[str, Callable[[Any, Any], Any]] = {
    "elu": lambda F, t: F.elu(t, inplace=True),
    "elu alpha": lambda F, t: F.elu(t, 0.7, inplace=True),
    "elu_": lambda F, t: F.elu_(t),
    "selu": lambda F, t: F.selu(t, inplace=True),
    "celu": lambda F, t: F.celu(t, 2.0, inplace=True),
    "leaky_relu": lambda F, t: F.leaky_relu(t, 0.1, inplace=True),
    "leaky_relu_": lambda F, t: F.leaky_relu_(t, 0.2),
    "threshold": lambda F, t: F.threshold(t, 0.1, 2.0, inplace=True),
    "relu": lambda F, t: F.relu(t, inplace=True),
    "hardtanh": lambda F, t: F.hardtanh(t, inplace=True),
    "silu": lambda F, t: F.silu(t, inplace=True),
}


def _run(lib: Any, case: str) -> tuple:
    x = lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)
    y = CASES[case](lib.nn.functional, x * 1)
    (g,) = lib.autograd.grad(y, x, lib.ones_like(y) * 3, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return (type(y.grad_fn).__name__, y.detach().numpy().copy(), g.detach().numpy().copy(),
            gg.numpy().copy())


@pytest.mark.parametrize("case", CASES)
def test_inplace_activation_matches_torch(case: str) -> None:
    ours, theirs = _run(chainrule, case), _run(torch, case)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


NEGATIVE = {
    "elu": lambda F, t: F.elu(t, -0.5, inplace=True),
    "celu": lambda F, t: F.celu(t, -0.5, inplace=True),
    "leaky_relu": lambda F, t: F.leaky_relu(t, -0.1, inplace=True),
}


@pytest.mark.parametrize("case", NEGATIVE)
def test_inplace_negative_slope_fails_in_backward_like_torch(case: str) -> None:
    def outcome(lib):
        x = lib.tensor(VALUES, requires_grad=True)
        y = NEGATIVE[case](lib.nn.functional, x * 1)
        forward = (type(y.grad_fn).__name__, y.tolist())
        try:
            y.sum().backward()
        except RuntimeError as error:
            return forward, str(error)
        return forward, None

    ours, theirs = outcome(chainrule), outcome(torch)
    assert ours[0][0] == theirs[0][0]
    np.testing.assert_allclose(ours[0][1], theirs[0][1], rtol=1e-6)
    assert theirs[1] is not None and ours[1] == theirs[1]
