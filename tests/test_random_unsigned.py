"""random_ of uint16/uint32/uint64 tensors as PyTorch: draws, widths and errors.

``random_()`` over the whole range has no kernel for the wide unsigned types in PyTorch
(NotImplementedError); chainrule filled them (silent). ``random_(from, None)`` of uint32
draws 64 bits per element (chainrule drew 32: other values, the generator behind), and of
uint64 refuses its upper end ("to - 1 is out of bounds for long unsigned int"); range
errors name the C++ types (chainrule said "uint64").
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

CALLS = {
    "random_()": (),
    "random_(to)": (2,),
    "random_(from, None)": (1, None),
    "random_(from, to)": (1, 2),
    "random_(-1, 5)": (-1, 5),
    "random_(0, 2**20)": (0, 2**20),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64", "uint8", "int32", "int64"])
def test_random_of_integer_types(dtype: str, call: str) -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        t = lib.zeros(6, dtype=getattr(lib, dtype))
        try:
            outcome = ("ok", t.random_(*CALLS[call]).tolist())
        except (RuntimeError, NotImplementedError) as error:
            outcome = (type(error).__name__, str(error), t.tolist())
        return outcome, lib.rand(2)

    same_outcome(program)
