"""isin (no gradients). (unravel_index is compared in tests/test_lookup.py: its results' strides
for a transposed input are not PyTorch's yet.)"""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _finite(rng: Any, shapes: Any, dtype: str) -> list[Any]:
    """Finite samples (the special-values sweep would turn inf and NaN into integers whose
    division traps in PyTorch's kernel)."""
    return [rng.uniform(-2, 2, s).astype(dtype) for s in shapes]


OPS = [
    OpInfo(
        "isin",
        lambda lib, x, y: lib.isin((x * 3).round(), (y * 3).round()),
        [((3, 4), (5,)), ((), (2, 2))],
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "isin_invert",
        lambda lib, x: lib.isin((x * 3).round(), 1.0, invert=True),
        [((3, 4),)],
        grad=False,
        make_inputs=_finite,
    ),
]
