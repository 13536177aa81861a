"""bfloat16 computed as PyTorch's CPU kernels compute it: in float32, rounded once.

NumPy has no bfloat16; ml_dtypes' computes each ufunc in float32 and rounds, but accumulates
sums in bfloat16 (a thousand 1.01s sum to 512) and turns bfloat16 with a Python float into
float32. So an op given bfloat16 arrays runs on float32 copies of them and its floating results
are rounded to bfloat16 once: one place for every op's forward (``_dispatch.run_general``;
views and ``half_native`` ops excepted). Derivatives of bfloat16 gradients run on Tensors
(``_opnode.OpNode._run_bfloat16``), so each op of a formula rounds once, as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype

__all__ = ["BF16", "holds_bfloat16", "widen", "narrow"]

BF16 = _dtype.BFLOAT16
_F32 = np.dtype(np.float32)
_ndarray = np.ndarray


def holds_bfloat16(value: Any) -> bool:
    """Whether ``value`` is a bfloat16 array, or a tuple or list holding one."""
    if type(value) is _ndarray:
        return value.dtype is BF16
    if type(value) is tuple or type(value) is list:
        return any(type(v) is _ndarray and v.dtype is BF16 for v in value)
    return False


def widen(value: Any) -> Any:
    """A bfloat16 array as float32 (in tuples and lists too); anything else as it is."""
    if type(value) is _ndarray:
        return value.astype(_F32) if value.dtype is BF16 else value
    if type(value) is tuple or type(value) is list:
        return type(value)(widen(v) for v in value)
    return value


def narrow(value: Any) -> Any:
    """Float32 results rounded to bfloat16 (in tuples and lists too); the rest as it is."""
    if type(value) is _ndarray:
        return value.astype(BF16) if value.dtype is _F32 else value
    if isinstance(value, np.float32):
        return np.asarray(value, BF16)
    if type(value) is tuple or type(value) is list:
        return type(value)(narrow(v) for v in value)
    return value
