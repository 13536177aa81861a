"""Errors against PyTorch: the exception type and message of every error the issue lists
(implicit gradient of a non-scalar, element 0 does not require grad, gradient shape mismatch,
integer requires_grad, numpy() of a tensor that requires grad, unused inputs, the second
backward, broadcasting and matrix-product shapes) and more; and that after each error nothing
changed: ``.grad`` values and graphs are as they were (a later backward still works)."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .test_tensor_api import assert_raises_same, assert_same, normalise


def _xw(lib):
    return (lib.tensor([1.0, 2.0], requires_grad=True),
            lib.tensor([3.0, 4.0], requires_grad=True))


def _m(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float32, requires_grad=True)


AUTOGRAD_ERRORS = {
    "implicit gradient of a non-scalar": lambda lib: (_xw(lib)[0] * 2).backward(),
    "implicit gradient of a non-scalar in grad": lambda lib: (
        lambda x: lib.autograd.grad(x * 2, x)
    )(_xw(lib)[0]),
    "implicit gradient of an integer output": lambda lib: (
        (_xw(lib)[0] * 2).sum().long().backward()
    ),
    "element 0 does not require grad": lambda lib: lib.ones(2).sum().backward(),
    "element 1 does not require grad": lambda lib: lib.autograd.backward(
        [(_xw(lib)[0] * 2).sum(), lib.ones(1).sum()]
    ),
    "grad of an output without grad": lambda lib: lib.autograd.grad(
        lib.ones(1).sum(), _xw(lib)[0]
    ),
    "gradient shape mismatch": lambda lib: (_xw(lib)[0] * 2).backward(lib.ones(3)),
    "grad_outputs shape mismatch": lambda lib: (
        lambda x: lib.autograd.grad(x * 3, x, lib.ones(2, 1))
    )(_xw(lib)[0]),
    "integer requires_grad": lambda lib: lib.tensor([1], requires_grad=True),
    "integer requires_grad_()": lambda lib: lib.tensor([1]).requires_grad_(),
    "integer factory requires_grad": lambda lib: lib.zeros(2, dtype=lib.int64,
                                                           requires_grad=True),
    "numpy() of a tensor that requires grad": lambda lib: _xw(lib)[0].numpy(),
    "numpy() of a non-leaf": lambda lib: (_xw(lib)[0] * 2).numpy(),
    "unused input in autograd.grad": lambda lib: (
        lambda x, w: lib.autograd.grad((x * 2).sum(), [x, w])
    )(*_xw(lib)),
    "unused input, materialize_grads with allow_unused=False": lambda lib: (
        lambda x, w: lib.autograd.grad((x * 2).sum(), [x, w], allow_unused=False,
                                       materialize_grads=True)
    )(*_xw(lib)),
    "input that does not require grad": lambda lib: lib.autograd.grad(
        (_xw(lib)[0] * 2).sum(), [lib.ones(2)]
    ),
    "backward(inputs=[])": lambda lib: (_xw(lib)[0] * 2).sum().backward(inputs=[]),
    "second backward": lambda lib: (lambda y: (y.backward(), y.backward()))(
        (_xw(lib)[0] ** 2).sum()
    ),
    "retain_grad without grad": lambda lib: lib.ones(2).retain_grad(),
    "requires_grad_(False) on a non-leaf": lambda lib: (_m(lib, 2) * 2).requires_grad_(False),
    "in-place on a leaf that requires grad": lambda lib: _m(lib, 2).add_(1),
    "view of a transpose": lambda lib: _m(lib, 2, 3).t().view(6),
}


@pytest.mark.parametrize("case", AUTOGRAD_ERRORS, ids=str)
def test_autograd_errors_match_torch(case: str) -> None:
    assert_raises_same(AUTOGRAD_ERRORS[case])


SHAPE_ERRORS = {
    "broadcast add": lambda lib: lib.ones(2, 3) + lib.ones(2, 4),
    "broadcast with grad": lambda lib: _m(lib, 2, 3) * _m(lib, 4, 1, 4),
    "broadcast 1-D": lambda lib: lib.ones(3) - lib.ones(4),
    "broadcast mul": lambda lib: lib.mul(lib.ones(2, 3), lib.ones(3, 2)),
    "mm shapes": lambda lib: lib.mm(_m(lib, 2, 3), _m(lib, 4, 5)),
    "mm 1-D first": lambda lib: lib.mm(_m(lib, 3), _m(lib, 3, 2)),
    "mm 1-D second": lambda lib: lib.mm(_m(lib, 2, 3), _m(lib, 3)),
    "mm dtypes": lambda lib: lib.mm(lib.ones(2, 3), lib.ones(3, 2, dtype=lib.float64)),
    "mm int dtypes": lambda lib: lib.mm(lib.ones(2, 3, dtype=lib.int32),
                                        lib.ones(3, 2, dtype=lib.int64)),
    "mv shapes": lambda lib: lib.mv(_m(lib, 2, 3), _m(lib, 4)),
    "mv of a matrix": lambda lib: lib.mv(_m(lib, 2, 3), _m(lib, 3, 1)),
    "mv dtypes": lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3, dtype=lib.float64)),
    "dot shapes": lambda lib: lib.dot(_m(lib, 3), _m(lib, 4)),
    "dot of a matrix": lambda lib: lib.dot(_m(lib, 3, 1), _m(lib, 3)),
    "dot dtypes": lambda lib: lib.dot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "dot int and float": lambda lib: lib.dot(lib.ones(3, dtype=lib.int64), lib.ones(3)),
    "bmm shapes": lambda lib: lib.bmm(_m(lib, 2, 2, 3), _m(lib, 2, 4, 5)),
    "bmm batches": lambda lib: lib.bmm(_m(lib, 2, 2, 3), _m(lib, 3, 3, 5)),
    "bmm 2-D first": lambda lib: lib.bmm(_m(lib, 2, 3), _m(lib, 3, 2)),
    "bmm 2-D second": lambda lib: lib.bmm(_m(lib, 1, 2, 3), _m(lib, 3, 2)),
    "bmm dtypes": lambda lib: lib.bmm(lib.ones(1, 2, 3), lib.ones(1, 3, 2, dtype=lib.float64)),
    "outer of a matrix": lambda lib: lib.outer(_m(lib, 2, 2), _m(lib, 3)),
    "addmm product shapes": lambda lib: lib.addmm(_m(lib, 2, 5), _m(lib, 2, 3), _m(lib, 4, 5)),
    "addmm self shape": lambda lib: lib.addmm(_m(lib, 3, 3), _m(lib, 2, 3), _m(lib, 3, 4)),
    "addmm self rows": lambda lib: lib.addmm(_m(lib, 3, 4), _m(lib, 2, 3), _m(lib, 3, 4)),
    "addmm self 1-D": lambda lib: lib.addmm(_m(lib, 5), _m(lib, 2, 3), _m(lib, 3, 4)),
    "addmm self 3-D": lambda lib: lib.addmm(_m(lib, 2, 3, 4), _m(lib, 2, 3), _m(lib, 3, 4)),
    "addmm 1-D mat1": lambda lib: lib.addmm(_m(lib, 4), _m(lib, 3), _m(lib, 3, 4)),
    "addmm 1-D mat2": lambda lib: lib.addmm(_m(lib, 2, 4), _m(lib, 2, 3), _m(lib, 3)),
    "addmm self dtype": lambda lib: lib.addmm(lib.ones(2, 2, dtype=lib.float64),
                                              lib.ones(2, 3), lib.ones(3, 2)),
    "addmm mat2 dtype": lambda lib: lib.addmm(lib.ones(2, 2), lib.ones(2, 3),
                                              lib.ones(3, 2, dtype=lib.float64)),
    "addmm mat1 dtype": lambda lib: lib.addmm(lib.ones(2, 2), lib.ones(2, 3, dtype=lib.float64),
                                              lib.ones(3, 2)),
    "matmul 1-1": lambda lib: lib.matmul(_m(lib, 3), _m(lib, 4)),
    "matmul 2-1": lambda lib: lib.matmul(_m(lib, 2, 3), _m(lib, 4)),
    "matmul 1-2": lambda lib: lib.matmul(_m(lib, 3), _m(lib, 4, 2)),
    "matmul 2-2": lambda lib: _m(lib, 2, 3) @ _m(lib, 2, 3),
    "matmul 3-2": lambda lib: _m(lib, 2, 2, 3) @ _m(lib, 4, 5),
    "matmul 2-3": lambda lib: _m(lib, 2, 3) @ _m(lib, 2, 4, 5),
    "matmul 3-1": lambda lib: _m(lib, 2, 2, 3) @ _m(lib, 4),
    "matmul 1-3": lambda lib: _m(lib, 4) @ _m(lib, 2, 3, 5),
    "matmul 3-3": lambda lib: _m(lib, 2, 2, 3) @ _m(lib, 2, 4, 5),
    "matmul batches": lambda lib: _m(lib, 2, 2, 3) @ _m(lib, 3, 3, 5),
    "matmul batches without grad": lambda lib: lib.ones(2, 2, 3) @ lib.ones(3, 3, 5),
    "matmul 4-3 batches": lambda lib: _m(lib, 2, 3, 2, 3) @ _m(lib, 4, 3, 5),
    "matmul 0-D": lambda lib: lib.matmul(_m(lib), _m(lib, 3)),
    "matmul of a list": lambda lib: lib.matmul(_m(lib, 3), [1.0, 2.0, 3.0]),
    "@ a list": lambda lib: _m(lib, 3) @ [1.0, 2.0, 3.0],
    "matmul dtypes": lambda lib: lib.ones(2, 3) @ lib.ones(3, 2, dtype=lib.float64),
    "matmul int and float": lambda lib: lib.ones(2, 3, dtype=lib.int64) @ lib.ones(3, 2),
    "matmul 1-1 dtypes": lambda lib: lib.matmul(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "matmul 3-1 dtypes": lambda lib: lib.matmul(lib.ones(2, 2, 3), lib.ones(3, dtype=lib.float64)),
    "matmul 3-3 dtypes": lambda lib: lib.matmul(lib.ones(2, 2, 3),
                                                lib.ones(2, 3, 2, dtype=lib.float64)),
    "linear weight": lambda lib: lib.nn.functional.linear(_m(lib, 2, 3), _m(lib, 4, 5), _m(lib, 4)),
    "linear bias": lambda lib: lib.nn.functional.linear(_m(lib, 2, 3), _m(lib, 4, 3), _m(lib, 5)),
    "linear 2-D bias": lambda lib: lib.nn.functional.linear(_m(lib, 2, 3), _m(lib, 4, 3),
                                                           _m(lib, 3, 4)),
    "linear 1-D input bias": lambda lib: lib.nn.functional.linear(_m(lib, 3), _m(lib, 4, 3),
                                                                 _m(lib, 5)),
    "linear 3-D input bias": lambda lib: lib.nn.functional.linear(_m(lib, 2, 2, 3), _m(lib, 4, 3),
                                                                 _m(lib, 5)),
    "linear 1-D input": lambda lib: lib.nn.functional.linear(_m(lib, 5), _m(lib, 4, 3)),
}


@pytest.mark.parametrize("case", SHAPE_ERRORS, ids=str)
def test_shape_and_dtype_errors_match_torch(case: str) -> None:
    assert_raises_same(SHAPE_ERRORS[case])


def test_modified_saved_tensor_error_starts_like_torch() -> None:
    """chainrule adds where the tensor was modified; the rest is PyTorch's message."""

    def modified(lib):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        z = (y * 1).sum()
        y.mul_(2)
        z.backward()

    def second_case(lib):
        x = lib.ones(2, requires_grad=True)
        h = x * 2
        y = h * h
        h.add_(1)
        y.sum().backward()

    for make in (modified, second_case):
        messages = []
        for lib in (chainrule, torch):
            with pytest.raises(RuntimeError) as caught:
                make(lib)
            messages.append(normalise(str(caught.value)))
        assert messages[0].startswith(messages[1])


# ----------------------------------------------------------------------------------------------
# After an error nothing changed: grads and graphs are intact


def _state_after(error: Any):
    """A snapshot after ``error(lib, x, w, y)`` fails on a graph that already ran once with
    ``retain_graph=True``: the error, the grads, then the result of using the graph again."""

    def run(lib):
        x, w = _xw(lib)
        y = x * w
        y.sum().backward(retain_graph=True)
        try:
            error(lib, x, w, y)
        except Exception as caught:  # noqa: BLE001 - the error is part of the snapshot
            raised = f"{type(caught).__name__}: {caught}"
        else:
            raised = None
        grads_after_error = x.grad.clone(), w.grad.clone()
        try:
            y.backward(lib.tensor([1.0, -1.0]))
            again = x.grad, w.grad
        except RuntimeError as caught:
            again = f"RuntimeError: {caught}"
        return raised, grads_after_error, again

    return run


STATE_CASES = {
    "implicit gradient of a non-scalar": lambda lib, x, w, y: y.backward(),
    "gradient shape mismatch": lambda lib, x, w, y: y.backward(lib.ones(3)),
    "gradient of the wrong type": lambda lib, x, w, y: y.backward(2.0),
    "element 1 does not require grad": lambda lib, x, w, y: lib.autograd.backward(
        [y.sum(), lib.ones(1).sum()]
    ),
    "grad of an input without grad": lambda lib, x, w, y: lib.autograd.grad(
        y.sum(), [x, lib.ones(2)]
    ),
    "unused input (the graph ran)": lambda lib, x, w, y: lib.autograd.grad(
        y.sum(), [x, lib.ones(2, requires_grad=True)]
    ),
    "broadcasting in the forward": lambda lib, x, w, y: y + lib.ones(3),
    "matmul in the forward": lambda lib, x, w, y: y @ lib.ones(3, requires_grad=True),
    "numpy()": lambda lib, x, w, y: y.numpy(),
    "requires_grad_(False)": lambda lib, x, w, y: y.requires_grad_(False),
    "grad assignment of another shape": lambda lib, x, w, y: setattr(x, "grad", lib.ones(3)),
    "in-place on a leaf": lambda lib, x, w, y: x.add_(1),
}


@pytest.mark.parametrize("case", STATE_CASES, ids=str)
def test_nothing_changes_after_an_error(case: str) -> None:
    ours = _state_after(STATE_CASES[case])(chainrule)
    assert ours[0] is not None, "the case must raise"
    assert_same(_state_after(STATE_CASES[case]))


def test_requires_grad_flags_unchanged_after_errors() -> None:
    def flags(lib):
        y = _m(lib, 2) * 2
        for bad in (lambda: y.requires_grad_(False), lambda: y.numpy(), lambda: y.backward()):
            try:
                bad()
            except RuntimeError:
                pass
        return y.requires_grad, y.is_leaf, y.grad_fn is not None

    assert_same(flags)


# ----------------------------------------------------------------------------------------------
# Gaps (autograd/engine.py, ops/shape.py)


def test_grad_with_empty_inputs_matches_torch() -> None:
    assert_raises_same(lambda lib: lib.autograd.grad((_xw(lib)[0] * 2).sum(), []))


def test_backward_inputs_without_grad_matches_torch() -> None:
    assert_raises_same(lambda lib: (_xw(lib)[0] * 2).sum().backward(inputs=[lib.ones(2)]))


def test_extra_gradients_are_ignored_like_torch() -> None:
    assert_raises_same(lambda lib: (_xw(lib)[0] * 2).backward([1.0, 1.0]))
    def extra(lib):
        x = _xw(lib)[0]
        lib.autograd.backward([x * 2], [lib.ones(2), lib.ones(2)])
        return x.grad, lib.autograd.grad([x * 3], [x], [lib.ones(2), lib.ones(2)])

    assert_same(extra)


def test_expand_error_names_the_last_mismatching_dimension() -> None:
    assert_raises_same(lambda lib: lib.ones(3, 3).expand(2, 4))
