"""Deep graphs: nothing in the engine, ``autograd.grad``, ``backward(inputs=...)``, higher-order
gradients or graph deallocation may recurse, so chains of a million nodes work.

The chains are built with the garbage collector off: a graph holds no reference cycles
(``test_memory.py``), and the collector would only spend time walking it.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import chainrule

from .conftest import torch


@pytest.fixture(autouse=True)
def _no_cyclic_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _chain(x: chainrule.Tensor, length: int, factor: float) -> chainrule.Tensor:
    y = x
    for _ in range(length):
        y = y * factor
    return y


@pytest.mark.slow
def test_backward_through_a_million_ops_and_free_the_graph() -> None:
    length = 1_000_000
    factor = 1.000001
    x = chainrule.tensor([1.0], dtype=chainrule.float64, requires_grad=True)
    y = _chain(x, length, factor)
    y.backward(chainrule.ones(1, dtype=chainrule.float64))
    # Each MulBackward0 multiplies the gradient by the factor once.
    np.testing.assert_allclose(x.grad.numpy(), [factor**length], rtol=1e-8)
    root = weakref.ref(y.grad_fn)
    del y  # a million nodes linked through next_functions: freed without recursion
    assert root() is None


def test_graph_deleted_without_backward() -> None:
    x = chainrule.tensor([1.0], requires_grad=True)
    y = _chain(x, 200_000, 1.0)
    root = weakref.ref(y.grad_fn)
    del y
    assert root() is None
    assert x.grad is None


def test_deep_retain_graph_backward_twice() -> None:
    x = chainrule.tensor([2.0], requires_grad=True)
    y = _chain(x, 100_000, 1.0)
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [2.0]
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_deep_autograd_grad_of_a_middle_tensor() -> None:
    x = chainrule.tensor([1.0], requires_grad=True)
    middle = _chain(x, 50_000, 1.0) * 3.0
    y = _chain(middle, 50_000, 1.0) * 2.0
    grad_middle, grad_x = chainrule.autograd.grad(y, [middle, x])
    assert grad_middle.tolist() == [2.0]
    assert grad_x.tolist() == [6.0]


def test_deep_backward_with_inputs() -> None:
    x = chainrule.tensor([1.0], requires_grad=True)
    middle = _chain(x, 50_000, 1.0)
    y = _chain(middle * 4.0, 50_000, 1.0)
    y.backward(inputs=[middle])
    assert middle.grad.tolist() == [4.0]
    assert x.grad is None


def test_deep_diamonds_count_dependencies() -> None:
    """Each level reaches the previous one by two paths: dependency counting, not recursion."""
    x = chainrule.tensor([1.0], dtype=chainrule.float64, requires_grad=True)
    y = x
    for _ in range(30_000):
        y = y * 0.5 + y * 0.5
    y.backward()
    assert x.grad.tolist() == [1.0]


def test_deep_second_derivative_matches_torch() -> None:
    """``x ** 1001`` built as a chain of 1000 products: second derivative through the chain."""

    def second_derivative(lib):
        x = lib.tensor(1.0001, dtype=lib.float64, requires_grad=True)
        y = x
        for _ in range(1000):
            y = y * x
        (first,) = lib.autograd.grad(y, x, create_graph=True)
        (second,) = lib.autograd.grad(first, x)
        return first.item(), second.item()

    ours, theirs = second_derivative(chainrule), second_derivative(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    np.testing.assert_allclose(ours, [1001 * 1.0001**1000, 1001 * 1000 * 1.0001**999], rtol=1e-9)


def test_long_mixed_chain_matches_torch() -> None:
    """Ten thousand mixed ops: gradients equal PyTorch's."""

    def run(lib):
        x = lib.tensor([0.3, -0.2, 0.1], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.0, 0.5, -0.5], dtype=lib.float64, requires_grad=True)
        y = x
        for i in range(2500):
            y = lib.tanh(y * w + 0.01 * i) * 0.9 + x * 0.1
        y.sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    for ours, theirs in zip(run(chainrule), run(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
