"""Hooks fire in PyTorch's order, with PyTorch's arguments, and can replace gradients."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch


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
