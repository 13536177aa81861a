"""``torch.strided`` and the memory formats are objects of ``torch.layout`` and
``torch.memory_format``, printed by name; a memory format that is not one is refused.

chainrule's markers were strings: ``[x.layout]`` printed ``['chainrule.strided']`` where
PyTorch prints ``[torch.strided]``, ``isinstance(f, torch.memory_format)`` had no type to
ask, and ``x.contiguous(memory_format="channels_last")``, ``clone``, ``empty``, the
``*_like`` factories and ``randint_like`` accepted any value and computed (PyTorch raises a
TypeError naming the argument).
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from .outcomes import same_outcome

MARKERS = ["strided", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


@pytest.mark.parametrize("name", MARKERS)
def test_markers_print_and_type(name: str) -> None:
    def program(lib: Any) -> Any:
        marker = getattr(lib, name)
        kind = lib.layout if name == "strided" else lib.memory_format
        return (
            repr(marker),
            str(marker),
            repr([marker]),
            type(marker).__name__,
            isinstance(marker, kind),
            pickle.loads(pickle.dumps(marker)) is marker,
            copy.deepcopy(marker) is marker,
            marker == getattr(lib, name),
        )

    same_outcome(program)


def test_tensor_layout() -> None:
    same_outcome(lambda lib: (repr([lib.ones(2).layout]), lib.ones(2).layout is lib.strided))


BAD = {
    "contiguous": lambda lib, x: x.contiguous(memory_format="channels_last"),
    "clone method": lambda lib, x: x.clone(memory_format="channels_last"),
    "clone with a layout": lambda lib, x: lib.clone(x, memory_format=lib.strided),
    "clone with a dtype": lambda lib, x: lib.clone(x, memory_format=lib.float32),
    "is_contiguous": lambda lib, x: x.is_contiguous(memory_format="channels_last"),
    "empty": lambda lib, x: lib.empty(2, 3, memory_format="channels_last"),
    "empty_like": lambda lib, x: lib.empty_like(x, memory_format="channels_last"),
    "zeros_like": lambda lib, x: lib.zeros_like(x, memory_format=3),
    "ones_like": lambda lib, x: lib.ones_like(x, memory_format=3),
    "full_like": lambda lib, x: lib.full_like(x, 2.0, memory_format=3),
    "randint_like": lambda lib, x: lib.randint_like(x, 3, memory_format="channels_last"),
    "randint with a str layout": lambda lib, x: lib.randint(3, (2,), layout="strided"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_memory_format_raises(case: str) -> None:
    same_outcome(lambda lib: BAD[case](lib, lib.ones(2, 3, 4, 5)))


GOOD = {
    "clone channels_last": lambda lib, x: x.clone(memory_format=lib.channels_last).stride(),
    "contiguous channels_last": lambda lib, x: x.contiguous(
        memory_format=lib.channels_last
    ).stride(),
    "empty_like channels_last": lambda lib, x: lib.empty_like(x, memory_format=lib.channels_last)
    .stride(),
    "randint_like channels_last": lambda lib, x: lib.randint_like(
        x, 3, memory_format=lib.channels_last
    ).stride(),
    "randint strided layout": lambda lib, x: lib.randint(3, (2,), layout=lib.strided).shape,
}


@pytest.mark.parametrize("case", list(GOOD))
def test_memory_formats_still_work(case: str) -> None:
    same_outcome(lambda lib: GOOD[case](lib, lib.ones(2, 3, 4, 5)))


TO_CALLS = {
    "a str format": lambda lib, x: x.to(memory_format="channels_last"),
    "a dtype and an int format": lambda lib, x: x.to(lib.float64, memory_format=3),
    "a device and a layout": lambda lib, x: x.to("cpu", memory_format=lib.strided),
    "a tensor and a dtype": lambda lib, x: x.to(lib.ones(1), memory_format=lib.float32),
    "keywords": lambda lib, x: x.to(dtype=lib.float64, memory_format="a"),
    "three keywords": lambda lib, x: x.to(memory_format="a", dtype=lib.float64, copy=True),
    "a format": lambda lib, x: x.to(memory_format=lib.channels_last).stride(),
}


@pytest.mark.parametrize("call", list(TO_CALLS))
def test_to_refuses_a_format_that_is_not_one(call: str) -> None:
    # (chainrule computed for to(memory_format="channels_last"); PyTorch's parser refuses it)
    same_outcome(lambda lib: TO_CALLS[call](lib, lib.ones(2, 3, 4, 5)))
