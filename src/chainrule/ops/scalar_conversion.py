"""PyTorch's checked conversion of Python numbers into integer element types.

``torch.tensor([300], dtype=torch.uint8)`` raises "value cannot be converted to type uint8
without overflow" where a plain cast would wrap to 44. The rule is c10's ``overflows``: a
float (Python ``float``, ``np.float64``) must lie in ``[lowest, max]`` of the type (NaN and
infinities never do); an integer must fit the type, except that an unsigned type also takes
negative integers down to ``-max`` (``tensor([-2], dtype=uint8)`` wraps to 254, ``-256`` is
refused). Booleans and floating or complex targets are not checked by ``torch.tensor``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["check_integral_elements", "check_scalar_fits", "fill_value_for"]

_INT_TYPES = frozenset({int, bool})
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# The C++ types PyTorch's Scalar conversion names (``fill_``, ``full``, ``x[i] = v``).
_SCALAR_TYPE_NAMES = {
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "bool": "bool",
}


def _overflow(name: str) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


def check_integral_elements(values: list[Any], np_dtype: np.dtype) -> None:
    """Raise PyTorch's errors for ``values`` (the Python elements of ``torch.tensor(data)``)
    that the integer type ``np_dtype`` cannot hold: floats out of range (or NaN), integers
    outside the type's range (an unsigned type takes ``-max .. max``), complex numbers."""
    info = np.iinfo(np_dtype)
    name = np_dtype.name
    integers = values
    if not set(map(type, values)) <= _INT_TYPES:
        integers = [v for v in values if not isinstance(v, float)]
        for v in values:
            if isinstance(v, float):  # (np.float64 too: a float subclass, as PyTorch reads it)
                if not info.min <= v <= info.max:  # (NaN compares false)
                    raise _overflow(name)
            elif isinstance(v, complex | np.complexfloating):
                raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
    if np_dtype == np.int64 or not integers:
        return  # (larger integers fail earlier: "Overflow when unpacking long long")
    low = -info.max if info.min == 0 else info.min
    if integers and not (low <= min(integers) and max(integers) <= info.max):
        raise _overflow(name)


def check_scalar_fits(value: Any, np_dtype: np.dtype, numel: int = 2) -> None:
    """PyTorch's error for a number the dtype cannot hold (c10's ``overflows``): a complex
    number with an imaginary part into a real type; into an integer type, a float outside
    ``[min, max]`` (NaN, infinities) or an integer outside the range (an unsigned type also takes
    ``-max .. -1``, which wrap: ``fill_(-2)`` on uint8 is 254); a finite number beyond the
    largest float16 (unless ``numel`` is 1: PyTorch's one-element fill rounds it to inf),
    float32 or complex64 value. bfloat16 and float64 take any number."""
    kind = np_dtype.kind
    if kind == "b":
        return
    bad = False
    if isinstance(value, complex):
        bad = value.imag != 0 and kind != "c"
        value = value.real
    if bad:
        pass
    elif kind in "iu":
        info = np.iinfo(np_dtype)
        if isinstance(value, float):
            bad = not info.min <= value <= info.max  # (NaN compares false)
        else:
            low = -info.max if kind == "u" else info.min
            bad = not low <= value <= info.max
    elif np_dtype == np.float16:
        bad = numel != 1 and math.isfinite(value) and abs(value) > 65504
    elif np_dtype == np.float32 or np_dtype == np.complex64:
        bad = math.isfinite(value) and abs(value) > _FLOAT32_MAX
    if bad:
        raise _overflow(_SCALAR_TYPE_NAMES.get(np_dtype.name, np_dtype.name))


def fill_value_for(value: Any, np_dtype: np.dtype, numel: int = 2) -> Any:
    """``value`` checked as PyTorch converts a Scalar to ``np_dtype`` for a fill of ``numel``
    elements (``check_scalar_fits``), as a number NumPy stores there: a negative integer for an
    unsigned type wrapped as PyTorch's cast wraps it (NumPy refuses it)."""
    check_scalar_fits(value, np_dtype, numel)
    if np_dtype.kind == "u" and type(value) is int and value < 0:
        return value + (int(np.iinfo(np_dtype).max) + 1)
    return value
