"""Tensor reprs are PyTorch's, character for character (with ``torch.`` read as ``chainrule.``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule
from chainrule._printing import format_tensor

from .conftest import torch

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def _theirs(array: np.ndarray) -> str:
    return repr(torch.from_numpy(array.copy())).replace("torch.", "chainrule.")


def _ours(array: np.ndarray) -> str:
    return repr(chainrule.from_numpy(array.copy()))


@pytest.fixture
def restore_print_options():
    yield
    chainrule.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


CASES = [
    np.array([5.0], np.float32),
    np.array(3.5, np.float32),
    np.array(-0.0),
    np.zeros((0, 3), np.float32),
    np.zeros(0, np.int64),
    np.zeros((2, 0, 3)),
    np.array([True, False]),
    np.array([1e-8, 1.0], np.float32),
    np.array([1e10, 1.0]),
    np.array([np.inf, -np.inf, np.nan, 0.0], np.float32),
    np.array([0.0, 0.0], np.float32),
    np.array([1.5, np.nan]),
    np.array([123456789.0, 1.0]),
    np.array([0.0001, 1.0]),
    np.array([0.00009, 1.0]),
    np.array([1, -200, 3]),
    np.arange(2000, dtype=np.float32).reshape(20, 100),
    np.arange(1500).reshape(3, 500),
    np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4),
    np.array([1 + 2j, -3 - 0j]),
    np.array([[0.1, 22.5], [333.25, -4.0]], np.float16),
]


@pytest.mark.parametrize("array", CASES, ids=[str(i) for i in range(len(CASES))])
def test_repr_matches_pytorch(array: np.ndarray) -> None:
    assert _ours(array) == _theirs(array)


def test_str_equals_repr() -> None:
    t = chainrule.tensor([[1.0, 2.5], [3.0, 4.0]])
    assert str(t) == repr(t)


def test_autograd_suffixes() -> None:
    for lib in (chainrule, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        d = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        texts = [repr(w), repr(w * 3), repr(d), repr(d.exp()), repr(lib.nn.Parameter(lib.zeros(2)))]
        if lib is torch:
            expected = [t.replace("torch.", "chainrule.") for t in texts]
        else:
            ours = texts
    assert ours == expected


def test_long_rows_wrap_with_suffix_on_a_new_line() -> None:
    array = np.linspace(-1, 1, 17)
    for lib in (chainrule, torch):
        t = lib.from_numpy(array.copy()).requires_grad_() * 2
        text = repr(t).replace("torch.", "chainrule.")
        if lib is torch:
            assert repr(chainrule.from_numpy(array.copy()).requires_grad_() * 2) == text


OPTION_SETS = [
    {"precision": 2},
    {"sci_mode": True},
    {"sci_mode": False},
    {"linewidth": 40},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"profile": "short"},
    {"profile": "full"},
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=[str(o) for o in OPTION_SETS])
def test_print_options(options: dict, restore_print_options) -> None:
    chainrule.set_printoptions(**options)
    torch.set_printoptions(**options)
    rng = np.random.default_rng(3)
    for array in (rng.standard_normal((3, 7)).astype(np.float32) * 1000,
                  np.arange(40).reshape(5, 8), rng.standard_normal(30) * 1e-6):
        assert _ours(array) == _theirs(array)
    assert chainrule.get_printoptions() == {k: v for k, v in torch._tensor_str.get_printoptions().items()
                                             if k in chainrule.get_printoptions()}


def test_default_dtype_float64(restore_print_options) -> None:
    chainrule.set_default_dtype(chainrule.float64)
    torch.set_default_dtype(torch.float64)
    for array in (np.array([1.0, 2.0]), np.array([1.0, 2.0], np.float32), np.array([1j]),
                  np.zeros(0)):
        assert _ours(array) == _theirs(array)


@st.composite
def arrays(draw) -> np.ndarray:
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from(DTYPES))
    scale = 10.0 ** draw(st.integers(-9, 10))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(shape) * scale
    if draw(st.booleans()):
        base = np.round(base)
    if base.size and draw(st.integers(0, 9)) == 0:
        base.reshape(-1)[0] = np.inf
    if base.size and draw(st.integers(0, 9)) == 0:
        base.reshape(-1)[-1] = np.nan
    if dtype == "bool":
        return np.asarray(base > 0)
    if dtype.startswith("complex"):
        return np.asarray(base + 1j * rng.standard_normal(shape) * scale).astype(dtype)
    if dtype[0] in "iu":
        info = np.iinfo(dtype)
        return np.asarray(np.clip(np.nan_to_num(base), info.min, info.max)).astype(dtype)
    with np.errstate(over="ignore"):
        return np.asarray(base).astype(dtype)


@settings(max_examples=300, deadline=None)
@given(arrays())
def test_random_tensors_print_like_pytorch(array: np.ndarray) -> None:
    assert _ours(array) == _theirs(array)


def test_format_tensor_directly() -> None:
    assert format_tensor(np.array([6.0], np.float32), dtype_name="float32",
                         suffixes=["grad_fn=<MulBackward0>"]) == "tensor([6.], grad_fn=<MulBackward0>)"
