"""A leaf's ``.grad`` never aliases memory anything else holds.

The engine lets a leaf keep a gradient array without copying it when nothing but the engine
refers to that array (or to the array it is a view of), as PyTorch does with its use count.
These tests hold the gradient elsewhere in every way a user can and check that ``.grad`` is a
separate array, and that gradients no one else holds are still correct.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import chainrule


def _shares(t: chainrule.Tensor, other: Any) -> bool:
    data = other._data if isinstance(other, chainrule.Tensor) else other
    return bool(np.shares_memory(t.grad._data, data))


def test_user_gradient_is_copied() -> None:
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    g = chainrule.tensor([3.0, 4.0])
    w.backward(g)
    assert not _shares(w, g)
    (w + 1).backward(g)
    assert not _shares(w, g)
    assert w.grad.tolist() == [6.0, 8.0]


def test_user_gradient_through_an_identity_is_copied() -> None:
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    g = chainrule.tensor([3.0, 4.0])
    (w + 1).backward(g)
    assert not _shares(w, g)
    g.add_(1.0)
    assert w.grad.tolist() == [3.0, 4.0]


def test_gradient_shared_by_two_leaves_is_not_aliased() -> None:
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    y = (w + x) * 3.0
    y.backward()
    assert not np.shares_memory(w.grad._data, x.grad._data)
    w.grad.add_(1.0)
    assert x.grad.tolist() == [3.0]


def test_gradient_kept_by_a_hook_is_not_aliased() -> None:
    kept: list[chainrule.Tensor] = []
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    a = w + 0.0  # passes its gradient on to w unchanged
    a.register_hook(kept.append)
    (a * 2.0).sum().backward()
    assert kept and not _shares(w, kept[0])
    kept[0].add_(1.0)
    assert w.grad.tolist() == [2.0, 2.0]


def test_gradient_viewed_by_a_hook_is_not_aliased() -> None:
    views: list[np.ndarray] = []
    w = chainrule.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a = w + 0.0
    a.register_hook(lambda g: views.append(g._data[0]))
    (a * 2.0).sum().backward()
    assert views and not _shares(w, views[0])


def test_view_of_an_unheld_gradient_is_correct() -> None:
    w = chainrule.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = chainrule.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    (x @ w.t()).sum().backward()
    (x @ w.t()).sum().backward()
    assert w.grad.tolist() == [[4.0, 4.0], [4.0, 4.0]]


def test_custom_function_returning_a_held_array_is_copied() -> None:
    held = chainrule.tensor([5.0, 6.0])

    class Constant(chainrule.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: chainrule.Tensor) -> chainrule.Tensor:
            return x * 1.0

        @staticmethod
        def backward(ctx: Any, grad: chainrule.Tensor) -> chainrule.Tensor:
            return held

    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    Constant.apply(w).sum().backward()
    assert not _shares(w, held)
    held.add_(1.0)
    assert w.grad.tolist() == [5.0, 6.0]


def test_step_records_do_not_alias_grad() -> None:
    from chainrule.autograd.stepping import backward_steps

    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    records = list(backward_steps((w * 2.0).sum()))
    for record in records:
        for g in (*record.grad_outputs, *record.grad_inputs):
            if isinstance(g, np.ndarray | chainrule.Tensor):
                assert not _shares(w, g)
    assert w.grad.tolist() == [2.0, 2.0]


def test_new_gradients_still_accumulate_correctly() -> None:
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (w * w).sum().backward()
    assert w.grad.tolist() == [6.0, 12.0]


def test_sole_owner_counts_other_references() -> None:
    """The calibrated counts: a lone array or lone view is owned; any other holder of it, or of
    the memory under it, makes it shared."""
    from chainrule.autograd import engine

    g = np.empty(3)
    assert engine._sole_owner(g)
    also = g
    assert not engine._sole_owner(g)
    del also
    view = np.empty(4)[:2]
    assert engine._sole_owner(view)
    base = view.base
    assert not engine._sole_owner(view)
    del base
    middle = np.empty(4)[:2]
    inner = middle[:1]  # NumPy points inner.base at the owner, which middle also holds
    assert not engine._sole_owner(inner)
    del middle
    assert engine._sole_owner(inner)
    assert not engine._sole_owner(np.frombuffer(bytearray(8)))  # memory NumPy does not own
