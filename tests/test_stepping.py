"""backward_steps runs the real engine: same order as backward()'s hooks, same gradients."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule
from chainrule.autograd.stepping import backward_steps

from .conftest import torch


def _program(lib, seed: int):
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal(3), requires_grad=True)
    x = lib.tensor(rng.standard_normal(3), requires_grad=True)
    a = w * x
    b = (a + w).exp()
    c = b * a - x.sin()
    d = c.sum() + (w * w).sum()
    return w, x, d


def _hook_order(seed: int) -> list[str]:
    """Node order of a plain backward(), observed through node pre-hooks."""
    w, x, d = _program(chainrule, seed)
    order: list[str] = []
    seen = set()
    stack = [d.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.register_prehook(lambda g, n=node: order.append(n))
        stack.extend(child for child, _ in node.next_functions)
    d.backward()
    return order


@pytest.mark.parametrize("seed", range(5))
def test_steps_follow_backward_order_and_results(seed: int) -> None:
    w, x, d = _program(chainrule, seed)
    nodes = [step.node for step in backward_steps(d)]
    stepped = (w.grad.numpy().copy(), x.grad.numpy().copy())
    # The same program backpropagated with backward(): the same node sequence (by name) ...
    expected = [n.name() for n in _hook_order(seed)]
    assert [n.name() for n in nodes] == expected
    # ... and the same gradients, which are PyTorch's.
    tw, tx, td = _program(torch, seed)
    td.backward()
    np.testing.assert_allclose(stepped[0], tw.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(stepped[1], tx.grad.numpy(), rtol=1e-6)


def test_step_records_what_flowed() -> None:
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    y = (w + x) * (w + 1)
    steps = list(backward_steps(y))
    assert [s.name for s in steps] == [
        "MulBackward0", "AddBackward0", "AddBackward0", "AccumulateGrad", "AccumulateGrad",
    ]
    assert [float(g) for g in steps[0].grad_inputs] == [2.0, 3.0]
    assert steps[1].grad_inputs[1] is None  # the constant 1 gets no gradient
    assert [float(s.grad_outputs[0]) for s in steps[3:]] == [5.0, 2.0]
    assert steps[3].node.variable is w


def test_stopping_early_leaves_the_rest_unrun() -> None:
    w = chainrule.tensor([1.0], requires_grad=True)
    y = (w * 2).exp()
    steps = backward_steps(y, retain_graph=True)
    first = next(steps)
    assert first.name == "ExpBackward0"
    steps.close()
    assert w.grad is None
    y.backward()  # the graph was retained
    np.testing.assert_allclose(w.grad.numpy(), [2 * np.exp(2.0)], rtol=1e-6)


def test_steps_free_the_graph_like_backward() -> None:
    w = chainrule.tensor([1.0], requires_grad=True)
    y = (w * w).sum()
    list(backward_steps(y))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_backward_steps_is_exported_from_autograd() -> None:
    assert chainrule.autograd.backward_steps is backward_steps
