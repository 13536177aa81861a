"""``Tensor._backward_hooks``, PyTorch's legacy attribute: None before a hook, the hooks
``register_hook`` added, and assignable (a leaf's hooks become the dict's; on a non-leaf the
dict's hooks run besides those ``register_hook`` added), compared with PyTorch: which hooks run,
in which order, and the gradients.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .outcomes import same_outcome


def test_none_before_the_first_hook() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(3, requires_grad=True)
        return x._backward_hooks, (x * 2)._backward_hooks, lib.randn(2)._backward_hooks

    same_outcome(program)


def test_register_hook_fills_it() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(3, requires_grad=True)
        x.register_hook(lambda g: None)
        y = x * 2
        y.register_hook(lambda g: None)
        return len(x._backward_hooks), len(y._backward_hooks)

    same_outcome(program)


def test_assigned_dict_runs_on_a_leaf_and_later_edits_count() -> None:
    def program(lib: Any) -> Any:
        calls: list[str] = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x._backward_hooks = OrderedDict()
        x._backward_hooks["double"] = lambda g: calls.append("double") or g * 2
        (x * 3).sum().backward()
        return calls, x.grad

    same_outcome(program)


def test_none_removes_a_leafs_hooks() -> None:
    def program(lib: Any) -> Any:
        calls: list[str] = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: calls.append("registered"))
        x._backward_hooks = None
        (x * 3).sum().backward()
        return calls, x.grad, x._backward_hooks

    same_outcome(program)


def test_non_leaf_assignment_is_only_kept() -> None:
    def program(lib: Any) -> Any:
        calls: list[str] = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: calls.append("registered"))
        y._backward_hooks = OrderedDict(s=lambda g: calls.append("set") or g * 10)
        y._backward_hooks = OrderedDict(t=lambda g: calls.append("set again") or g * 3)
        y.sum().backward()
        return calls, x.grad

    same_outcome(program)


def test_hooks_on_tensors_outside_the_graph_never_run() -> None:
    # PyTorch's test_requires_grad: hooks set on tensors that do not require grad.
    def program(lib: Any) -> Any:
        x, y = lib.randn(5, 5), lib.randn(5, 5)
        z = lib.randn(5, 5, requires_grad=True)
        a = x + y
        b = a + z

        def error() -> None:
            raise RuntimeError

        for t in (a, x, y):
            t._backward_hooks = OrderedDict()
            t._backward_hooks["test"] = error
        b.backward(lib.ones(5, 5))
        return a.requires_grad, b.requires_grad, z.grad

    same_outcome(program)


def test_deleting_it_is_refused() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(2, requires_grad=True)
        del x._backward_hooks

    same_outcome(program)


def test_non_leaf_reads_back_what_was_assigned() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y._backward_hooks = OrderedDict(s=print)
        first = list(y._backward_hooks)
        y._backward_hooks = None
        return first, y._backward_hooks

    same_outcome(program)
