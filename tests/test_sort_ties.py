"""The default (unstable) sort orders equal elements as PyTorch's CPU sort does, so the indices
of ties, and the gradients through them, are PyTorch's.

PyTorch's CPU kernel sorts (value, index) pairs with libstdc++'s std::sort (introsort, then an
insertion sort), which from 17 elements on leaves equal values in another order than a stable
sort; a 1-D integer tensor sorted ascending from 32768 elements is radix-sorted (stably), and a
dimension of stride 0 gives 0, 1, 2, ... chainrule sorts stably, then runs the same introsort on
the slices that have equal neighbours (ops/selection.py). stable=True stays stable.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule
from chainrule.ops import selection

from .conftest import torch

_DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
]


def _random_tied(rng: np.random.Generator, dtype: str, trial: int) -> tuple[np.ndarray, int]:
    """A random array with many equal values (and, for floating types, NaNs, infinities and
    signed zeros), and the dimension to sort along."""
    ndim = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 5)) for _ in range(ndim)]
    dim = int(rng.integers(-ndim, ndim))
    shape[dim] = int(rng.integers(1, 500 if ndim == 1 else 150))
    n = shape[dim]
    high = max(2, n // int(rng.integers(1, 20)))
    values = rng.integers(-high, high, size=shape).astype(np.float32)
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        if trial % 3 == 0:
            values[rng.random(shape) < 0.1] = np.nan
        if trial % 5 == 0:
            values = values * 0.0 * np.where(rng.random(shape) < 0.5, -1, 1)
        if trial % 7 == 0:
            values[rng.random(shape) < 0.2] = -np.inf if trial % 2 else np.inf
    if dtype == "uint8":
        values = np.abs(values)
    return values, dim


def _both(values: np.ndarray, dtype: str) -> tuple[chainrule.Tensor, torch.Tensor]:
    return (
        chainrule.tensor(values).to(getattr(chainrule, dtype)),
        torch.tensor(values).to(getattr(torch, dtype)),
    )


@pytest.mark.parametrize("dtype", _DTYPES)
def test_indices_of_ties_as_pytorch(dtype: str) -> None:
    """sort, sort(stable=False), argsort and msort on random tied inputs of many sizes and
    dimensions, ascending and descending, contiguous and transposed: PyTorch's indices."""
    rng = np.random.default_rng(_DTYPES.index(dtype))
    for trial in range(120):
        values, dim = _random_tied(rng, dtype, trial)
        ours, theirs = _both(values, dtype)
        if trial % 4 == 1:
            ours, theirs = ours.transpose(0, -1), theirs.transpose(0, -1)
        descending = bool(trial % 2)
        call = trial % 4
        if call == 0:
            got = chainrule.sort(ours, dim, descending=descending)
            want = torch.sort(theirs, dim, descending=descending)
            np.testing.assert_array_equal(got.values.float().numpy(), want.values.float().numpy())
            got, want = got.indices, want.indices
        elif call == 1:
            got = ours.sort(dim=dim, descending=descending, stable=False).indices
            want = theirs.sort(dim=dim, descending=descending, stable=False).indices
        elif call == 2:
            got = ours.argsort(dim=dim, descending=descending)
            want = theirs.argsort(dim=dim, descending=descending)
        else:
            got = chainrule.sort(ours.movedim(dim, 0), 0)[1]
            want = torch.sort(theirs.movedim(dim, 0), 0)[1]
            assert np.array_equal(
                chainrule.msort(ours.movedim(dim, 0)).float().numpy(),
                torch.msort(theirs.movedim(dim, 0)).float().numpy(),
                equal_nan=True,
            )
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=str(values.tolist()))


def test_signed_zeros_keep_pytorch_places_in_the_values() -> None:
    """-0.0 and 0.0 are equal: which sign lands where in the sorted values follows the order."""
    values = np.where(np.random.default_rng(3).random(200) < 0.5, -0.0, 0.0).astype(np.float32)
    ours, theirs = chainrule.tensor(values).sort(), torch.tensor(values).sort()
    np.testing.assert_array_equal(
        np.signbit(ours.values.numpy()), np.signbit(theirs.values.numpy())
    )
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


@pytest.mark.parametrize("descending", [False, True])
def test_gradients_go_to_pytorch_elements(descending: bool) -> None:
    values = np.random.default_rng(4).integers(0, 6, size=(3, 90)).astype(np.float64)
    weights = np.arange(90.0)
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(values, requires_grad=True)
        sorted_values = x.sort(dim=1, descending=descending).values
        (sorted_values * lib.tensor(weights)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_stable_true_stays_stable() -> None:
    values = np.random.default_rng(5).integers(0, 4, size=(5, 300)).astype(np.float32)
    values[0, ::7] = np.nan
    for descending in (False, True):
        ours = chainrule.tensor(values).sort(dim=1, descending=descending, stable=True)
        theirs = torch.tensor(values).sort(dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        ours_arg = chainrule.tensor(values).argsort(dim=1, descending=descending, stable=True)
        np.testing.assert_array_equal(ours_arg.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(
        chainrule.tensor(values).sort(stable=True).indices.numpy(),
        np.argsort(values, axis=1, kind="stable"),
    )


@pytest.mark.parametrize("dtype", ["int64", "int16", "uint8", "float32", "bool"])
@pytest.mark.parametrize("n", [32767, 32768])
def test_long_1d_slices_and_the_radix_sort(dtype: str, n: int) -> None:
    """From 32768 elements PyTorch radix-sorts 1-D integer tensors ascending (a stable order);
    descending, floating and bool tensors still go through std::sort."""
    values = np.random.default_rng(n).integers(0, 40, size=n).astype(np.float32)
    ours, theirs = _both(values, dtype)
    for descending in (False, True):
        np.testing.assert_array_equal(
            ours.sort(descending=descending).indices.numpy(),
            theirs.sort(descending=descending).indices.numpy(),
        )


def test_long_rows_of_two_dimensions_are_not_radix_sorted() -> None:
    values = np.random.default_rng(6).integers(0, 50, size=(2, 33000))
    np.testing.assert_array_equal(
        chainrule.tensor(values).sort().indices.numpy(), torch.tensor(values).sort().indices.numpy()
    )


def test_few_ties_in_a_long_random_slice() -> None:
    """float16 normal samples: ties spread through 60,000 distinct-looking values."""
    values = np.random.default_rng(7).standard_normal(60000).astype(np.float16)
    for descending in (False, True):
        np.testing.assert_array_equal(
            chainrule.tensor(values).sort(descending=descending).indices.numpy(),
            torch.tensor(values).sort(descending=descending).indices.numpy(),
        )


@pytest.mark.parametrize("n", [500, 3000])
def test_heapsort_fallback(n: int) -> None:
    """An organ-pipe slice (0, 1, ..., m, m, ..., 1, 0) exhausts introsort's depth limit, so
    std::sort heapsorts some segments."""
    values = np.concatenate([np.arange(n // 2), np.arange(n // 2)[::-1]]).astype(np.float32)
    for descending in (False, True):
        np.testing.assert_array_equal(
            chainrule.tensor(values).sort(descending=descending).indices.numpy(),
            torch.tensor(values).sort(descending=descending).indices.numpy(),
        )


def test_partitions_with_arrays_and_in_python_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments are partitioned with array operations down to _ARRAY_PARTITION_MIN elements,
    then in Python: both give PyTorch's order (here the array path runs down to 17)."""
    monkeypatch.setattr(selection, "_ARRAY_PARTITION_MIN", 17)
    rng = np.random.default_rng(8)
    for trial in range(60):
        n = int(rng.integers(17, 3000))
        values = rng.integers(0, max(2, n // int(rng.integers(1, 30))), size=n)
        descending = bool(trial % 2)
        np.testing.assert_array_equal(
            chainrule.tensor(values).sort(descending=descending).indices.numpy(),
            torch.tensor(values).sort(descending=descending).indices.numpy(),
        )


def test_expanded_and_short_slices() -> None:
    for make in (
        lambda lib: lib.tensor([3.0, 1.0, 3.0]).reshape(3, 1).expand(3, 40),
        lambda lib: lib.tensor([2.0, 1.0, 2.0, 2.0, 1.0] * 3),
    ):
        for dim in (0, -1):
            np.testing.assert_array_equal(
                make(chainrule).sort(dim=dim).indices.numpy(),
                make(torch).sort(dim=dim).indices.numpy(),
            )


@pytest.mark.parametrize("stable", [False, True])
def test_bfloat16_with_nan_sorts(stable: bool) -> None:
    """NumPy's sort of ml_dtypes' bfloat16 misplaced NaNs (the values came out unsorted)."""
    values = np.array([np.inf, -0.0, 0.0, np.nan, 1.0, -1.0, 0.0, np.inf] * 3, np.float32)
    for descending in (False, True):
        ours = chainrule.tensor(values).bfloat16().sort(descending=descending, stable=stable)
        theirs = torch.tensor(values).bfloat16().sort(descending=descending, stable=stable)
        np.testing.assert_array_equal(ours.values.float().numpy(), theirs.values.float().numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
        np.testing.assert_array_equal(
            chainrule.tensor(values).bfloat16().topk(5, largest=not descending).indices.numpy(),
            torch.tensor(values).bfloat16().topk(5, largest=not descending).indices.numpy(),
        )
