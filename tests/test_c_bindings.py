"""PyTorch's private ``torch._C`` autograd names (``_C._functions.UndefinedGrad`` and
``DelayedError``, ``_C._autograd.SavedTensor`` and the version-counter functions,
``_C._WeakTensorRef``, ``_C.is_grad_enabled``, ``_current_graph_task_id``,
``_will_engine_execute_node``), ``torch.autograd._unsafe_preserve_version_counter`` and
``forward_ad._current_level``, compared with PyTorch: values, gradients, node names and
edges, and errors.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _names(node: Any) -> Any:
    """A node's name and the names of its next functions (None stays None)."""
    if node is None:
        return None
    return type(node).__name__, [
        None if n is None else type(n).__name__ for n, _ in node.next_functions
    ]


# ----------------------------------------------------------------------------------------------
# _C._functions.UndefinedGrad


def test_undefined_grad_sends_no_gradient_on() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = lib._C._functions.UndefinedGrad()(x * 2)
        out = [y.tolist(), y.requires_grad, _names(y.grad_fn)]
        (y * 3).sum().backward()
        out.append(x.grad)
        return out

    same_outcome(program)


def test_undefined_grad_makes_a_custom_backward_see_zeros_or_none() -> None:
    def program(lib: Any) -> Any:
        seen = []

        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, materialize: bool) -> Any:
                ctx.set_materialize_grads(materialize)
                return x.clone()

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                seen.append(None if grad is None else grad.tolist())
                return grad, None

        x = lib.ones(2, requires_grad=True)
        for materialize in (True, False):
            lib._C._functions.UndefinedGrad()(Identity.apply(x, materialize)).sum().backward()
        return seen, x.grad

    same_outcome(program)


def test_undefined_grad_of_a_tensor_without_grad_and_bad_arguments() -> None:
    same_outcome(lambda lib: lib._C._functions.UndefinedGrad()(lib.ones(2)).grad_fn)
    same_outcome(lambda lib: lib._C._functions.UndefinedGrad()(lib.ones(2), lib.ones(2)))
    same_outcome(lambda lib: lib._C._functions.UndefinedGrad()(3))


# ----------------------------------------------------------------------------------------------
# _C._functions.DelayedError


def test_delayed_error_raises_only_when_its_node_runs() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        y = lib.tensor([2.0, 3.0], requires_grad=True)
        safe = lib._C._functions.DelayedError("Boom!", 1)(y)
        out = [safe.tolist(), safe.requires_grad, safe.is_leaf, _names(safe.grad_fn)]
        loss = (x * safe).sum()
        out.append(lib.autograd.grad(loss, x, retain_graph=True)[0].tolist())
        try:
            loss.backward()
        except RuntimeError as error:
            out.append(str(error))
        return out

    same_outcome(program)


def test_delayed_error_output_shares_memory_but_not_the_version_counter() -> None:
    def program(lib: Any) -> Any:
        y = lib.ones(2, requires_grad=True)
        alias = lib._C._functions.DelayedError("Boom!", 1)(y)
        with lib.no_grad():
            alias.add_(1)
        return y.tolist(), y._version, alias._version

    same_outcome(program)


def test_delayed_error_with_several_inputs_and_without_grad() -> None:
    def program(lib: Any) -> Any:
        a = lib.ones(2, requires_grad=True)
        b = lib.zeros(2)
        outs = lib._C._functions.DelayedError("no", 2)(a, b)
        plain = lib._C._functions.DelayedError("no", 1)(b)
        return [(o.requires_grad, _names(o.grad_fn), o.output_nr) for o in outs], plain.grad_fn

    same_outcome(program)


def test_delayed_error_bad_arguments() -> None:
    same_outcome(lambda lib: lib._C._functions.DelayedError("x", 1)(lib.ones(1), lib.ones(1)))
    same_outcome(lambda lib: lib._C._functions.DelayedError("x", 1)(3))


def test_function_classes_are_node_subclasses() -> None:
    def program(lib: Any) -> Any:
        functions = lib._C._functions
        node = lib.autograd.graph.Node
        return (
            isinstance(functions.AccumulateGrad, node),
            issubclass(functions.AccumulateGrad, node),
            issubclass(functions.DelayedError, node),
            issubclass(functions.UndefinedGrad, node),
        )

    same_outcome(program)


# ----------------------------------------------------------------------------------------------
# _C._autograd, _C._WeakTensorRef, _C's grad-mode and graph-task functions


def test_saved_tensor_class() -> None:
    def program(lib: Any) -> Any:
        a = lib.ones(2, requires_grad=True)
        out = (a * 2) * a
        return (
            isinstance(out.grad_fn._raw_saved_self, lib._C._autograd.SavedTensor),
            isinstance(a, lib._C._autograd.SavedTensor),
            lib.autograd.SavedTensor is lib._C._autograd.SavedTensor,
        )

    same_outcome(program)
    same_outcome(lambda lib: lib.autograd.SavedTensor())
    same_outcome(lambda lib: lib._C._autograd.SavedTensor())


def test_unsafe_version_counter_functions() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True).clone()
        view = x[:1]
        x.add_(1)
        x.add_(2)
        out = [x._version]
        with lib.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
            out.append(x._version)
        out.append(x._version)
        lib._C._autograd._unsafe_set_version_counter((x,), (7,))
        out.append((x._version, view._version))
        y = lib.ones(1).clone()
        with lib.autograd._unsafe_preserve_version_counter((x, y)):
            x.mul_(2)
            y.mul_(3)
        out.append((x._version, y._version))
        return out

    same_outcome(program)
    same_outcome(lambda lib: lib._C._autograd._unsafe_set_version_counter((lib.ones(1),), (-1,)))
    same_outcome(lambda lib: lib.autograd._unsafe_preserve_version_counter([lib.ones(1)]))


def test_saved_tensors_hooks_is_enabled() -> None:
    def program(lib: Any) -> Any:
        enabled = lib._C._autograd._saved_tensors_hooks_is_enabled
        out = [enabled()]
        with lib.autograd.graph.disable_saved_tensors_hooks("no"):
            out.append(enabled())
        out.append(enabled())
        return out

    same_outcome(program)


def test_current_graph_task_keep_graph() -> None:
    def program(lib: Any) -> Any:
        seen = []
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(
            lambda g: seen.append(lib._C._autograd._get_current_graph_task_keep_graph())
        )
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return seen

    same_outcome(program)


def test_weak_tensor_ref() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(2)
        ref = lib._C._WeakTensorRef(x)
        alive = ref.expired()
        del x
        gc.collect()
        return alive, ref.expired()

    same_outcome(program)


def test_c_grad_mode_and_graph_task_functions() -> None:
    def program(lib: Any) -> Any:
        out = [lib._C.is_grad_enabled(), lib._C._current_graph_task_id()]
        with lib.no_grad():
            out.append(lib._C.is_grad_enabled())
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        c = a * 2
        d = b * 3
        seen = []

        def hook(grad: Any) -> None:
            seen.append(lib._C._current_graph_task_id() >= 0)
            seen.append(lib._C._will_engine_execute_node(c.grad_fn))
            seen.append(lib._C._will_engine_execute_node(d.grad_fn))

        c.register_hook(hook)
        lib.autograd.grad((c + d).sum(), a)
        out.append(seen)
        return out

    same_outcome(program)
    same_outcome(
        lambda lib: lib._C._will_engine_execute_node(lib.ones(1, requires_grad=True).exp().grad_fn)
    )


@pytest.mark.parametrize("lib", [chainrule, torch], ids=["chainrule", "torch"])
def test_forward_ad_current_level(lib: Any) -> None:
    fw = lib.autograd.forward_ad
    assert fw._current_level == -1
    with fw.dual_level():
        assert fw._current_level == 0
    assert fw._current_level == -1


def test_will_engine_execute_node_refuses_what_is_not_a_node() -> None:
    same_outcome(lambda lib: lib._C._will_engine_execute_node(lib.ones(1, requires_grad=True)))
    same_outcome(lambda lib: lib._C._will_engine_execute_node(3))


@pytest.mark.parametrize("lib", [chainrule, torch], ids=["chainrule", "torch"])
def test_autograd_module_names_the_package(lib: Any) -> None:
    assert lib.autograd.torch is lib
    assert not lib.autograd.torch.randn(2).volatile


def test_volatile_is_gone_with_warnings() -> None:
    def program(lib: Any) -> Any:
        v = lib.randn(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = v.volatile
            v.volatile = True
            second = v.volatile
        return first, second, [(w.category.__name__, str(w.message)) for w in caught]

    same_outcome(program)


# ----------------------------------------------------------------------------------------------
# _C._set_cached_tensors_enabled, _add_cached_tensor, _remove_cached_tensor, _is_cached_tensor


def test_cached_tensors_registry() -> None:
    def program(lib: Any) -> Any:
        x = lib.rand(4)
        lib._C._set_cached_tensors_enabled(True)
        try:
            lib._C._add_cached_tensor(x)
            seen = [lib._C._is_cached_tensor(x), lib._C._is_cached_tensor(x.view(4)),
                    lib._C._is_cached_tensor(x.clone())]
            lib._C._add_cached_tensor(x)
            lib._C._remove_cached_tensor(x)
            seen.append(lib._C._is_cached_tensor(x))
            lib._C._remove_cached_tensor(x)  # (not marked: nothing)
            return seen
        finally:
            lib._C._set_cached_tensors_enabled(False)

    same_outcome(program)


def test_cached_tensors_off_by_default() -> None:
    def program(lib: Any) -> Any:
        x = lib.rand(4)
        seen = lib._C._is_cached_tensor(x)
        try:
            lib._C._add_cached_tensor(x)
        except RuntimeError as error:
            return seen, str(error).startswith("cached_tensorimpls_enabled")
        return seen, "no error"

    same_outcome(program)
