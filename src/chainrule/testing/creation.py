"""``make_tensor``: a tensor of random values for a test, as PyTorch's
``torch.testing.make_tensor`` makes it (chainrule's random stream)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._size import check_available
from .._tensor import Tensor
from .._tensor import make_tensor as _make_leaf
from ..ops.creation import default_generator

__all__ = ["make_tensor"]

_FLOAT_RANGE = (-9, 9)  # (ints: PyTorch prints them so in its messages)
_INT_RANGE = (-9, 10)


def _bounds(dtype: _dtype.dtype, low: float | None, high: float | None) -> tuple[Any, Any]:
    """``[low, high)`` with PyTorch's defaults and checks, clamped to what ``dtype`` holds."""
    floating = dtype.is_floating_point or dtype.is_complex
    if dtype is _dtype.bool:
        default, span = (0, 2), (0, 2)
    elif floating:
        info: Any = np.finfo(np.float32) if dtype.np.kind == "V" else np.finfo(
            dtype.to_real().np)
        default, span = _FLOAT_RANGE, (float(info.min), float(info.max))
    else:
        iinfo = np.iinfo(dtype.np)
        default = (0, 10) if dtype is _dtype.uint8 else _INT_RANGE
        span = (int(iinfo.min), int(iinfo.max) + 1)
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    if high <= span[0] or low >= span[1]:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{span[0]}, {span[1]})")
    return max(low, span[0]), min(high, span[1])


def make_tensor(*shape: Any, dtype: _dtype.dtype, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` with random values of ``dtype``: uniform in ``[low, high)``
    (by default -9 to 9; integers -9 to 9, uint8 0 to 9; booleans ignore the bounds),
    optionally a non-contiguous view, without zeros, requiring grad (floating types only).

    Example:
        >>> import chainrule as torch
        >>> torch.testing.make_tensor(2, 3, dtype=torch.float32, device="cpu").shape
        chainrule.Size([2, 3])
    """
    check_available(device)
    if len(shape) == 1 and isinstance(shape[0], tuple | list):
        shape = tuple(shape[0])
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    rng = default_generator.rng
    size = tuple(int(s) for s in shape)
    low_, high_ = _bounds(dtype, low, high)
    if dtype is _dtype.bool:
        values: np.ndarray = rng.integers(int(low_), int(high_), size).astype(bool)
    else:
        if dtype.is_floating_point or dtype.is_complex:
            values = rng.uniform(low_, high_, size)
            if dtype.is_complex:
                values = values + 1j * rng.uniform(low_, high_, size)
        else:
            values = rng.integers(int(math.ceil(low_)), int(math.ceil(high_)), size)
        values = np.asarray(values).astype(dtype.np)
        if exclude_zero:
            replacement = (np.finfo(np.float32).tiny if dtype.np.kind == "V"
                           else np.finfo(dtype.np).tiny if dtype.np.kind in "fc" else 1)
            values[values == 0] = replacement
    if noncontiguous and values.size > 1 and values.ndim:
        doubled = np.repeat(values, 2, axis=-1)
        values = doubled[..., ::2]
    t = _make_leaf(values, requires_grad)
    if memory_format is not None:
        t = t.contiguous(memory_format=memory_format)
    return t
