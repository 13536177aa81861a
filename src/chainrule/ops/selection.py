"""PyTorch's CPU selection and sorting algorithms, reproduced so that ties pick PyTorch's
element.

Which of several equal elements ``kthvalue`` returns (and so which one its gradient goes to)
is decided by the order in which PyTorch's quickselect (``quick_select_template`` in
ATen's SortingUtils.h: median-of-three pivot, Hoare partition, NaN the largest) swaps
elements. A slice whose k-th smallest value is unique needs no simulation: its index is that
element's; a slice where it is tied runs the same swaps as PyTorch's, on the slice's values.
``mode`` sorts (value, index) pairs with ``std::sort`` (libstdc++'s introsort), whose order of
equal values :func:`introsort_order` reproduces.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kth_smallest_indices", "introsort_order", "DepthLimitReached"]


def _greater_or_nan(x: float, y: float) -> bool:
    """PyTorch's ``gt_or_nan``: ``x > y``, NaN greater than any number."""
    return x > y or (x != x and y == y)  # (NaN is the only value unequal to itself)


def _quick_select(values: list, k: int) -> int:
    """The original position of the element PyTorch's quickselect leaves at position ``k``
    (0-based) of ``values`` (which it rearranges)."""
    positions = list(range(len(values)))

    def swap(a: int, b: int) -> None:
        values[a], values[b] = values[b], values[a]
        positions[a], positions[b] = positions[b], positions[a]

    gt = _greater_or_nan
    low, high = 0, len(values) - 1
    while True:
        if high <= low:
            return positions[k]
        if high == low + 1:
            if gt(values[low], values[high]):
                swap(low, high)
            return positions[k]
        # The median of three (low, middle, high) becomes the pivot, at ``low``.
        swap(low + (high - low) // 2, low + 1)
        if gt(values[low + 1], values[high]):
            swap(low + 1, high)
        if gt(values[low], values[high]):
            swap(low, high)
        if gt(values[low + 1], values[low]):
            swap(low + 1, low)
        i, j = low + 1, high
        pivot = values[low]
        while True:
            i += 1
            while gt(pivot, values[i]):
                i += 1
            j -= 1
            while gt(values[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(low, j)
        if j <= k:
            low = i
        if j >= k:
            high = j - 1


def kth_smallest_indices(a: np.ndarray, dim: int, k: int) -> np.ndarray:
    """For each slice of ``a`` along ``dim``, the index PyTorch's ``kthvalue`` returns for the
    ``k``-th smallest element (1-based): shape ``a.shape`` without ``dim``, int64."""
    moved = np.moveaxis(a, dim, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n)
    if rows.dtype.kind == "V":  # (bfloat16: compared as float32, the same order)
        rows = rows.astype(np.float32)
    out = np.empty(rows.shape[0], np.int64)
    floating = rows.dtype.kind == "f"
    for r in range(rows.shape[0]):
        row = rows[r]
        if not (floating and np.isnan(row).any()):  # (NaN ties with NaN: simulated)
            equal = np.flatnonzero(row == np.partition(row, k - 1)[k - 1])
            if equal.size == 1:
                out[r] = equal[0]
                continue
        out[r] = _quick_select(row.tolist(), k - 1)
    return out.reshape(moved.shape[:-1])


class DepthLimitReached(Exception):
    """libstdc++'s introsort gave up partitioning for heapsort (not reproduced here)."""


def introsort_order(values: list) -> list[int]:
    """The positions of ``values`` in the order libstdc++'s ``std::sort`` leaves them when
    comparing values only (``a < b``): introsort with a median-of-three pivot and unguarded
    partitions down to 16 elements, then insertion sort. Raises :class:`DepthLimitReached`
    where it would switch to heapsort."""
    keys = [(v, i) for i, v in enumerate(values)]
    n = len(keys)

    def partition_loop(first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                raise DepthLimitReached
            depth -= 1
            a, b, c = first + 1, first + (last - first) // 2, last - 1
            ka, kb, kc = keys[a][0], keys[b][0], keys[c][0]
            if ka < kb:
                median = b if kb < kc else (c if ka < kc else a)
            else:
                median = a if ka < kc else (c if kb < kc else b)
            keys[first], keys[median] = keys[median], keys[first]
            low, high, pivot = first + 1, last, keys[first][0]
            while True:
                while keys[low][0] < pivot:
                    low += 1
                high -= 1
                while pivot < keys[high][0]:
                    high -= 1
                if not low < high:
                    break
                keys[low], keys[high] = keys[high], keys[low]
                low += 1
            partition_loop(low, last, depth)  # (at most 2 log2(n) deep)
            last = low

    def linear_insert(i: int) -> None:
        item = keys[i]
        j = i - 1
        while item[0] < keys[j][0]:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = item

    def insertion_sort(first: int, last: int) -> None:
        for i in range(first + 1, last):
            if keys[i][0] < keys[first][0]:
                keys[first : i + 1] = [keys[i]] + keys[first:i]
            else:
                linear_insert(i)

    if n > 1:
        partition_loop(0, n, 2 * (n.bit_length() - 1))
        insertion_sort(0, min(n, 16))
        for i in range(16, n):
            linear_insert(i)
    return [i for _, i in keys]
