"""combinations (a composite: the sweep checks its graph's gradients) and vander (values
only: its backward fails in PyTorch, tests/test_combinatorics.py checks that it fails alike)."""

from __future__ import annotations

from . import OpInfo

OPS = [
    OpInfo("combinations", lambda lib, x: lib.combinations(x), [((4,),)]),
    OpInfo(
        "combinations_with_replacement",
        lambda lib, x: lib.combinations(x, 3, with_replacement=True),
        [((3,),)],
    ),
    # (vander's backward fails in PyTorch as in chainrule: tests/test_combinatorics.py)
    OpInfo("vander", lambda lib, x: lib.vander(x), [((4,),)], grad=False),
    OpInfo(
        "vander_increasing",
        lambda lib, x: lib.vander(x, 3, increasing=True),
        [((5,),)],
        grad=False,
    ),
]
