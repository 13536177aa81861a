"""Result dtypes, values and refusals of binary ops over every dtype and operand kind, against
PyTorch: reflected operators (``2 // t``), 0-d operands, and the ops whose CPU kernels refuse
some dtypes."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]  # fmt: skip
NUMBERS = [2, 2.5, True, 1.5 + 0.5j]


def _make(lib: Any, dtype: str, zero_dim: bool) -> Any:
    if dtype == "bool":
        values: Any = [True, False, True]
    elif dtype == "uint8":
        values = [3, 2, 1]
    else:
        values = [3, -2, 1]
    t = lib.tensor(values, dtype=getattr(lib, dtype))
    return t[0] if zero_dim else t


def _outcome(run: Any) -> tuple[Any, ...]:
    try:
        result = run()
    except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
        return (type(e).__name__, str(e).replace("chainrule", "torch"))
    dtype = str(result.dtype).split(".")[-1]
    values = result.to(getattr(type(result), "dtype", None) and result.dtype).tolist()
    return ("ok", dtype, repr(np.asarray(values, dtype=complex).round(3).tolist()))


def _compare(run: Any) -> None:
    assert _outcome(lambda: run(chainrule)) == _outcome(lambda: run(torch))


REFLECTED = {
    "radd": operator.add, "rsub": operator.sub, "rmul": operator.mul,
    "rtruediv": operator.truediv, "rfloordiv": operator.floordiv, "rmod": operator.mod,
    "rpow": operator.pow, "rand": operator.and_, "ror": operator.or_, "rxor": operator.xor,
    "rlshift": operator.lshift, "rrshift": operator.rshift,
}  # fmt: skip


@pytest.mark.parametrize("zero_dim", [True, False], ids=["0d", "1d"])
@pytest.mark.parametrize("number", NUMBERS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REFLECTED)
def test_number_on_the_left_keeps_the_tensor_category(
    name: str, dtype: str, number: Any, zero_dim: bool
) -> None:
    fn = REFLECTED[name]
    if dtype == "float16" and isinstance(number, complex):
        pytest.skip("PyTorch gives complex32, which chainrule does not have")
    if name == "rfloordiv" and isinstance(number, complex):
        pytest.skip("PyTorch: floor_divide of complex is refused by both (message differs)")
    _compare(lambda lib: fn(number, _make(lib, dtype, zero_dim)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_of_zero_dim_half_tensors_keeps_the_dtype(name: str, dtype: str) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor(2.5, dtype=getattr(lib, dtype))
        return getattr(lib, name)(a, a)

    _compare(run)


INTEGER_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_integer_pow_with_negative_tensor_exponents(dtype: str) -> None:
    bases = [-3, -2, -1, 0, 1, 2, 3, -1, 1, 0]
    exponents = [-1, -2, -3, -2, -5, -1, 2, 0, 0, 3]

    def tensors(lib: Any) -> tuple[Any, Any]:
        d = getattr(lib, dtype)
        return lib.tensor(bases).to(d), lib.tensor(exponents).to(d)

    _compare(lambda lib: lib.pow(*tensors(lib)))
    _compare(lambda lib: tensors(lib)[0] ** tensors(lib)[1])
    _compare(lambda lib: tensors(lib)[0] ** tensors(lib)[1].t())
    _compare(lambda lib: 2 ** tensors(lib)[1])
    _compare(lambda lib: -(1 ** tensors(lib)[1]))
    _compare(lambda lib: lib.pow(-1, tensors(lib)[1]))
    _compare(lambda lib: lib.pow(1, tensors(lib)[1][:3]))
    _compare(lambda lib: lib.pow(tensors(lib)[0][0], tensors(lib)[1]))  # (0-d base)
    _compare(lambda lib: tensors(lib)[0] ** -2)  # (a number exponent: refused)
    _compare(lambda lib: tensors(lib)[0].pow_(tensors(lib)[1]))


@pytest.mark.parametrize(
    "run",
    [
        lambda lib: lib.tensor([True, False]) ** lib.tensor([True, True]),
        lambda lib: lib.pow(True, lib.tensor([True, False])),
        lambda lib: lib.tensor(True) ** lib.tensor(False),
        lambda lib: lib.tensor([True, False]) ** True,
        lambda lib: lib.tensor([True, False]) ** 2,
        lambda lib: 2 ** lib.tensor([True, False]),
        lambda lib: lib.tensor([True, False]) ** lib.tensor([2, 3]),
    ],
)
def test_pow_of_bool_tensors(run: Any) -> None:
    _compare(run)


BITWISE = {
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "lshift": lambda a, b: a << b, "rshift": lambda a, b: a >> b,
    "not": lambda a, b: ~a, "and_": lambda a, b: a.bitwise_and_(b),
}  # fmt: skip


@pytest.mark.parametrize("other", ["tensor", "number"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("name", BITWISE)
def test_bitwise_refusals_name_the_dtype(name: str, dtype: str, other: str) -> None:
    def run(lib: Any) -> Any:
        a = lib.tensor([1.0, 2.0], dtype=getattr(lib, dtype))
        return BITWISE[name](a, a if other == "tensor" else 1)

    _compare(run)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_remainder_zero_keeps_the_sign_of_the_dividend(dtype: str) -> None:
    def values(lib: Any) -> tuple[Any, Any]:
        d = getattr(lib, dtype)
        a = lib.tensor([2.0, -2.0, 0.0, -0.0, 4.0, -4.0, 3.0], dtype=d)
        b = lib.tensor([-2.0, 2.0, -1.0, 1.0, 2.0, -2.0, -1.5], dtype=d)
        return a, b

    for run in (
        lambda lib: lib.remainder(*values(lib)),
        lambda lib: values(lib)[0] % -2.0,
        lambda lib: 2.0 % values(lib)[1],
        lambda lib: values(lib)[0][1] % values(lib)[1][1],
    ):
        expected = run(torch).float()
        got = run(chainrule).float()
        assert str(got.dtype) == str(expected.dtype).replace("torch", "chainrule")
        assert got.tolist() == expected.tolist()
        assert np.signbit(got.numpy()).tolist() == np.signbit(expected.numpy()).tolist()


PAIR_OPS = {"hypot": "hypot", "copysign": "copysign"}
KINDS = [(d, zero_dim) for d in DTYPES for zero_dim in (False, True)]


@pytest.mark.parametrize("right", KINDS, ids=lambda k: f"{k[0]}{'-0d' if k[1] else ''}")
@pytest.mark.parametrize("left", KINDS, ids=lambda k: f"{k[0]}{'-0d' if k[1] else ''}")
@pytest.mark.parametrize("name", PAIR_OPS)
def test_float_kernels_refuse_as_pytorch(name: str, left: Any, right: Any) -> None:
    if "float16" in (left[0], right[0]) and "complex" in left[0] + right[0]:
        pytest.skip("PyTorch gives complex32, which chainrule does not have")

    def run(lib: Any) -> Any:
        return getattr(lib, name)(_make(lib, *left), _make(lib, *right))

    _compare(run)


@pytest.mark.parametrize("dtype", DTYPES)
def test_copysign_with_a_complex_number_is_refused(dtype: str) -> None:
    if dtype == "float16":
        pytest.skip("PyTorch gives complex32, which chainrule does not have")
    _compare(lambda lib: lib.copysign(_make(lib, dtype, False), 1.5 + 0.5j))
    _compare(lambda lib: lib.copysign(_make(lib, dtype, False), 2))


WEIGHTS = [*KINDS, ("int", None), ("float", None), ("bool", None), ("complex", None), ("big", None)]
_NUMBER_WEIGHTS = {"int": 2, "float": 0.25, "bool": True, "complex": 1.5 + 0.5j, "big": 1e300}


@pytest.mark.parametrize("weight", WEIGHTS, ids=lambda k: f"{k[0]}{'-0d' if k[1] else ''}")
@pytest.mark.parametrize("dtype", DTYPES)
def test_lerp_dtype_checks_as_pytorch(dtype: str, weight: Any) -> None:
    if dtype == "float16" and weight[0].startswith("complex"):
        pytest.skip("PyTorch gives complex32, which chainrule does not have")

    def run(lib: Any) -> Any:
        start = _make(lib, dtype, False)
        w = _NUMBER_WEIGHTS[weight[0]] if weight[1] is None else _make(lib, *weight)
        return lib.lerp(start, start, w)

    _compare(run)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_lerp_end_of_another_dtype_is_refused(dtype: str) -> None:
    _compare(lambda lib: lib.lerp(_make(lib, "float32", False), _make(lib, dtype, False), 0.5))


@pytest.mark.parametrize("bounds", ["min", "max", "both"])
@pytest.mark.parametrize("bound_dtype", ["complex64", "complex128", "float32", "int64"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "float32", "float64", "complex64"])
def test_clamp_with_tensor_bounds_refuses_complex_as_pytorch(
    dtype: str, bound_dtype: str, bounds: str
) -> None:
    def run(lib: Any) -> Any:
        x = _make(lib, dtype, False)
        bound = _make(lib, bound_dtype, False)
        if bounds == "min":
            return lib.clamp(x, min=bound)
        if bounds == "max":
            return lib.clamp(x, max=bound)
        return lib.clamp(x, bound, bound)

    _compare(run)
