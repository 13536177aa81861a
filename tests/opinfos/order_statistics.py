"""nanmedian (over all elements and along a dim) and mode (random inputs: every value once, so
the mode is the smallest; ties and NaN are in tests/test_order_statistics.py)."""

from __future__ import annotations

from . import OpInfo

OPS = [
    OpInfo("nanmedian", lambda lib, x: lib.nanmedian(x), [((3, 4),), ((5,),)]),
    OpInfo("nanmedian_dim", lambda lib, x: lib.nanmedian(x, 1).values, [((3, 4),)]),
    OpInfo("Tensor.nanmedian", lambda lib, x: x.nanmedian(-1, keepdim=True).values, [((2, 3, 4),)]),
    OpInfo("mode", lambda lib, x: lib.mode(x).values, [((3, 4),), ((5,),), ((),)]),
    OpInfo("Tensor.mode", lambda lib, x: x.mode(0, True).values, [((3, 4),)]),
]
