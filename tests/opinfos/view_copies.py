"""The copy variants of views (t_copy, transpose_copy, permute_copy ...): the view's values
and gradients, in new memory."""

from __future__ import annotations

from . import OpInfo

OPS = [
    OpInfo("alias_copy", lambda lib, x: lib.alias_copy(x), [((3, 4),)]),
    OpInfo("t_copy", lambda lib, x: lib.t_copy(x), [((3, 4),), ((3,),)]),
    OpInfo("transpose_copy", lambda lib, x: lib.transpose_copy(x, 0, -1), [((2, 3, 4),)]),
    OpInfo("permute_copy", lambda lib, x: lib.permute_copy(x, (2, 0, 1)), [((2, 3, 4),)]),
    OpInfo("unsqueeze_copy", lambda lib, x: lib.unsqueeze_copy(x, -1), [((3, 4),)]),
    OpInfo("select_copy", lambda lib, x: lib.select_copy(x, 1, -1), [((3, 4),)]),
    OpInfo("diagonal_copy", lambda lib, x: lib.diagonal_copy(x, 1, 1, 0), [((3, 4),)]),
]
