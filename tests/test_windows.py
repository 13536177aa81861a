"""The window functions against PyTorch: values (float16, bfloat16 and float64 to the bit;
float32 within cos's last-place rounding, which PyTorch takes from SLEEF), periodic and
symmetric forms, lengths 0 and 1, parameters, dtypes, requires_grad and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

NAMES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
LENGTHS = [0, 1, 2, 5, 16, 101]


def _values(lib: Any, name: str, n: int, periodic: bool, dtype: str, **kw: Any) -> np.ndarray:
    window = getattr(lib, name)(n, periodic=periodic, dtype=getattr(lib, dtype), **kw)
    assert str(window.dtype).split(".")[-1] == dtype
    return window.float().numpy().astype(np.float64)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("periodic", [True, False])
def test_values_match_torch(name: str, dtype: str, periodic: bool) -> None:
    for n in LENGTHS:
        ours = _values(chainrule, name, n, periodic, dtype)
        theirs = _values(torch, name, n, periodic, dtype)
        assert ours.shape == theirs.shape
        if dtype == "float32":
            np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(ours, theirs)


PARAMETERS = {
    "hamming": lambda L: L.hamming_window(7, False, 0.5, 0.3),
    "kaiser_beta": lambda L: L.kaiser_window(6, False, 5.0, dtype=L.float64),
    "default_dtype": lambda L: L.hann_window(3).dtype,
    "requires_grad": lambda L: L.hann_window(3, requires_grad=True),
    "negative": lambda L: L.hann_window(-1),
    "kaiser_negative": lambda L: L.kaiser_window(-2),
    "long": lambda L: L.hann_window(3, dtype=L.long),
    "int32_kaiser": lambda L: L.kaiser_window(3, dtype=L.int32),
    "complex": lambda L: L.hann_window(3, dtype=L.complex64),
    "float_length": lambda L: L.blackman_window(2.5),
    "bartlett_odd": lambda L: L.bartlett_window(7, dtype=L.float64),
    "bartlett_even_symmetric": lambda L: L.bartlett_window(6, False, dtype=L.float64),
}


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_parameters_and_errors_match_torch(name: str) -> None:
    assert outcome(PARAMETERS[name], chainrule) == outcome(PARAMETERS[name], torch)
