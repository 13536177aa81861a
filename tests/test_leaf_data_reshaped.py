"""A leaf whose ``.data`` gets another shape between the forward and the backward.

PyTorch's AccumulateGrad keeps a first gradient as ``.grad`` only if its strides fit the leaf's
(its "layout contract", compared against the leaf's *current* strides); otherwise it copies the
gradient into a new tensor of the leaf's current shape with ``copy_``, which broadcasts or
raises. So a gradient of the old shape is kept in some cases ([3] -> [4]), broadcast in others
([3] -> [2, 3]) and refused in the rest ([2, 3] -> [3, 2]). A derivative formula that reads the
reshaped leaf meets two shapes that do not broadcast and raises PyTorch's message, not NumPy's.
"""

from __future__ import annotations

import pytest
import torch

import chainrule

RESHAPES = [
    ((2, 3), (3, 2)),
    ((6,), (2, 3)),
    ((3,), (4,)),
    ((3,), (1,)),
    ((1,), (3,)),
    ((2, 3), (3,)),
    ((3,), (2, 3)),
    ((3,), (1, 3)),
    ((2, 3), (2, 1)),
]


def _outcome(lib, before, after, create_graph, op):
    a = lib.ones(*before, requires_grad=True)
    y = op(a).sum()
    a.data = lib.full(after, 5.0)
    try:
        y.backward(create_graph=create_graph)
    except RuntimeError as error:
        return ("raises", str(error).splitlines()[0])
    return ("grad", tuple(a.grad.shape), a.grad.detach().tolist(), a.grad.stride())


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize(("before", "after"), RESHAPES)
def test_first_gradient_after_data_got_another_shape(before, after, create_graph):
    def op(a):
        return a * 2

    ours = _outcome(chainrule, before, after, create_graph, op)
    assert ours == _outcome(torch, before, after, create_graph, op)


@pytest.mark.parametrize(("before", "after"), [((3,), (4,)), ((2, 3), (3, 2)), ((3,), (2, 2))])
def test_formula_reading_the_reshaped_leaf_raises_pytorchs_message(before, after):
    def op(a):
        return a * a

    ours = _outcome(chainrule, before, after, False, op)
    theirs = _outcome(torch, before, after, False, op)
    assert ours == theirs
    assert ours[0] == "raises"


def test_kept_gradient_has_the_old_shape():
    # [3] -> [4]: the gradient fits the leaf's strides, so it is kept as is (shape [3]).
    a = chainrule.ones(3, requires_grad=True)
    y = (a * 2).sum()
    a.data = chainrule.ones(4)
    y.backward()
    assert a.grad.shape == (3,) and a.grad.tolist() == [2.0, 2.0, 2.0]
