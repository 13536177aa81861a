"""linspace, logspace, arange and range against PyTorch where a random-argument probe found
them apart: complex linspace truncated its values to integers (``linspace(0, 1, 10,
dtype=complex64)`` was all 0 but the last), complex ends were refused, the deprecated
``range`` took integer dtypes' numbers as floats and never checked its bounds, complex dtypes
had an arange, bool linspace/logspace of one step were refused, and a range's bounds are
checked on the numbers as given (doubles), not as the dtype reads them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule


def _outcome(lib, name, args, kwargs):
    kwargs = dict(kwargs)
    if "dtype" in kwargs:
        kwargs["dtype"] = getattr(lib, kwargs["dtype"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = getattr(lib, name)(*args, **kwargs)
        except (RuntimeError, TypeError, NotImplementedError) as error:
            return type(error).__name__, str(error).splitlines()[0]
    values = (out.float() if out.dtype == lib.bfloat16 else out).numpy().copy()
    return str(out.dtype).split(".")[-1], tuple(out.shape), values


def _same(name, args, kwargs):
    theirs = _outcome(torch, name, args, kwargs)
    ours = _outcome(chainrule, name, args, kwargs)
    assert ours[:2] == theirs[:2]
    if len(theirs) == 3:
        assert ours[2].dtype == theirs[2].dtype
        assert np.array_equal(ours[2], theirs[2], equal_nan=True), (ours[2], theirs[2])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("steps", [1, 2, 3, 5, 8, 10, 15, 16, 17, 33, 100])
@pytest.mark.parametrize("ends", [(0, 1), (2, 100), (1, 0), (-3.7, 2.2), (0.05, 0.05)])
def test_complex_linspace_of_real_ends(ends, steps, dtype):
    _same("linspace", (*ends, steps), {"dtype": dtype})


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((1 + 2j, 3, 4), {}),
        ((1 + 2j, 3j, 3), {"dtype": "complex128"}),
        ((-1j, 2 - 1j, 9), {"dtype": "complex64"}),
        ((1 + 2j, 3, 4), {"dtype": "int64"}),
        ((1 + 2j, 3, 1), {"dtype": "float64"}),
        ((1 + 2j, 3, 0), {"dtype": "float32"}),
    ],
)
def test_linspace_of_complex_ends(args, kwargs):
    _same("linspace", args, kwargs)


def test_logspace_of_complex_ends():
    theirs = torch.logspace(1j, 3, 4, dtype=torch.complex128)
    ours = chainrule.logspace(1j, 3, 4, dtype=chainrule.complex128)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    _same("logspace", (1 + 2j, 3, 4), {"dtype": "float32"})


@pytest.mark.parametrize("name", ["linspace", "logspace"])
@pytest.mark.parametrize("args", [(True, 255, 1), (0, 256, 1), (2, -3, 1), (0, 3, 0), (0, 3, 4)])
def test_bool_spaced_values(name, args):
    _same(name, args, {"dtype": "bool"})


RANGES = [
    ((-0.7, 7, 2), "int64"),
    ((0.05, 10, 2), "int8"),
    ((0.3333, 10, 1), "int8"),
    ((2.5, 3, 1), "int64"),
    ((1.5, 4, -1), "int64"),
    ((0.05, 0.001, 2), "int16"),
    ((0.3, -0.7, 2), "int32"),
    ((0.3333, 100, -0.5), None),
    ((0.001, -0.7, 1), None),
    ((0, 1, 0.1), None),
    ((0, 1, 0.1), "float64"),
    ((0, 1, 0.3), "float32"),
    ((-5, 0.3, 0.1), "float16"),
    ((-5, 0.3, 0.1), "bfloat16"),
    ((3, 1.5, -0.5), "float32"),
    ((1, 4, 0), None),
    ((1, 4, 0.0), "int64"),
    ((0, float("inf"), 1), None),
    ((float("nan"), 4, 1), None),
    ((1, 4, 1), "complex64"),
    ((1, 2, 1), "bool"),
    ((1, 1, -1), None),
]


@pytest.mark.parametrize(("args", "dtype"), RANGES)
def test_deprecated_range(args, dtype):
    _same("range", args, {} if dtype is None else {"dtype": dtype})


def test_range_needs_an_end():
    _same("range", (5,), {})


@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ((7,), "complex128"),
        ((3, 1, 0), "complex64"),
        ((0.1, -5, -0.1), "complex128"),
        ((-0.7,), "int64"),
        ((-0.7,), "int32"),
        ((0.5, 0.2), "int64"),
        ((3, 10, 2), "int64"),
    ],
)
def test_arange_dtypes_and_bounds(args, dtype):
    _same("arange", args, {"dtype": dtype})
