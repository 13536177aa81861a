"""torch.broadcast_shapes: the broadcast of shapes without tensors, with PyTorch's errors.

chainrule had no ``broadcast_shapes`` (AttributeError), a common helper in model code.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

CASES = {
    "two shapes": ((2, 1), (3,)),
    "an int is a 1-d shape": ((2, 1), (3,), 1),
    "ints only": (1, 2),
    "a bool": ((True,), (2,)),
    "lists and Size": ([2, 1], "Size(4, 1, 5)"),
    "none skipped": ((3,), None, (2, 1)),
    "nothing": (),
    "only None": (None,),
    "scalar shape": ((), (3,)),
    "zero length": ((1,), (0,)),
    "mismatch": ((2, 3), (4,)),
    "mismatch with an int": ((2,), 3),
    "mismatch in the middle": ((3, 1, 2), (2, 3, 1), (1,)),
    "zero against three": ((0,), (3,)),
    "negative length": ((-1,), (2,)),
    "negative broadcast": ((1,), (-1,)),
    "negative mismatch": ((2,), (-1,)),
    "a tensor": ("tensor(3)",),
    "a float length": ((2.5,),),
    "a str length": ((2,), "a"),
}


def _argument(lib: Any, value: Any) -> Any:
    if value == "Size(4, 1, 5)":
        return lib.Size([4, 1, 5])
    if value == "tensor(3)":
        return lib.tensor(3)
    return value


@pytest.mark.parametrize("case", list(CASES))
def test_broadcast_shapes(case: str) -> None:
    same_outcome(lambda lib: lib.broadcast_shapes(*(_argument(lib, v) for v in CASES[case])))
