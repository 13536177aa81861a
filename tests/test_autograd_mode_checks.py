"""Checks that depend on grad mode and a tensor's past, compared with PyTorch:

* ``numpy()`` of a tensor that requires grad is refused in grad mode only;
* a saved input ``detach_()``-ed after it was saved is refused at backward (not a saved output,
  nor a tensor detached before it was saved);
* an in-place op on a view made before its base required grad is refused as a view of a leaf.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


def test_numpy_refused_in_grad_mode() -> None:
    same_outcome(lambda lib: lib.randn(2, requires_grad=True).numpy())


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_numpy_allowed_without_grad_mode(mode: str) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with getattr(lib, mode)():
            array = x.numpy()
        array[0] = 5.0  # (shares memory)
        return x

    same_outcome(program)


def test_saved_input_detached_in_place() -> None:
    def program(lib: Any) -> Any:
        a = lib.tensor(1.0, requires_grad=True).clone()
        b = a.sin()
        a.detach_()
        b.backward()

    same_outcome(program)


@pytest.mark.parametrize("create_graph", [False, True])
def test_saved_input_detached_in_place_binary(create_graph: bool) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor(2.0, requires_grad=True)
        a = x.clone()
        b = a * x
        a.detach_()
        return lib.autograd.grad(b, x, create_graph=create_graph)

    same_outcome(program)


def test_saved_output_detached_input_is_fine() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor(1.0, requires_grad=True)
        a = x.clone()
        b = a.exp()
        a.detach_()
        b.backward()
        return x.grad

    same_outcome(program)


def test_detached_before_saved_is_fine() -> None:
    def program(lib: Any) -> Any:
        a = lib.tensor(1.0, requires_grad=True).clone()
        a.detach_()
        x = lib.tensor(2.0, requires_grad=True)
        (a * x).backward()
        return x.grad

    same_outcome(program)


def test_leaf_detached_after_saved_is_fine() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor(2.0, requires_grad=True)
        a = lib.tensor(3.0, requires_grad=True)
        b = a * x
        a.detach_()
        b.backward()
        return x.grad, a.grad

    same_outcome(program)


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_in_place_on_view_made_before_base_required_grad(op: str) -> None:
    def program(lib: Any) -> Any:
        a = lib.randn(2, 3)
        b = a[:]
        a.requires_grad = True
        getattr(b, op)(5)

    same_outcome(program)


def test_in_place_on_such_a_view_under_no_grad_is_fine() -> None:
    def program(lib: Any) -> Any:
        a = lib.zeros(2, 3)
        b = a[:]
        a.requires_grad = True
        with lib.no_grad():
            b.add_(5)
        a.sum().backward()
        return a, a.grad

    same_outcome(program)


def test_in_place_on_view_before_base_required_grad_then_made_requires_grad() -> None:
    # PyTorch's test_no_requires_grad_inplace, first case: the view is modified before.
    def program(lib: Any) -> Any:
        a = lib.zeros(2, 3)
        b = a[:]
        b.add_(5)
        a.requires_grad = True
        a.sum().backward()
        return a, a.grad

    same_outcome(program)


@pytest.mark.parametrize("how", ["detach_", "requires_grad_false"])
def test_leaf_that_stopped_requiring_grad_gets_nothing(how: str) -> None:
    # Its tensor pre-hooks and post-accumulate hooks still run, as in PyTorch.
    def program(lib: Any) -> Any:
        calls: list[str] = []
        x = lib.tensor(2.0, requires_grad=True)
        a = lib.tensor(3.0, requires_grad=True)
        a.register_hook(lambda g: calls.append("pre"))
        a.register_post_accumulate_grad_hook(lambda t: calls.append("post"))
        b = a * x
        if how == "detach_":
            a.detach_()
        else:
            a.requires_grad = False
        b.backward()
        return x.grad, a.grad, calls

    same_outcome(program)
