"""PyTorch's type promotion (not NumPy's), compared with PyTorch over every dtype pair.

Operands come in three priority classes: tensors with dimensions, zero-dimensional tensors and
Python numbers. A lower class only lifts the result to a higher *category* (bool < integer <
floating < complex), to that category's default: ``int64 tensor + 1.5`` is float32 and
``int32 tensor + 0-d int64 tensor`` stays int32. Both ``result_type`` and the dtype (and
values) of real ``+ - * / ==`` results are compared.
"""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule

from .conftest import torch
from .test_tensor_api import assert_same

DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
    "complex64", "complex128",
]
REAL_DTYPES = DTYPES[:-2]
OPERATORS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "==": operator.eq,
}
SCALARS = [True, False, 2, -3, 1.5, 2.0, 1 + 2j]


def _operand(lib, kind: str, dtype: str | None = None, scalar=None):
    """A tensor with dimensions, a 0-d tensor, or a Python number."""
    if kind == "scalar":
        return scalar
    values = [3, 1] if kind == "dim" else 2
    return lib.tensor(values, dtype=getattr(lib, dtype))


def _bool_subtraction(a_kind, a_dtype, a_scalar, b_kind, b_dtype, b_scalar) -> bool:
    """PyTorch refuses ``-`` on bool tensors or with a Python bool (tested separately)."""
    bools = [
        (kind == "scalar" and type(scalar) is bool) or (kind != "scalar" and dtype == "bool")
        for kind, dtype, scalar in ((a_kind, a_dtype, a_scalar), (b_kind, b_dtype, b_scalar))
    ]
    return any(bools)


def _outside_the_comparison(a_kind, a_dtype, a_scalar, b_kind, b_dtype, b_scalar) -> bool:
    """Cases left out of the sweep: float16 with complex gives PyTorch's complex32, which
    NumPy (and so chainrule) does not have."""
    operands = [(a_kind, a_dtype, a_scalar), (b_kind, b_dtype, b_scalar)]
    dtypes = {dtype for kind, dtype, _ in operands if kind != "scalar"}
    scalars = [scalar for kind, _, scalar in operands if kind == "scalar"]
    complex_operand = bool(dtypes & {"complex64", "complex128"}) or any(
        type(s) is complex for s in scalars
    )
    return "float16" in dtypes and complex_operand


_kinds = st.sampled_from(["dim", "zero", "scalar"])


@settings(max_examples=400, deadline=None)
@given(
    a_kind=_kinds,
    b_kind=_kinds,
    a_dtype=st.sampled_from(DTYPES),
    b_dtype=st.sampled_from(DTYPES),
    a_scalar=st.sampled_from(SCALARS),
    b_scalar=st.sampled_from(SCALARS),
    op=st.sampled_from(sorted(OPERATORS)),
    default=st.sampled_from(["float32", "float64"]),
)
def test_operator_result_dtype_and_values_match_torch(
    a_kind, b_kind, a_dtype, b_dtype, a_scalar, b_scalar, op, default
) -> None:
    if a_kind == "scalar" and b_kind == "scalar":
        b_kind = "zero"  # an operator needs at least one tensor
    operands = (a_kind, a_dtype, a_scalar, b_kind, b_dtype, b_scalar)
    if op == "-" and _bool_subtraction(*operands):
        return
    if _outside_the_comparison(*operands):
        return

    def compute(lib):
        lib.set_default_dtype(getattr(lib, default))
        try:
            a = _operand(lib, a_kind, a_dtype, a_scalar)
            b = _operand(lib, b_kind, b_dtype, b_scalar)
            return OPERATORS[op](a, b), lib.result_type(a, b)
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same(compute)


@settings(max_examples=150, deadline=None)
@given(
    kinds=st.lists(_kinds, min_size=1, max_size=2),
    dtypes=st.lists(st.sampled_from(DTYPES), min_size=4, max_size=4),
    scalars=st.lists(st.sampled_from(SCALARS), min_size=4, max_size=4),
)
def test_result_type_of_two_operands_matches_torch(kinds, dtypes, scalars) -> None:
    """``result_type`` of any two operands (or one tensor's own dtype)."""
    if all(kind == "scalar" for kind in kinds):
        kinds = ["zero", *kinds]
    if len(kinds) > 1 and _outside_the_comparison(
        kinds[0], dtypes[0], scalars[0], kinds[1], dtypes[1], scalars[1]
    ):
        return

    def compute(lib):
        operands = [_operand(lib, k, d, s) for k, d, s in zip(kinds, dtypes, scalars, strict=False)]
        if len(operands) == 1:
            return operands[0].dtype
        return lib.result_type(operands[0], operands[1])

    assert_same(compute)


@pytest.mark.parametrize(("first", "second"), list(itertools.product(DTYPES, DTYPES)))
def test_promote_types_table(first: str, second: str) -> None:
    assert_same(lambda lib: lib.promote_types(getattr(lib, first), getattr(lib, second)))


@pytest.mark.parametrize(("source", "target"), list(itertools.product(DTYPES, DTYPES)))
def test_can_cast_table(source: str, target: str) -> None:
    assert_same(lambda lib: lib.can_cast(getattr(lib, source), getattr(lib, target)))


SHELL = ["uint16", "uint32", "uint64"]


@pytest.mark.parametrize(("shell", "other"), list(itertools.product(SHELL, SHELL + REAL_DTYPES)))
def test_shell_unsigned_types_promote_only_with_themselves_and_floats(shell, other) -> None:
    def promote(lib):
        # chainrule exposes the shell dtypes on tensors made from NumPy arrays.
        a = lib.from_numpy(np.ones(2, dtype=shell))
        b = lib.from_numpy(np.ones(2, dtype=other))
        return lib.promote_types(a.dtype, b.dtype)

    assert_same(promote)


# ----------------------------------------------------------------------------------------------
# The rules that differ from NumPy's, one by one

NAMED_CASES = {
    "int64 tensor + 1.5 is float32": lambda lib: lib.tensor([1, 2]) + 1.5,
    "uint8 + int8 is int16": lambda lib: lib.tensor([200], dtype=lib.uint8)
    + lib.tensor([-1], dtype=lib.int8),
    "int32 + 0-d int64 stays int32": lambda lib: lib.tensor([1], dtype=lib.int32) + lib.tensor(5),
    "int / int is float32": lambda lib: lib.tensor([1, 2]) / lib.tensor([2, 4]),
    "int / python int is float32": lambda lib: lib.tensor([3]) / 2,
    "float16 + 0-d float64 stays float16": lambda lib: lib.ones(2, dtype=lib.float16)
    + lib.tensor(1.0, dtype=lib.float64),
    "int8 + 0-d float64 is float64": lambda lib: lib.ones(2, dtype=lib.int8)
    + lib.tensor(1.0, dtype=lib.float64),
    "0-d int + 0-d float16 is float16": lambda lib: lib.tensor(1)
    + lib.tensor(1.0, dtype=lib.float16),
    "bool + bool stays bool": lambda lib: lib.tensor([True]) + lib.tensor([True]),
    "bool * python int is int64": lambda lib: lib.tensor([True, False]) * 3,
    "uint8 overflow wraps": lambda lib: lib.tensor([200], dtype=lib.uint8)
    + lib.tensor([100], dtype=lib.uint8),
    "uint8 + python int stays uint8": lambda lib: lib.tensor([250], dtype=lib.uint8) + 10,
    "float32 + python complex": lambda lib: lib.ones(1) + 1j,
    "float64 + python complex": lambda lib: lib.ones(1, dtype=lib.float64) + 1j,
    "int8 == python float": lambda lib: lib.tensor([1], dtype=lib.int8) == 1.0,
    "int / int with float64 default": lambda lib: _with_default(lib, lambda: lib.tensor([1]) / 2),
    "int + 1.5 with float64 default": lambda lib: _with_default(lib, lambda: lib.tensor([1]) + 1.5),
    "numpy float64 scalar is a python float": lambda lib: lib.tensor([1]) + np.float64(0.5),
    "python scalar on the left": lambda lib: 2.5 - lib.tensor([1, 2], dtype=lib.int16),
    "python scalar divided by int tensor": lambda lib: 3 / lib.tensor([2], dtype=lib.int8),
}


def _with_default(lib, make):
    lib.set_default_dtype(lib.float64)
    try:
        return make()
    finally:
        lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("case", NAMED_CASES, ids=str)
def test_named_promotion_rules(case: str) -> None:
    assert_same(NAMED_CASES[case])


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.result_type(lib.tensor([1, 2]), 1.5),
        lambda lib: lib.result_type(1.5, lib.tensor([1, 2])),
        lambda lib: lib.result_type(lib.tensor([1], dtype=lib.int32), lib.tensor(5)),
        lambda lib: lib.result_type(lib.tensor(5), 2),
        lambda lib: lib.result_type(lib.tensor(True), 2.5),
        lambda lib: lib.result_type(lib.tensor([1], dtype=lib.uint8), -1),
    ],
    ids=["int64 tensor float", "float int64 tensor", "int32 and 0-d int64", "0-d and int",
         "0-d bool and float", "uint8 and negative int"],
)
def test_result_type_cases(make) -> None:
    assert_same(make)


def test_result_type_is_not_numpy_result_type() -> None:
    """The reason the rules exist: NumPy answers differently for these."""
    int_tensor = chainrule.tensor([1, 2])
    assert chainrule.result_type(int_tensor, 1.5) is chainrule.float32
    assert np.result_type(np.int64, np.float64) == np.float64
    small = chainrule.tensor([1], dtype=chainrule.int32)
    assert chainrule.result_type(small, chainrule.tensor(5)) is chainrule.int32


# ----------------------------------------------------------------------------------------------
# Subtraction of bools: PyTorch refuses it


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.tensor([True]) - lib.tensor([1]),
        lambda lib: lib.tensor([1.0]) - True,
        lambda lib: True - lib.tensor([1.0]),
        lambda lib: True - lib.tensor([False]),
        lambda lib: lib.sub(lib.tensor([2]), lib.tensor([True])),
    ],
    ids=["bool tensor - int tensor", "float tensor - True", "True - float tensor",
         "True - bool tensor", "sub int bool"],
)
def test_subtraction_with_bool_raises_like_torch(make) -> None:
    # (bool tensor - bool tensor, and bool tensor - True, already raise as PyTorch does.)
    error = None
    try:
        make(torch)
    except RuntimeError as caught:
        error = caught
    assert error is not None
    assert_same(make)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.tensor([3, 1], dtype=lib.uint8) + (-3),
        lambda lib: lib.tensor([3, 1], dtype=lib.uint8) * (-3),
        lambda lib: lib.tensor(2, dtype=lib.uint8) - (-3),
    ],
    ids=["add", "mul", "0-d sub"],
)
def test_negative_python_int_with_uint8_wraps_like_torch(make) -> None:
    assert_same(make)


def test_python_complex_keeps_float32_precision_with_float64_default() -> None:
    def compute(lib):
        lib.set_default_dtype(lib.float64)
        try:
            x = lib.ones(2, dtype=lib.float32)
            return x * (1 + 2j), lib.result_type(x, 1j)
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same(compute)


def test_python_complex_with_float_tensors() -> None:
    """The cases the fast path gets right (default float32)."""
    assert_same(lambda lib: (lib.ones(2) * (1 + 2j), lib.ones(2, dtype=lib.float64) + 1j))
