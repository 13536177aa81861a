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

from .. import _dtype

__all__ = [
    "check_integral_elements",
    "check_long_long",
    "check_number_argument",
    "check_scalar_fits",
    "check_value_tensor",
    "fill_value_for",
    "number_operand_dtype",
]

_INT_TYPES = frozenset({int, bool})
_INT64_LOW = -(1 << 63)
_INT64_END = 1 << 63
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)
_COMPLEX64 = np.dtype(np.complex64)
# The C++ types PyTorch's Scalar conversion names (``fill_``, ``full``, ``x[i] = v``).
_SCALAR_TYPE_NAMES = {
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
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


_INTEGER_RANGES: dict[np.dtype, tuple[int, int]] = {}


def _integer_range(np_dtype: np.dtype) -> tuple[int, int]:
    """An integer type's smallest and largest values (``np.iinfo`` is slow to build)."""
    found = _INTEGER_RANGES.get(np_dtype)
    if found is None:
        info = np.iinfo(np_dtype)
        found = _INTEGER_RANGES[np_dtype] = (int(info.min), int(info.max))
    return found


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
            else:
                check_long_long(v)  # (the elements are read in order)
    if not integers:
        return
    smallest, largest = min(integers), max(integers)
    if smallest < _INT64_LOW or largest >= _INT64_END:
        _refuse_beyond_int64(values)
    if np_dtype == np.int64:
        return
    low = -info.max if info.min == 0 else info.min
    if not (low <= smallest and largest <= info.max):
        raise _overflow(name)


def _refuse_beyond_int64(values: list[Any]) -> None:
    """PyTorch's errors for ``torch.tensor`` of an integer type given an int beyond int64: it
    reads the elements in order, so a float out of range before that int raises first."""
    for v in values:
        check_long_long(v)


def check_long_long(value: Any) -> None:
    """PyTorch's ValueError for a Python int its parser reads as a C ``long long`` (an element
    of ``torch.tensor(data, dtype=<integer type>)``, ``x[i] = v``) beyond int64."""
    if type(value) is int and not _INT64_LOW <= value < _INT64_END:
        raise ValueError("Overflow when unpacking long long")


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
        smallest, largest = _integer_range(np_dtype)
        if isinstance(value, float):
            bad = not smallest <= value <= largest  # (NaN compares false)
        else:
            low = -largest if kind == "u" else smallest
            bad = not low <= value <= largest
    elif np_dtype == _HALF:
        bad = numel != 1 and math.isfinite(value) and abs(value) > 65504
    elif np_dtype == _SINGLE or np_dtype == _COMPLEX64:
        bad = math.isfinite(value) and abs(value) > _FLOAT32_MAX
    if bad:
        raise _overflow(_SCALAR_TYPE_NAMES.get(np_dtype.name, np_dtype.name))


def fill_value_for(value: Any, np_dtype: np.dtype, numel: int = 2) -> Any:
    """``value`` checked as PyTorch converts a Scalar to ``np_dtype`` for a fill of ``numel``
    elements (``check_scalar_fits``), as a number NumPy stores there: a negative integer for an
    unsigned type wrapped as PyTorch's cast wraps it (NumPy refuses it)."""
    value = check_number_argument(value, np_dtype, numel)
    kind = np_dtype.kind
    if kind == "b":
        return bool(value)  # (NumPy refuses an int beyond int64 there: 2**63 is True)
    if kind == "u" and type(value) is int and value < 0:
        return value + (int(np.iinfo(np_dtype).max) + 1)
    return value


def number_operand_dtype(np_dtype: np.dtype, *numbers: Any) -> np.dtype:
    """The dtype an op on a tensor of ``np_dtype`` and these Python numbers computes in, by
    PyTorch's promotion (a number of a higher category than the tensor's stands for that
    category's default dtype: ``uint8`` with ``2.5`` is float32, ``bool`` with ``2`` int64)."""
    kind = np_dtype.kind
    if kind == "c":
        return np_dtype
    category = 0
    for n in numbers:
        t = type(n)
        if t is int:
            category = max(category, 1)
        elif t is float:
            category = max(category, 2)
        elif t is complex or isinstance(n, np.complexfloating):
            category = 3
        elif isinstance(n, np.floating):
            category = max(category, 2)
        elif isinstance(n, np.integer):
            category = max(category, 1)
    if category == 3:
        return _dtype.default_for_category(3).np
    if kind in "fV":
        return np_dtype
    if category == 2:
        return _dtype.get_default_dtype().np
    if category == 1 and kind == "b":
        return np.dtype(np.int64)
    return np_dtype


def check_number_argument(value: Any, np_dtype: np.dtype, numel: int = 2) -> Any:
    """``value``, a Python number an op reads as a Scalar of ``np_dtype`` (the type it computes
    in: ``alpha`` of ``add``, ``clamp``'s bounds, ``pow``'s exponent, ``threshold``'s value ...),
    checked as PyTorch checks it: OverflowError for an int beyond 64 bits (its argument parser
    reads ints as int64 or uint64), then c10's ``overflows`` (:func:`check_scalar_fits`).
    Returns the number as a Python number (a NumPy scalar's ``item()``)."""
    kind = type(value)
    if kind is int:
        if not _INT64_LOW <= value < _INT64_END:
            _dtype.is_uint64_number(value)  # (its OverflowError beyond 64 bits)
    elif kind is not float and isinstance(value, np.generic):
        value = value.item()
    if np_dtype.kind != "f" or np_dtype.itemsize < 8:
        check_scalar_fits(value, np_dtype, numel)
    return value


def check_value_tensor(value: Any, np_dtype: np.dtype) -> None:
    """PyTorch's check of a 0-d tensor ``value`` an op reads as a Scalar (``masked_fill``,
    ``index_fill``): its element must fit ``np_dtype`` as a number would (``tensor(1000)``
    into uint8 raises; ``tensor(-1)`` wraps to 255)."""
    data = value._data
    if data.dtype.kind != "c" and (np_dtype.kind in "iu" or np_dtype.itemsize < 8):
        check_scalar_fits(data.item(), np_dtype)
