"""histogram / Tensor.histogram / histogramdd against PyTorch: counts, weights, densities and
bin edges bit for bit (random float32 and float64 data, many bins, edges given as tensors,
ranges, ties with the edges, NaN, empty inputs, a range of width 0), the return types, the
NotImplemented nodes recorded for inputs that require grad, and PyTorch's errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = (torch, chainrule)
RNG = np.random.default_rng(7)
DATA = (RNG.standard_normal(500) * 3).tolist()
POINTS = (RNG.standard_normal((300, 3)) * 2).tolist()
WEIGHTS = RNG.random(500).tolist()


def _both(call: Any) -> list[Any]:
    results = []
    for lib in LIBS:
        try:
            results.append(call(lib))
        except Exception as error:  # noqa: BLE001 - the two libraries' errors are compared
            results.append(error)
    return results


def _same_tensor(ours: Any, theirs: Any, exact: bool = True) -> None:
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    if exact:
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    else:
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


#: Weighted sums: PyTorch adds the weights in one partial histogram per thread, summed at the
#: end, so its last bits depend on the number of threads; chainrule adds them in order.
WEIGHTED = {"weights", "weighted_density", "dd_weights_density"}


CASES = {
    "bins_count": lambda L: L.histogram(L.tensor(DATA), 37),
    "bins_count_float64": lambda L: L.histogram(L.tensor(DATA, dtype=L.float64), 101),
    "range": lambda L: L.histogram(L.tensor(DATA), 13, range=(-1.5, 2.25)),
    "weights": lambda L: L.histogram(L.tensor(DATA), 20, weight=L.tensor(WEIGHTS)),
    "density": lambda L: L.histogram(L.tensor(DATA), 9, density=True),
    "weighted_density": lambda L: L.histogram(
        L.tensor(DATA), 9, weight=L.tensor(WEIGHTS), density=True
    ),
    "edges_tensor": lambda L: L.histogram(L.tensor(DATA), L.tensor([-5.0, -1.0, 0.0, 0.5, 7.0])),
    "edges_density": lambda L: L.histogram(
        L.tensor(DATA), L.tensor([-5.0, -1.0, 0.0, 0.5, 7.0]), density=True
    ),
    "ties_with_edges": lambda L: L.histogram(L.tensor([0.0, 1, 2, 3, 3, 1.5]), 3),
    "nan_skipped_with_range": lambda L: L.histogram(
        L.tensor([1.0, math.nan, 2.0]), 2, range=(0.0, 2.0)
    ),
    "inf_skipped_with_range": lambda L: L.histogram(
        L.tensor([1.0, math.inf, -math.inf]), 2, range=(0.0, 2.0)
    ),
    "decreasing_edges": lambda L: L.histogram(L.tensor([1.0, 2.0]), L.tensor([3.0, 1.0])),
    "empty": lambda L: L.histogram(L.tensor([]), 3),
    "constant": lambda L: L.histogram(L.tensor([2.0, 2.0]), 3),
    "matrix_input": lambda L: L.histogram(L.tensor(DATA).reshape(20, 25), 7),
    "transposed_input": lambda L: L.histogram(L.tensor(DATA).reshape(20, 25).t(), 7),
    "method": lambda L: L.tensor(DATA).histogram(bins=5),
    "dd": lambda L: L.histogramdd(L.tensor(POINTS), bins=[4, 5, 6]),
    "dd_one_count": lambda L: L.histogramdd(L.tensor(POINTS), bins=3),
    "dd_range": lambda L: L.histogramdd(
        L.tensor(POINTS), bins=[2, 3, 4], range=[-1.0, 1.0, 0.0, 2.0, -3.0, 0.0]
    ),
    "dd_weights_density": lambda L: L.histogramdd(
        L.tensor(POINTS), bins=[3, 3, 3], weight=L.tensor(WEIGHTS[:300]), density=True
    ),
    "dd_edges": lambda L: L.histogramdd(
        L.tensor(POINTS)[:, :2], bins=[L.tensor([-9.0, 0.0, 9.0]), L.tensor([-1.0, 1.0])]
    ),
    "dd_batched": lambda L: L.histogramdd(L.tensor(POINTS).reshape(10, 30, 3), bins=4),
}


def _parts(result: Any) -> list[Any]:
    hist, edges = result
    return [hist, *(edges if isinstance(edges, tuple) else (edges,))]


@pytest.mark.parametrize("name", CASES)
def test_as_pytorch(name: str) -> None:
    theirs, ours = _both(CASES[name])
    assert not isinstance(theirs, Exception), theirs
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._fields == ("hist", "bin_edges") if hasattr(ours, "_fields") else True
    for k, (a, b) in enumerate(zip(_parts(ours), _parts(theirs), strict=True)):
        _same_tensor(a, b, exact=k > 0 or name not in WEIGHTED)
    if name not in WEIGHTED:
        assert repr(ours).replace("chainrule", "torch") == repr(theirs)


ERRORS = {
    "nan_range": lambda L: L.histogram(L.tensor([1.0, math.nan]), 4),
    "inf_range": lambda L: L.histogram(L.tensor([1.0, math.inf]), 3),
    "integer": lambda L: L.histogram(L.tensor([1, 2]), 3),
    "half": lambda L: L.histogram(L.tensor([1.0, 2.0]).half(), 3),
    "zero_bins": lambda L: L.histogram(L.tensor([1.0]), 0),
    "negative_bins": lambda L: L.histogram(L.tensor([1.0]), -1),
    "min_above_max": lambda L: L.histogram(L.tensor([1.0]), 3, range=(3.0, 1.0)),
    "edges_2d": lambda L: L.histogram(L.tensor([1.0]), L.tensor([[3.0, 1.0]])),
    "weight_shape": lambda L: L.histogram(L.tensor([1.0, 2, 3]), 3, weight=L.tensor([1.0, 2])),
    "weight_dtype": lambda L: L.histogram(
        L.tensor([1.0, 2]), 3, weight=L.tensor([1.0, 2], dtype=L.float64)
    ),
    "edges_dtype": lambda L: L.histogram(L.tensor([1.0]), L.tensor([0.0, 2], dtype=L.float64)),
    "dd_one_dim": lambda L: L.histogramdd(L.tensor([0.0, 1.0]), bins=2),
    "dd_bins_count": lambda L: L.histogramdd(L.tensor([[0.0, 0.0]]), bins=[2, 2, 2]),
    "backward": lambda L: (
        L.histogram(L.tensor([1.0, 2], requires_grad=True), 3).hist.sum().backward()
    ),
    "backward_edges": lambda L: (
        L.histogram(L.tensor([1.0, 2], requires_grad=True), 3).bin_edges.sum().backward()
    ),
    "backward_dd_counts": lambda L: (
        L.histogramdd(L.tensor([[1.0], [2]], requires_grad=True), [3]).hist.sum().backward()
    ),
    "backward_dd_tensors": lambda L: (
        L.histogramdd(L.tensor([[1.0], [2]], requires_grad=True), [L.tensor([0.0, 3])])
        .hist.sum()
        .backward()
    ),
    "backward_dd_edges": lambda L: (
        L.histogramdd(L.tensor([[1.0], [2]], requires_grad=True), [3]).bin_edges[0].sum().backward()
    ),
    "backward_given_edges": lambda L: (
        L.histogramdd(L.tensor([[1.0], [2]], requires_grad=True), [L.tensor([0.0, 3])])
        .bin_edges[0]
        .sum()
        .backward()
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_pytorch(name: str) -> None:
    theirs, ours = _both(ERRORS[name])
    assert isinstance(theirs, Exception), theirs
    assert type(ours) is type(theirs) and str(ours) == str(theirs)


def test_nodes_where_grad_is_required() -> None:
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        hist, edges = lib.histogram(x, 3)
        assert hist.requires_grad and edges.requires_grad
        assert hist.grad_fn.name().endswith("NotImplemented")
        assert hist.grad_fn.next_functions[0][0].variable is x
        w = lib.ones(3, requires_grad=True)
        assert lib.histogram(x.detach(), 3, weight=w).hist.requires_grad
        assert not lib.histogram(x.detach(), 3).hist.requires_grad
        with lib.no_grad():
            assert not lib.histogram(x, 3).hist.requires_grad
