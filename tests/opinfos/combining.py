"""broadcast_tensors, meshgrid (both indexings), cartesian_prod and block_diag (mixed ranks,
empty blocks). The ``*_sq`` entries square the results for a second-order check."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _meshgrid(indexing: str) -> Any:
    def call(lib: Any, *xs: Any) -> Any:
        return lib.meshgrid(*xs, indexing=indexing)

    return call


def _squared(fn: Any) -> Any:
    def call(lib: Any, *xs: Any) -> Any:
        out = fn(lib, *xs)
        return tuple(o * o for o in out) if isinstance(out, tuple) else out * out

    return call


GRIDS = [((2,), (3,)), ((2,), (3,), (4,)), ((), (3,)), ((0,), (2,))]
BLOCKS = [((2, 3), (3, 4)), ((2,), (), (2, 2)), ((0, 2), (1,)), ((2, 3),)]

OPS = [
    OpInfo("broadcast_tensors", lambda lib, *xs: lib.broadcast_tensors(*xs),
           [((2, 3), (3,)), ((2, 1), (1, 3), (3,)), ((2, 3),)]),
    OpInfo("broadcast_tensors_sq", _squared(lambda lib, *xs: lib.broadcast_tensors(*xs)),
           [((2, 1), (1, 3))]),
    OpInfo("meshgrid_ij", _meshgrid("ij"), GRIDS),
    OpInfo("meshgrid_xy", _meshgrid("xy"), GRIDS),
    OpInfo("meshgrid_list", lambda lib, a, b: lib.meshgrid([a, b], indexing="xy"),
           [((2,), (3,))]),
    OpInfo("cartesian_prod", lambda lib, *xs: lib.cartesian_prod(*xs),
           [((2,), (3,)), ((2,), (3,), (2,)), ((3,),), ((0,), (2,))]),
    OpInfo("cartesian_prod_sq", _squared(lambda lib, *xs: lib.cartesian_prod(*xs)),
           [((2,), (3,))]),
    OpInfo("block_diag", lambda lib, *xs: lib.block_diag(*xs), BLOCKS),
    OpInfo("block_diag_sq", _squared(lambda lib, *xs: lib.block_diag(*xs)), BLOCKS[:2]),
]
