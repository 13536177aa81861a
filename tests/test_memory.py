"""Memory: saved arrays are released by a backward that does not retain the graph (and kept by
one that does), graphs hold no reference cycles, so reference counting alone frees them (the
checks run with the cyclic garbage collector off), and memory falls back after backward."""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import chainrule


@pytest.fixture(autouse=True)
def _no_cyclic_gc() -> Iterator[None]:
    """Only reference counting frees objects during these tests."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _leaf(*shape: int) -> chainrule.Tensor:
    rng = np.random.default_rng(0)
    return chainrule.from_numpy(rng.uniform(0.5, 1.5, shape)).requires_grad_()


# Each builder makes a loss from ``x`` through intermediates that only the graph keeps (their
# Python names are gone when it returns) and weak references to the arrays the graph saved.

def _mul_of_intermediates(x):
    h = x * 2
    return (h * h).sum(), [weakref.ref(h._data)]


def _exp_saves_its_result(x):
    e = x.exp()
    return (e * 3).sum(), [weakref.ref(e._data)]


def _mm_saves_both_operands(x):
    a = x * 2
    b = x.t() + 1
    return chainrule.mm(a, b).sum(), [weakref.ref(a._data), weakref.ref(b._data)]


def _matmul_batched(x):
    a = (x * 3).reshape(1, 4, 4).expand(2, 4, 4)
    e = x.exp()  # ExpBackward0 saves this result
    b = e.reshape(1, 4, 4) + 0
    return chainrule.matmul(a, b).sum(), [weakref.ref(e._data)]


def _chain_of_unary_ops(x):
    s = x.sigmoid()
    t = s.tanh()
    p = t ** 3
    return p.mean(), [weakref.ref(s._data), weakref.ref(t._data)]


BUILDERS: dict[str, Callable[[Any], tuple[Any, list[weakref.ref]]]] = {
    "mul": _mul_of_intermediates,
    "exp": _exp_saves_its_result,
    "mm": _mm_saves_both_operands,
    "batched matmul": _matmul_batched,
    "unary chain": _chain_of_unary_ops,
}


def _alive(refs: list[weakref.ref]) -> list[bool]:
    return [ref() is not None for ref in refs]


@pytest.mark.parametrize("name", BUILDERS)
def test_saved_arrays_freed_after_backward(name: str) -> None:
    x = _leaf(4, 4)
    loss, saved = BUILDERS[name](x)
    assert all(_alive(saved)), "the graph must hold the saved arrays before backward"
    loss.backward()
    assert not any(_alive(saved))
    assert x.grad is not None


@pytest.mark.parametrize("name", BUILDERS)
def test_retain_graph_keeps_saved_arrays_until_the_last_backward(name: str) -> None:
    x = _leaf(4, 4)
    loss, saved = BUILDERS[name](x)
    loss.backward(retain_graph=True)
    assert all(_alive(saved))
    loss.backward(retain_graph=True)
    assert all(_alive(saved))
    first = x.grad.clone()
    loss.backward()
    assert not any(_alive(saved))
    np.testing.assert_allclose(x.grad.numpy(), 3 * first.numpy() / 2, rtol=1e-6)


@pytest.mark.parametrize("name", BUILDERS)
def test_autograd_grad_frees_saved_arrays(name: str) -> None:
    x = _leaf(4, 4)
    loss, saved = BUILDERS[name](x)
    chainrule.autograd.grad(loss, x)
    assert not any(_alive(saved))


def test_create_graph_retains_the_graph_until_it_is_dropped() -> None:
    x = _leaf(4, 4)
    loss, saved = _exp_saves_its_result(x)
    (grad,) = chainrule.autograd.grad(loss, x, create_graph=True)
    assert all(_alive(saved))  # retain_graph defaults to create_graph, as in PyTorch
    (second,) = chainrule.autograd.grad(grad.sum(), x)
    np.testing.assert_allclose(second.numpy(), 3 * np.exp(x.detach().numpy()), rtol=1e-6)
    del loss, grad
    assert not any(_alive(saved))


@pytest.mark.parametrize("name", BUILDERS)
def test_reference_counting_frees_the_graph(name: str) -> None:
    """Deleting the output frees every node and intermediate at once: no cycles to collect."""
    x = _leaf(4, 4)
    loss, saved = BUILDERS[name](x)
    nodes = [weakref.ref(loss.grad_fn)]
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None:
                nodes.append(weakref.ref(child))
                stack.append(child)
    del node, child, stack
    del loss
    assert not any(_alive(nodes))
    assert not any(_alive(saved))


def test_accumulate_grad_lives_as_long_as_a_graph_uses_it() -> None:
    x = _leaf(3)
    y = x * 2
    accumulator = weakref.ref(y.grad_fn.next_functions[0][0])
    z = x * 3
    assert z.grad_fn.next_functions[0][0] is accumulator()
    del y
    assert accumulator() is not None  # z's graph still holds it
    del z
    assert accumulator() is None
    assert x.grad_fn is None and x.requires_grad


def test_tensors_and_nodes_are_freed_after_backward_and_del() -> None:
    x = _leaf(3)
    h = x * 2
    y = (h.sin() * h).sum()
    refs = [weakref.ref(h), weakref.ref(y), weakref.ref(y.grad_fn), weakref.ref(h.grad_fn)]
    y.backward()
    del h, y
    assert not any(_alive(refs))


def _garbage_after(work: Callable[[], None]) -> list[str]:
    """The types of objects only the cyclic collector could free after ``work`` ran."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        found = [type(o).__name__ for o in gc.garbage
                 if isinstance(o, chainrule.Tensor | chainrule.autograd.Node | np.ndarray)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


def _training_steps() -> None:
    w = _leaf(4, 3)
    b = _leaf(3)
    for _ in range(3):
        x = chainrule.from_numpy(np.ones((2, 4)))
        h = chainrule.nn.functional.linear(x, w.t(), b)
        h.retain_grad()
        loss = (h.sigmoid() ** 2).mean()
        loss.backward()
        with chainrule.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
        b.grad.zero_()


def _higher_order() -> None:
    x = _leaf(3)
    (g,) = chainrule.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (gg,) = chainrule.autograd.grad(g.sum(), x, create_graph=True)
    chainrule.autograd.grad(gg.sum(), x)


def _retained_graph_dropped() -> None:
    x = _leaf(3)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)


def _create_graph_backward_then_reset() -> None:
    # backward(create_graph=True) links x.grad to a graph that reaches x (PyTorch warns of the
    # cycle); resetting .grad breaks it.
    x = _leaf(3)
    with pytest.warns(UserWarning, match="reference cycle"):
        (x ** 2).sum().backward(create_graph=True)
    x.grad = None


def _errors() -> None:
    x = _leaf(3)
    y = x * 2
    for bad in (lambda: y.backward(), lambda: y + chainrule.ones(4), lambda: y.numpy()):
        try:
            bad()
        except RuntimeError:
            pass


@pytest.mark.parametrize(
    "work",
    [_training_steps, _higher_order, _retained_graph_dropped, _create_graph_backward_then_reset,
     _errors],
    ids=["training steps", "third derivative", "retained graph dropped",
         "create_graph with .grad reset", "after errors"],
)
def test_no_reference_cycles(work: Callable[[], None]) -> None:
    assert _garbage_after(work) == []


def test_memory_falls_back_after_backward() -> None:
    """The saved intermediates of a large forward are released by backward."""
    size = 500_000  # 4 MB per float64 array
    x = chainrule.from_numpy(np.linspace(0.1, 1.0, size)).requires_grad_()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        loss = ((x * 2).exp() * x.sin()).sigmoid().sum()
        after_forward = tracemalloc.get_traced_memory()[0]
        loss.backward()
        del loss
        after_backward = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    array = size * 8
    assert after_forward - baseline >= 3 * array  # the graph holds several saved arrays
    assert after_backward - baseline <= 1.2 * array  # only x.grad remains
