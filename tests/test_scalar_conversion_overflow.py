"""Numbers converted into a dtype that cannot hold them: PyTorch refuses (``value cannot be
converted to type uint8 without overflow``) where a plain cast wraps, except where PyTorch
itself wraps (a negative integer into an unsigned type). Every case runs in PyTorch too."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

INTEGER_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
ELEMENTS = [
    -2,
    -1,
    0,
    127,
    128,
    200,
    255,
    256,
    300,
    -128,
    -129,
    -255,
    -256,
    40000,
    65535,
    2**31,
    -(2**31) - 1,
    2**32,
    2**40,
    True,
    2.5,
    -0.5,
    -0.0,
    -1.0,
    127.9,
    128.0,
    255.9,
    256.0,
    -129.0,
    1e10,
    1e19,
    math.inf,
    -math.inf,
    math.nan,
    1 + 1j,
]


def _outcome(run: Any) -> tuple[str, ...]:
    try:
        result = run()
    except Exception as e:  # noqa: BLE001 (the type and message are what is compared)
        return (type(e).__name__, str(e))
    return ("ok", repr(result.tolist()), str(result.dtype).split(".")[-1])  # (repr: NaN == NaN)


def _same(lib_run: Any) -> None:
    expected = _outcome(lambda: lib_run(torch))
    got = _outcome(lambda: lib_run(chainrule))
    assert got == expected


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("value", ELEMENTS, ids=repr)
def test_tensor_from_a_list_checks_each_number(dtype: str, value: Any) -> None:
    _same(lambda lib: lib.tensor([1, value], dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("value", [-2, 300, -2.0, 200, math.nan], ids=repr)
def test_tensor_from_a_number_nested_list_and_numpy_scalars(dtype: str, value: Any) -> None:
    _same(lambda lib: lib.tensor(value, dtype=getattr(lib, dtype)))
    _same(lambda lib: lib.tensor([[1], [value]], dtype=getattr(lib, dtype)))
    _same(lambda lib: lib.as_tensor([value], dtype=getattr(lib, dtype)))
    _same(lambda lib: lib.zeros(1, dtype=getattr(lib, dtype)).new_tensor([value]))
    if isinstance(value, float):
        _same(lambda lib: lib.tensor([np.float64(value)], dtype=getattr(lib, dtype)))
    else:
        _same(lambda lib: lib.tensor([np.int64(value)], dtype=getattr(lib, dtype)))
        _same(lambda lib: lib.tensor([lib.tensor(value)], dtype=getattr(lib, dtype)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "bool"])
@pytest.mark.parametrize("value", [1e300, 70000, 70000.0, -2, math.nan, math.inf], ids=repr)
def test_tensor_into_floating_and_bool_types_is_not_checked(dtype: str, value: Any) -> None:
    _same(lambda lib: lib.tensor([value], dtype=getattr(lib, dtype)))


def test_casts_and_arithmetic_still_wrap() -> None:
    _same(lambda lib: lib.tensor(300).to(lib.uint8))
    _same(lambda lib: lib.tensor(np.array([300]), dtype=lib.uint8))
    _same(lambda lib: lib.zeros(2, dtype=lib.uint8) + 300)
    _same(lambda lib: lib.zeros(2, dtype=lib.uint8).add_(300))


SCALAR_DTYPES = INTEGER_DTYPES + ["float16", "float32", "float64", "complex64", "bool"]
SCALARS = [
    -2,
    -255,
    -256,
    200,
    300,
    2**40,
    -2.0,
    2.5,
    255.9,
    1e6,
    1e19,
    1e300,
    math.inf,
    math.nan,
    True,
]


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_fill_and_setitem_check_the_scalar(dtype: str, value: Any) -> None:
    def filled(lib: Any) -> Any:
        return lib.zeros(2, dtype=getattr(lib, dtype)).fill_(value)

    def set_one(lib: Any) -> Any:
        t = lib.zeros(2, dtype=getattr(lib, dtype))
        t[0] = value
        return t

    _same(filled)
    _same(set_one)
    _same(lambda lib: lib.fill(lib.zeros(2, dtype=getattr(lib, dtype)), value))


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_full_checks_the_scalar(dtype: str, value: Any) -> None:
    _same(lambda lib: lib.full((2,), value, dtype=getattr(lib, dtype)))
    _same(lambda lib: lib.zeros(1, dtype=getattr(lib, dtype)).new_full((2,), value))


def test_refused_fill_changes_nothing() -> None:
    t = chainrule.tensor([1, 2], dtype=chainrule.uint8)
    with pytest.raises(RuntimeError, match="uint8_t without overflow"):
        t.fill_(300)
    assert t.tolist() == [1, 2]
    assert t._version == 0
