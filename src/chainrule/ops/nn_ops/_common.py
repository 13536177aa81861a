"""Small helpers shared by the layer and loss ops: argument normalisation and PyTorch's names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._dtype import REDUCED_FLOATS, SCALAR_TYPE_NAMES, from_numpy_dtype
from ..._tensor import Tensor

__all__ = [
    "ntuple", "scalar_name", "check_reduction", "reduce_array", "reduction_count", "size_list",
    "check_same_dtype", "accumulation_dtype", "cascade_sum",
]

def scalar_name(dtype: np.dtype) -> str:
    """PyTorch's scalar type name of a NumPy dtype (``Float``, ``Long``, ``ComplexDouble`` ...)."""
    return SCALAR_TYPE_NAMES[from_numpy_dtype(np.dtype(dtype))]


def ntuple(value: Any, n: int, name: str = "") -> tuple[int, ...]:
    """``3 -> (3, 3)``; a sequence of length 1 is repeated, one of length ``n`` kept."""
    if isinstance(value, Tensor):
        value = value.tolist()
    if isinstance(value, int | np.integer):
        return (int(value),) * n
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                           f"to match the convolution dimensions, but got {name}={list(values)}")
    return values


def size_list(shape: Sequence[int]) -> str:
    """``[2, 3, 4]`` as PyTorch prints sizes in messages."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_reduction(reduction: str) -> None:
    """PyTorch's ValueError for an unknown ``reduction``."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype PyTorch accumulates sums of ``dtype`` in on the CPU: float32 for float16 and
    bfloat16 (the result is rounded to the half type once, at the end), the dtype itself
    otherwise."""
    return np.dtype(np.float32) if dtype in REDUCED_FLOATS else dtype


def reduce_array(loss: np.ndarray, reduction: str) -> np.ndarray:
    """'none' | 'mean' | 'sum' on an element-wise loss array (the dtype is kept; float16 is
    accumulated in float32 and rounded once, as PyTorch)."""
    if reduction == "none":
        return loss
    acc = accumulation_dtype(loss.dtype)
    if reduction == "mean":
        return np.asarray(np.mean(loss, dtype=acc), dtype=loss.dtype)
    return np.asarray(np.sum(loss, dtype=acc), dtype=loss.dtype)


def reduction_count(shape: Sequence[int], reduction: str) -> int:
    """What a 'mean' reduction divides by (1 otherwise)."""
    if reduction != "mean":
        return 1
    count = 1
    for s in shape:
        count *= s
    return count


def check_same_dtype(what: str, a: np.ndarray, b: np.ndarray) -> None:
    """PyTorch's ``expected scalar type Double but found Float`` for mixed dtypes."""
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {scalar_name(a.dtype)} but found {scalar_name(b.dtype)}"
        )


def cascade_sum(values: np.ndarray, index: np.ndarray, numiter: int) -> np.ndarray:
    """The sum of ``values`` (1-D, in their own dtype, rounded at every addition) in the order
    of PyTorch's cascade summation (its nll_loss kernels): eight partial sums; ``values[k]``,
    met at step ``index[k]`` of ``numiter`` (steps skipped for ignored targets have no value),
    is added to the first; after a step that is a multiple of ``16 ** (j + 1)`` (more for very
    long loops) partial sum ``j`` is added to partial sum ``j + 1`` and cleared; at the end the
    partial sums are added in order. Each level's groups are summed by one accumulation."""
    levels = 8
    dtype = values.dtype
    power = max(4, (int(numiter - 1).bit_length() if numiter > 1 else 0) // levels)
    step = 1 << power
    partial: list[Any] = [None] * levels  # (None: a level that holds +0, its start)
    vals, idx = values, np.asarray(index, np.int64)
    if idx.size == numiter and numiter and idx[0] == 0 and idx[-1] == numiter - 1:
        # No step skipped (nothing ignored): at every level a group ends at each multiple of
        # the level's span, so the first value is a group of its own and runs of ``step``
        # values follow; a last, incomplete run stays in the level's partial sum.
        for level in range(levels - 1):
            if vals.size <= 1:
                break  # (the first value alone: the levels above add nothing)
            complete = (vals.size - 1) // step
            rest = vals[1 + complete * step:]
            if rest.size:
                partial[level] = np.add.accumulate(rest, dtype=dtype)[-1]
            runs = vals[1:1 + complete * step].reshape(complete, step)
            vals = np.concatenate((vals[:1], np.add.accumulate(runs, axis=1, dtype=dtype)[:, -1]
                                   if complete else vals[:0]))
    else:
        for level in range(levels - 1):
            if not vals.size:
                break
            # A group ends after each value whose step is a multiple of step ** (level + 1).
            ends = idx % (step ** (level + 1)) == 0
            group = np.concatenate(([0], np.cumsum(ends[:-1])))
            n_groups = int(group[-1]) + 1
            first = np.searchsorted(group, np.arange(n_groups))
            position = np.arange(vals.size) - first[group]
            table = np.zeros((n_groups, int(position.max()) + 1), dtype)
            table[group, position] = vals
            # Left to right within each group, rounding at every addition: an accumulation (NumPy
            # sums pairwise only in reductions), padded with zeros that change no sum.
            sums = np.add.accumulate(table, axis=1, dtype=dtype)[:, -1]
            complete = n_groups if ends[-1] else n_groups - 1
            if complete < n_groups:
                partial[level] = sums[-1]
            vals, idx = sums[:complete], idx[ends]
    if vals.size:  # the last level keeps everything it receives
        top = np.zeros((), dtype) if partial[-1] is None else partial[-1]
        for v in vals:
            top = top + v
        partial[-1] = top
    total = np.zeros((), dtype)
    for v in partial:
        if v is not None:  # (adding +0 to a sum that starts at +0 changes nothing)
            total = total + v
    return np.asarray(total, dtype)
