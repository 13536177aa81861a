"""torch.empty(..., memory_format=) and Tensor.cpu(memory_format=) honour the format.

Both dropped it: ``empty(2, 3, 4, 5, memory_format=torch.channels_last)`` was contiguous
(strides (60, 20, 5, 1); PyTorch (60, 1, 15, 3)), with no error for a format of another rank
or for ``preserve_format``; ``x.cpu(memory_format=channels_last)`` returned ``x``.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

CASES = {
    "empty channels_last": lambda lib: lib.empty(2, 3, 4, 5, memory_format=lib.channels_last),
    "empty channels_last_3d": lambda lib: lib.empty(
        2, 3, 4, 5, 6, memory_format=lib.channels_last_3d
    ),
    "empty of rank 2": lambda lib: lib.empty(2, 3, memory_format=lib.channels_last),
    "empty preserve_format": lambda lib: lib.empty(2, 3, 4, 5, memory_format=lib.preserve_format),
    "empty contiguous_format": lambda lib: lib.empty(
        2, 3, 4, 5, memory_format=lib.contiguous_format
    ),
    "empty with no elements": lambda lib: lib.empty((2, 0, 4, 5), memory_format=lib.channels_last),
    "empty requires grad": lambda lib: lib.empty(
        2, 3, 4, 5, memory_format=lib.channels_last, requires_grad=True
    ),
    "cpu channels_last": lambda lib: lib.arange(120.0).view(2, 3, 4, 5).cpu(
        memory_format=lib.channels_last
    ),
    "cpu of rank 2": lambda lib: lib.ones(2, 3).cpu(memory_format=lib.channels_last),
}


@pytest.mark.parametrize("case", list(CASES))
def test_memory_format_honoured(case: str) -> None:
    def program(lib: Any) -> Any:
        t = CASES[case](lib)
        values = t.tolist() if case.startswith("cpu") else None
        return tuple(t.shape), t.stride(), t.requires_grad, values

    same_outcome(program)


def test_cpu_keeps_the_tensor_when_nothing_changes() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, 3, 4, 5)
        y = x.to(memory_format=lib.channels_last)
        return (
            x.cpu() is x,
            x.cpu(memory_format=lib.contiguous_format) is x,
            y.cpu(memory_format=lib.channels_last) is y,
            y.cpu(memory_format=lib.preserve_format) is y,
        )

    same_outcome(program)
