"""The bitwise ops refuse floating and complex types as PyTorch's kernels do: a
NotImplementedError naming the type the operands promote to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

CASES: dict[str, Callable[[Any], Any]] = {
    "and_double": lambda lib: lib.bitwise_and(lib.ones(2, dtype=lib.float64),
                                              lib.ones(2, dtype=lib.float64)),
    "or_float_number": lambda lib: lib.bitwise_or(lib.ones(2), 1),
    "xor_int_and_float_number": lambda lib: lib.bitwise_xor(lib.ones(2, dtype=lib.int64), 1.5),
    "not_half": lambda lib: lib.bitwise_not(lib.ones(2, dtype=lib.float16)),
    "and_operator": lambda lib: lib.ones(2) & lib.ones(2),
    "and_complex": lambda lib: lib.bitwise_and(lib.ones(2, dtype=lib.complex64),
                                               lib.ones(2, dtype=lib.complex64)),
    "int_and_bool": lambda lib: lib.bitwise_and(lib.tensor([6, 3]), lib.tensor([True, False])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bitwise_type_errors_match_torch(name: str) -> None:
    ours, theirs = (attempt(lambda lib=lib: CASES[name](lib), lambda t: t.tolist())
                    for lib in (chainrule, torch))
    assert ours == theirs
