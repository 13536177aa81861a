"""quantile and nanquantile: every interpolation, a number q and a 1-D tensor q, over all
elements and along a dim (composites: the sweep checks their graph's gradients)."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _q(lib: Any, x: Any) -> Any:
    return lib.tensor([0.0, 0.3, 0.5, 1.0], dtype=x.dtype)


OPS = [
    OpInfo(
        f"quantile_{mode}",
        lambda lib, x, mode=mode: lib.quantile(x, 0.35, dim=1, interpolation=mode),
        [((3, 5),)],
    )
    for mode in ("linear", "lower", "higher", "midpoint", "nearest")
] + [
    OpInfo("quantile_all", lambda lib, x: lib.quantile(x, 0.7), [((3, 4),), ((5,),)]),
    OpInfo(
        "quantile_q_tensor",
        lambda lib, x: lib.quantile(x, _q(lib, x), dim=0, keepdim=True),
        [((4, 3),)],
    ),
    OpInfo("Tensor.quantile", lambda lib, x: x.quantile(_q(lib, x), -1), [((2, 3, 4),)]),
    OpInfo(
        "nanquantile",
        lambda lib, x: lib.nanquantile(x, 0.6, dim=0, interpolation="midpoint"),
        [((4, 3),)],
    ),
    OpInfo("Tensor.nanquantile", lambda lib, x: x.nanquantile(_q(lib, x)), [((3, 4),)]),
]
