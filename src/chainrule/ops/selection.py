"""PyTorch's CPU selection and sorting algorithms, reproduced so that ties pick PyTorch's
element.

Which of several equal elements ``kthvalue`` returns (and so which one its gradient goes to)
is decided by the order in which PyTorch's quickselect (``quick_select_template`` in
ATen's SortingUtils.h: median-of-three pivot, Hoare partition, NaN the largest) swaps
elements. A slice whose k-th smallest value is unique needs no simulation: its index is that
element's; a slice where it is tied runs the same swaps as PyTorch's, on the slice's values.
``mode`` sorts (value, index) pairs with ``std::sort`` (libstdc++'s introsort), whose order of
equal values :func:`introsort_order` reproduces; so does the default (unstable) ``sort``, whose
tied slices :func:`unstable_sort_indices` sorts again with :func:`std_sort_order`.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "kth_smallest_indices",
    "introsort_order",
    "DepthLimitReached",
    "topk_order",
    "std_sort_order",
    "unstable_sort_indices",
]


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


def _greater_nan_first(a: tuple, b: tuple) -> bool:
    """topk's comparator for the largest: NaN first, then larger values."""
    return (a[0] != a[0] and b[0] == b[0]) or a[0] > b[0]


def _less_nan_last(a: tuple, b: tuple) -> bool:
    """topk's comparator for the smallest: smaller values first, NaN last."""
    return (a[0] == a[0] and b[0] != b[0]) or a[0] < b[0]


class _Libstdcxx:
    """libstdc++'s ``std::sort``, ``std::nth_element`` and ``std::partial_sort`` on a list of
    ``(value, position)`` pairs, with the same comparisons and moves (so equal values end up
    where PyTorch's CPU topk leaves them)."""

    def __init__(self, keys: list, comp: object) -> None:
        self.keys = keys
        self.comp = comp

    def _partition_pivot(self, first: int, last: int) -> int:
        keys, comp = self.keys, self.comp
        a, b, c = first + 1, first + (last - first) // 2, last - 1
        if comp(keys[a], keys[b]):
            median = b if comp(keys[b], keys[c]) else (c if comp(keys[a], keys[c]) else a)
        else:
            median = a if comp(keys[a], keys[c]) else (c if comp(keys[b], keys[c]) else b)
        keys[first], keys[median] = keys[median], keys[first]
        low, high, pivot = first + 1, last, keys[first]
        while True:
            while comp(keys[low], pivot):
                low += 1
            high -= 1
            while comp(pivot, keys[high]):
                high -= 1
            if not low < high:
                return low
            keys[low], keys[high] = keys[high], keys[low]
            low += 1

    def _adjust_heap(self, first: int, hole: int, length: int, value: tuple) -> None:
        keys, comp = self.keys, self.comp
        top = second = hole
        while second < (length - 1) // 2:
            second = 2 * (second + 1)
            if comp(keys[first + second], keys[first + second - 1]):
                second -= 1
            keys[first + hole] = keys[first + second]
            hole = second
        if length % 2 == 0 and second == (length - 2) // 2:
            second = 2 * (second + 1)
            keys[first + hole] = keys[first + second - 1]
            hole = second - 1
        parent = (hole - 1) // 2
        while hole > top and comp(keys[first + parent], value):
            keys[first + hole] = keys[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        keys[first + hole] = value

    def _heap_select(self, first: int, middle: int, last: int) -> None:
        keys = self.keys
        length = middle - first
        if length >= 2:  # make_heap
            parent = (length - 2) // 2
            while True:
                self._adjust_heap(first, parent, length, keys[first + parent])
                if parent == 0:
                    break
                parent -= 1
        for i in range(middle, last):
            if self.comp(keys[i], keys[first]):
                self._pop_heap(first, middle, i)

    def _pop_heap(self, first: int, last: int, result: int) -> None:
        keys = self.keys
        value = keys[result]
        keys[result] = keys[first]
        self._adjust_heap(first, 0, last - first, value)

    def _sort_heap(self, first: int, last: int) -> None:
        while last - first > 1:
            last -= 1
            self._pop_heap(first, last, last)

    def _linear_insert(self, i: int) -> None:
        keys, comp = self.keys, self.comp
        item = keys[i]
        j = i - 1
        while comp(item, keys[j]):
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = item

    def _insertion_sort(self, first: int, last: int) -> None:
        keys = self.keys
        for i in range(first + 1, last):
            if self.comp(keys[i], keys[first]):
                keys[first : i + 1] = [keys[i]] + keys[first:i]
            else:
                self._linear_insert(i)

    def sort(self, first: int, last: int) -> None:
        n = last - first
        if n < 2:
            return
        stack = [(first, last, 2 * (n.bit_length() - 1))]
        while stack:  # (introsort: the right part first, as libstdc++ recurses into it)
            low, high, depth = stack.pop()
            while high - low > 16:
                if depth == 0:
                    self._heap_select(low, high, high)
                    self._sort_heap(low, high)
                    break
                depth -= 1
                cut = self._partition_pivot(low, high)
                stack.append((low, cut, depth))
                low = cut
        if n > 16:
            self._insertion_sort(first, first + 16)
            for i in range(first + 16, last):
                self._linear_insert(i)
        else:
            self._insertion_sort(first, last)

    def nth_element(self, first: int, nth: int, last: int) -> None:
        if first == last or nth == last:
            return
        depth = 2 * ((last - first).bit_length() - 1)
        while last - first > 3:
            if depth == 0:
                self._heap_select(first, nth + 1, last)
                self.keys[first], self.keys[nth] = self.keys[nth], self.keys[first]
                return
            depth -= 1
            cut = self._partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self._insertion_sort(first, last)

    def partial_sort(self, first: int, middle: int, last: int) -> None:
        self._heap_select(first, middle, last)
        self._sort_heap(first, middle)


def topk_order(values: list, k: int, largest: bool, sorted: bool) -> list[int]:  # noqa: A002
    """The positions PyTorch's CPU topk returns for one slice: ``std::partial_sort`` of the
    first k when ``k * 64 <= n``, else ``std::nth_element`` at k - 1 (and ``std::sort`` of
    the first k - 1 when ``sorted``), NaN counting as the largest."""
    keys = [(v, i) for i, v in enumerate(values)]
    algorithms = _Libstdcxx(keys, _greater_nan_first if largest else _less_nan_last)
    n = len(keys)
    if k * 64 <= n:
        algorithms.partial_sort(0, k, n)
    else:
        algorithms.nth_element(0, k - 1, n)
        if sorted:
            algorithms.sort(0, k - 1)
    return [i for _, i in keys[:k]]


# ----------------------------------------------------------------------------------------------
# The default (unstable) sort: libstdc++'s std::sort on the slices that have ties

# PyTorch's CPU sort radix-sorts (stably) a 1-D integer tensor ascending from this many elements
# (at::internal::GRAIN_SIZE) when fbgemm's radix sort runs with OpenMP, as in its CPU wheels.
_RADIX_SORT_MIN = 32768
# Segments longer than this are partitioned with array operations, shorter ones in Python.
_ARRAY_PARTITION_MIN = 256


def _median_of_three(a: int, b: int, c: int, ka: object, kb: object, kc: object) -> int:
    """libstdc++'s ``__move_median_to_first``: the position of the median of the keys at
    ``a``, ``b``, ``c`` (``ka < kb`` etc. compare ranks)."""
    if ka < kb:
        return b if kb < kc else (c if ka < kc else a)
    return a if ka < kc else (c if kb < kc else b)


def _partition_arrays(ranks: np.ndarray, carried: tuple, first: int, last: int) -> int:
    """One ``__unguarded_partition_pivot`` of ``[first, last)``, done with array operations;
    returns the cut.

    The left scan stops at the elements not below the pivot, the right scan at those not
    above it, both in the order of the original values (the scans never pass each other's
    swapped positions before the last swap), so the k-th stops pair up while the left one is
    before the right one. The arrays in ``carried`` move with ``ranks``."""
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    median = _median_of_three(a, b, c, ranks[a], ranks[b], ranks[c])
    for array in (ranks, *carried):
        array[first], array[median] = array[median], array[first]
    pivot = ranks[first]
    segment = ranks[first + 1 : last]
    left = np.flatnonzero(segment >= pivot) + (first + 1)
    right = np.flatnonzero(segment <= pivot)[::-1] + (first + 1)
    pairs = min(left.size, right.size)
    swaps = int(np.count_nonzero(left[:pairs] < right[:pairs]))
    if swaps:
        low, high = left[:swaps], right[:swaps]
        for array in (ranks, *carried):
            array[low], array[high] = array[high], array[low]
    cut = last
    if swaps < left.size:
        cut = int(left[swaps])
    if swaps:
        cut = min(cut, int(right[swaps - 1]))
    return cut


def _rank_below(n: int, x: int, y: int) -> bool:
    """Whether key ``x`` (``rank * n + position``) ranks below key ``y``."""
    return x // n < y // n


def _introsort_in_python(keys: list, first: int, last: int, depth: int, n: int) -> None:
    """libstdc++'s ``__introsort_loop`` on ``keys[first:last]``, each key ``rank * n +
    position`` (keys compare by rank: ``x`` is below ``y`` when ``x < y - y % n``)."""
    stack = [(first, last, depth)]
    while stack:
        first, last, depth = stack.pop()
        while last - first > 16:
            if depth == 0:  # (heapsort: std::partial_sort(first, last, last))
                heap = _Libstdcxx(keys, functools.partial(_rank_below, n))
                heap._heap_select(first, last, last)
                heap._sort_heap(first, last)
                break
            depth -= 1
            a, b, c = first + 1, first + (last - first) // 2, last - 1
            median = _median_of_three(a, b, c, keys[a] // n, keys[b] // n, keys[c] // n)
            keys[first], keys[median] = keys[median], keys[first]
            pivot = keys[first]
            below = pivot - pivot % n  # (x < below: x's rank is below the pivot's)
            above = below + n  # (x >= above: x's rank is above the pivot's)
            low, high = first + 1, last
            while True:
                while keys[low] < below:
                    low += 1
                high -= 1
                while keys[high] >= above:
                    high -= 1
                if not low < high:
                    break
                keys[low], keys[high] = keys[high], keys[low]
                low += 1
            stack.append((first, low, depth))
            first = low


def _has_equal_ranks(ranks: np.ndarray, tied: np.ndarray, first: int, last: int) -> bool:
    """Whether two elements of ``ranks[first:last]`` are equal (``tied`` marks the elements
    whose rank occurs more than once in the whole slice)."""
    candidates = ranks[first:last][tied[first:last]]
    return candidates.size > 1 and np.unique(candidates).size < candidates.size


def std_sort_order(ranks: np.ndarray) -> np.ndarray:
    """The positions of a slice in the order libstdc++'s ``std::sort`` leaves it, its elements
    comparing as ``ranks`` (integers from 0; equal ranks are tied): introsort with a
    median-of-three pivot and unguarded partitions down to 16 elements (heapsort past
    2 log2(n) levels), then an insertion sort, which is stable, so a stable sort by rank here.

    A segment without two equal ranks is not partitioned further: whatever its partitions
    do, it ends sorted in the one order its distinct ranks allow."""
    n = ranks.shape[0]
    positions = np.arange(n, dtype=np.int64)
    if n <= 16:  # (only the insertion sort runs)
        return positions
    ranks = ranks.astype(np.int64)
    tied = np.bincount(ranks)[ranks] > 1
    in_python = []
    stack = [(0, n, 2 * (n.bit_length() - 1))]
    while stack:
        first, last, depth = stack.pop()
        while last - first > 16 and _has_equal_ranks(ranks, tied, first, last):
            if depth == 0 or last - first < _ARRAY_PARTITION_MIN:
                in_python.append((first, last, depth))
                break
            depth -= 1
            cut = _partition_arrays(ranks, (positions, tied), first, last)
            stack.append((first, cut, depth))
            first = cut
    for first, last, depth in in_python:
        keys = (ranks[first:last] * n + positions[first:last]).tolist()
        _introsort_in_python(keys, 0, last - first, depth, n)
        done = np.asarray(keys, np.int64)
        ranks[first:last], positions[first:last] = np.divmod(done, n)
    return positions[np.argsort(ranks, kind="stable")]


def unstable_sort_indices(
    a: np.ndarray, dim: int, descending: bool, order: np.ndarray
) -> np.ndarray:
    """``order`` (a stable sort of ``a`` along ``dim``, NaN largest) changed to the order
    PyTorch's default CPU sort gives: ``std::sort`` of (value, index) pairs, which orders equal
    values otherwise than a stable sort from 17 elements on. Only slices with equal values
    are sorted again (detected by comparing neighbours in the stable order); ``order`` is
    changed in place and returned."""
    n = a.shape[dim] if a.ndim else 1
    if n <= 16 or a.strides[dim] == 0:  # (a zero stride: PyTorch returns 0, 1, 2 ...)
        return order
    if a.ndim == 1 and not descending and a.dtype.kind in "iu" and n >= _RADIX_SORT_MIN:
        return order  # (radix sort: stable)
    values = a.astype(np.float32) if a.dtype.kind == "V" else a  # (bfloat16)
    if values.ndim == 1:
        ordered = values[order]
    else:
        ordered = np.moveaxis(np.take_along_axis(values, order, axis=dim), dim, -1)
    equal = ordered[..., 1:] == ordered[..., :-1]
    floating = values.dtype.kind == "f"
    any_tie = np.count_nonzero(equal) > 0  # (faster than .any() on short slices)
    if floating:  # (two NaNs are tied too: NaN leads when descending, else trails)
        second = ordered[..., 1 if descending else -2]
        nan_pair = second != second  # (NaN is the only value unequal to itself)
        any_tie = any_tie or np.count_nonzero(nan_pair) > 0
    if not any_tie:
        return order
    tied = equal.any(axis=-1)
    if floating:
        tied = tied | nan_pair
    rows_order = np.moveaxis(order, dim, -1)
    rows = [()] if tied.ndim == 0 else [tuple(row) for row in np.argwhere(tied)]
    for row in rows:
        row_values = ordered[row]
        row_equal = equal[row]
        if floating:
            nan = np.isnan(row_values)
            row_equal = row_equal | (nan[1:] & nan[:-1])
        sorted_ranks = np.concatenate(([0], np.cumsum(~row_equal)))
        ranks = np.empty(n, np.int64)
        ranks[rows_order[row]] = sorted_ranks
        rows_order[row] = std_sort_order(ranks)
    return order
