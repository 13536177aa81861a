"""The generated recorders (ops/_recorder.py): one per op and pattern of inputs needing grad,
shared by every way of calling the op, straight-line code."""

from __future__ import annotations

import chainrule
from chainrule.ops import pointwise
from chainrule.ops._recorder import recorder_source


def test_one_recorder_per_op_and_pattern_shared_by_every_path() -> None:
    op = pointwise.mul.op
    op.recorders.clear()
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = chainrule.tensor([3.0, 4.0])
    fast = x * y  # the two-input fast path
    record = op.recorders[(True, False)]
    general = chainrule.mul(x, other=y)  # keywords: the general runner
    assert op.recorders[(True, False)] is record and len(op.recorders) == 1
    both = chainrule.mul(x, x)
    assert set(op.recorders) == {(True, False), (True, True)}
    for out in (fast, general):
        assert type(out.grad_fn).__name__ == "MulBackward0"
        assert out.grad_fn.next_functions[1] == (None, 0)
        assert out.grad_fn._saved_other is y and out.grad_fn._saved_self is None
    assert both.grad_fn._saved_self is x
    (fast.sum() + general.sum() + both.sum()).backward()
    assert x.grad.tolist() == [8.0, 12.0]


def test_recorder_source_is_straight_line_code() -> None:
    source = recorder_source(pointwise.mul.op, (True, False))
    assert "for " not in source and "keep_args" in source
    # the edges as two flat tuples (input 1, a number, has none)
    assert "node._next_fns = (f0, None)" in source and "node._next_nrs = (n0, 0)" in source
    compile(source, "<test>", "exec")


def test_registering_a_derivative_drops_cached_recorders() -> None:
    op = pointwise.mul.op
    x = chainrule.tensor([1.0], requires_grad=True)
    _ = x * 2.0
    assert op.recorders
    derivatives = list(op.derivatives)
    assert derivatives[0] is not None
    try:
        op.derivative("self")(derivatives[0].fn)  # the same formula again: re-planned
        assert not op.recorders
        _ = x * 2.0
        assert op.recorders
    finally:  # (the op table is global: leave mul as it was whatever happened)
        op.derivatives[:] = derivatives
        op._plans.clear()
        op.recorders.clear()
