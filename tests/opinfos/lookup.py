"""isin (no gradients). (unravel_index is compared in tests/test_lookup.py: its results' strides
for a transposed input are not PyTorch's yet.)"""

from __future__ import annotations

from . import OpInfo

OPS = [
    OpInfo(
        "isin",
        lambda lib, x, y: lib.isin((x * 3).round(), (y * 3).round()),
        [((3, 4), (5,)), ((), (2, 2))],
        grad=False,
    ),
    OpInfo(
        "isin_invert",
        lambda lib, x: lib.isin((x * 3).round(), 1.0, invert=True),
        [((3, 4),)],
        grad=False,
    ),
]
