"""``torch._C._current_graph_task_execution_order`` against PyTorch 2.13: called from a hook at
the start of a backward pass (multithreading disabled), the nodes the pass will run, in the
order the engine then runs them (checked against the order hooks are called), for one and
several roots, leaves with several inputs, and ``autograd.grad`` with ``inputs=``; PyTorch's
errors outside a backward pass and with multithreading enabled.

chainrule's AccumulateGrad is named ``chainrule::autograd::AccumulateGrad`` (PyTorch's
``torch::autograd::AccumulateGrad``): names are compared after the namespace.
"""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def _names(nodes: list[Any]) -> list[str]:
    return [node.name().split(" ")[-1].split("::")[-1] for node in nodes]


def _grad_fns(*tensors: Any) -> list[Any]:
    out = []
    for t in tensors:
        if t.requires_grad and t.grad_fn is None:
            out.append(t.clone().grad_fn.next_functions[0][0])
        else:
            out.append(t.grad_fn)
    return out


def _run(lib: Any, case: str) -> Any:
    predicted: list[Any] = []
    actual: list[Any] = []

    def predict(_: Any) -> None:
        predicted.append(lib._C._current_graph_task_execution_order())

    def log(*tensors: Any) -> None:
        for t in tensors:
            t.register_hook(lambda g, t=t: actual.append(t))

    a = lib.tensor(1.0, requires_grad=True)
    b = lib.tensor(2.0, requires_grad=True)
    with lib.autograd.set_multithreading_enabled(False):
        if case == "chain":
            out = a.clone().sin().exp()
            out.register_hook(predict)
            out.backward()
            return _names(predicted[0])
        if case == "two_leaves":
            c, d = b.sin(), a.cos()
            out = c * d
            log(a, b, c, d, out)
        elif case == "leaf_with_two_inputs":
            c, d = a.sin(), a.cos()
            out = c * d
            log(a, c, d, out)
        elif case == "nullptr_edge":
            out = (a * 2).sin()
            log(a, out)
        else:
            b2 = a * 2
            if case == "several_roots":
                out, out2, out3 = b2.sin(), b2.cos(), b2.cos()
                out3.register_hook(predict)
                lib.autograd.grad((out, out3, out2), inputs=(a,))
            elif case == "inputs_on_one_path":
                out = b2.sin()
                out.register_hook(predict)
                lib.autograd.grad((out,), inputs=(a, b2))
            else:  # "inputs_subgraph"
                out = (a * b).sin()
                out.register_hook(predict)
                lib.autograd.grad((out,), inputs=(a,))
            return _names(predicted[0])
        out.register_hook(predict)
        out.backward()
    return _names(predicted[0]), predicted[0] == _grad_fns(*actual)


@pytest.mark.parametrize(
    "case",
    [
        "chain",
        "two_leaves",
        "leaf_with_two_inputs",
        "nullptr_edge",
        "several_roots",
        "inputs_on_one_path",
        "inputs_subgraph",
    ],
)
def test_execution_order(case: str) -> None:
    assert _run(chainrule, case) == _run(torch, case)


def test_outside_a_backward_pass() -> None:
    assert attempt(lambda: chainrule._C._current_graph_task_execution_order()) == attempt(
        lambda: torch._C._current_graph_task_execution_order()
    )


def test_with_multithreading_enabled() -> None:
    def case(lib: Any) -> Any:
        seen: list[Any] = []

        def hook(_: Any) -> None:
            seen.append(attempt(lambda: lib._C._current_graph_task_execution_order()))

        t = lib.tensor(1.0, requires_grad=True).clone().sin()
        t.register_hook(hook)
        t.backward()
        return seen

    assert case(chainrule) == case(torch)
