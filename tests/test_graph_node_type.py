"""``torch.autograd.graph.Node`` as PyTorch's: an abstract class that is a virtual base of every
node (``isinstance``/``issubclass`` hold, yet it is not in their ``mro()``), with PyTorch's
abstract methods; a node's ``_set_sequence_nr`` (the engine's order among ready nodes); and a
leaf's new AccumulateGrad after ``set_`` under no_grad (``autograd.grad`` refuses the leaf for a
graph made before, its old GradientEdge still works).

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from .outcomes import same_outcome


def test_virtual_base_of_op_nodes_and_accumulate_grad() -> None:
    def program(lib: Any) -> Any:
        node = lib.autograd.graph.Node
        a = lib.rand(3, 3, requires_grad=True)
        b = a.exp()
        functions = lib._C._functions
        return [
            isinstance(b.grad_fn, node),
            issubclass(type(b.grad_fn), node),
            node not in type(b.grad_fn).mro(),
            isinstance(functions.AccumulateGrad, node),
            issubclass(functions.AccumulateGrad, node),
            isinstance(b.grad_fn.next_functions[0][0], node),
            issubclass(functions.DelayedError, node),
            isinstance(None, node),
            isinstance(1, node),
            isinstance(node, node),
            issubclass(node, node),
            issubclass(lib.autograd.function.BackwardCFunction, node),
        ]

    same_outcome(program)


def test_custom_function_ctx_and_node() -> None:
    def program(lib: Any) -> Any:
        node = lib.autograd.graph.Node
        seen = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                seen.append(isinstance(ctx, node))
                return x * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                seen.append(isinstance(ctx, node))
                return g * 2

        a = lib.ones(2, requires_grad=True)
        out = Func.apply(a)
        seen += [isinstance(out.grad_fn, node), node not in type(out.grad_fn).mro()]
        out.sum().backward()
        return seen, a.grad

    same_outcome(program)


def test_abstract_methods() -> None:
    def program(lib: Any) -> Any:
        node = lib.autograd.graph.Node

        class Partial(node):
            def name(self) -> str:
                return "partial"

        try:
            Partial()
        except TypeError:
            return sorted(node.__abstractmethods__), "TypeError"
        return "no error"

    same_outcome(program)


@pytest.mark.parametrize("numbers", [(100, 99, 98), (1, 5, 0), None])
def test_set_sequence_nr_orders_ready_nodes(numbers: tuple[int, int, int] | None) -> None:
    def program(lib: Any) -> Any:
        x, y, z = (lib.randn(10, requires_grad=True) for _ in range(3))
        a, b = x + y, y + z
        c = a + b
        if numbers is not None:
            for t, n in zip((a, b, c), numbers, strict=True):
                t.grad_fn._set_sequence_nr(n)
        order: list[str] = []
        for name, t in (("a", a), ("b", b), ("c", c)):
            t.register_hook(partial(lambda g, name: order.append(name) or g, name=name))
        c.sum().backward()
        read = [t.grad_fn._sequence_nr() for t in (a, b, c)] if numbers else None
        return order, read, x.grad, y.grad, z.grad

    same_outcome(program)


def test_set_under_no_grad_gives_a_leaf_a_new_accumulator() -> None:
    def program(lib: Any) -> Any:
        x = lib.rand(2, requires_grad=True)
        x_edge = lib.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with lib.no_grad():
            x.set_(lib.rand_like(x))
        same_node = lib.autograd.graph.get_gradient_edge(x).node is x_edge.node
        try:
            lib.autograd.grad(out.sum(), x, retain_graph=True)
        except RuntimeError as error:
            refused = str(error)
        by_edge = lib.autograd.grad(out.sum(), x_edge, retain_graph=True)
        out.sum().backward()
        first = x.grad.clone()
        (x * 2).sum().backward()
        return same_node, refused, by_edge, first, x.grad

    same_outcome(program)
