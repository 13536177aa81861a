"""torch.fill (a number, a 0-d tensor that gets the gradient's sum), the unsafe splits, and
conj_physical of a real tensor (the tensor itself)."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _cat(lib: Any, pieces: Any) -> Any:
    return lib.cat([p * (k + 1) for k, p in enumerate(pieces)], 0)


OPS = [
    OpInfo("fill", lambda lib, x: lib.fill(x, 2.5) * x, [((3, 4),)]),
    OpInfo("fill_tensor", lambda lib, x, v: lib.fill(x, v) * x, [((3, 4), ())]),
    OpInfo("unsafe_split", lambda lib, x: _cat(lib, lib.unsafe_split(x, 2)), [((5, 3),)]),
    OpInfo("Tensor.unsafe_split", lambda lib, x: _cat(lib, x.unsafe_split(1, 1)), [((2, 3),)]),
    OpInfo("unsafe_chunk", lambda lib, x: _cat(lib, lib.unsafe_chunk(x, 3)), [((6, 2),)]),
    OpInfo("Tensor.unsafe_chunk", lambda lib, x: _cat(lib, x.unsafe_chunk(1)), [((2, 2),)]),
    OpInfo(
        "unsafe_split_with_sizes",
        lambda lib, x: _cat(lib, lib.unsafe_split_with_sizes(x, [1, 3])),
        [((4, 2),)],
    ),
    OpInfo(
        "Tensor.unsafe_split_with_sizes",
        lambda lib, x: _cat(lib, x.unsafe_split_with_sizes([2], 0)),
        [((2, 2),)],
    ),
    OpInfo("conj_physical", lambda lib, x: lib.conj_physical(x) * x, [((3,),)]),
    OpInfo("Tensor.conj_physical", lambda lib, x: x.conj_physical() * 2, [((3,),)]),
    OpInfo("Tensor.conj_physical_", lambda lib, x: (x * 1).conj_physical_(), [((3,),)]),
    OpInfo("conj_physical_", lambda lib, x: lib.conj_physical_(x * 1), [((3,),)]),
    OpInfo(
        "Tensor.fill_diagonal_",
        lambda lib, x: (x * 2).fill_diagonal_(1.5) * x,
        [((4, 4),), ((5, 3),), ((3, 3, 3),)],
    ),
    OpInfo(
        "Tensor.fill_diagonal_ wrap",
        lambda lib, x: (x * 2).fill_diagonal_(-0.5, wrap=True) * x,
        [((7, 3),), ((2, 5),)],
    ),
]
