"""Data types and PyTorch's type-promotion rules.

A :class:`dtype` wraps a NumPy dtype and prints the way PyTorch's does, with this package's name
(``chainrule.float32``). Promotion follows PyTorch, not NumPy: tensors with dimensions outrank
zero-dimensional tensors, which outrank Python numbers, and a higher *category* (bool < integer <
floating < complex) from a lower-priority operand only lifts the result to that category's default
(``int64 tensor + 1.5 -> float32``).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "dtype",
    "float16",
    "half",
    "bfloat16",
    "float32",
    "float",
    "float64",
    "double",
    "complex64",
    "cfloat",
    "complex128",
    "cdouble",
    "int8",
    "int16",
    "short",
    "int32",
    "int",
    "int64",
    "long",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "get_default_dtype",
    "set_default_dtype",
    "promote_types",
    "result_type",
    "can_cast",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


# The package name reprs show (``chainrule.float32``, ``chainrule.Size([2])``, a tensor's
# ``dtype=chainrule.float64``): "torch" once ``install_as_torch()`` made chainrule answer
# ``import torch``, so that a PyTorch script prints what it prints under PyTorch.
REPR_NAMESPACE = ["chainrule"]

class dtype:  # noqa: N801 - PyTorch's public name
    """A tensor element type, e.g. ``chainrule.float32``.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1, 2]).dtype
        chainrule.int64
    """

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed", "_cat")

    def __init__(self, name: str, np_dtype: np.dtype, category: int) -> None:
        self.name = name
        self.np = np_dtype
        self.itemsize = np_dtype.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = np_dtype.kind != "u" and np_dtype.kind != "b"
        self._cat = category

    def __repr__(self) -> str:
        return f"{REPR_NAMESPACE[0]}.{self.name}"

    def __reduce__(self) -> str:
        return self.name

    def to_real(self) -> dtype:
        """The real counterpart of a complex dtype (the dtype itself otherwise)."""
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        """The complex counterpart of a floating dtype."""
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)


float16 = half = dtype("float16", np.dtype(np.float16), _FLOAT)
# NumPy has no bfloat16: ml_dtypes' is a real 2-byte one (its NumPy kind is 'V').
bfloat16 = dtype("bfloat16", np.dtype(ml_dtypes.bfloat16), _FLOAT)
float32 = dtype("float32", np.dtype(np.float32), _FLOAT)
float64 = double = dtype("float64", np.dtype(np.float64), _FLOAT)
complex64 = cfloat = dtype("complex64", np.dtype(np.complex64), _COMPLEX)
complex128 = cdouble = dtype("complex128", np.dtype(np.complex128), _COMPLEX)
int8 = dtype("int8", np.dtype(np.int8), _INT)
int16 = short = dtype("int16", np.dtype(np.int16), _INT)
int32 = dtype("int32", np.dtype(np.int32), _INT)
int64 = long = dtype("int64", np.dtype(np.int64), _INT)
uint8 = dtype("uint8", np.dtype(np.uint8), _INT)
# PyTorch's "shell" unsigned types: they exist (from_numpy, tensor, casts) but do not promote
# with other integer types.
uint16 = dtype("uint16", np.dtype(np.uint16), _INT)
uint32 = dtype("uint32", np.dtype(np.uint32), _INT)
uint64 = dtype("uint64", np.dtype(np.uint64), _INT)
bool = dtype("bool", np.dtype(np.bool_), _BOOL)  # noqa: A001 - PyTorch's public name
float = float32  # noqa: A001 - torch.float is float32
int = int32  # noqa: A001 - torch.int is int32

ALL_DTYPES: tuple[dtype, ...] = (
    float16, bfloat16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8,
    bool,
)
_SHELL_DTYPES: tuple[dtype, ...] = (uint16, uint32, uint64)
_BY_NUMPY: dict[np.dtype, dtype] = {d.np: d for d in ALL_DTYPES + _SHELL_DTYPES}
_BY_NAME: dict[str, dtype] = {d.name: d for d in ALL_DTYPES + _SHELL_DTYPES}
_BY_NAME.update(
    {"half": float16, "float": float32, "double": float64, "long": int64, "int": int32,
     "short": int16, "cfloat": complex64, "cdouble": complex128}
)

# NumPy kinds of chainrule's dtypes, as the code tests them (``dtype.kind in "fV"``): floating
# is 'f' and 'V', the kind of ml_dtypes' bfloat16 (the only 'V' dtype a tensor can hold:
# from_numpy refuses other void arrays); complex is 'c'.
BFLOAT16 = bfloat16.np
#: The half-precision types PyTorch's CPU kernels compute in float32, rounding once.
REDUCED_FLOATS: tuple[np.dtype, ...] = (float16.np, bfloat16.np)


def finfo(np_dtype: np.dtype) -> np.finfo:
    """NumPy's finfo for any floating type chainrule has (bfloat16's from ml_dtypes)."""
    return ml_dtypes.finfo(np_dtype)


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """Our dtype for a NumPy dtype; raises TypeError for types PyTorch does not have."""
    try:
        return _BY_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


def to_dtype(obj: object) -> dtype:
    """Accept a chainrule dtype, a NumPy dtype/type, a Python type or a name."""
    if isinstance(obj, dtype):
        return obj
    if obj is builtins_float:
        return float64
    if obj is builtins_int:
        return int64
    if obj is builtins_bool:
        return bool
    if isinstance(obj, str) and obj in _BY_NAME:
        return _BY_NAME[obj]
    return from_numpy_dtype(np.dtype(obj))  # type: ignore[arg-type]


builtins_float = type(1.0)  # noqa: UP003 - `float` is chainrule.float32 in this module
builtins_int = type(1)  # noqa: UP003 - `int` is chainrule.int32 in this module
builtins_bool = type(True)  # noqa: UP003 - `bool` is chainrule.bool in this module


class _State:
    __slots__ = ("default",)

    def __init__(self) -> None:
        self.default: dtype = float32


_state = _State()


def get_default_dtype() -> dtype:
    """The dtype of floating tensors created from Python floats (``float32`` unless changed)."""
    return _state.default


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (``float32``, ``float64`` or ``float16``)."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(
            "only floating-point types are supported as the default type"
        )
    _state.default = d
    _clear_promotion_caches()


# ----------------------------------------------------------------------------------------------
# Promotion between two dtypes (a symmetric lattice, as in PyTorch's promoteTypes table).

def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._cat != b._cat:
        hi, lo = (a, b) if a._cat > b._cat else (b, a)
        if hi.is_complex and lo.is_floating_point and lo.itemsize > hi.itemsize // 2:
            return complex128
        return hi
    if {a, b} == {float16, bfloat16}:
        return float32  # neither holds the other
    if a._cat == _INT:
        # uint8 with a signed type: the signed type wide enough for both.
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.itemsize >= b.itemsize else b
    return a if a.itemsize >= b.itemsize else b


# PyTorch's names for dtypes in its messages (c10::ScalarType).
SCALAR_TYPE_NAMES: dict[dtype, str] = {
    float16: "Half", bfloat16: "BFloat16", float32: "Float", float64: "Double",
    complex64: "ComplexFloat", complex128: "ComplexDouble", int8: "Char", int16: "Short",
    int32: "Int", int64: "Long",
    uint8: "Byte", bool: "Bool", uint16: "UInt16", uint32: "UInt32", uint64: "UInt64",
}


def no_kernel(kernel: str, np_dtype: np.dtype) -> NotImplementedError:
    """PyTorch's error for a CPU kernel with no implementation for a dtype:
    ``"<kernel>" not implemented for '<ScalarType>'`` (``np_dtype``: a NumPy dtype)."""
    name = SCALAR_TYPE_NAMES[from_numpy_dtype(np_dtype)]
    return NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


# The C++ element types, as some PyTorch messages print them (``long int != float``).
CPP_TYPE_NAMES: dict[dtype, str] = {
    float16: "c10::Half", bfloat16: "c10::BFloat16", float32: "float", float64: "double",
    complex64: "c10::complex<float>", complex128: "c10::complex<double>", int8: "signed char",
    int16: "short int", int32: "int",
    int64: "long int", uint8: "unsigned char", bool: "bool", uint16: "unsigned short",
    uint32: "unsigned int", uint64: "unsigned long",
}


class _PromotionTable(dict):
    """``(dtype, dtype) -> dtype``; a missing pair is one PyTorch refuses to promote."""

    __slots__ = ()

    def __missing__(self, key: tuple[dtype, dtype]) -> dtype:
        a, b = key
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{SCALAR_TYPE_NAMES[a]} and {SCALAR_TYPE_NAMES[b]}"
        )


_PAIR_TABLE: dict[tuple[dtype, dtype], dtype] = _PromotionTable(
    {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}
)
# The shell types promote only with themselves and with real floating types.
for _shell in _SHELL_DTYPES:
    _PAIR_TABLE[(_shell, _shell)] = _shell
    for _other in (float16, bfloat16, float32, float64):
        _PAIR_TABLE[(_shell, _other)] = _PAIR_TABLE[(_other, _shell)] = _other


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be cast to (``torch.promote_types``).

    Example:
        >>> import chainrule as torch
        >>> torch.promote_types(torch.uint8, torch.int8)
        chainrule.int16
    """
    return _PAIR_TABLE[(to_dtype(type1), to_dtype(type2))]


def default_for_category(category: int) -> dtype:
    """The dtype a Python number of this category becomes on its own."""
    if category == _FLOAT:
        return _state.default
    if category == _INT:
        return int64
    if category == _BOOL:
        return bool
    return complex128 if _state.default is float64 else complex64


def scalar_category(value: object) -> int:
    """Category of a Python number (bool < int < float < complex)."""
    t = type(value)
    if t is builtins_float:
        return _FLOAT
    if t is builtins_int:
        return _INT
    if t is builtins_bool:
        return _BOOL
    if t is complex:
        return _COMPLEX
    if isinstance(value, np.bool_):
        return _FLOAT  # PyTorch reads a NumPy bool as a float number
    if isinstance(value, np.generic):
        return _BY_NUMPY.get(value.dtype, float64)._cat
    raise TypeError(f"unsupported scalar type {t.__name__}")


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's ``combine_categories``: ``higher`` (a higher-priority class) wins unless
    ``lower`` is of a higher category; then a floating ``higher`` keeps its precision
    (float64 with a complex64 0-d tensor is complex128) and an integer one is promoted."""
    if higher is None:
        return lower
    if lower is None or higher._cat == _COMPLEX:
        return higher
    if lower._cat == _COMPLEX:
        return higher.to_complex() if higher._cat == _FLOAT else lower
    if higher._cat == _FLOAT:
        return higher
    if higher is bool or lower._cat == _FLOAT:
        return _PAIR_TABLE[(higher, lower)]
    return higher


def combine(dim_dtype: dtype | None, zero_dim_dtype: dtype | None, scalar_cat: int,
            unsigned: builtins_bool = False) -> dtype:
    """Combine the three priority classes into a result dtype.

    ``dim_dtype`` is the promoted dtype of tensors with dimensions, ``zero_dim_dtype`` that of
    zero-dimensional tensors, ``scalar_cat`` the highest category of Python numbers (-1: none),
    which stand for their category's default dtype; but an int of 2**63 or more (``unsigned``)
    is a uint64, which PyTorch does not promote with bool.
    """
    if unsigned and scalar_cat == _INT:
        wrapped: dtype | None = uint64
    else:
        wrapped = default_for_category(scalar_cat) if scalar_cat >= 0 else None
    return _combine_categories(dim_dtype, _combine_categories(zero_dim_dtype, wrapped))  # type: ignore[return-value]


_PROMOTION_CACHE: dict[tuple, dtype] = {}


def _clear_promotion_caches() -> None:
    _PROMOTION_CACHE.clear()


def is_uint64_number(value: builtins_int) -> builtins_bool:
    """Whether PyTorch reads this Python int as a uint64 (from 2**63 to 2**64 - 1); its
    OverflowError for one beyond 64 bits."""
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    if value < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")
    return value >= 1 << 63


def result_type(*operands: object) -> dtype:
    """``torch.result_type``: the dtype an arithmetic op on these operands produces.

    Operands are Tensors (anything with ``_data``) or Python numbers.
    """
    dim_dtype: dtype | None = None
    zero_dtype: dtype | None = None
    scalar_cat = -1
    unsigned = False
    for x in operands:
        data = getattr(x, "_data", None)
        if data is None:
            scalar_cat = max(scalar_cat, scalar_category(x))
            if type(x) is builtins_int and not -(1 << 63) <= x < 1 << 63:
                unsigned = unsigned or is_uint64_number(x)
            continue
        d = _BY_NUMPY[data.dtype]
        if data.ndim:
            dim_dtype = d if dim_dtype is None else _PAIR_TABLE[(dim_dtype, d)]
        else:
            zero_dtype = d if zero_dtype is None else _PAIR_TABLE[(zero_dtype, d)]
    return combine(dim_dtype, zero_dtype, scalar_cat, unsigned)


def can_cast(from_: dtype, to: dtype) -> builtins_bool:
    """``torch.can_cast``: whether casting does not lower the category (float -> int is not)."""
    return from_._cat <= to._cat


def category(d: dtype) -> builtins_int:
    """The promotion category of a dtype (0 bool, 1 integer, 2 floating, 3 complex)."""
    return d._cat
