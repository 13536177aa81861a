"""Tensor reprs are PyTorch's, character for character (with ``torch.`` read as ``chainrule.``).

Every case builds a NumPy array, prints it with :func:`format_tensor` and compares with
``repr`` of the PyTorch tensor holding the same values, under the same print options.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule
from chainrule._printing import format_tensor, get_printoptions, printoptions, set_printoptions

from .conftest import torch

DTYPES = [
    "float32", "float64", "float16", "complex64", "complex128",
    "int64", "int32", "int16", "int8", "uint8", "bool",
]  # fmt: skip

INF = np.inf
NAN = np.nan


@pytest.fixture(autouse=True)
def _restore_print_state() -> Iterator[None]:
    """Both libraries start and end every test with default print options and dtype."""
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def _set_both(**options: Any) -> None:
    set_printoptions(**options)
    torch.set_printoptions(**options)


def _theirs(tensor: torch.Tensor) -> str:
    return repr(tensor).replace("torch.", "chainrule.")


def _ours(array: np.ndarray, suffixes: tuple[str, ...] = (), **kwargs: Any) -> str:
    return format_tensor(array, dtype_name=str(array.dtype), suffixes=suffixes, **kwargs)


def _check(array: np.ndarray) -> None:
    """Our print of ``array`` is PyTorch's, in both repr and str."""
    array = np.asarray(array)
    tensor = torch.from_numpy(array.copy())
    assert str(tensor) == repr(tensor)
    assert _ours(array) == _theirs(tensor)


def _f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


# ----------------------------------------------------------------------------------------------
# Explicit cases, one behaviour each

CASES: dict[str, np.ndarray] = {
    # precision and integer-valued floats
    "precision 4": _f32(1.123456, 2.5),
    "integer-valued floats": _f32(5.0, -3.0, 12.0),
    "integer-valued float64": np.array([5.0, 6.0]),
    "rounding widens": _f32(9.99995, 1.0),
    # scientific notation: ratio > 1000, max > 1e8, min < 1e-4
    "ratio just under 1000": _f32(1.5, 1499.0),
    "ratio over 1000": _f32(1.5, 1501.0),
    "integers ratio over 1000": _f32(1.0, 1001.0),
    "max 1e8 is not sci": np.array([1.0e8, 5.0e7]),
    "max over 1e8": np.array([1.5e8, 1.0e8]),
    "integers max over 1e8": np.array([200000000.0, 300000000.0]),
    "min 1e-4 is not sci": np.array([0.0001, 0.0002]),
    "min under 1e-4": np.array([0.00009, 0.0001]),
    "tiny and one": _f32(1e-8, 1.0),
    "huge and one": np.array([1e10, 1.0]),
    "three-digit exponents": np.array([1e300, -1e-300]),
    "sci with zeros and inf": _f32(0.0, 1e-6, INF, -1.0),
    # non-finite values, zeros, negative zero
    "inf -inf nan with zero": _f32(INF, -INF, NAN, 0.0),
    "only nan": _f32(NAN, NAN),
    "nan with fractions": np.array([1.5, NAN]),
    "inf with integers": _f32(1.0, -INF, 3.0),
    "inf with fractions": _f32(1.25, -INF, 3.0),
    "all zeros": np.zeros((2, 3), np.float32),
    "negative zero": _f32(-0.0, 0.0),
    "negative zero with fractions": _f32(-0.0, 1.5),
    "negative zero scalar": np.array(-0.0, np.float32),
    # alignment and wrapping
    "column alignment": _f32(-1.0, 10.5, 100.25, 3.0),
    "wrap at 80 columns": np.linspace(-1, 1, 25, dtype=np.float32),
    "wrap 2-d rows": np.arange(60, dtype=np.float32).reshape(2, 30) / 7,
    "wrap int row": np.arange(100, 140),
    # nesting: blank lines between slices of 3-d and 4-d tensors
    "2-d": np.arange(6, dtype=np.float32).reshape(2, 3),
    "3-d": np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4),
    "4-d": np.arange(24).reshape(2, 2, 3, 2),
    "size-1 dimensions": np.ones((1, 1, 2), np.float32),
    # summarisation over 1000 elements, width from the shown elements only
    "exactly 1000 elements": np.arange(1000),
    "1001 elements": np.arange(1001, dtype=np.float32),
    "summarised 2-d": np.arange(2000, dtype=np.float32).reshape(20, 100),
    "summarised 2-d short dim": np.arange(1500).reshape(3, 500),
    "summarised 3-d": np.arange(3000, dtype=np.float32).reshape(10, 15, 20) / 3,
    "summarised width ignores the middle": np.r_[_f32(1, 2, 3), np.full(2000, 1e9), _f32(4, 5, 6)],
    "summarised sci only from edges": np.r_[_f32(1.5, 2.5), np.full(1000, 1e-9), _f32(3.5)],
    # 0-d
    "0-d float": np.array(3.5, np.float32),
    "0-d integer-valued": np.array(3.0, np.float32),
    "0-d sci": np.array(1e-5),
    "0-d nan": np.array(NAN, np.float32),
    "0-d int": np.array(7),
    "0-d int8": np.array(7, np.int8),
    "0-d bool": np.array(True),
    "0-d complex": np.array(1 - 2j, np.complex64),
    # empty tensors
    "empty float": np.zeros(0, np.float32),
    "empty float64": np.zeros(0),
    "empty 2-d": np.zeros((0, 3), np.float32),
    "empty 3-d": np.zeros((2, 0, 3), np.float32),
    "empty int64": np.zeros(0, np.int64),
    "empty int32 2-d": np.zeros((3, 0), np.int32),
    "empty bool": np.zeros(0, bool),
    "empty complex64": np.zeros(0, np.complex64),
    # bool and integer dtypes
    "bool": np.array([True, False]),
    "all true": np.array([[True, True], [True, True]]),
    "int64": np.array([1, -200, 3]),
    "int32": np.array([1, 2], np.int32),
    "int16": np.array([-32768, 32767], np.int16),
    "int8": np.array([[-128, 0], [5, 127]], np.int8),
    "uint8": np.array([0, 7, 255], np.uint8),
    "int64 extremes": np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max]),
    # float16 and float64
    "float16": np.array([[0.1, 22.5], [333.25, -4.0]], np.float16),
    "float16 extremes": np.array([65504.0, 6e-8, -1.0], np.float16),
    "float16 integers": np.array([1.0, 2048.0], np.float16),
    "float64 precision 4": np.array([1 / 3, 2 / 3]),
    # complex: real and imaginary parts formatted separately
    "complex": np.array([1 + 2j, -3 - 0.5j], np.complex64),
    "complex integer-valued": np.array([1 + 2j, 3 + 4j], np.complex64),
    "complex128": np.array([1.5 + 2j, -3 - 0j]),
    "complex mixed styles": np.array([1e-6 + 1j, 2 + 3j], np.complex64),
    "complex negative zero": np.array([complex(0.0, -0.0), complex(-0.0, 0.0)], np.complex64),
    "complex non-finite": np.array([complex(NAN, 1.0), complex(INF, -INF), 1.5 - 2.25j]),
    "complex 2-d wrap": (np.arange(40) + 40j - 1j * np.arange(40)).reshape(2, 20),
    "complex summarised": (np.arange(1200) / 7 + 1j).astype(np.complex64),
}  # fmt: skip


@pytest.mark.parametrize("array", CASES.values(), ids=CASES.keys())
def test_matches_pytorch(array: np.ndarray) -> None:
    _check(array)


def test_examples_from_the_spec() -> None:
    assert format_tensor(np.array(3.5, np.float32), dtype_name="float32") == "tensor(3.5000)"
    assert format_tensor(np.array([True, False]), dtype_name="bool") == "tensor([ True, False])"
    assert format_tensor(np.zeros(0, np.float32), dtype_name="float32") == "tensor([])"
    assert (
        format_tensor(np.zeros((0, 3), np.float32), dtype_name="float32")
        == "tensor([], size=(0, 3))"
    )
    assert (
        format_tensor(np.array([1, 2], np.int32), dtype_name="int32")
        == "tensor([1, 2], dtype=chainrule.int32)"
    )
    assert (
        format_tensor(np.array([6.0], np.float32), dtype_name="float32",
                      suffixes=["grad_fn=<MulBackward0>"])
        == "tensor([6.], grad_fn=<MulBackward0>)"
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Suffixes: size=, dtype=, then the caller's, wrapping onto new lines past the line width

SUFFIX_ARRAYS = {
    "short float32": _f32(1.0, 2.0),
    "short float64": np.array([1.5, 2.0]),
    "complex128": np.array([1 + 1j]),
    "0-d float64": np.array(2.0),
    "empty float64": np.zeros((0, 2)),
    **{f"float32 x{n}": np.linspace(-1, 1, n, dtype=np.float32) for n in range(5, 14)},
    **{f"float64 x{n}": np.linspace(-1, 1, n) for n in range(5, 14)},
    "2-d float64": np.linspace(-1, 1, 24).reshape(3, 8),
}


@pytest.mark.parametrize("array", SUFFIX_ARRAYS.values(), ids=SUFFIX_ARRAYS.keys())
def test_autograd_suffixes(array: np.ndarray) -> None:
    leaf = torch.from_numpy(array.copy()).requires_grad_()
    assert _ours(array, ("requires_grad=True",)) == _theirs(leaf)
    product = leaf * 2
    assert _ours(product.detach().numpy(), ("grad_fn=<MulBackward0>",)) == _theirs(product)
    total = leaf.sum()
    assert _ours(total.detach().numpy(), ("grad_fn=<SumBackward0>",)) == _theirs(total)


def test_suffixes_with_edgeitems_zero() -> None:
    _set_both(edgeitems=0, threshold=3)
    leaf = torch.arange(10, dtype=torch.float64).requires_grad_()
    assert _ours(np.arange(10.0), ("requires_grad=True",)) == _theirs(leaf)


def test_parameter_prefix_indents_like_tensor() -> None:
    values = np.linspace(-1, 1, 30)
    parameter = torch.nn.Parameter(torch.from_numpy(values.copy()))
    text = _ours(values, ("requires_grad=True",), prefix="Parameter containing:\ntensor(")
    assert text == _theirs(parameter)


def test_subclass_prefix_indents_by_its_length() -> None:
    class MyTensor(torch.Tensor):
        pass

    values = np.linspace(-1, 1, 90).reshape(3, 30).astype(np.float32)
    subclass = torch.from_numpy(values.copy()).as_subclass(MyTensor)
    assert _ours(values, prefix="MyTensor(") == _theirs(subclass)


# ----------------------------------------------------------------------------------------------
# The default dtype decides which dtypes go unnamed

DEFAULT_DTYPE_ARRAYS = {
    "float64": np.array([1.5, 2.0]),
    "float32": _f32(1.5, 2.0),
    "float16": np.array([1.5], np.float16),
    "complex128": np.array([1j]),
    "complex64": np.array([1j], np.complex64),
    "int64": np.array([1, 2]),
    "bool": np.array([True]),
    "empty float64": np.zeros(0),
    "empty float32": np.zeros(0, np.float32),
    "empty complex128": np.zeros((0, 2), np.complex128),
    "empty int64": np.zeros(0, np.int64),
}


@pytest.mark.parametrize("default", ["float32", "float64", "float16"])
@pytest.mark.parametrize("array", DEFAULT_DTYPE_ARRAYS.values(), ids=DEFAULT_DTYPE_ARRAYS.keys())
def test_default_dtype(array: np.ndarray, default: str) -> None:
    torch.set_default_dtype(getattr(torch, default))
    tensor = torch.from_numpy(array.copy())
    assert _ours(array, default_dtype_name=default) == _theirs(tensor)


# ----------------------------------------------------------------------------------------------
# Print options

OPTION_SETS: list[dict[str, Any]] = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 10},
    {"sci_mode": True},
    {"sci_mode": False},
    {"linewidth": 40},
    {"linewidth": 5},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 1},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6, "sci_mode": True},
]

OPTION_ARRAYS = {
    "fractions": np.random.default_rng(3).standard_normal((3, 7)).astype(np.float32) * 1000,
    "integers": np.arange(40).reshape(5, 8),
    "integer-valued": np.arange(12, dtype=np.float32) * 3,
    "tiny": np.random.default_rng(4).standard_normal(30) * 1e-6,
    "non-finite": _f32(1.5, INF, NAN, 0.0),
    "scalar": np.array(2.5),
    "long": np.arange(1200, dtype=np.float32).reshape(2, 3, 200) / 4,
    "complex": np.array([1.25 + 2j, -3 - 400j, 1e-5j]),
    "bool": np.arange(9).reshape(3, 3) % 2 == 0,
}


@pytest.mark.parametrize("options", OPTION_SETS, ids=[str(o) for o in OPTION_SETS])
def test_print_options(options: dict[str, Any]) -> None:
    _set_both(**options)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for array in OPTION_ARRAYS.values():
        _check(array)


def test_get_printoptions_defaults() -> None:
    assert get_printoptions() == {
        "precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None,
    }  # fmt: skip
    assert get_printoptions() == torch._tensor_str.get_printoptions()


def test_set_printoptions_semantics() -> None:
    # sci_mode is reset by any call that leaves it out; the other options persist.
    _set_both(precision=2, sci_mode=True)
    _set_both(linewidth=60)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    assert get_printoptions()["sci_mode"] is None
    assert get_printoptions()["precision"] == 2
    # A profile resets the four main options, then explicit ones win; unknown profiles do nothing.
    _set_both(profile="full", edgeitems=1)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    _set_both(profile="no such profile")
    assert get_printoptions() == torch._tensor_str.get_printoptions()


def test_printoptions_context_manager_restores() -> None:
    _set_both(precision=3, linewidth=50)
    before = get_printoptions()
    with (
        printoptions(precision=1, sci_mode=True),
        torch._tensor_str.printoptions(precision=1, sci_mode=True),
    ):
        assert get_printoptions() == torch._tensor_str.get_printoptions()
        assert get_printoptions()["precision"] == 1
        _check(_f32(1.25, 2.5))
    assert get_printoptions() == before
    with pytest.raises(ValueError), printoptions(precision=7):
        raise ValueError
    assert get_printoptions() == before


# ----------------------------------------------------------------------------------------------
# Random sweeps

LARGE_SHAPES = [(1001,), (40, 30), (3, 20, 20), (2, 3, 13, 13), (1, 1200), (1200, 1), (2, 501)]


@st.composite
def arrays(draw: st.DrawFn) -> np.ndarray:
    """Random shapes (0-4 dims, sizes 0-7, or a large one), magnitudes, dtypes and specials."""
    if draw(st.integers(0, 9)) == 0:
        shape = draw(st.sampled_from(LARGE_SHAPES))
    else:
        shape = tuple(draw(st.lists(st.integers(0, 7), min_size=0, max_size=4)))
    dtype = draw(st.sampled_from(DTYPES))
    low = draw(st.integers(-8, 10))
    high = draw(st.integers(low, 10))
    style = draw(st.sampled_from(["float", "rounded", "small ints", "cents", "sparse"]))
    specials = draw(st.lists(st.sampled_from([INF, -INF, NAN, -0.0]), max_size=3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    size = int(np.prod(shape))
    values = 10.0 ** rng.uniform(low, high, size) * rng.choice([-1.0, 1.0], size)
    if style == "rounded":
        values = np.round(values)
    elif style == "small ints":
        values = rng.integers(-5, 6, size).astype(np.float64)
    elif style == "cents":
        values = np.round(values * 100) / 100
    elif style == "sparse":
        values[rng.random(size) < 0.5] = 0.0
    if size:
        for special in specials:
            values[rng.integers(size)] = special
    values = values.reshape(shape)

    if dtype == "bool":
        return np.asarray(values > 0)
    if dtype.startswith("complex"):
        imag = rng.permutation(values.reshape(-1)).reshape(shape)
        return np.asarray(values + 1j * imag).astype(dtype)
    if dtype[0] in "iu":
        info = np.iinfo(dtype)
        finite = np.nan_to_num(values, nan=0.0, posinf=info.max, neginf=info.min)
        return np.asarray(np.clip(finite, info.min, info.max)).astype(dtype)
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(dtype)


print_options = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 8),
        "threshold": st.sampled_from([0, 5, 20, 100, 1000]),
        "edgeitems": st.integers(0, 4),
        "linewidth": st.sampled_from([10, 40, 80, 120]),
        "sci_mode": st.sampled_from([None, True, False]),
        "profile": st.sampled_from(["default", "short", "full"]),
    },
)


@settings(max_examples=400, deadline=None)
@given(arrays())
def test_random_tensors(array: np.ndarray) -> None:
    _check(array)


@settings(max_examples=250, deadline=None)
@given(arrays(), print_options, st.booleans())
def test_random_tensors_and_options(
    array: np.ndarray, options: dict[str, Any], requires_grad: bool
) -> None:
    _set_both(**options)
    try:
        tensor = torch.from_numpy(array.copy())
        suffixes: tuple[str, ...] = ()
        if requires_grad and array.dtype.kind in "fc":
            tensor.requires_grad_()
            suffixes = ("requires_grad=True",)
        assert _ours(array, suffixes) == _theirs(tensor)
    finally:
        _set_both(profile="default")


# ----------------------------------------------------------------------------------------------
# Through the Tensor class


def test_chainrule_tensor_str_equals_repr() -> None:
    tensor = chainrule.tensor([[1.0, 2.5], [3.0, 4.0]])
    assert str(tensor) == repr(tensor) == _theirs(torch.tensor([[1.0, 2.5], [3.0, 4.0]]))
    with chainrule.printoptions(precision=1):
        assert repr(tensor) == "tensor([[1.0, 2.5],\n        [3.0, 4.0]])"
