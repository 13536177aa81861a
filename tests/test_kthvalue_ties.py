"""kthvalue picks PyTorch's element among equal values, so its gradient goes where PyTorch's
goes.

chainrule returned the first of the tied elements (a stable sort's); PyTorch's CPU kernel
returns the element its quickselect (median-of-three pivot, Hoare partition, NaN the largest)
leaves at position k. chainrule runs the same swaps on slices whose k-th value is tied
(ops/selection.py). Likewise mode (libstdc++'s std::sort of (value, index) pairs) and topk
(std::partial_sort, or std::nth_element then std::sort; also the order of sorted=False).
Checked on thousands of random tied inputs; the default (unstable) sort is checked in
tests/test_sort_ties.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _tied(rng: np.random.Generator, shape: tuple[int, ...], nan: bool) -> np.ndarray:
    n = shape[-1]
    values = rng.integers(0, max(2, n // int(rng.integers(1, 8))), size=shape).astype(np.float32)
    if nan and rng.random() < 0.5:
        values.reshape(-1)[rng.integers(0, values.size, size=3)] = np.nan
    return values


@pytest.mark.parametrize("seed", range(6))
def test_indices_of_ties_as_pytorch_on_random_inputs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n = int(rng.integers(1, 120))
        values = _tied(rng, (n,), nan=seed % 2 == 1)
        k = int(rng.integers(1, n + 1))
        ours = chainrule.tensor(values).kthvalue(k)
        theirs = torch.tensor(values).kthvalue(k)
        assert int(ours.indices) == int(theirs.indices), (values.tolist(), k)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int8"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_batched_dims_and_dtypes(dtype: str, dim: int, keepdim: bool) -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 4, size=(5, 9, 7)).astype(np.float32)
    k = 3
    results = []
    for lib in (chainrule, torch):
        out = lib.tensor(values).to(getattr(lib, dtype)).kthvalue(k, dim, keepdim)
        results.append((out.indices.numpy(), out.values.float().numpy(), tuple(out.indices.shape)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_the_gradient_goes_to_pytorchs_element() -> None:
    values = np.array(
        [[2.0, 1.0, 2.0, 2.0, 0.0, 2.0, 1.0, 2.0], [3.0, 3.0, 3.0, 1.0, 3.0, 3.0, 0.0, 3.0]]
    )
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(values, requires_grad=True)
        out = x.kthvalue(5, 1)
        (out.values * lib.tensor([1.0, 2.0], dtype=lib.float64)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_unique_values_and_nan_slices() -> None:
    rng = np.random.default_rng(3)
    values = rng.standard_normal((4, 50)).astype(np.float32)
    values[1, [3, 17, 40]] = np.nan
    for k in (1, 25, 48, 50):
        ours = chainrule.tensor(values).kthvalue(k)
        theirs = torch.tensor(values).kthvalue(k)
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())


@pytest.mark.parametrize("seed", range(4))
def test_mode_indices_of_ties_as_pytorch(seed: int) -> None:
    """PyTorch's mode sorts (value, index) pairs with std::sort: from 17 elements on, equal
    values end up in another order than a stable sort's, and the mode's index is the last of
    its run in that order (reproduced by selection.introsort_order)."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(150):
        n = int(rng.integers(1, 300))
        values = rng.integers(0, max(2, n // int(rng.integers(1, 10))), size=n).astype(np.float32)
        ours = chainrule.tensor(values).mode(0)
        theirs = torch.tensor(values).mode(0)
        assert int(ours.indices) == int(theirs.indices), values.tolist()
        assert float(ours.values) == float(theirs.values)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int16"])
def test_mode_batched_and_its_gradient(dtype: str) -> None:
    values = np.random.default_rng(9).integers(0, 6, size=(4, 40, 3)).astype(np.float32)
    results = []
    for lib in (chainrule, torch):
        out = lib.tensor(values).to(getattr(lib, dtype)).mode(1, keepdim=True)
        results.append((out.indices.numpy(), out.values.float().numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    if dtype == "float64":
        grads = []
        for lib in (chainrule, torch):
            x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
            x.mode(1).values.sum().backward()
            grads.append(x.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("seed", range(4))
def test_topk_indices_as_pytorch(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    for _ in range(150):
        n = int(rng.integers(1, 300))
        values = _tied(rng, (n,), nan=seed % 2 == 1)
        if rng.random() < 0.2:
            values = rng.standard_normal(n).astype(np.float32)  # (sorted=False still differs)
        k = int(rng.integers(1, n + 1)) if rng.random() < 0.6 else max(1, n // 64)
        largest, ordered = bool(rng.random() < 0.5), bool(rng.random() < 0.7)
        ours = chainrule.tensor(values).topk(k, largest=largest, sorted=ordered)
        theirs = torch.tensor(values).topk(k, largest=largest, sorted=ordered)
        assert ours.indices.tolist() == theirs.indices.tolist(), (values.tolist(), k)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "uint8"])
@pytest.mark.parametrize("dim", [0, -1])
def test_topk_batched_and_its_gradient(dtype: str, dim: int) -> None:
    values = np.random.default_rng(4).integers(0, 5, size=(70, 9)).astype(np.float32)
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor(values).to(getattr(lib, dtype))
        for k, ordered in ((1, True), (3, False), (5, True)):
            out = x.topk(k, dim, sorted=ordered)
            results.append((out.indices.numpy(), tuple(out.indices.stride())))
    half = len(results) // 2
    for (a, sa), (b, sb) in zip(results[:half], results[half:], strict=True):
        np.testing.assert_array_equal(a, b)
        assert sa == sb
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
        x.topk(4, dim).values.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
