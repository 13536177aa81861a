"""rot90, Tensor.unfold (overlapping and gapped windows), take_along_dim, repeat_interleave,
diagflat and hsplit/vsplit/dsplit. The ``*_sq`` entries square the result, which sends the
second-order pass through each op's backward (unfold's UnfoldBackwardBackward0 ...)."""

from __future__ import annotations

from typing import Any

from . import OpInfo
from .shape import _sq

M = [((3, 4),), ((2, 3, 4),)]


def _idx(lib: Any, values: Any) -> Any:
    return lib.tensor(values)


OPS = [
    OpInfo("rot90", lambda lib, x: lib.rot90(x), M),
    OpInfo("rot90_k2", lambda lib, x: lib.rot90(x, 2, (0, 1)), M),
    OpInfo("rot90_k3_method", lambda lib, x: x.rot90(3, (1, 0)), M),
    OpInfo("rot90_k0", lambda lib, x: lib.rot90(x, 0), M),
    OpInfo("rot90_negative_k", lambda lib, x: lib.rot90(x, -1, [-1, 0]), M),
    _sq("rot90", lambda lib, x: lib.rot90(x, 1, (0, -1)), M),
    OpInfo("Tensor.unfold", lambda lib, x: x.unfold(1, 2, 1), M),
    OpInfo("Tensor.unfold_gaps", lambda lib, x: x.unfold(-1, 1, 2), M),
    OpInfo("Tensor.unfold_0d", lambda lib, x: x.unfold(0, 1, 1), [((),)]),
    OpInfo("Tensor.unfold_transposed", lambda lib, x: x.t().unfold(0, 3, 1), [((3, 5),)]),
    _sq("Tensor.unfold", lambda lib, x: x.unfold(0, 2, 1), M),
    OpInfo(
        "take_along_dim",
        lambda lib, x: lib.take_along_dim(x, _idx(lib, [[0, 3, 3], [1, 1, 2], [2, 0, 0]]), 1),
        [((3, 4),)],
    ),
    OpInfo(
        "take_along_dim_broadcast",
        lambda lib, x: lib.take_along_dim(x, _idx(lib, [[0, 3]]), -1),
        [((3, 4),)],
    ),
    OpInfo(
        "take_along_dim_flat",
        lambda lib, x: lib.take_along_dim(x, _idx(lib, [0, 5, 5])),
        [((3, 4),)],
    ),
    OpInfo(
        "Tensor.take_along_dim",
        lambda lib, x: x.take_along_dim(_idx(lib, [[2], [0]]), 0),
        [((3, 4),)],
    ),
    OpInfo("repeat_interleave", lambda lib, x: lib.repeat_interleave(x, 2), M),
    OpInfo("repeat_interleave_dim", lambda lib, x: lib.repeat_interleave(x, 3, dim=-1), M),
    OpInfo(
        "repeat_interleave_tensor",
        lambda lib, x: lib.repeat_interleave(x, _idx(lib, [1, 0, 2]), dim=0),
        [((3, 4),)],
    ),
    OpInfo(
        "repeat_interleave_one_count",
        lambda lib, x: x.repeat_interleave(_idx(lib, [2]), dim=1),
        [((3, 4),)],
    ),
    OpInfo("Tensor.repeat_interleave", lambda lib, x: x.repeat_interleave(2, 0), M),
    OpInfo("diagflat", lambda lib, x: lib.diagflat(x), [((2, 3),), ((3,),), ((),)]),
    OpInfo("diagflat_offset", lambda lib, x: lib.diagflat(x, -2), [((3,),)]),
    OpInfo("Tensor.diagflat", lambda lib, x: x.diagflat(1), [((2, 2),)]),
    OpInfo("hsplit", lambda lib, x: lib.hsplit(x, 2), [((3, 4),), ((2, 4, 3),)]),
    OpInfo("hsplit_1d", lambda lib, x: lib.hsplit(x, [1, 3]), [((5,),)]),
    OpInfo("Tensor.hsplit", lambda lib, x: x.hsplit([1]), M),
    OpInfo("vsplit", lambda lib, x: lib.vsplit(x, [1, 2]), M),
    OpInfo("Tensor.vsplit", lambda lib, x: x.vsplit(1), M),
    OpInfo("dsplit", lambda lib, x: lib.dsplit(x, 2), [((2, 3, 4),)]),
    OpInfo("Tensor.dsplit", lambda lib, x: x.dsplit([3]), [((2, 3, 4),)]),
]
