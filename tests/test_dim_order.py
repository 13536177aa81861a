"""Tensor.dim_order: the dimensions from the outermost in memory to the innermost, with
PyTorch's tie-breaking and its ``ambiguity_check`` errors.

chainrule had no ``dim_order`` (AttributeError).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from .outcomes import same_outcome

SHAPES = [(2, 3), (1, 4), (3, 1), (2, 3, 4), (2, 1, 4), (1, 1), (2, 3, 4, 5), (2, 1, 4, 5),
          (4, 4), (2, 2, 2), (0, 3), (1, 3, 1, 1), (2, 3, 1, 1)]


def _layouts() -> dict[str, Any]:
    layouts: dict[str, Any] = {
        "0-d": lambda lib: lib.zeros(()),
        "1-d": lambda lib: lib.zeros(5),
        "expanded rows": lambda lib: lib.zeros(3, 1).expand(3, 4),
        "expanded columns": lambda lib: lib.zeros(1, 4).expand(3, 4),
        "diagonal": lambda lib: lib.zeros(4, 4).diagonal().unsqueeze(0),
        "channels_last": lambda lib: lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last),
    }
    for shape in SHAPES:
        for order in itertools.permutations(range(len(shape))):
            layouts[f"{shape} permuted {order}"] = (
                lambda lib, shape=shape, order=order: lib.zeros(shape).permute(*order)
            )
        stepped = tuple(slice(None, None, 2) for _ in shape)
        if 0 not in shape:  # (a stepped empty dimension: chainrule keeps its old stride)
            layouts[f"{shape} stepped"] = (
                lambda lib, shape=shape, stepped=stepped: lib.zeros(
                    tuple(2 * n for n in shape)
                )[stepped]
            )
    return layouts


LAYOUTS = _layouts()
CHECKS = {
    "no check": lambda lib: False,
    "check": lambda lib: True,
    "empty list": lambda lib: [],
    "channels_last": lambda lib: [lib.channels_last],
    "either format": lambda lib: [lib.contiguous_format, lib.channels_last],
    "not a format": lambda lib: "channels_last",
}


@pytest.mark.parametrize("check", list(CHECKS))
def test_dim_order(check: str) -> None:
    for name, make in LAYOUTS.items():

        def program(lib: Any, name: str = name, make: Any = make) -> Any:
            return name, make(lib).dim_order(ambiguity_check=CHECKS[check](lib))

        same_outcome(program)
