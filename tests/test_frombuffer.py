"""torch.frombuffer: a tensor over a Python buffer's memory, with PyTorch's checks.

chainrule had no ``frombuffer`` (AttributeError).
"""

from __future__ import annotations

import array
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .outcomes import same_outcome

BYTES = b"\x01\x00\x02\x00\x03\x00\x04\x00"

CASES = {
    "int16": {"dtype": "int16"},
    "count": {"dtype": "int16", "count": 2},
    "offset": {"dtype": "int16", "count": 2, "offset": 1},
    "any negative count is all": {"dtype": "int16", "count": -2},
    "uint8": {"dtype": "uint8"},
    "bool": {"dtype": "bool"},
    "complex64": {"dtype": "complex64"},
    "bfloat16": {"dtype": "bfloat16"},
    "float32 requires grad": {"dtype": "float32", "requires_grad": True},
    "count 0": {"dtype": "int16", "count": 0},
    "negative offset": {"dtype": "int16", "offset": -1},
    "offset past the end": {"dtype": "int16", "offset": 8},
    "not a multiple": {"dtype": "float32", "offset": 2},
    "too many": {"dtype": "int16", "count": 1, "offset": 7},
    "dtype None": {"dtype": None},
    "no dtype": {},
    "requires_grad not a bool": {"dtype": "int16", "requires_grad": 1},
}


def _call(lib: Any, buffer: Any, options: dict) -> Any:
    options = dict(options)
    if isinstance(options.get("dtype"), str):
        options["dtype"] = getattr(lib, options["dtype"])
    t = lib.frombuffer(buffer, **options)
    return t, t.requires_grad, t.is_leaf


@pytest.mark.parametrize("case", list(CASES))
def test_frombuffer(case: str) -> None:
    same_outcome(lambda lib: _call(lib, bytearray(BYTES), CASES[case]))


@pytest.mark.parametrize(
    "make",
    [
        lambda: array.array("f", [1.5, 2.5]),
        lambda: memoryview(bytearray(BYTES))[2:],
        lambda: [1, 2],
        lambda: bytearray(),
        lambda: np.arange(4, dtype=np.float32)[::2],
    ],
    ids=["array", "memoryview slice", "a list", "empty", "strided NumPy"],
)
def test_other_buffers(make: Any) -> None:
    same_outcome(lambda lib: _call(lib, make(), {"dtype": "uint8"}))


def test_writes_are_shared_both_ways() -> None:
    buffer = bytearray(BYTES)
    t = chainrule.frombuffer(buffer, dtype=chainrule.int16)
    buffer[0] = 9
    t[1] = 7
    assert t.tolist() == [9, 7, 3, 4]
    assert buffer[2] == 7


def test_read_only_buffer_warns_once_and_copies() -> None:
    from chainrule.ops import creation

    creation._READ_ONLY_BUFFER_WARNED[0] = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = chainrule.frombuffer(BYTES, dtype=chainrule.int16)
        chainrule.frombuffer(BYTES, dtype=chainrule.int16)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and messages[0].startswith("The given buffer is not writable")
    t[0] = 5  # (a copy: bytes cannot change)
    assert t.tolist() == [5, 2, 3, 4] and BYTES[0] == 1
