"""random_ fills a strided tensor in memory order, as PyTorch's kernel writes it.

Under a seed, ``x.t().random_(5)`` of a transposed tensor holds other numbers at each index
than a contiguous one; chainrule drew in index order (silent: other values than PyTorch's).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

LAYOUTS = {
    "transposed": lambda lib, dt: lib.empty(40, 3, dtype=dt).t(),
    "permuted": lambda lib, dt: lib.empty(2, 3, 4, dtype=dt).permute(2, 0, 1),
    "stepped": lambda lib, dt: lib.empty(8, 5, dtype=dt)[::2],
}
CALLS = {
    "random_()": (),
    "random_(to)": (5,),
    "random_(from, to)": (-3, 7),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float32", "float64", "int16"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_random_fill_order(layout, dtype, call):
    args = CALLS[call]
    if dtype == "uint8" and args and args[0] < 0:
        args = (3, 7)
    results = []
    for lib in (torch, chainrule):
        lib.manual_seed(0)
        out = LAYOUTS[layout](lib, getattr(lib, dtype)).random_(*args)
        results.append((out.stride(), out.double().numpy(), lib.rand(3, dtype=lib.float64).numpy()))
    (strides, values, after), (ours_strides, ours, ours_after) = results
    assert ours_strides == strides
    np.testing.assert_array_equal(ours, values)
    np.testing.assert_array_equal(ours_after, after)
