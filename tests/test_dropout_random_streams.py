"""Dropout's variants and rrelu draw and compute as PyTorch's kernels, bit for bit after the
same ``manual_seed`` (values, then the generator's state through the next ``rand``):
half-precision dropout divides its mask by ``1 - p`` in float32 (it divided by a half-rounded
``1 - p``: 1.4277 for PyTorch's 1.4287 at p=0.3); alpha_dropout and feature_alpha_dropout take
PyTorch's Bernoulli mask and its steps (they drew NumPy uniforms); dropout2d of a 3-D input
drops (N, C) channels as PyTorch, with its warning (it dropped whole rows of N); rrelu draws one
double per non-positive element between float32-rounded bounds (NumPy's uniforms before).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule


def _run(lib, fn, dtype, shape, p):
    lib.manual_seed(2)
    x = lib.linspace(-2, 3.3, int(np.prod(shape)), dtype=getattr(lib, dtype)).reshape(shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = fn(lib, x, p)
    messages = [str(w.message) for w in caught]
    return y.float().numpy(), lib.rand(2).numpy(), messages


FUNCTIONS = {
    "dropout": lambda L, x, p: L.nn.functional.dropout(x, p),
    "alpha_dropout": lambda L, x, p: L.nn.functional.alpha_dropout(x, p, training=True),
    "feature_alpha_dropout": lambda L, x, p: L.nn.functional.feature_alpha_dropout(
        x, p, training=True
    ),
    "dropout1d": lambda L, x, p: L.nn.functional.dropout1d(x, p),
    "dropout2d": lambda L, x, p: L.nn.functional.dropout2d(x, p),
    "dropout3d": lambda L, x, p: L.nn.functional.dropout3d(x, p),
}
SHAPES = {
    "dropout": [(40,), (3, 5, 4)],
    "alpha_dropout": [(40,), (2, 6, 2, 2)],
    "feature_alpha_dropout": [(3, 5, 4), (2, 6, 2, 2)],
    "dropout1d": [(5, 4), (3, 5, 4)],
    "dropout2d": [(3, 5, 4), (2, 6, 2, 2), (2, 3, 2, 2, 2)],
    "dropout3d": [(2, 3, 2, 2), (2, 3, 2, 2, 2)],
}
CASES = [(name, shape) for name, shapes in SHAPES.items() for shape in shapes]


@pytest.mark.parametrize("p", [0.1, 0.3, 1 / 3, 0.9])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize(("name", "shape"), CASES)
def test_dropouts(name, shape, dtype, p):
    ours = _run(chainrule, FUNCTIONS[name], dtype, shape, p)
    theirs = _run(torch, FUNCTIONS[name], dtype, shape, p)
    assert np.array_equal(ours[0], theirs[0], equal_nan=True)
    assert np.array_equal(ours[1], theirs[1])
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(20,), (4, 5), (300,)])
@pytest.mark.parametrize(("lower", "upper"), [(1 / 8, 1 / 3), (0.1, 0.7), (0.3, 0.3)])
def test_rrelu_training(dtype, shape, lower, upper):
    def fn(lib, x, p):
        return lib.nn.functional.rrelu(x, lower, upper, training=True)

    ours = _run(chainrule, fn, dtype, shape, None)
    theirs = _run(torch, fn, dtype, shape, None)
    assert np.array_equal(ours[0], theirs[0])
    assert np.array_equal(ours[1], theirs[1])
