"""utils.swap_tensors against PyTorch: two tensors exchange data, dtype, shape, class,
attributes, requires_grad and grad; a graph recorded before the swap refuses to run backward
(PyTorch's poisoned AccumulateGrad); graphs recorded after it give the swapped tensors'
gradients; weak references are refused."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

import chainrule

from .conftest import torch
from .outcomes import same_outcome

LIBS = (torch, chainrule)


def _describe(t: Any) -> tuple:
    return (
        type(t).__name__,
        t.detach().numpy().tolist(),
        str(t.dtype).replace("chainrule", "torch"),
        tuple(t.shape),
        t.requires_grad,
        None if t.grad is None else t.grad.numpy().tolist(),
        dict(getattr(t, "__dict__", {})),
    )


def _plain(lib: Any) -> tuple:
    a = lib.arange(2)
    b = lib.tensor([[1.5, 2.5]], dtype=lib.float64, requires_grad=True)
    (b * 3).sum().backward()
    alias_a = a
    lib.utils.swap_tensors(a, b)
    return _describe(alias_a), _describe(b)


def _parameters(lib: Any) -> tuple:
    p = lib.nn.Parameter(lib.ones(2))
    q = lib.nn.Parameter(lib.zeros(3), requires_grad=False)
    p.note = "p"
    q.note = "q"
    model = lib.nn.Linear(2, 1)
    held = model.weight
    lib.utils.swap_tensors(model.weight, lib.nn.Parameter(lib.full((1, 2), 7.0)))
    lib.utils.swap_tensors(p, q)
    return _describe(p), _describe(q), _describe(held), held is model.weight


def _after_swap_backward(lib: Any) -> tuple:
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0, 5.0], requires_grad=True)
    lib.utils.swap_tensors(x, y)
    (x * x).sum().backward()
    return x.grad.tolist(), y.grad


def test_plain_tensors() -> None:
    assert _plain(chainrule) == _plain(torch)


def test_parameters_and_attributes() -> None:
    assert _parameters(chainrule) == _parameters(torch)


def test_backward_after_the_swap() -> None:
    assert _after_swap_backward(chainrule) == _after_swap_backward(torch)


def _poisoned(lib: Any) -> Any:
    x = lib.ones(2, requires_grad=True)
    y = lib.zeros(2, requires_grad=True)
    loss = (x * 2).sum()
    lib.utils.swap_tensors(x, y)
    loss.backward()


def _weakly_held(lib: Any, which: int) -> Any:
    a, b = lib.ones(2), lib.zeros(2)
    ref = weakref.ref(a if which == 0 else b)
    lib.utils.swap_tensors(a, b)
    return ref


def test_errors() -> None:
    same_outcome(_poisoned)
    same_outcome(lambda lib: _weakly_held(lib, 0))
    same_outcome(lambda lib: _weakly_held(lib, 1))


def test_module_parameter_swap_keeps_optimizer_reference() -> None:
    seen = []
    for lib in LIBS:
        mod = lib.nn.Linear(1, 2, bias=False)
        opt = lib.optim.SGD(mod.parameters(), lr=0.1)
        new = lib.nn.Parameter(lib.tensor(np.array([[2.0], [3.0]], dtype=np.float32)))
        lib.utils.swap_tensors(mod.weight, new)
        seen.append(opt.param_groups[0]["params"][0].detach().numpy().tolist())
    assert seen[1] == seen[0]
