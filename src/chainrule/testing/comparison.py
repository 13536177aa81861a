"""``assert_close``: tensors, NumPy arrays, numbers and nested sequences or mappings of them
compared as PyTorch's ``torch.testing.assert_close`` compares them: the attributes first
(shape, dtype, stride when asked), then the values within ``atol + rtol * |expected|`` (the
dtype's default tolerances), with PyTorch's messages."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops.creation import as_tensor, from_numpy

__all__ = ["assert_allclose", "assert_close"]

# (rtol, atol) by dtype; other dtypes compare exactly.
_TOLERANCES = {
    _dtype.float16: (1e-3, 1e-5), _dtype.bfloat16: (1.6e-2, 1e-5),
    _dtype.float32: (1.3e-6, 1e-5), _dtype.float64: (1e-7, 1e-7),
    _dtype.complex64: (1.3e-6, 1e-5), _dtype.complex128: (1e-7, 1e-7),
}
# assert_allclose's older table
_OLD_TOLERANCES = {
    _dtype.float16: (1e-3, 1e-3), _dtype.float32: (1e-4, 1e-5), _dtype.float64: (1e-5, 1e-8),
}


class _Mismatch(AssertionError):
    """A failed comparison, with where in a nested input it happened. ``structural``: the
    inputs' structure differs (lengths, keys), which ``msg`` does not replace."""

    def __init__(self, message: str, path: str = "", structural: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.structural = structural


class _ToleranceError(ValueError):
    """Only one of ``rtol`` and ``atol`` given (found where a pair needs them)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = ""


def _tolerances(dtypes: Sequence[_dtype.dtype], rtol: float | None, atol: float | None,
                table: Mapping[_dtype.dtype, tuple[float, float]]) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _ToleranceError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None and atol is not None:
        return rtol, atol
    pairs = [table.get(d, (0.0, 0.0)) for d in dtypes] or [(0.0, 0.0)]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _scalar_kind(value: Any) -> bool:
    return isinstance(value, int | float | complex) and not isinstance(value, bool)


def _as_tensor(value: Any) -> Tensor | None:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return from_numpy(value)
    return None


def _compare_scalars(actual: Any, expected: Any, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_dtype: bool) -> None:
    _tolerances([], rtol, atol, {})  # (only one of them given: PyTorch's error first)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {type(actual)} != "
                        f"{type(expected)}.")
    if rtol is None or atol is None:
        exact = isinstance(actual, int) and isinstance(expected, int)
        rtol, atol = (0.0, 0.0) if exact else (1e-7, 1e-7)
    _scalar_verdict(actual, expected, rtol, atol, equal_nan)


def _scalar_verdict(actual: Any, expected: Any, rtol: float, atol: float,
                    equal_nan: bool) -> None:
    """PyTorch's verdict and message for two numbers (Python's, or 0-d tensors' items)."""
    if actual == expected or (equal_nan and _isnan(actual) and _isnan(expected)):
        return
    difference = abs(actual - expected)
    if difference <= atol + rtol * abs(expected):
        return
    relative = difference / abs(expected) if expected != 0 else float("inf")
    if rtol == 0 and atol == 0:
        raise _Mismatch(f"Scalars are not equal!\n\nExpected {expected} but got {actual}.\n"
                        f"Absolute difference: {difference}\nRelative difference: {relative}")
    raise _Mismatch(f"Scalars are not close!\n\nExpected {expected} but got {actual}.\n"
                    f"Absolute difference: {difference} (up to {atol} allowed)\n"
                    f"Relative difference: {relative} (up to {rtol} allowed)")


def _isnan(value: Any) -> bool:
    return value != value


def _compare_tensors(actual: Tensor, expected: Tensor, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_dtype: bool, check_stride: bool,
                     table: Mapping[_dtype.dtype, tuple[float, float]]) -> None:
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, table)
    a, e = actual._data, expected._data
    if a.shape != e.shape:
        raise _Mismatch(f"The values for attribute 'shape' do not match: {actual.shape} != "
                        f"{expected.shape}.")
    if check_dtype and actual.dtype is not expected.dtype:
        raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                        f"{expected.dtype}.")
    if check_stride and actual.stride() != expected.stride():
        raise _Mismatch(f"The values for attribute 'stride()' do not match: {actual.stride()} "
                        f"!= {expected.stride()}.")
    integral = a.dtype.kind in "iub" and e.dtype.kind in "iub"
    if a.ndim == 0:  # (PyTorch reports 0-d tensors as numbers)
        _scalar_verdict(a.item(), e.item(), rtol, atol, equal_nan)
        return
    work = _work_dtype(a.dtype, e.dtype)
    a, e = a.astype(work), e.astype(work)
    with np.errstate(invalid="ignore", over="ignore"):
        close = (a == e) | (np.abs(a - e) <= atol + rtol * np.abs(e))
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
    if close.all():
        return
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        absolute = np.abs(a - e).astype(work.type(0).real.dtype)
        relative = absolute / np.abs(e).astype(absolute.dtype)
        absolute[close] = 0
        relative[close] = 0
    mismatched = int((~close).sum())
    total = close.size
    exact = rtol == 0 and atol == 0
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"]
    for label, values, tolerance in (("absolute", absolute, atol), ("relative", relative, rtol)):
        index = _nan_first_argmax(values)
        where = tuple(int(i) for i in np.unravel_index(index, values.shape))
        value = values.reshape(-1)[index].item()
        if integral and label == "absolute":
            value = int(value)
        line = f"Greatest {label} difference: {value} at index {where}"
        lines.append(line if exact else f"{line} (up to {tolerance} allowed)")
    raise _Mismatch("\n".join(lines))


def _work_dtype(*dtypes: np.dtype) -> np.dtype:
    """Floating dtypes compare in the wider of the two; others in float32 (PyTorch's default
    dtype), as PyTorch's differences are printed."""
    floating = [d for d in dtypes if d.kind in "fc"]
    if not floating:
        return np.dtype(np.float32)
    return np.result_type(*floating)


def _nan_first_argmax(values: np.ndarray) -> int:
    flat = values.reshape(-1)
    nans = np.flatnonzero(np.isnan(flat))
    return int(nans[0]) if nans.size else int(np.argmax(flat))


def _compare(actual: Any, expected: Any, path: str, **options: Any) -> None:
    ours, theirs = _as_tensor(actual), _as_tensor(expected)
    if ours is not None and theirs is not None:
        _compare_tensors(ours, theirs, **options)
        return
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(f"Booleans mismatch: {actual} is not {expected}")
        return
    if _scalar_kind(actual) and _scalar_kind(expected):
        _compare_scalars(actual, expected, options["rtol"], options["atol"],
                         options["equal_nan"], options["check_dtype"])
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            missing = sorted(set(expected) - set(actual), key=repr)
            extra = sorted(set(actual) - set(expected), key=repr)
            raise _Mismatch("The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {missing}\n"
                            f"Additional keys in the actual mapping: {extra}",
                            structural=True)
        for key in expected:
            _compare_item(actual[key], expected[key], f"{path}[{key!r}]", **options)
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch("The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}", structural=True)
        for i, (x, y) in enumerate(zip(actual, expected, strict=True)):
            _compare_item(x, y, f"{path}[{i}]", **options)
        return
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def _compare_item(actual: Any, expected: Any, path: str, **options: Any) -> None:
    try:
        _compare(actual, expected, path, **options)
    except (_Mismatch, _ToleranceError) as mismatch:
        if not mismatch.path:
            mismatch.path = path
        raise


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _check(actual: Any, expected: Any, msg: str | Callable[[str], str] | None,
           **options: Any) -> None:
    try:
        _compare(actual, expected, "", **options)
    except _ToleranceError as error:
        where = f"\n\nThe failure occurred for item {error.path}" if error.path else ""
        raise ValueError(error.message + where) from None
    except _Mismatch as mismatch:
        message = mismatch.message
        if mismatch.path:
            message += f"\n\nThe failure occurred for item {mismatch.path}"
        if not mismatch.structural:
            if callable(msg):
                message = msg(message)
            elif msg is not None:
                message = msg
        raise AssertionError(message) from None


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None
                 ) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close: same shape (and
    dtype, and strides when ``check_stride``), values within ``atol + rtol * |expected|``
    (by default the dtype's tolerances: float32 1.3e-6 and 1e-5, float64 1e-7 and 1e-7 ...;
    integers and booleans exactly); NaNs equal only with ``equal_nan``. Sequences and mappings
    are compared item by item. ``msg`` replaces the message (a callable edits it).

    Example:
        >>> import chainrule as torch
        >>> torch.testing.assert_close(torch.tensor([1.0]), torch.tensor([1.0 + 1e-7]))
    """
    _check(actual, expected, msg, rtol=rtol, atol=atol, equal_nan=equal_nan,
           check_dtype=check_dtype, check_stride=check_stride, table=_TOLERANCES)


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated (PyTorch's FutureWarning): :func:`assert_close` with the older default
    tolerances, NaNs equal, dtypes not checked, and non-tensors converted to tensors."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = as_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = as_tensor(expected, dtype=actual.dtype)
    _check(actual, expected, msg or None, rtol=rtol, atol=atol, equal_nan=equal_nan,
           check_dtype=False, check_stride=False, table=_OLD_TOLERANCES)
