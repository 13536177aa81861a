"""Special values in ``var_mean``/``std_mean`` and in ``prod``'s gradient, as PyTorch.

``var_mean``'s mean is Welford's (``m += (x - m) / k``): an infinite element makes the mean
NaN at the next element, so a row's mean is infinite only when its one infinite element comes
last (``[1, inf]`` -> inf, ``[inf, 1]`` -> NaN); chainrule made every such row NaN.
``prod``'s gradient outside create_graph is 0 everywhere when two elements are 0 (PyTorch's
shortcut), also where an infinite element makes the products of the others NaN; chainrule gave
NaN. Found by random reductions at special values compared with PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

INF, NAN = float("inf"), float("nan")
ROWS = [
    [1.0, INF], [INF, 1.0], [-INF, 2.0], [2.0, -INF], [INF, -INF], [INF, INF], [1.0, 2.0, INF],
    [INF, 2.0, 3.0], [1.0, NAN, INF], [INF], [3.0, 4.0], [1.0, 2.0, 3.0, 4.0, -INF],
]


@pytest.mark.parametrize("row", ROWS, ids=str)
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_moments_of_rows_with_infinities(row, name, dtype) -> None:
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(row, dtype=getattr(lib, dtype))
        results.append([t.numpy() for t in getattr(lib, name)(x)])
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dim", [0, 1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_moments_over_dims_with_infinities(dim, keepdim) -> None:
    values = [[1.0, INF, 3.0], [-INF, 2.0, 1.0], [INF, -INF, 0.0], [3.0, 4.0, INF]]
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(values, dtype=lib.float64)
        results.append([t.numpy() for t in lib.var_mean(x, dim, keepdim=keepdim)])
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "values",
    [[1.3, 0.0, -0.0, -INF, 2.0], [0.0, 0.0], [1.0, 0.0, 3.0, 0.0], [0.0, INF, 0.0],
     [1.0, 0.0, INF], [2.0, 0.0, 3.0]],
    ids=str,
)
@pytest.mark.parametrize("create_graph", [False, True])
def test_prod_gradient_with_zeros_and_infinities(values, create_graph) -> None:
    grads = []
    for lib in (torch, chainrule):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.prod(), x, create_graph=create_graph)
        grads.append(g.detach().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    np.testing.assert_array_equal(np.signbit(grads[1]), np.signbit(grads[0]))
