"""renorm: slices along ``dim`` above ``maxnorm`` scaled down to it, for p = 1, 2, 3, 0.5, inf,
every dim, slices on both sides of the bound, non-contiguous inputs and the in-place form."""

from __future__ import annotations

import math
from typing import Any

from . import OpInfo


def _renorm(p: float, dim: int, maxnorm: float) -> Any:
    def call(lib: Any, x: Any) -> Any:
        return lib.renorm(x, p, dim, maxnorm)

    return call


def _renorm_transposed(lib: Any, x: Any) -> Any:
    return x.transpose(0, 1).renorm(2, 0, 2.5)


def _renorm_in_place(lib: Any, x: Any) -> Any:
    return (x * 1).renorm_(2, 1, 2.0)


OPS = [
    *(
        OpInfo(f"renorm_p{p}", _renorm(p, 0, 2.5), [((4, 3),), ((3, 2, 2),)])
        for p in (1.0, 2.0, 3.0, 0.5)
    ),
    OpInfo("renorm_pinf", _renorm(math.inf, 1, 1.5), [((3, 4),)]),
    OpInfo("renorm_last_dim", _renorm(2.0, -1, 2.0), [((2, 3, 4),), ((0, 3),)]),
    OpInfo("renorm_all_below", _renorm(2.0, 0, 100.0), [((3, 4),)]),
    OpInfo("Tensor.renorm_transposed", _renorm_transposed, [((3, 4),)]),
    OpInfo("Tensor.renorm_", _renorm_in_place, [((3, 4),)]),
]
