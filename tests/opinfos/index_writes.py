"""index_copy and index_fill (a number, or a 0-d tensor that gets a gradient), out of place
and in place."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _index(lib: Any, *values: int) -> Any:
    return lib.tensor(list(values))


OPS = [
    OpInfo(
        "index_copy",
        lambda lib, x, s: lib.index_copy(x, 0, _index(lib, 2, 0), s),
        [((3, 4), (2, 4))],
    ),
    OpInfo(
        "Tensor.index_copy",
        lambda lib, x, s: x.index_copy(-1, _index(lib, 1), s),
        [((3, 4), (3, 1)), ((2, 3, 4), (2, 3, 1))],
    ),
    OpInfo(
        "Tensor.index_copy_",
        lambda lib, x, s: x.clone().index_copy_(1, _index(lib, 3, 0), s),
        [((3, 4), (3, 2))],
    ),
    OpInfo(
        "index_fill",
        lambda lib, x: lib.index_fill(x, -2, _index(lib, 2, 0), -1.5),
        [((3, 4),), ((2, 3, 4),)],
    ),
    OpInfo(
        "index_fill_tensor", lambda lib, x, v: x.index_fill(1, _index(lib, 1, 1), v), [((3, 4), ())]
    ),
    OpInfo(
        "Tensor.index_fill_",
        lambda lib, x: x.clone().index_fill_(-1, _index(lib, 0), 2.0),
        [((3, 4),)],
    ),
    OpInfo(
        "Tensor.index_fill__tensor",
        lambda lib, x, v: x.clone().index_fill_(0, _index(lib, 1), v),
        [((3, 4), ())],
    ),
]
