"""TensorFlow 1's dtypes (``tf.float32`` ...), each naming a chainrule dtype."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import _dtype

__all__ = [
    "DType",
    "as_dtype",
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
    "complex64",
    "complex128",
    "half",
    "double",
]


class DType:
    """A TensorFlow dtype: ``repr`` ``tf.float32``, ``str`` ``<dtype: 'float32'>``; a
    variable's reference type is ``float32_ref``."""

    __slots__ = ("name", "base", "is_ref", "_proto_name")

    def __init__(
        self, name: str, base: Any, proto_name: str, is_ref: builtins.bool = False
    ) -> None:
        self.name = name + "_ref" if is_ref else name
        self.base = base  # the chainrule dtype
        self.is_ref = is_ref
        self._proto_name = proto_name

    @property
    def base_dtype(self) -> DType:
        """The dtype without ``_ref``."""
        return _BY_NAME[self.name.removesuffix("_ref")]

    @property
    def _as_ref(self) -> DType:
        return DType(self.name, self.base, self._proto_name, is_ref=True)

    @property
    def as_numpy_dtype(self) -> type:
        """The NumPy scalar type (``np.float32``)."""
        return self.base.np.type

    @property
    def is_floating(self) -> builtins.bool:
        """True for float16, float32, float64."""
        return builtins.bool(self.base.is_floating_point)

    @property
    def is_integer(self) -> builtins.bool:
        """True for the integer types."""
        return self.base.np.kind in "iu"

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, DType):
            return self.name == other.name
        try:
            return self.name == as_dtype(other).name
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.name)


float16 = half = DType("float16", _dtype.float16, "half")
float32 = DType("float32", _dtype.float32, "float")
float64 = double = DType("float64", _dtype.float64, "double")
int8 = DType("int8", _dtype.int8, "int8")
int16 = DType("int16", _dtype.int16, "int16")
int32 = DType("int32", _dtype.int32, "int32")
int64 = DType("int64", _dtype.int64, "int64")
uint8 = DType("uint8", _dtype.uint8, "uint8")
bool = DType("bool", _dtype.bool, "bool")  # noqa: A001 - TensorFlow's name
complex64 = DType("complex64", _dtype.complex64, "complex64")
complex128 = DType("complex128", _dtype.complex128, "complex128")

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, complex128)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NUMPY = {d.base.np: d for d in _ALL}


def as_dtype(value: Any) -> DType:
    """A TensorFlow dtype from a dtype, its name, a NumPy dtype or a chainrule dtype."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    if isinstance(value, _dtype.dtype):
        return _BY_NUMPY[value.np]
    try:
        return _BY_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        raise TypeError(f"Cannot convert value {value!r} to a TensorFlow DType.") from None
