"""``isclose``, ``allclose`` and ``equal`` against PyTorch: values at the edges (infinities,
NaN with and without ``equal_nan``, integers, bools, broadcasting) and PyTorch's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

LIBS = (chainrule, torch)
INF, NAN = float("inf"), float("nan")


def _described(value: Any) -> Any:
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        return value.tolist(), str(value.dtype).split(".")[-1]
    return value


CASES: dict[str, Callable[[Any], Any]] = {
    "isclose_edges": lambda lib: lib.isclose(
        lib.tensor([1.0, 1.0, INF, INF, -INF, NAN, 0.0, 1e-9]),
        lib.tensor([1.0 + 1e-6, 1.1, INF, -INF, -INF, NAN, 1e-9, 0.0])),
    "isclose_equal_nan": lambda lib: lib.isclose(lib.tensor([NAN, 1.0]),
                                                 lib.tensor([NAN, NAN]), equal_nan=True),
    "isclose_tolerances": lambda lib: lib.isclose(lib.tensor([1.0, 2.0]), lib.tensor([1.5, 2.1]),
                                                  rtol=0.1, atol=0.3),
    "isclose_broadcast": lambda lib: lib.isclose(lib.ones(2, 1), lib.ones(3)),
    "isclose_float16": lambda lib: lib.isclose(lib.tensor([1.0, 1000.0], dtype=lib.float16),
                                               lib.tensor([1.001, 1001.0], dtype=lib.float16)),
    "isclose_int": lambda lib: lib.isclose(lib.tensor([1, 100000]), lib.tensor([2, 100001])),
    "isclose_int_tolerance": lambda lib: lib.isclose(lib.tensor([10, 20]),
                                                     lib.tensor([11, 25]), rtol=0.0, atol=1.0),
    "isclose_bool": lambda lib: lib.isclose(lib.tensor([True, False]),
                                            lib.tensor([True, True])),
    "isclose_dtypes_differ": lambda lib: lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "isclose_negative_rtol": lambda lib: lib.isclose(lib.ones(2), lib.ones(2), rtol=-1.0),
    "isclose_negative_atol": lambda lib: lib.isclose(lib.ones(2), lib.ones(2), atol=-1.0),
    "isclose_shapes": lambda lib: lib.isclose(lib.ones(2), lib.ones(3)),
    "isclose_method": lambda lib: lib.ones(2).isclose(lib.ones(2) * 1.1, rtol=0.2),
    "allclose_true": lambda lib: lib.allclose(lib.ones(3), lib.ones(3) + 1e-9),
    "allclose_false": lambda lib: lib.allclose(lib.ones(3), lib.tensor([1.0, 1.0, 2.0])),
    "allclose_broadcast": lambda lib: lib.allclose(lib.ones(2), lib.ones(1)),
    "allclose_nan": lambda lib: (lib.allclose(lib.tensor([NAN]), lib.tensor([NAN])),
                                 lib.allclose(lib.tensor([NAN]), lib.tensor([NAN]),
                                              equal_nan=True)),
    "allclose_number": lambda lib: lib.allclose(lib.ones(2), 1.0),
    "allclose_dtypes": lambda lib: lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "allclose_method": lambda lib: lib.ones(2).allclose(lib.ones(2)),
    "allclose_requires_grad": lambda lib: lib.allclose(lib.ones(2, requires_grad=True),
                                                       lib.ones(2)),
    "equal_true": lambda lib: lib.equal(lib.ones(2), lib.ones(2)),
    "equal_values": lambda lib: lib.equal(lib.ones(2), lib.tensor([1.0, 2.0])),
    "equal_shapes": lambda lib: (lib.equal(lib.ones(2), lib.ones(3)),
                                 lib.equal(lib.ones(2), lib.ones(1, 2))),
    "equal_nan": lambda lib: lib.equal(lib.tensor([NAN]), lib.tensor([NAN])),
    "equal_dtypes": lambda lib: lib.equal(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "equal_method": lambda lib: lib.ones(2).equal(lib.ones(2)),
    "equal_number": lambda lib: lib.equal(lib.ones(1), 1.0),
    "method_number": lambda lib: lib.ones(2).isclose(1.0),
    "method_allclose_number": lambda lib: lib.ones(2).allclose(1.0),
    "method_equal_number": lambda lib: lib.ones(2).equal(1.0),
    "numpy_scalar": lambda lib: lib.isclose(lib.ones(2), np.float64(1.0)),
    "none": lambda lib: lib.equal(lib.ones(2), None),
    "number_first": lambda lib: lib.allclose(1.0, lib.ones(2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_closeness_matches_torch(name: str) -> None:
    ours, theirs = (attempt(lambda lib=lib: CASES[name](lib), _described) for lib in LIBS)
    assert ours == theirs
