"""A leaf's ``.grad`` never aliases memory anything else holds.

The engine lets a leaf keep a gradient array without copying it when nothing but the engine
refers to that array (or to the array it is a view of), as PyTorch does with its use count.
These tests hold the gradient elsewhere in every way a user can and check that ``.grad`` is a
separate array, and that gradients no one else holds are still correct.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

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


def _ownership(monkeypatch: Any, run: Any) -> list[bool]:
    """Whether the engine handed each leaf's first gradient over as its own (no copy)."""
    from chainrule.autograd import engine

    seen: list[bool] = []
    accumulate = engine.accumulate_grad

    def spy(var: Any, g: Any, create_graph: bool, owned: bool = False) -> None:
        seen.append(owned)
        accumulate(var, g, create_graph, owned)

    monkeypatch.setattr(engine, "accumulate_grad", spy)
    run()
    return seen


def test_ownership_rule(monkeypatch: Any) -> None:
    """The engine owns what an op-table derivative made (a new array) or what it made itself
    (a sum, a reduction); it does not own the incoming gradient passed on, a view of it, a
    user's array, a custom Function's result, or anything a step record shows. A leaf hook's
    result it owns when nothing else holds it."""
    from chainrule.autograd.stepping import backward_steps

    def leaf() -> chainrule.Tensor:
        return chainrule.tensor([1.0, 2.0], requires_grad=True)

    w, x = leaf(), leaf()
    assert _ownership(monkeypatch, lambda: (w * 3.0).sum().backward()) == [True]
    w = leaf()
    assert _ownership(monkeypatch, lambda: (w + 1.0).backward(chainrule.ones(2))) == [False]
    w = leaf()
    assert _ownership(monkeypatch, lambda: (w + x).sum().backward()) == [False, False]
    w = leaf()
    assert _ownership(monkeypatch, lambda: (w * w).sum().backward()) == [True]  # a sum
    w = leaf()
    # (the engine's reduction of the broadcast gradient; a view is not owned)
    assert _ownership(monkeypatch, lambda: (w + chainrule.zeros(3, 2)).sum().backward()) == [True]
    # A view node's gradient is a view of its incoming one: owned when the engine owned that
    # (here MulBackward0's new array), not when the user gave it.
    w = leaf()
    assert _ownership(monkeypatch, lambda: (w[None] * 2.0).sum().backward()) == [True]
    w = leaf()
    assert _ownership(monkeypatch, lambda: w[None].backward(chainrule.ones(1, 2))) == [False]
    w = leaf()  # a weight seen through .t(), as nn.Linear's: AddmmBackward0 -> TBackward0
    x = chainrule.ones(3, 2)
    assert _ownership(monkeypatch, lambda: (x @ w.view(1, 2).t()).sum().backward()) == [True]
    # (the incoming gradient of a view node that also reaches a second leaf is not owned)
    w, v = leaf(), leaf()
    assert _ownership(monkeypatch, lambda: ((w + v).t() * 2.0).sum().backward()) == [
        False, False]
    w = leaf()
    assert _ownership(monkeypatch, lambda: list(backward_steps((w * 3.0).sum()))) == [False]

    class Twice(chainrule.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: chainrule.Tensor) -> chainrule.Tensor:
            return t * 2.0

        @staticmethod
        def backward(ctx: Any, grad: chainrule.Tensor) -> chainrule.Tensor:
            return grad * 2.0

    w = leaf()
    assert _ownership(monkeypatch, lambda: Twice.apply(w).sum().backward()) == [False]
    # A leaf hook's result: owned unless the hook kept it (PyTorch's use count).
    w = leaf()
    w.register_hook(lambda g: g * 1.0)
    assert _ownership(monkeypatch, lambda: (w * 3.0).sum().backward()) == [True]
    kept: list[chainrule.Tensor] = []
    w = leaf()
    w.register_hook(lambda g: kept.append(g * 1.0) or kept[-1])
    assert _ownership(monkeypatch, lambda: (w * 3.0).sum().backward()) == [False]


@pytest.mark.parametrize("cotangent", ["user", "engine", "autograd.grad"])
def test_no_leaf_gradient_aliases_anything_in_the_sweep(cotangent: str) -> None:
    """Every OpInfo sample, backward with a cotangent the user gives, or one the engine makes
    (``(out * c).sum()``: the op's node then runs on a gradient the engine owns, so a view
    node's result may become ``.grad`` uncopied): each leaf's ``.grad`` is memory of its own
    (the op table's derivative contract, which the engine's ownership rule relies on), and
    adding to one ``.grad`` in place changes no other leaf's."""
    from .opinfos import ALL_OPS
    from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs

    checked = 0
    for info in ALL_OPS:
        for index in range(len(info.shapes)):
            arrays = sample_inputs(info, index, "float64")
            requires = requires_grad_flags(info, arrays)
            xs = [chainrule.from_numpy(a.copy()).requires_grad_(r)
                  for a, r in zip(arrays, requires, strict=True)]
            try:
                outs = [o for o in flat_outputs(info.fn(chainrule, *xs)) if o.requires_grad]
            except (RuntimeError, ValueError, TypeError, NotImplementedError):
                continue
            if not outs:
                continue
            cotangents = [chainrule.ones_like(o) for o in outs]
            try:
                if cotangent == "user":
                    chainrule.autograd.backward(outs, cotangents)
                else:
                    loss = sum((o * (1.5 + k)).sum() for k, o in enumerate(outs))
                    if cotangent == "autograd.grad":  # (results as if they were .grad)
                        wanted = [x for x in xs if x.requires_grad]
                        results = chainrule.autograd.grad(loss, wanted, allow_unused=True)
                        for x, g in zip(wanted, results, strict=True):
                            x.grad = g
                    else:
                        loss.backward()
            except (RuntimeError, NotImplementedError, TypeError):
                continue
            held = [x._data for x in xs] + [o._data for o in outs] + [
                c._data for c in cotangents]
            with_grad = [x for x in xs if x.grad is not None]
            grads = [x.grad._data for x in with_grad]
            for i, g in enumerate(grads):
                others = held + grads[:i] + grads[i + 1:]
                assert not any(np.shares_memory(g, h) for h in others), info.name
            before = [x.grad.clone() for x in with_grad]
            for x, b in zip(with_grad, before, strict=True):
                x.grad.add_(1.0)  # as a second backward accumulates
                for y, c in zip(with_grad, before, strict=True):
                    if y is not x:
                        assert chainrule.equal(y.grad, c), info.name
                x.grad.copy_(b)
            checked += len(grads)
    assert checked > 1500
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


def test_autograd_grad_results_never_share_memory() -> None:
    """autograd.grad hands over a captured leaf gradient the engine owns without copying it;
    one asked for twice, or seen by a hook, is copied."""
    w = chainrule.tensor([1.0, 2.0], requires_grad=True)
    x = chainrule.ones(3, 2)
    first, second = chainrule.autograd.grad((x @ w.view(1, 2).t()).sum(), [w, w])
    assert not np.shares_memory(first._data, second._data)
    first.add_(1.0)
    assert second.tolist() == [3.0, 3.0]
    kept: list[chainrule.Tensor] = []
    w.register_hook(lambda g: kept.append(g) or None)
    (result,) = chainrule.autograd.grad((w * 3.0).sum(), w)
    assert kept and not np.shares_memory(result._data, kept[0]._data)
    result.add_(1.0)
    assert kept[0].tolist() == [3.0, 3.0]


def test_autograd_grad_of_a_view_and_its_base_do_not_share_memory() -> None:
    """A view node's incoming gradient captured by autograd.grad is the user's: the base's
    gradient (a view of it through TBackward0) is then copied."""
    w = chainrule.tensor([[1.0, 2.0]], requires_grad=True)
    wt = w.t()
    loss = (chainrule.ones(3, 2) @ wt * 2.0).sum()
    g_wt, g_w = chainrule.autograd.grad(loss, [wt, w])
    assert not np.shares_memory(g_wt._data, g_w._data)
    g_wt.add_(1.0)
    assert g_w.tolist() == [[6.0, 6.0]]


def test_gradient_a_hook_kept_on_a_view_is_not_the_base_grad() -> None:
    kept: list[chainrule.Tensor] = []
    w = chainrule.tensor([[1.0, 2.0]], requires_grad=True)
    wt = w.t()
    wt.register_hook(lambda g: kept.append(g) or None)
    (chainrule.ones(3, 2) @ wt * 2.0).sum().backward()
    assert kept and not np.shares_memory(kept[0]._data, w.grad._data)
    kept[0].add_(1.0)
    assert w.grad.tolist() == [[6.0, 6.0]]


def test_rows_of_one_gradient_buffer_accumulate_separately() -> None:
    """Deliberately not PyTorch 2.13's answer: there, ``StackBackward0`` hands both leaves rows
    of one (expanded) gradient, ``AccumulateGrad`` keeps both as ``.grad`` without a copy, and a
    second backward adds each leaf's gradient into the shared memory twice (6 instead of 4).
    chainrule keeps two arrays and gives the true sum (README: Differences, on purpose)."""
    from .conftest import torch

    results = []
    for lib in (torch, chainrule):
        a = lib.ones(3, dtype=lib.float64, requires_grad=True)
        b = lib.ones(3, dtype=lib.float64, requires_grad=True)
        out = (lib.stack([a, b]).sum(0) * 2).sum()
        out.backward(retain_graph=True)
        out.backward()
        results.append((a.grad.tolist(), b.grad.tolist()))
    assert results[0] == ([6.0] * 3, [6.0] * 3)  # PyTorch 2.13 (wrong: 2 + 2 is 4)
    assert results[1] == ([4.0] * 3, [4.0] * 3)
    a = chainrule.ones(3, requires_grad=True)
    b = chainrule.ones(3, requires_grad=True)
    (chainrule.stack([a, b]).sum(0) * 2).sum().backward()
    assert not np.shares_memory(a.grad._data, b.grad._data)


@pytest.mark.parametrize("hook", ["tensor", "node_pre"])
def test_gradient_a_hook_replaced_is_not_aliased_by_two_leaves(hook: str) -> None:
    """A hook on ``a + c`` returns a new gradient, which AddBackward0 sends to both leaves: it
    may become one ``.grad`` uncopied, not both (they once shared it, so a second backward
    added each leaf's gradient twice: 3x a single pass where PyTorch gives 2x)."""
    from .conftest import torch

    results = []
    for lib in (torch, chainrule):
        a = lib.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=lib.float64, requires_grad=True)
        c = lib.tensor([[0.5, 0.6], [0.7, 0.8]], dtype=lib.float64, requires_grad=True)
        s = a + c
        if hook == "tensor":
            s.register_hook(lambda g: g * 2.0)
        else:
            s.grad_fn.register_prehook(lambda grads: (grads[0] * 2.0,))
        out = s.exp().sum()
        out.backward(retain_graph=True)
        out.backward()
        results.append((a.grad.tolist(), c.grad.tolist()))
        if lib is chainrule:
            assert not np.shares_memory(a.grad._data, c.grad._data)
    assert results[1] == results[0]
