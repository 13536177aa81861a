"""masked_scatter: the mask broadcast with self, a source with more elements than the mask
needs (its unused elements get zero gradients), in place."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _mask(lib: Any, *rows: list[int]) -> Any:
    return lib.tensor([[bool(v) for v in row] for row in rows])


OPS = [
    OpInfo(
        "masked_scatter",
        lambda lib, x, s: lib.masked_scatter(x, _mask(lib, [1, 0, 1, 1], [0, 1, 1, 0]), s),
        [((2, 4), (2, 4)), ((4,), (3, 3))],
    ),
    OpInfo(
        "Tensor.masked_scatter",
        lambda lib, x, s: x.masked_scatter(_mask(lib, [0, 1, 1]), s * s),
        [((2, 3), (5,))],
    ),
    OpInfo(
        "Tensor.masked_scatter_",
        lambda lib, x, s: (x * x).masked_scatter_(_mask(lib, [1, 0, 1]), s),
        [((2, 3), (2, 2))],
    ),
]
