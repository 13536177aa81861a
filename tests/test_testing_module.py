"""``torch.testing`` (issue 16): assert_close's verdicts and messages, assert_allclose's
deprecation and tolerances, make_tensor's ranges, options and errors, against PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

nan, inf = float("nan"), float("inf")


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        text = str(error).replace("torch.", "chainrule.").replace("chainrule._tensor.", "")
        return type(error).__name__, text.replace("<class 'chainrule.Tensor'>",
                                                  "<class 'Tensor'>")
    return "passed"


CASES: dict[str, Callable[[ModuleType], Any]] = {
    "equal": lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0])),
    "within float32": lambda lib: (lib.tensor([1.0, 2.0, 3.0]),
                                   lib.tensor([1.0, 2.0, 3.0000001])),
    "one off": lambda lib: (lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 2.5, 3.0])),
    "2-d": lambda lib: (lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[1.0, 2.1], [3.0, 4.5]])),
    "dtype": lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0], dtype=lib.float64)),
    "shape": lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0])),
    "integers": lambda lib: (lib.tensor([1, 2]), lib.tensor([1, 3])),
    "booleans": lambda lib: (lib.tensor([True, False]), lib.tensor([True, True])),
    "nan": lambda lib: (lib.tensor([nan]), lib.tensor([nan])),
    "nan among": lambda lib: (lib.tensor([1.0, nan, 5.0]), lib.tensor([2.0, 1.0, 5.0])),
    "inf": lambda lib: (lib.tensor([1.0, inf]), lib.tensor([1.0, inf])),
    "zero expected": lambda lib: (lib.tensor([0.0, 0.0]), lib.tensor([0.0, 1e-3])),
    "float16": lambda lib: (lib.tensor([1.0, 2.0], dtype=lib.float16),
                            lib.tensor([1.0, 2.002], dtype=lib.float16)),
    "float16 off": lambda lib: (lib.tensor([1.0, 2.0], dtype=lib.float16),
                                lib.tensor([1.0, 2.01], dtype=lib.float16)),
    "float64": lambda lib: (lib.tensor([1.0], dtype=lib.float64),
                            lib.tensor([1.0 + 1e-6], dtype=lib.float64)),
    "complex": lambda lib: (lib.tensor([1 + 1j]), lib.tensor([1 + 2j])),
    "numpy": lambda lib: (np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    "tensor and float": lambda lib: (lib.tensor(1.0), 1.0),
    "tensor and list": lambda lib: (lib.tensor([1.0, 2.0]), [1.0, 2.0]),
    "ints": lambda lib: (1, 2),
    "floats close": lambda lib: (1.0, 1.0 + 1e-9),
    "floats": lambda lib: (1.0, 1.1),
    "bools": lambda lib: (True, False),
    "complex numbers": lambda lib: (1 + 1j, 1 + 2j),
    "list": lambda lib: ([lib.tensor(1.0), lib.tensor(2.0)], [lib.tensor(1.0), lib.tensor(3.0)]),
    "dict": lambda lib: ({"a": lib.tensor(1.0)}, {"a": lib.tensor(2.0)}),
    "nested": lambda lib: ([lib.tensor([1.0]), {"a": [lib.tensor(1.0), lib.tensor(2.0)]}],
                           [lib.tensor([1.0]), {"a": [lib.tensor(1.0), lib.tensor(3.0)]}]),
    "lengths": lambda lib: ([1, 2], [1, 2, 3]),
    "keys": lambda lib: ({"a": 1}, {"b": 1}),
    "requires grad": lambda lib: (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0]).requires_grad_()),
}
OPTIONS: dict[str, dict[str, Any]] = {
    "defaults": {}, "equal_nan": {"equal_nan": True}, "no dtype check": {"check_dtype": False},
    "rtol and atol": {"rtol": 0.5, "atol": 0.0}, "rtol alone": {"rtol": 0.1},
    "atol alone": {"atol": 0.1}, "message": {"msg": "custom"},
    "message function": {"msg": lambda m: m + "!!"},
}


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("case", list(CASES))
def test_assert_close(case: str, options: str) -> None:
    def run(lib: ModuleType) -> Callable[[], Any]:
        actual, expected = CASES[case](lib)
        return lambda: lib.testing.assert_close(actual, expected, **OPTIONS[options])

    assert _outcome(run(chainrule)) == _outcome(run(torch))


@pytest.mark.parametrize("case", ["one off", "equal", "integers", "nan", "float64"])
def test_assert_allclose(case: str) -> None:
    for lib in (chainrule, torch):
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
            try:
                lib.testing.assert_allclose(*CASES[case](lib))
            except AssertionError:
                pass

    def run(lib: ModuleType) -> Callable[[], Any]:
        return lambda: lib.testing.assert_allclose(*CASES[case](lib))

    assert _outcome(run(chainrule)) == _outcome(run(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8",
                                   "bool", "complex64"])
@pytest.mark.parametrize("bounds", [(None, None), (0, 2), (-5, None), (2.5, 3.5)])
def test_make_tensor_values(dtype: str, bounds: tuple[Any, Any]) -> None:
    """Shape, dtype and range as PyTorch's (values are random: their bounds are compared)."""
    low, high = bounds

    def make(lib: ModuleType) -> Any:
        t = lib.testing.make_tensor(4, 50, dtype=getattr(lib, dtype), device="cpu", low=low,
                                    high=high)
        values = t.numpy().astype(np.complex128).real if dtype != "bool" else t.numpy()
        return t.shape, str(t.dtype).split(".")[-1], values

    ours, theirs = _outcome_value(lambda: make(chainrule)), _outcome_value(lambda: make(torch))
    if isinstance(theirs, tuple) and theirs[0] == "error":
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2]
    if dtype == "bool":
        assert set(ours[2].ravel().tolist()) <= {True, False}
        return
    lo = min(theirs[2].min(), ours[2].min())
    assert ours[2].min() >= _expected_low(dtype, low) and ours[2].max() <= _expected_high(
        dtype, high)
    assert lo >= _expected_low(dtype, low)


def _expected_low(dtype: str, low: Any) -> float:
    floor = 0 if dtype == "uint8" else -9
    return floor if low is None else max(low, 0) if dtype == "uint8" else low


def _expected_high(dtype: str, high: Any) -> float:
    return (9 if high is None else high) if dtype not in ("int64", "int32", "uint8") else (
        9 if high is None else high)


def _outcome_value(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as error:  # noqa: BLE001
        return "error", type(error).__name__, str(error).replace("torch.", "chainrule.")


@pytest.mark.parametrize("call", [
    "low >= high", "nan low", "int requires grad", "no device", "noncontiguous",
    "exclude zero", "requires grad", "tuple shape", "0-d",
])
def test_make_tensor_options_and_errors(call: str) -> None:
    def run(lib: ModuleType) -> Any:
        make = lib.testing.make_tensor
        if call == "low >= high":
            return make(2, dtype=lib.float32, device="cpu", low=5, high=1)
        if call == "nan low":
            return make(2, dtype=lib.float32, device="cpu", low=nan)
        if call == "int requires grad":
            return make(2, dtype=lib.int32, device="cpu", requires_grad=True)
        if call == "no device":
            return make(2, dtype=lib.float32)
        if call == "noncontiguous":
            t = make(3, 4, dtype=lib.float32, device="cpu", noncontiguous=True)
            return t.shape, t.is_contiguous()
        if call == "exclude zero":
            t = make(200, dtype=lib.int64, device="cpu", low=-1, high=2, exclude_zero=True)
            return bool((t != 0).all())
        if call == "requires grad":
            t = make(2, dtype=lib.float64, device="cpu", requires_grad=True)
            return t.requires_grad, t.is_leaf
        if call == "tuple shape":
            return make((2, 3), dtype=lib.float32, device="cpu").shape
        return make((), dtype=lib.float32, device="cpu").shape

    ours, theirs = _outcome_value(lambda: run(chainrule)), _outcome_value(lambda: run(torch))
    if call == "no device":  # (the TypeError's text names each library's function)
        assert ours[:2] == theirs[:2] == ("error", "TypeError")
        return
    assert str(ours) == str(theirs).replace("torch.Size", "chainrule.Size")
