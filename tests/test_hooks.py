"""Hooks fire in PyTorch's order, with PyTorch's arguments, and can replace gradients."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def _fmt(value) -> object:
    if value is None:
        return None
    if isinstance(value, tuple | list):
        return tuple(_fmt(v) for v in value)
    return np.round(value.detach().numpy().astype(float), 5).tolist()


def _program(lib, log: list) -> tuple:
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = lib.tensor([3.0, -1.0], requires_grad=True)
    a = w * x
    b = a.exp()
    c = a + b
    y = (c * w).sum()

    def tensor_hook(name):
        def hook(grad):
            log.append(("tensor", name, _fmt(grad)))
        return hook

    for name, t in (("w", w), ("x", x), ("a", a), ("b", b), ("c", c), ("y", y)):
        t.register_hook(tensor_hook(name))
    a.retain_grad()

    def pre(name):
        def hook(grad_outputs):
            log.append(("pre", name, _fmt(grad_outputs)))
        return hook

    def post(name):
        def hook(grad_inputs, grad_outputs):
            log.append(("post", name, _fmt(grad_inputs), _fmt(grad_outputs)))
        return hook

    for name, t in (("a", a), ("b", b), ("c", c)):
        t.grad_fn.register_prehook(pre(name))
        t.grad_fn.register_hook(post(name))
    acc = c.grad_fn.next_functions[0][0].next_functions[0][0]  # w's AccumulateGrad
    acc.register_prehook(pre("acc_w"))
    acc.register_hook(post("acc_w"))
    w.register_post_accumulate_grad_hook(lambda t: log.append(("post_acc", "w", _fmt(t.grad))))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post_acc", "x", _fmt(t.grad))))
    return w, x, a, y


def test_hook_order_and_arguments_match_pytorch() -> None:
    logs = []
    for lib in (chainrule, torch):
        log: list = []
        w, x, a, y = _program(lib, log)
        y.backward()
        log.append(("grads", _fmt(w.grad), _fmt(x.grad), _fmt(a.grad)))
        logs.append(log)
    assert logs[0] == logs[1]


def test_tensor_hook_replaces_the_gradient() -> None:
    results = []
    for lib in (chainrule, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        a = w * 3
        handle = a.register_hook(lambda g: g * 10)
        w.register_hook(lambda g: g + 1)
        (a * a).sum().backward()
        first = w.grad.numpy().copy()
        handle.remove()
        w.grad = None
        (w * 3).pow(2).sum().backward()
        results.append((first, w.grad.numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_node_hooks_can_replace_gradients() -> None:
    results = []
    for lib in (chainrule, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        a = w * 2
        b = a.sin()
        b.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        b.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        b.sum().backward()
        results.append(w.grad.numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_hook_errors_match_pytorch() -> None:
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't"):
            lib.ones(2).register_hook(lambda g: g)
        message = "can't retain_grad on Tensor that has requires_grad=False"
        with pytest.raises(RuntimeError, match=message):
            lib.ones(2).retain_grad()


def test_saved_tensors_hooks_pack_and_unpack() -> None:
    results = []
    for lib in (chainrule, torch):
        packed: list = []

        def pack(t, packed=packed):
            packed.append(tuple(t.shape))
            return t.detach().numpy().copy() * 1

        def unpack(data, lib=lib):
            return lib.from_numpy(data)

        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (w * w).exp().sum()
        y.backward()
        results.append((sorted(packed), w.grad.numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_hooks_on_leaf_run_before_accumulation_once() -> None:
    """A leaf used twice gets one summed gradient through its hook, as in PyTorch."""
    for lib in (chainrule, torch):
        calls = []
        w = lib.tensor([1.0], requires_grad=True)
        w.register_hook(lambda g, calls=calls: calls.append(float(g)))
        (w * 2 + w * 3).sum().backward()
        assert calls == [5.0]


# ----------------------------------------------------------------------------------------------
# Hooks at a leaf, and what hooks may return


def _leaf_program(lib, log: list, create_graph: bool) -> tuple:
    """All four hooks of a leaf, each changing the gradient where it may."""
    x = lib.tensor([1.0, 2.0], requires_grad=True)

    def tensor_hook(grad):
        log.append(("tensor", _fmt(grad)))
        return grad * 2

    def acc_pre(grads):
        log.append(("acc_pre", _fmt(grads)))
        return (grads[0] + 1,)

    def post_accumulate(tensor):
        log.append(("post_accumulate", _fmt(tensor.grad)))
        tensor.grad.mul_(10)  # may change .grad in place; must return None

    def acc_post(grad_inputs, grad_outputs):
        log.append(("acc_post", _fmt(grad_inputs), _fmt(grad_outputs)))

    x.register_hook(tensor_hook)
    x.register_post_accumulate_grad_hook(post_accumulate)
    y = x * x * 3
    acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
    acc.register_prehook(acc_pre)
    acc.register_hook(acc_post)
    y.sum().backward(create_graph=create_graph)
    log.append(("grad", _fmt(x.grad), x.grad.requires_grad))
    return x


@pytest.mark.parametrize("create_graph", [False, True])
def test_leaf_hook_order_and_gradient_match_pytorch(create_graph: bool) -> None:
    logs = []
    for lib in (chainrule, torch):
        log: list = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True)'s warning
            _leaf_program(lib, log, create_graph)
        logs.append(log)
    assert logs[0] == logs[1]
    assert [entry[0] for entry in logs[0]] == [
        "tensor", "acc_pre", "post_accumulate", "acc_post", "grad",
    ]



def _named_hook(*args):
    return 1


# What hooks return, by kind of hook: each is checked as PyTorch checks it.
_RETURNS = {
    "int": lambda lib, g: 1,
    "list": lambda lib, g: [None],
    "empty_tuple": lambda lib, g: (),
    "two": lambda lib, g: (lib.ones(2), lib.ones(2)),
    "wrong_size": lambda lib, g: (lib.ones(3),),
    "wrong_dtype": lambda lib, g: (lib.ones(2, dtype=lib.float64),),
    "int_dtype": lambda lib, g: (lib.ones(2, dtype=lib.int64),),
    "tuple_of_int": lambda lib, g: (1,),
    "tuple_of_none": lambda lib, g: (None,),
    "same_tuple": lambda lib, g: g,
    "good": lambda lib, g: (lib.ones(2) * 5,),
    "expanded": lambda lib, g: (lib.ones(1).expand(2),),
}


def _hook_case(lib, kind: str, where: str, name: str) -> Any:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * lib.tensor([3.0, 4.0])
    node = y.grad_fn if where == "mul" else y.grad_fn.next_functions[0][0]
    make = _RETURNS[name]
    if kind == "pre":
        node.register_prehook(lambda grads: make(lib, grads))
    elif kind == "post":
        node.register_hook(lambda grad_inputs, grad_outputs: make(lib, grad_inputs))
    else:
        target = y if where == "mul" else x

        def tensor_hook(grad):
            result = make(lib, (grad,))
            return result[0] if isinstance(result, tuple) and len(result) == 1 else result

        target.register_hook(tensor_hook)
    (y * 2).sum().backward()
    return _fmt(x.grad)


@pytest.mark.parametrize("name", sorted(_RETURNS))
@pytest.mark.parametrize("where", ["mul", "leaf"])
@pytest.mark.parametrize("kind", ["tensor", "pre", "post"])
def test_hook_return_values_are_checked_like_pytorch(kind: str, where: str, name: str) -> None:
    ours = attempt(lambda: _hook_case(chainrule, kind, where, name))
    theirs = attempt(lambda: _hook_case(torch, kind, where, name))
    assert ours == theirs


def test_hook_name_in_messages_matches_pytorch() -> None:
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(functools.partial(lambda k, g: g.sum(), 1))  # no __name__
        first = attempt(lambda y=y: y.sum().backward())
        y = x * 2
        y.grad_fn.register_prehook(_named_hook)
        results.append((first, attempt(lambda y=y: y.sum().backward())))
    assert results[0] == results[1]
    assert "'<unknown>'" in results[0][0][1]


@pytest.mark.parametrize("name", ["none", "self", "int", "grad", "tuple"])
def test_post_accumulate_grad_hook_must_return_none(name: str) -> None:
    returns = {
        "none": lambda t: None, "self": lambda t: t, "int": lambda t: 1,
        "grad": lambda t: t.grad * 2, "tuple": lambda t: (t,),
    }[name]
    results = []
    for lib in (chainrule, torch):
        calls: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(returns)
        x.register_post_accumulate_grad_hook(lambda t, calls=calls: calls.append(_fmt(t)))
        outcome = attempt(lambda x=x: (x * 2).sum().backward())
        results.append((outcome, calls, _fmt(x.grad)))
    assert results[0] == results[1]


def test_tensor_hook_of_an_output_without_gradient_gets_none() -> None:
    results = []
    for lib in (chainrule, torch):
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = x.unbind()
        b.register_hook(lambda g, log=log: log.append(("b", _fmt(g))))
        a.register_hook(lambda g, log=log: log.append(("a", _fmt(g))))
        (a * 2).backward()
        x2 = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = x2.unbind()
        b.register_hook(lambda g, lib=lib: lib.tensor(3.0))
        outcome = attempt(lambda a=a: (a * 2).backward())
        results.append((log, _fmt(x.grad), outcome, _fmt(x2.grad)))
    assert results[0] == results[1]


def test_hooks_with_autograd_grad_match_pytorch() -> None:
    """autograd.grad runs the tensor hooks of what it captures (leaf or not), not the node
    hooks of nodes it does not run; a node that also runs is captured before its hooks."""
    results = []
    for lib in (chainrule, torch):
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x + 0
        y.register_hook(lambda g: g * 5)
        y.grad_fn.register_prehook(lambda grads, log=log: log.append(("y_pre", _fmt(grads))))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda grads, log=log: log.append(("acc_pre", _fmt(grads))))
        x.register_hook(lambda g: g * 2)
        log.append(_fmt(lib.autograd.grad((y * 3).sum(), [y, x])))
        log.append(_fmt(lib.autograd.grad((y * 3).sum(), [y])))
        log.append(_fmt(lib.autograd.grad((y * 3).sum(), [x])))
        log.append(_fmt(lib.autograd.grad((x * 3).sum(), [x])))
        y.retain_grad()
        log.append((_fmt(lib.autograd.grad((y * 3).sum(), [y])), _fmt(y.grad)))
        results.append(log)
    assert results[0] == results[1]


def _backward_inputs_program(lib) -> list:
    log: list = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g * 5)
    y.grad_fn.register_prehook(lambda grads: log.append(("y_pre", _fmt(grads))))
    (y * y).sum().backward(inputs=[y], retain_graph=True)
    log.append((_fmt(y.grad), _fmt(x.grad), y.retains_grad))
    z = y * 2
    (z * y).sum().backward(inputs=[y, x], retain_graph=True)
    log.append((_fmt(y.grad), _fmt(x.grad)))
    w = x + 0
    try:
        (w * x).sum().backward(inputs=[w])
        (w * x).sum().backward(inputs=[w])
    except RuntimeError as error:
        log.append(str(error).split(".")[0])
    log.append(_fmt(w.grad))
    return log


def test_backward_inputs_of_a_non_leaf_runs_its_node_like_pytorch() -> None:
    """backward(inputs=[y]) for a non-leaf y: y's node runs (its hooks; its saved values are
    freed) and y keeps its gradient by retain_grad, as in PyTorch."""
    assert _backward_inputs_program(chainrule) == _backward_inputs_program(torch)
