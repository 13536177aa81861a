"""Creating tensors, compared with PyTorch: dtype inference, memory sharing, filled tensors,
ranges (to the last bit), identity matrices, and seeded random numbers (shapes, dtypes,
reproducibility; the random streams themselves differ from PyTorch's by design)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule

from .conftest import torch
from .test_tensor_api import assert_raises_same, assert_same

# ----------------------------------------------------------------------------------------------
# tensor(): dtype inference from Python data, NumPy values and tensors

INFERENCE_CASES = {
    "floats": lambda lib: lib.tensor([1.0, 2.0]),
    "ints": lambda lib: lib.tensor([1, 2]),
    "bools": lambda lib: lib.tensor([True, False]),
    "int and float": lambda lib: lib.tensor([1, 2.5]),
    "bool and int": lambda lib: lib.tensor([True, 2]),
    "bool and float": lambda lib: lib.tensor([True, 2.5]),
    "nested ints": lambda lib: lib.tensor([[1, 2], [3, 4]]),
    "nested mixed rows": lambda lib: lib.tensor([[1, 2.0], [True, 3]]),
    "tuples": lambda lib: lib.tensor(((1.0,), (2.0,))),
    "tuple and list rows": lambda lib: lib.tensor([(1, 2), [3, 4]]),
    "range": lambda lib: lib.tensor(range(3)),
    "empty list": lambda lib: lib.tensor([]),
    "empty rows": lambda lib: lib.tensor([[], []]),
    "empty innermost": lambda lib: lib.tensor([[[]]]),
    "python int": lambda lib: lib.tensor(3),
    "python float": lambda lib: lib.tensor(3.5),
    "python bool": lambda lib: lib.tensor(True),
    "python complex": lambda lib: lib.tensor([1 + 2j, 1]),
    "large int": lambda lib: lib.tensor(2**40),
    "nan and inf": lambda lib: lib.tensor([float("nan"), float("inf"), -0.0]),
    "float overflowing float32": lambda lib: lib.tensor([1e40]),
    "int beyond int64 as float": lambda lib: lib.tensor([1.5, 2**70]),
    "ndarray float64": lambda lib: lib.tensor(np.array([1.0, 2.0])),
    "ndarray float32": lambda lib: lib.tensor(np.array([1.0, 2.0], dtype=np.float32)),
    "ndarray int32": lambda lib: lib.tensor(np.array([1, 2], dtype=np.int32)),
    "ndarray bool": lambda lib: lib.tensor(np.array([True, False])),
    "ndarray 0-d": lambda lib: lib.tensor(np.array(1.5)),
    "ndarray uint16": lambda lib: lib.tensor(np.array([1, 2], dtype=np.uint16)),
    "ndarray non-contiguous": lambda lib: lib.tensor(np.arange(6.0).reshape(2, 3)[:, ::2]),
    "numpy float64 scalar": lambda lib: lib.tensor(np.float64(1.5)),
    "numpy float64 in list": lambda lib: lib.tensor([np.float64(1.5), 2.0]),
    "numpy float32 in list": lambda lib: lib.tensor([np.float32(1.5), 2]),
    "numpy int32 in list": lambda lib: lib.tensor([np.int32(1)]),
    "numpy int32 with int": lambda lib: lib.tensor([np.int32(1), 2]),
    "numpy int16 and int8": lambda lib: lib.tensor([np.int16(1), np.int8(2)]),
    "numpy uint8 and int8": lambda lib: lib.tensor([np.uint8(1), np.int8(1)]),
    "numpy float16 with int": lambda lib: lib.tensor([np.float16(1), 1]),
    "numpy int64 with float": lambda lib: lib.tensor([np.int64(1), 1.5]),
    "numpy bool": lambda lib: lib.tensor([np.bool_(True)]),
    "list of ndarrays": lambda lib: lib.tensor([np.array([1.5, 2.0])]),
    "ndarray rows int32": lambda lib: lib.tensor([[np.array([1, 2], dtype=np.int32)]]),
    "int with float32 0-d ndarray": lambda lib: lib.tensor([1, np.array(1.5, dtype=np.float32)]),
    "0-d float tensors": lambda lib: lib.tensor([lib.tensor(1.5), lib.tensor(2.5)]),
    "0-d int tensors": lambda lib: lib.tensor([lib.tensor(1), lib.tensor(2)]),
    "0-d float64 tensor and float": lambda lib: lib.tensor(
        [lib.tensor(1.0, dtype=lib.float64), 2.0]
    ),
    "0-d float64 tensor and int": lambda lib: lib.tensor([lib.tensor(1.0, dtype=lib.float64), 2]),
    "0-d int32 tensor and int": lambda lib: lib.tensor([lib.tensor(1, dtype=lib.int32), 2]),
    "0-d float16 tensor and float": lambda lib: lib.tensor(
        [lib.tensor(1.5, dtype=lib.float16), 2.5]
    ),
    "0-d uint8 and int8 tensors": lambda lib: lib.tensor(
        [lib.tensor(1, dtype=lib.uint8), lib.tensor(1, dtype=lib.int8)]
    ),
    "one-element 1-d tensor": lambda lib: lib.tensor([lib.tensor([1.0])]),
    "explicit float64": lambda lib: lib.tensor([1, 2], dtype=lib.float64),
    "explicit int32 truncates": lambda lib: lib.tensor([1.7, -2.7], dtype=lib.int32),
    "explicit int64 from numpy float": lambda lib: lib.tensor([np.float64(2.5)], dtype=lib.int32),
    "explicit bool is non-zero": lambda lib: lib.tensor([0, 2, 0.5], dtype=lib.bool),
    "explicit uint8 wraps -1": lambda lib: lib.tensor([-1], dtype=lib.uint8),
    "explicit float16": lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float16),
    "explicit float from huge int": lambda lib: lib.tensor([1, 2**63], dtype=lib.float64),
    "python float dtype": lambda lib: lib.tensor([1, 2], dtype=float),
    "python int dtype": lambda lib: lib.tensor([1.5], dtype=int),
    "requires_grad": lambda lib: lib.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad 0-d": lambda lib: lib.tensor(2.0, requires_grad=True),
}


@pytest.mark.parametrize("case", INFERENCE_CASES, ids=str)
def test_tensor_infers_dtype_and_values_as_torch(case: str) -> None:
    assert_same(INFERENCE_CASES[case])


BAD_DATA_CASES = {
    "ragged": lambda lib: lib.tensor([[1, 2], [3]]),
    "ragged longer": lambda lib: lib.tensor([[1], [2, 3]]),
    "ragged deep": lambda lib: lib.tensor([[[1]], [[2, 3]]]),
    "ragged with dtype": lambda lib: lib.tensor([[1, 2], [3]], dtype=lib.float64),
    "scalar where row expected": lambda lib: lib.tensor([[1, 2], 3]),
    "row where scalar expected": lambda lib: lib.tensor([1, [2, 3]]),
    "row where float expected": lambda lib: lib.tensor([1.0, [2]]),
    "str": lambda lib: lib.tensor("abc"),
    "bytes": lambda lib: lib.tensor(b"ab"),
    "str in list": lambda lib: lib.tensor(["a"]),
    "str row": lambda lib: lib.tensor([[1, 2], "ab"]),
    "bytes in list": lambda lib: lib.tensor([b"a"]),
    "None": lambda lib: lib.tensor(None),
    "None in list": lambda lib: lib.tensor([None]),
    "None with float dtype": lambda lib: lib.tensor([None], dtype=lib.float32),
    "None with int dtype": lambda lib: lib.tensor([None], dtype=lib.int64),
    "None deep (inference first)": lambda lib: lib.tensor([[1, 2], [None]]),
    "dict": lambda lib: lib.tensor({1: 2}),
    "set": lambda lib: lib.tensor({1}),
    "object": lambda lib: lib.tensor([object()]),
    "int beyond int64": lambda lib: lib.tensor(2**64),
    "int beyond int64 in list": lambda lib: lib.tensor([1, 2**63]),
    "negative beyond int64": lambda lib: lib.tensor(-(2**63) - 1),
    "multi-element tensors": lambda lib: lib.tensor(
        [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])]
    ),
    "0-d ndarray in list": lambda lib: lib.tensor([np.array(1.5)]),
    "ragged ndarrays": lambda lib: lib.tensor([np.array([1, 2]), np.array([3])]),
    "object ndarray": lambda lib: lib.tensor(np.array([1, "a"], dtype=object)),
    "str ndarray": lambda lib: lib.tensor(np.array(["a"])),
    "integer requires_grad": lambda lib: lib.tensor([1, 2], requires_grad=True),
}


@pytest.mark.parametrize("case", BAD_DATA_CASES, ids=str)
def test_tensor_rejects_bad_data_as_torch(case: str) -> None:
    assert_raises_same(BAD_DATA_CASES[case])


def test_tensor_of_tensor_copies_detaches_and_warns() -> None:
    def copy_construct(lib):
        source = lib.tensor([1.0, 2.0], requires_grad=True)
        copied = lib.tensor(source)
        with lib.no_grad():
            source.add_(1)
        return copied, source

    assert_same(copy_construct, check_warnings=True)


def test_tensor_from_requires_grad_scalar_tensor() -> None:
    # The value here; the warning (once per process, shared with float()) is compared with
    # PyTorch's in fresh interpreters by test_tensor_api.test_scalar_conversion_warns_like_torch.
    assert_same(lambda lib: lib.tensor([lib.tensor(1.0, requires_grad=True)]))


def test_tensor_copies_numpy_data() -> None:
    array = np.array([1.0, 2.0])
    t = chainrule.tensor(array)
    array[0] = 9.0
    assert t.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("default", ["float64", "float16"])
def test_default_dtype_drives_float_inference(default: str) -> None:
    def make(lib):
        lib.set_default_dtype(getattr(lib, default))
        try:
            return (lib.tensor([1.5]), lib.tensor([1]), lib.tensor(2.5), lib.tensor([True, 2.5]),
                    lib.tensor([np.float32(1.0), 2.0]), lib.get_default_dtype())
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same(make)


def test_default_float64_makes_python_complex_complex128() -> None:
    def make(lib):
        lib.set_default_dtype(lib.float64)
        try:
            return lib.tensor([1j]).dtype
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same(make)


def test_set_default_dtype_rejects_integer_types() -> None:
    assert_raises_same(lambda lib: lib.set_default_dtype(lib.int64))
    assert chainrule.get_default_dtype() is chainrule.float32


_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**62), 2**62),
    st.floats(allow_nan=False, width=64, min_value=-1e30, max_value=1e30),
)


@st.composite
def _nested_data(draw: st.DrawFn) -> list:
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    count = int(np.prod(shape))
    flat = draw(st.lists(_scalars, min_size=count, max_size=count))
    for size in reversed(shape[1:]):
        flat = [flat[i:i + size] for i in range(0, len(flat), size)]
    return flat


@settings(max_examples=60, deadline=None)
@given(data=_nested_data())
def test_nested_python_numbers_match_torch(data: list) -> None:
    assert_same(lambda lib: lib.tensor(data))


# ----------------------------------------------------------------------------------------------
# as_tensor and from_numpy share memory


def test_from_numpy_shares_memory_both_ways() -> None:
    array = np.zeros(3)
    t = chainrule.from_numpy(array)
    array[0] = 5.0
    t[1] = 7.0
    assert t.tolist() == [5.0, 7.0, 0.0]
    assert array.tolist() == [5.0, 7.0, 0.0]
    assert t.dtype is chainrule.float64


def test_from_numpy_shares_a_non_contiguous_view() -> None:
    array = np.arange(6.0).reshape(2, 3)[:, ::2]
    t = chainrule.from_numpy(array)
    array[0, 0] = 9.0
    assert t.tolist() == [[9.0, 2.0], [3.0, 5.0]]


@pytest.mark.parametrize(
    "dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
)
def test_from_numpy_keeps_every_dtype(dtype: str) -> None:
    assert_same(lambda lib: lib.from_numpy(np.ones((2, 1), dtype=dtype)))


def test_from_numpy_uint16_is_a_uint16_tensor() -> None:
    t = chainrule.from_numpy(np.ones(2, dtype=np.uint16))
    assert repr(t.dtype) == "chainrule.uint16"
    assert_same(lambda lib: lib.from_numpy(np.array([1, 2], dtype=np.uint16)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: [1, 2],
        lambda: np.array(["a"]),
        lambda: np.array([1, "a"], dtype=object),
        lambda: np.arange(3.0).astype(">f8"),
    ],
    ids=["list", "str array", "object array", "big-endian"],
)
def test_from_numpy_errors(make) -> None:
    assert_raises_same(lambda lib: lib.from_numpy(make()))


def test_as_tensor_shares_array_memory_when_dtype_matches() -> None:
    array = np.zeros(2, dtype=np.float32)
    shared = chainrule.as_tensor(array)
    copied = chainrule.as_tensor(array, dtype=chainrule.float64)
    array[0] = 3.0
    assert shared.tolist() == [3.0, 0.0]
    assert copied.tolist() == [0.0, 0.0]
    assert copied.dtype is chainrule.float64


def test_as_tensor_returns_the_same_tensor_or_a_differentiable_cast() -> None:
    def cases(lib):
        x = lib.ones(2, requires_grad=True)
        same = lib.as_tensor(x)
        cast = lib.as_tensor(x, dtype=lib.float64)
        return same is x, cast, lib.as_tensor([1, 2], dtype=lib.float64), lib.as_tensor(3.5)

    assert_same(cases)


# ----------------------------------------------------------------------------------------------
# zeros, ones, full, empty and the *_like functions

FILLED_CASES = {
    "zeros varargs": lambda lib: lib.zeros(2, 3),
    "zeros tuple": lambda lib: lib.zeros((2, 3)),
    "zeros list": lambda lib: lib.zeros([2, 3]),
    "zeros Size": lambda lib: lib.zeros(lib.Size([2])),
    "zeros 0-d": lambda lib: lib.zeros(()),
    "zeros empty list": lambda lib: lib.zeros([]),
    "zeros size keyword": lambda lib: lib.zeros(size=(2, 3)),
    "zeros 0 elements": lambda lib: lib.zeros(0, 2),
    "zeros numpy int": lambda lib: lib.zeros(np.int64(2), 3),
    "zeros 0-d int tensor": lambda lib: lib.zeros(lib.tensor(2), 3),
    "zeros bool in varargs": lambda lib: lib.zeros(2, True),
    "zeros int32": lambda lib: lib.zeros(2, dtype=lib.int32),
    "zeros python float dtype": lambda lib: lib.zeros(2, dtype=float),
    "zeros python bool dtype": lambda lib: lib.zeros(2, dtype=bool),
    "zeros requires_grad": lambda lib: lib.zeros(2, requires_grad=True),
    "ones": lambda lib: lib.ones(2, 1),
    "ones bool": lambda lib: lib.ones(2, dtype=lib.bool),
    "ones float64 requires_grad": lambda lib: lib.ones(3, dtype=lib.float64, requires_grad=True),
    "full int": lambda lib: lib.full((2,), 3),
    "full float": lambda lib: lib.full((2,), 3.5),
    "full bool": lambda lib: lib.full((2,), True),
    "full complex": lambda lib: lib.full((1,), 1j),
    "full int with float dtype": lambda lib: lib.full((2,), 3, dtype=lib.float64),
    "full bool with float dtype": lambda lib: lib.full((2,), True, dtype=lib.float32),
    "full list size": lambda lib: lib.full([2, 2], 1.0),
    "full 0-d": lambda lib: lib.full([], 2.0),
    "full from int tensor": lambda lib: lib.full((2,), lib.tensor(2)),
    "full from float64 tensor": lambda lib: lib.full((2,), lib.tensor(2.5, dtype=lib.float64)),
    "full numpy float32": lambda lib: lib.full((2,), np.float32(2)),
    "full numpy int32": lambda lib: lib.full((2,), np.int32(2)),
    "full numpy bool": lambda lib: lib.full((2,), np.bool_(True)),
    "full requires_grad": lambda lib: lib.full((2,), 1.5, requires_grad=True),
    "zeros_like int32": lambda lib: lib.zeros_like(lib.ones(2, 3, dtype=lib.int32)),
    "ones_like dtype": lambda lib: lib.ones_like(lib.ones(2), dtype=lib.float64),
    "full_like truncates to int": lambda lib: lib.full_like(lib.ones(2, dtype=lib.int64), 2.7),
    "full_like bool value": lambda lib: lib.full_like(lib.ones(2), True),
    "zeros_like requires_grad": lambda lib: lib.zeros_like(lib.ones(2), requires_grad=True),
    "zeros_like of requires_grad": lambda lib: lib.zeros_like(lib.ones(2, requires_grad=True)),
    "ones_like of non-leaf": lambda lib: lib.ones_like(lib.ones(2, requires_grad=True) * 2),
}


@pytest.mark.parametrize("case", FILLED_CASES, ids=str)
def test_filled_tensors_match_torch(case: str) -> None:
    assert_same(FILLED_CASES[case])


def test_empty_and_empty_like_have_shape_and_dtype() -> None:
    assert_same(lambda lib: lib.empty(2, 3), values=False)
    assert_same(lambda lib: lib.empty((2,), dtype=lib.float64, requires_grad=True), values=False)
    assert_same(lambda lib: lib.empty_like(lib.ones(2, dtype=lib.int8)), values=False)


FILLED_ERRORS = {
    "negative zeros": lambda lib: lib.zeros(2, -1),
    "negative zeros tuple": lambda lib: lib.zeros((2, -1)),
    "negative ones": lambda lib: lib.ones(2, -1),
    "negative empty": lambda lib: lib.empty(2, -1),
    "negative full": lambda lib: lib.full((-1,), 1.0),
    "negative rand": lambda lib: lib.rand(-1),
    "float size": lambda lib: lib.zeros(2.5),
    "float size ones": lambda lib: lib.ones(2.5),
    "float size empty": lambda lib: lib.empty(2.5),
    "float in tuple first": lambda lib: lib.zeros([2.5, 2]),
    "float in tuple second": lambda lib: lib.zeros((2, 2.5)),
    "float in varargs": lambda lib: lib.zeros(2, 2.5),
    "float first of varargs": lambda lib: lib.zeros(2.5, 2),
    "None in varargs": lambda lib: lib.zeros(2, None),
    "tuple in varargs": lambda lib: lib.rand(2, (3,)),
    "str size": lambda lib: lib.zeros("a"),
    "None size": lambda lib: lib.zeros(None),
    "bool size": lambda lib: lib.zeros(True),
    "tensor size": lambda lib: lib.zeros(lib.tensor([2, 3])),
    "ndarray size": lambda lib: lib.zeros(np.array([2, 3])),
    "float tensor in varargs": lambda lib: lib.zeros(2, lib.tensor(2.0)),
    "no size": lambda lib: lib.zeros(),
    "full int size": lambda lib: lib.full(2, 3.0),
    "full float in size": lambda lib: lib.full((2, 2.5), 1.0),
    "integer requires_grad": lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True),
    "integer requires_grad empty": lambda lib: lib.empty((2,), dtype=lib.int64, requires_grad=True),
}


@pytest.mark.parametrize("case", FILLED_ERRORS, ids=str)
def test_filled_tensor_errors_match_torch(case: str) -> None:
    assert_raises_same(FILLED_ERRORS[case])


# ----------------------------------------------------------------------------------------------
# arange and linspace, to the last bit

# Up to 7 elements PyTorch computes each value alone; from 8 on its vectorised kernel (AVX2 here)
# groups them, which rounds differently. chainrule reproduces the AVX2 kernel.
_AVX2 = torch.backends.cpu.get_cpu_capability() == "AVX2"

ARANGE_CASES = [
    (5,), (5.0,), (1, 4), (0, 1, 0.1), (5, 0, -1), (1, -1, -0.25), (0,), (3, 3), (0, 3, 0.5),
    (0, 3.5), (1, 2, 0.3), (0, 10, 20), (0.1, 0.3, 0.1), (-1, 1, 0.3), (5, 0, -0.7),
    (0, 10, 1.1), (-3.3, 7, 0.37), (0, 100, 0.01), (-7.1, 3.3, 0.013), (1, 10, 1.5),
]


@pytest.mark.parametrize("args", ARANGE_CASES, ids=str)
@pytest.mark.parametrize("dtype", [None, "float64", "float32", "int64", "int32"])
def test_arange_matches_torch(args: tuple, dtype: str | None) -> None:
    def make(lib):
        kwargs = {} if dtype is None else {"dtype": getattr(lib, dtype)}
        return lib.arange(*args, **kwargs)

    try:
        expected = make(torch)
    except (RuntimeError, ValueError):  # e.g. a step truncated to 0 for int64: same error
        assert_raises_same(make)
        return
    if _AVX2 or expected.numel() < 8:
        assert_same(make)
    else:
        np.testing.assert_allclose(make(chainrule).numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.arange(lib.tensor(3)),
        lambda lib: lib.arange(lib.tensor(3.0)),
        lambda lib: lib.arange(3.0, requires_grad=True),
        lambda lib: lib.arange(0, 2.5, dtype=lib.int64),
        lambda lib: lib.arange(0.5, 3.7, 1, dtype=lib.int64),
        lambda lib: lib.arange(-2.5, 3, 1, dtype=lib.int64),
        lambda lib: lib.arange(1, 10, 1.5, dtype=lib.int64),
        lambda lib: lib.arange(0, 5, 2, dtype=lib.float32),
    ],
    ids=["int tensor", "float tensor", "requires_grad", "float end int dtype",
         "float start int dtype", "negative float start int dtype", "float step int dtype",
         "int args float dtype"],
)
def test_arange_argument_forms(make) -> None:
    assert_same(make)


def test_arange_follows_default_dtype() -> None:
    def make(lib):
        lib.set_default_dtype(lib.float64)
        try:
            return lib.arange(2.0), lib.arange(2)
        finally:
            lib.set_default_dtype(lib.float32)

    assert_same(make)


@pytest.mark.parametrize(
    "args",
    [(0, 5, -1), (-3,), (0, 5, 0), (0, float("inf")), (0.5, float("inf")),
     (1.0, float("nan"), 2)],
    ids=str,
)
def test_arange_errors(args: tuple) -> None:
    assert_raises_same(lambda lib: lib.arange(*args))


def test_arange_step_truncated_to_zero_is_an_error() -> None:
    assert_raises_same(lambda lib: lib.arange(0, 3, 0.5, dtype=lib.int64))


@settings(max_examples=80, deadline=None)
@given(
    start=st.floats(-100, 100, allow_nan=False),
    end=st.floats(-100, 100, allow_nan=False),
    steps=st.integers(0, 300),
    dtype=st.sampled_from(["float32", "float64", "float16", "int64", "int32"]),
)
def test_linspace_matches_torch_bit_for_bit(start: float, end: float, steps: int, dtype: str):
    assert_same(lambda lib: lib.linspace(start, end, steps, dtype=getattr(lib, dtype)))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.linspace(0, 1, 5),
        lambda lib: lib.linspace(-1, 1, 7, dtype=lib.float64),
        lambda lib: lib.linspace(-1, 1, 21),
        lambda lib: lib.linspace(0, 1, 1),
        lambda lib: lib.linspace(0, 1, 0),
        lambda lib: lib.linspace(3, -2, 6),
        lambda lib: lib.linspace(0, 10, 4, dtype=lib.int64),
        lambda lib: lib.linspace(lib.tensor(0.0), lib.tensor(1.0), 3),
        lambda lib: lib.linspace(0, 1, steps=3),
        lambda lib: lib.linspace(0, 1, 3, requires_grad=True),
    ],
    ids=["basic", "float64 near zero", "21 steps", "one step", "no steps", "decreasing",
         "int64", "tensor bounds", "steps keyword", "requires_grad"],
)
def test_linspace_cases(make) -> None:
    assert_same(make)


@pytest.mark.parametrize(
    "make",
    [lambda lib: lib.linspace(0, 1, -1), lambda lib: lib.linspace(0, 1, 2.5),
     lambda lib: lib.linspace(0, 1)],
    ids=["negative steps", "float steps", "no steps"],
)
def test_linspace_errors(make) -> None:
    assert_raises_same(make)


# ----------------------------------------------------------------------------------------------
# eye

@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.eye(3),
        lambda lib: lib.eye(2, 3),
        lambda lib: lib.eye(3, 2),
        lambda lib: lib.eye(n=2),
        lambda lib: lib.eye(0),
        lambda lib: lib.eye(2, dtype=lib.int64),
        lambda lib: lib.eye(3, dtype=lib.bool),
        lambda lib: lib.eye(2, requires_grad=True),
        lambda lib: lib.eye(-1),
        lambda lib: lib.eye(2, -1),
        lambda lib: lib.eye(2.5),
    ],
    ids=["square", "wide", "tall", "keyword", "empty", "int64", "bool", "requires_grad",
         "negative n", "negative m", "float n"],
)
def test_eye_matches_torch(make) -> None:
    assert_same(make)


# ----------------------------------------------------------------------------------------------
# Random numbers: shapes, dtypes, errors and reproducibility (not PyTorch's streams)

RANDOM_SHAPE_CASES = {
    "rand varargs": lambda lib: lib.rand(2, 3),
    "rand tuple": lambda lib: lib.rand((2, 3)),
    "rand 0-d": lambda lib: lib.rand(()),
    "rand float64": lambda lib: lib.rand(2, dtype=lib.float64),
    "rand float16": lambda lib: lib.rand(2, 3, dtype=lib.float16),
    "rand requires_grad": lambda lib: lib.rand(2, requires_grad=True),
    "rand generator": lambda lib: lib.rand(2, generator=lib.Generator(), dtype=lib.float64),
    "randn": lambda lib: lib.randn(4),
    "randn tuple requires_grad": lambda lib: lib.randn((2, 3), requires_grad=True),
    "randint high": lambda lib: lib.randint(5, (3,)),
    "randint low high": lambda lib: lib.randint(2, 5, (2, 2)),
    "randint size keyword": lambda lib: lib.randint(3, size=(2,)),
    "randint float dtype": lambda lib: lib.randint(0, 3, (2,), dtype=lib.float64),
    "randint uint8": lambda lib: lib.randint(0, 256, (3,), dtype=lib.uint8),
    "randint bool": lambda lib: lib.randint(0, 2, (2,), dtype=lib.bool),
    "normal numbers with size": lambda lib: lib.normal(0.0, 1.0, size=(2, 3)),
    "normal int numbers": lambda lib: lib.normal(0, 1, (2,)),
    "normal float64 size": lambda lib: lib.normal(0.0, 1.0, (2,), dtype=lib.float64),
    "normal requires_grad": lambda lib: lib.normal(0.0, 1.0, size=(2,), requires_grad=True),
    "normal tensor mean": lambda lib: lib.normal(lib.zeros(2, 3), 1.0),
    "normal tensor mean only": lambda lib: lib.normal(mean=lib.zeros(2)),
    "normal tensor mean and std": lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3)),
    "normal 0-d mean": lambda lib: lib.normal(lib.zeros(()), lib.ones(2)),
    "normal float64 mean": lambda lib: lib.normal(lib.zeros(2, dtype=lib.float64), lib.ones(2)),
    "normal float64 std": lambda lib: lib.normal(lib.zeros(2), lib.ones(2, dtype=lib.float64)),
    "normal number mean tensor std": lambda lib: lib.normal(0.0, lib.ones(2, dtype=lib.float64)),
    "rand_like": lambda lib: lib.rand_like(lib.ones(2, 3, dtype=lib.float64)),
    "randn_like": lambda lib: lib.randn_like(lib.ones(2, 3)),
    "randint_like high": lambda lib: lib.randint_like(lib.ones(2, 3), 5),
    "randint_like low high": lambda lib: lib.randint_like(lib.ones(2), 3, 5),
    "randperm": lambda lib: lib.randperm(5),
    "randperm float": lambda lib: lib.randperm(4, dtype=lib.float32),
}


@pytest.mark.parametrize("case", RANDOM_SHAPE_CASES, ids=str)
def test_random_shapes_and_dtypes_match_torch(case: str) -> None:
    assert_same(RANDOM_SHAPE_CASES[case], values=False)


RANDOM_ERRORS = {
    "rand int64": lambda lib: lib.rand(2, dtype=lib.int64),
    "rand bool": lambda lib: lib.rand(2, dtype=lib.bool),
    "randn int64": lambda lib: lib.randn(2, dtype=lib.int64),
    "rand_like int": lambda lib: lib.rand_like(lib.ones(2, dtype=lib.int64)),
    "randn_like int": lambda lib: lib.randn_like(lib.ones(2, dtype=lib.int64)),
    "rand float size": lambda lib: lib.rand(2.5),
    "randn float in size": lambda lib: lib.randn((2, 2.5)),
    "randint no size": lambda lib: lib.randint(3),
    "randint empty range": lambda lib: lib.randint(5, 2, (2,)),
    "randint float high": lambda lib: lib.randint(3.5, (2,)),
    "randint int size": lambda lib: lib.randint(5, 2),
    "randint float in size": lambda lib: lib.randint(5, (2, 2.5)),
    "randint negative size": lambda lib: lib.randint(3, (-1,)),
    "randint requires_grad": lambda lib: lib.randint(3, (2,), requires_grad=True),
    "randperm negative": lambda lib: lib.randperm(-1),
    "normal negative std": lambda lib: lib.normal(0.0, -1.0, size=(2,)),
    "normal negative fractional std": lambda lib: lib.normal(0.0, -0.5, (2,)),
    "normal negative std tensor": lambda lib: lib.normal(lib.zeros(2), lib.tensor([1.0, -1.0])),
    "normal negative std number": lambda lib: lib.normal(lib.zeros(2), -1.0),
    "normal no size": lambda lib: lib.normal(0.0, 1.0),
    "normal tensor with size": lambda lib: lib.normal(lib.zeros(2), 1.0, (3,)),
    "normal shapes": lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
    "normal int64": lambda lib: lib.normal(0.0, 1.0, (2,), dtype=lib.int64),
    "normal int mean": lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0),
}


@pytest.mark.parametrize("case", RANDOM_ERRORS, ids=str)
def test_random_errors_match_torch(case: str) -> None:
    assert_raises_same(RANDOM_ERRORS[case])


DRAWS = {
    "rand": lambda gen: chainrule.rand(3, 2, generator=gen),
    "randn": lambda gen: chainrule.randn(5, generator=gen),
    "randint": lambda gen: chainrule.randint(0, 100, (6,), generator=gen),
    "normal": lambda gen: chainrule.normal(1.0, 2.0, (4,), generator=gen),
    "randperm": lambda gen: chainrule.randperm(8, generator=gen),
}


@pytest.mark.parametrize("name", DRAWS)
def test_manual_seed_reproduces_the_default_stream(name: str) -> None:
    draw = DRAWS[name]
    chainrule.manual_seed(1234)
    first = draw(None).tolist()
    chainrule.manual_seed(1234)
    second = draw(None).tolist()
    chainrule.manual_seed(4321)
    other = draw(None).tolist()
    assert first == second
    assert first != other


@pytest.mark.parametrize("name", DRAWS)
def test_generators_are_independent_of_the_global_seed(name: str) -> None:
    draw = DRAWS[name]
    gen = chainrule.Generator().manual_seed(7)
    chainrule.manual_seed(0)
    first = draw(gen).tolist()
    gen.manual_seed(7)
    chainrule.manual_seed(99)
    chainrule.rand(10)  # advancing the default stream does not touch ``gen``
    assert draw(gen).tolist() == first


def test_generator_api_matches_torch() -> None:
    assert_same(lambda lib: lib.Generator().initial_seed())
    assert_same(lambda lib: lib.Generator().manual_seed(3).initial_seed())
    assert_same(lambda lib: type(lib.manual_seed(3)) is type(lib.default_generator))
    assert_same(lambda lib: lib.manual_seed(3) is lib.default_generator)
    assert_same(lambda lib: lib.initial_seed() == 3 if lib.manual_seed(3) else None)
    assert_same(lambda lib: lib.Generator())


def test_rng_state_round_trip() -> None:
    chainrule.manual_seed(5)
    state = chainrule.get_rng_state()
    first = chainrule.randn(4).tolist()
    chainrule.randn(4)
    chainrule.set_rng_state(state)
    assert chainrule.randn(4).tolist() == first


def test_random_values_lie_in_their_ranges() -> None:
    chainrule.manual_seed(0)
    uniform = chainrule.rand(10_000).numpy()
    assert uniform.min() >= 0.0 and uniform.max() < 1.0
    assert abs(uniform.mean() - 0.5) < 0.02
    ints = chainrule.randint(-3, 4, (10_000,)).numpy()
    assert set(ints.tolist()) == set(range(-3, 4))
    normal = chainrule.normal(2.0, 3.0, (20_000,)).numpy()
    assert abs(normal.mean() - 2.0) < 0.1 and abs(normal.std() - 3.0) < 0.1
    constant = chainrule.normal(chainrule.tensor([1.0, -2.0]), 0.0)
    assert constant.tolist() == [1.0, -2.0]
    assert sorted(chainrule.randperm(50).tolist()) == list(range(50))


_REQUIRES_GRAD_CALLS = {
    "tensor": lambda lib, rg: lib.tensor([1.5], requires_grad=rg),
    "tensor nested": lambda lib, rg: lib.tensor([[1.5]], requires_grad=rg),
    "zeros": lambda lib, rg: lib.zeros(2, requires_grad=rg),
    "ones": lambda lib, rg: lib.ones(2, requires_grad=rg),
    "full": lambda lib, rg: lib.full((2,), 1.0, requires_grad=rg),
    "empty": lambda lib, rg: lib.empty(2, requires_grad=rg).fill_(0.0),
    "zeros_like": lambda lib, rg: lib.zeros_like(lib.ones(2), requires_grad=rg),
    "ones_like": lambda lib, rg: lib.ones_like(lib.ones(2), requires_grad=rg),
    "empty_like": lambda lib, rg: lib.empty_like(lib.ones(2), requires_grad=rg).fill_(0.0),
    "full_like": lambda lib, rg: lib.full_like(lib.ones(2), 2.0, requires_grad=rg),
}


@pytest.mark.parametrize("value", [1, 0, None, np.bool_(True), "yes"], ids=repr)
@pytest.mark.parametrize("call", _REQUIRES_GRAD_CALLS)
def test_requires_grad_must_be_a_bool_like_torch(call: str, value: object) -> None:
    """A non-bool ``requires_grad`` is PyTorch's TypeError (the factories take None)."""
    make = _REQUIRES_GRAD_CALLS[call]
    assert_same(lambda lib: (lambda t: (t.tolist(), t.requires_grad))(make(lib, value)))


# The random factories' overloads, with keyword sizes, generators and dtypes, parsed as PyTorch
# parses them (each case: shape, dtype and requires_grad of the result, or the error).
_RANDOM_FORMS = {
    "randint(5, (2,))": lambda lib, g: lib.randint(5, (2,)),
    "randint(5, size=(2,))": lambda lib, g: lib.randint(5, size=(2,)),
    "randint(high=5, size=(2,))": lambda lib, g: lib.randint(high=5, size=(2,)),
    "randint(0, 5, size=(2,))": lambda lib, g: lib.randint(0, 5, size=(2,)),
    "randint(0, high=5, size=(2,))": lambda lib, g: lib.randint(0, high=5, size=(2,)),
    "randint(low=0, high=5, size=[2, 3])": lambda lib, g: lib.randint(low=0, high=5,
                                                                     size=[2, 3]),
    "randint(size=(2,), high=5, low=1)": lambda lib, g: lib.randint(size=(2,), high=5, low=1),
    "randint(0, 5, size=(2,), generator=g)": lambda lib, g: lib.randint(0, 5, size=(2,),
                                                                        generator=g),
    "randint(0, 5, size=(2,), dtype, requires_grad)": lambda lib, g: lib.randint(
        0, 5, size=(2,), dtype=lib.float32, requires_grad=True),
    "randint(5, size=Size([2]))": lambda lib, g: lib.randint(5, size=lib.Size([2])),
    "randint(0, 5)": lambda lib, g: lib.randint(0, 5),
    "randint(0, 5, 3)": lambda lib, g: lib.randint(0, 5, 3),
    "randint()": lambda lib, g: lib.randint(),
    "randint(low=0, size=(2,))": lambda lib, g: lib.randint(low=0, size=(2,)),
    "randint(0, 5, size=3)": lambda lib, g: lib.randint(0, 5, size=3),
    "randint(5, size=3)": lambda lib, g: lib.randint(5, size=3),
    "randint(0, 5.5, (2,))": lambda lib, g: lib.randint(0, 5.5, (2,)),
    "randint(0, 5, (2,), size=(3,))": lambda lib, g: lib.randint(0, 5, (2,), size=(3,)),
    "randint(5, (2,), high=3)": lambda lib, g: lib.randint(5, (2,), high=3),
    "randint(size=(2,))": lambda lib, g: lib.randint(size=(2,)),
    "randint(0, 5, (2,), foo=1)": lambda lib, g: lib.randint(0, 5, (2,), foo=1),
    "randint(0, 5, (2.0,))": lambda lib, g: lib.randint(0, 5, (2.0,)),
    "randint(5, [2, 'a'])": lambda lib, g: lib.randint(5, [2, "a"]),
    "randint(5, (2,), generator=5)": lambda lib, g: lib.randint(5, (2,), generator=5),
    "randint(0, 5, (2,), 7)": lambda lib, g: lib.randint(0, 5, (2,), 7),
    "randint uint8 past 255": lambda lib, g: lib.randint(0, 300, (3,), dtype=lib.uint8),
    "randint uint8 below 0": lambda lib, g: lib.randint(-1, 3, (3,), dtype=lib.uint8),
    "randint bool past 1": lambda lib, g: lib.randint(0, 3, (3,), dtype=lib.bool),
    "randint bool": lambda lib, g: lib.randint(0, 2, (3,), dtype=lib.bool),
    "randint float16 past 65504": lambda lib, g: lib.randint(0, 70000, (3,), dtype=lib.float16),
    "randint int16 past 32767": lambda lib, g: lib.randint(0, 70000, (3,), dtype=lib.int16),
    "randint float32 past 2**24": lambda lib, g: lib.randint(0, 2**25, (3,), dtype=lib.float32),
    "rand(size=(2, 3), generator=g)": lambda lib, g: lib.rand(size=(2, 3), generator=g),
    "rand(2, 3, generator=g)": lambda lib, g: lib.rand(2, 3, generator=g),
    "rand()": lambda lib, g: lib.rand(),
    "rand(size=2)": lambda lib, g: lib.rand(size=2),
    "rand(2, size=(3,))": lambda lib, g: lib.rand(2, size=(3,)),
    "rand((2, 3), 4)": lambda lib, g: lib.rand((2, 3), 4),
    "randn(size=(2, 3), generator=g)": lambda lib, g: lib.randn(size=(2, 3), generator=g),
    "randn()": lambda lib, g: lib.randn(),
    "randn(size=2)": lambda lib, g: lib.randn(size=2),
    "randint_like(x, high=5)": lambda lib, g: lib.randint_like(lib.ones(2), high=5),
    "randint_like(x, low=1, high=5)": lambda lib, g: lib.randint_like(lib.ones(2), low=1,
                                                                       high=5),
    "randint_like(x, 5, generator=g)": lambda lib, g: lib.randint_like(lib.ones(2), 5,
                                                                        generator=g),
    "randint_like(x, tensor(5))": lambda lib, g: lib.randint_like(lib.ones(2), lib.tensor(5)),
    "randint_like(x)": lambda lib, g: lib.randint_like(lib.ones(2)),
    "randint_like(x, low=1)": lambda lib, g: lib.randint_like(lib.ones(2), low=1),
}


def _random_form(lib, name):
    generator = lib.Generator().manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t = _RANDOM_FORMS[name](lib, generator)
            result = (tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad)
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            result = (type(e).__name__, str(e).replace("torch.", "chainrule."))
    return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]


@pytest.mark.parametrize("name", sorted(_RANDOM_FORMS))
def test_random_factory_overloads_like_torch(name: str) -> None:
    assert _random_form(chainrule, name) == _random_form(torch, name)


def test_keyword_size_draws_the_same_numbers() -> None:
    a = chainrule.randint(0, 10, (6,), generator=chainrule.Generator().manual_seed(3))
    b = chainrule.randint(low=0, high=10, size=(6,),
                          generator=chainrule.Generator().manual_seed(3))
    assert a.tolist() == b.tolist()
