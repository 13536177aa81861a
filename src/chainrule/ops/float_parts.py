"""Floating-point numbers as mantissa and exponent: ``ldexp`` (``input * 2 ** other``),
``frexp`` (``input = mantissa * 2 ** exponent``, ``0.5 <= |mantissa| < 1``) and ``nextafter``
(the neighbouring representable value).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .. import _return_types as return_types
from .._tensor import Tensor, wrap
from ._dispatch import ARITH, FLOAT
from ._registry import op, tensor_method
from .pointwise import half_in_float32

__all__ = ["ldexp", "frexp", "nextafter"]

_LN2 = math.log(2.0)


@op(
    "LdexpBackward0",
    inputs=("self", "other"),
    promote=FLOAT,
    tensor_only=("self", "other"),
    method=True,
    inplace=True,
)
@half_in_float32
def ldexp(self, other):
    """``self * 2 ** other``, element-wise (a float result; ``other`` may be fractional).

    Example:
        >>> import chainrule as torch
        >>> torch.ldexp(torch.tensor([1.5]), torch.tensor([3]))
        tensor([12.])
    """
    return np.asarray(self * np.exp2(other))


def _powers_of_two(other: np.ndarray) -> np.ndarray:
    """``2 ** other`` as PyTorch's derivative computes it: for an integer ``other`` in integer
    arithmetic (0 for a negative exponent, or one past the type's bits)."""
    if other.dtype.kind not in "iub":
        return np.exp2(other)
    exponents = other.astype(np.int64)
    bits = other.dtype.itemsize * 8 - 1
    fits = (exponents >= 0) & (exponents < bits)
    return np.where(fits, np.left_shift(1, np.where(fits, exponents, 0)), 0)


@ldexp.derivative("self")
def _(ops, grad, other):
    if type(grad) is np.ndarray:
        return grad * _powers_of_two(other).astype(grad.dtype)
    if other._data.dtype.kind in "fcV":  # (differentiable again in a floating exponent)
        return grad * 2.0**other
    return grad * wrap(_powers_of_two(other._data).astype(grad._data.dtype))


@ldexp.derivative("other")
def _(ops, grad, result):
    return ops.mul(grad * result, _LN2)


@op("FrexpBackward0", saved_outputs=("exponent",), name="frexp")
def _frexp_mantissa(self, exponent):
    return np.ldexp(self, -exponent.astype(np.int32))


@_frexp_mantissa.derivative("self")
def _(ops, grad, exponent):
    # PyTorch's grad / exponent.exp2(): the power in float32 (float64 for a float64 gradient),
    # the quotient in the gradient's dtype.
    data = getattr(grad, "_data", grad)
    wide = np.float64 if data.dtype == np.float64 else np.float32
    power = np.exp2(getattr(exponent, "_data", exponent).astype(wide))
    if type(grad) is np.ndarray:
        return (grad / power).astype(grad.dtype)
    return (grad / wrap(power)).to(grad.dtype)


@tensor_method
def frexp(input: Tensor) -> Any:
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent`` and
    ``0.5 <= |mantissa| < 1`` (0, inf and NaN keep their value with exponent 0; the exponent
    is int32).

    Example:
        >>> import chainrule as torch
        >>> torch.frexp(torch.tensor([6.]))
        torch.return_types.frexp(
        mantissa=tensor([0.7500]),
        exponent=tensor([3], dtype=torch.int32))
    """
    a = input._data
    if a.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    values = a.astype(np.float32) if a.dtype.kind == "V" else a
    _, exponent = np.frexp(values)
    exponent_tensor = wrap(np.array(exponent, dtype=np.int32))  # (0-d stays 0-d)
    mantissa = _frexp_mantissa(input, exponent_tensor)
    return return_types.frexp((mantissa, exponent_tensor))


# ----------------------------------------------------------------------------------------------
# nextafter


@op(
    "NextafterBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    elementwise=True,
    half_native=True,
    method=True,
    inplace=True,
)
def nextafter(self, other):
    """The next floating-point value after ``self`` towards ``other`` (in ``self``'s dtype:
    the smallest step its precision allows).

    Example:
        >>> import chainrule as torch
        >>> torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])) - 1
        tensor([1.1921e-07])
    """
    dtype = np.result_type(self, other)
    if dtype.kind not in "fV":
        raise _dtype.no_kernel("nextafter_cpu", dtype)
    return np.asarray(np.nextafter(self.astype(dtype, copy=False), other.astype(dtype, copy=False)))


@nextafter.derivative("self")
def _(ops, grad, self, other):
    # PyTorch's: the identity in self where it moves, zero where self == other (and in other)
    return ops.where(self == other, 0, grad)


@nextafter.derivative("other")
def _(ops, grad):
    return ops.zeros_like(grad)
