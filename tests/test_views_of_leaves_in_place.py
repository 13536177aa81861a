"""In-place writes to views of leaves, and ``detach_()`` of views, as PyTorch refuses them.

PyTorch refuses an in-place op on a view that requires grad whose base is a leaf, also when
the view was made before its base required grad (the view requires grad through its base) and
when the base stopped requiring grad after the view was made (the view keeps its history);
both used to pass here and turn the leaf into a non-leaf with a ``CopySlices`` history.
``detach_()`` refuses every view, also one of a tensor that never required grad.
Differential tests: each program runs under PyTorch and chainrule, results or errors compared.
"""

from __future__ import annotations

import pytest
import torch

import chainrule


def _leaf(lib, requires_grad=False):
    return lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=requires_grad)


def _view_then_requires_grad(lib, write):
    a = _leaf(lib)
    view = a[0]
    a.requires_grad_()
    write(lib, view)
    return a.is_leaf, a.grad_fn is None


def _base_stops_requiring_grad(lib, write):
    a = _leaf(lib, True)
    view = a[0]
    a.requires_grad_(False)
    write(lib, view)
    return a.is_leaf, view.requires_grad


def _view_of_view_then_requires_grad(lib, write):
    a = _leaf(lib)
    inner = a.t()[1:]
    a.requires_grad_()
    write(lib, inner)
    return a.is_leaf


def _no_grad_write(lib, write):
    a = _leaf(lib)
    view = a[0]
    a.requires_grad_()
    with lib.no_grad():
        write(lib, view)
    return a.is_leaf, a.tolist()


def _other_requires_grad(lib, write):
    # Only the other operand requires grad: the view does not, so PyTorch records the write
    # (the base gets CopySlices) instead of refusing it.
    a = _leaf(lib)
    view = a[0]
    view.add_(lib.ones(2, requires_grad=True))
    return a.is_leaf, a.requires_grad, type(a.grad_fn).__name__


WRITES = {
    "sigmoid_": lambda lib, v: v.sigmoid_(),
    "add_": lambda lib, v: v.add_(1),
    "zero_": lambda lib, v: v.zero_(),
    "copy_": lambda lib, v: v.copy_(lib.ones(v.shape)),
    "setitem": lambda lib, v: v.__setitem__(0, 5.0),
    "setitem ellipsis": lambda lib, v: v.__setitem__(Ellipsis, 5.0),
    "setitem slice": lambda lib, v: v.__setitem__(slice(None), 5.0),
}
PROGRAMS = [_view_then_requires_grad, _base_stops_requiring_grad,
            _view_of_view_then_requires_grad, _no_grad_write]


def _outcome(fn):
    try:
        return ("ok", fn())
    except RuntimeError as error:
        return ("RuntimeError", str(error))


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_writes_to_views_of_leaves(program, write):
    expected = _outcome(lambda: program(torch, WRITES[write]))
    assert _outcome(lambda: program(chainrule, WRITES[write])) == expected


def test_write_recorded_when_only_the_other_operand_requires_grad():
    expected = _outcome(lambda: _other_requires_grad(torch, None))
    assert expected[0] == "ok"
    assert _outcome(lambda: _other_requires_grad(chainrule, None)) == expected


DETACHES = {
    "view of a leaf that requires grad": lambda lib: _leaf(lib, True)[0],
    "view of a leaf without grad": lambda lib: _leaf(lib)[0],
    "view of a detached tensor": lambda lib: _leaf(lib, True).detach()[0],
    "transposed view": lambda lib: _leaf(lib).t(),
    "unbind output": lambda lib: _leaf(lib, True).unbind(0)[0],
    "view of a non-leaf": lambda lib: (_leaf(lib, True) * 2).view(-1),
    "not a view": lambda lib: _leaf(lib, True) * 2,
}


@pytest.mark.parametrize("case", list(DETACHES))
def test_detach_in_place(case):
    def program(lib):
        t = DETACHES[case](lib)
        t.detach_()
        return t.requires_grad, t.is_leaf

    expected = _outcome(lambda: program(torch))
    assert _outcome(lambda: program(chainrule)) == expected
