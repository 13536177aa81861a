"""cummax and cummin (distinct values, and ties: the gradient goes to the latest of equal
values; no finite differences at ties), logcumsumexp (values far apart: the running sum must
not overflow) and aminmax."""

from __future__ import annotations

from . import OpInfo
from .reduction import _distinct

SHAPES = [((3, 4),), ((5,),), ((),)]


def _ties(rng, shapes, dtype):
    """Small integers: many equal values."""
    return [rng.integers(-2, 3, s).astype(dtype) for s in shapes]


def _spread(rng, shapes, dtype):
    """Some values far apart (exp of them would overflow in float32)."""
    out = [rng.uniform(-3, 3, s).astype(dtype) for s in shapes]
    if out[0].size > 2:
        out[0].reshape(-1)[1] = 80.0
        out[0].reshape(-1)[-1] = -90.0
    return out


OPS = [
    OpInfo("cummax", lambda lib, x: lib.cummax(x, 0), SHAPES, make_inputs=_distinct),
    OpInfo(
        "cummax_ties",
        lambda lib, x: lib.cummax(x, -1),
        SHAPES[:2],
        make_inputs=_ties,
        gradcheck=False,
    ),
    OpInfo("Tensor.cummax", lambda lib, x: x.cummax(-1).values, SHAPES, make_inputs=_distinct),
    OpInfo("cummin", lambda lib, x: lib.cummin(x, 0), SHAPES, make_inputs=_distinct),
    OpInfo(
        "cummin_ties",
        lambda lib, x: lib.cummin(x, 1),
        SHAPES[:1],
        make_inputs=_ties,
        gradcheck=False,
    ),
    OpInfo("Tensor.cummin", lambda lib, x: x.cummin(0)[0], SHAPES, make_inputs=_distinct),
    OpInfo("logcumsumexp", lambda lib, x: lib.logcumsumexp(x, 0), SHAPES),
    OpInfo(
        "logcumsumexp_spread",
        lambda lib, x: lib.logcumsumexp(x, -1),
        SHAPES[:2],
        make_inputs=_spread,
        gradcheck=False,
    ),
    OpInfo("Tensor.logcumsumexp", lambda lib, x: x.logcumsumexp(-1), SHAPES),
    OpInfo("aminmax", lambda lib, x: lib.aminmax(x), SHAPES, make_inputs=_distinct),
    OpInfo(
        "aminmax_dim",
        lambda lib, x: lib.aminmax(x, dim=0, keepdim=True),
        SHAPES,
        make_inputs=_distinct,
    ),
    OpInfo(
        "aminmax_ties",
        lambda lib, x: lib.aminmax(x, dim=-1),
        SHAPES[:2],
        make_inputs=_ties,
        second_order=False,
        gradcheck=False,
    ),
    OpInfo(
        "Tensor.aminmax", lambda lib, x: x.aminmax(dim=1).max, SHAPES[:1], make_inputs=_distinct
    ),
]
