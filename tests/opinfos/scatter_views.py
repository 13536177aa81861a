"""select_scatter, slice_scatter and diagonal_scatter: gradients of both the base and the
written tensor (squared results exercise the second order through each op's backward)."""

from __future__ import annotations

from . import OpInfo
from .shape import _sq

OPS = [
    OpInfo("select_scatter", lambda lib, x, s: lib.select_scatter(x, s, 0, 1), [((3, 4), (4,))]),
    OpInfo(
        "select_scatter_negative",
        lambda lib, x, s: lib.select_scatter(x, s, -1, -2),
        [((3, 4), (3,)), ((2, 3, 4), (2, 3))],
    ),
    _sq("select_scatter", lambda lib, x, s: lib.select_scatter(x, s, 1, 0), [((3, 4), (3,))]),
    OpInfo("slice_scatter", lambda lib, x, s: lib.slice_scatter(x, s, 0, 1, 3), [((3, 4), (2, 4))]),
    OpInfo(
        "slice_scatter_step",
        lambda lib, x, s: lib.slice_scatter(x, s, dim=1, step=2),
        [((3, 4), (3, 2))],
    ),
    _sq("slice_scatter", lambda lib, x, s: lib.slice_scatter(x, s, start=-1), [((3, 4), (1, 4))]),
    OpInfo("diagonal_scatter", lambda lib, x, s: lib.diagonal_scatter(x, s), [((3, 4), (3,))]),
    OpInfo(
        "diagonal_scatter_offset",
        lambda lib, x, s: lib.diagonal_scatter(x, s, -1, 1, 0),
        [((3, 4), (3,)), ((2, 3, 3), (3, 2))],
    ),
    _sq("diagonal_scatter", lambda lib, x, s: lib.diagonal_scatter(x, s, 1), [((3, 4), (3,))]),
    OpInfo("Tensor.select_scatter", lambda lib, x, s: x.select_scatter(s, 1, 2), [((3, 4), (3,))]),
    OpInfo(
        "Tensor.slice_scatter", lambda lib, x, s: x.slice_scatter(s, 1, 1, 3), [((3, 4), (3, 2))]
    ),
    OpInfo(
        "Tensor.diagonal_scatter", lambda lib, x, s: x.diagonal_scatter(s, -1), [((3, 4), (2,))]
    ),
]

# as_strided_scatter: src only, on a contiguous self (PyTorch's gradient of self is the written
# elements' gradient, not the Jacobian's transpose, and that of src reads a contiguous layout
# whatever the output's: tests/test_as_strided_copies.py gradchecks chainrule's and compares
# the layouts' values with PyTorch's)
OPS += [
    OpInfo(
        "as_strided_scatter",
        lambda lib, x, s: lib.as_strided_scatter(x.contiguous(), s, (2, 2), (1, 2), 1),
        [((6,), (2, 2)), ((2, 3), (2, 2))],
        grad_inputs=(1,),
    ),
    OpInfo(
        "Tensor.as_strided_scatter",
        lambda lib, x, s: x.contiguous().as_strided_scatter(s, (3,), (2,)),
        [((3, 2), (3,))],
        grad_inputs=(1,),
    ),
]
