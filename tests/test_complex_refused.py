"""Complex results of tensors that require grad are refused, not differentiated wrongly.

chainrule does not implement complex autograd yet (the autograd-depth issue, capability 9).
Before this guard, real leaves flowing into complex ops were differentiated with real formulas:
``(x * 1j).abs().sum().backward()`` gave ``x.grad == -1`` where PyTorch gives ``1`` (its
formulas conjugate), and ``torch.complex`` / ``torch.polar`` silently dropped the graph. Now
each raises chainrule's error before anything changes; without grad, complex values compute as
PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

MESSAGE = "chainrule does not differentiate complex tensors yet"


@pytest.mark.parametrize("fn", [
    lambda lib, x: x * 1j,
    lambda lib, x: x + lib.tensor([1j, 2j]),
    lambda lib, x: x.to(lib.complex64),
    lambda lib, x: lib.complex(x, x * 2),
    lambda lib, x: lib.polar(x, x),
    lambda lib, x: lib.stack([x, x]).to(lib.complex128),
], ids=["mul_j", "add_complex", "to_complex", "complex", "polar", "stack_then_cast"])
def test_complex_results_of_tensors_requiring_grad_are_refused(fn: Any) -> None:
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        fn(chainrule, x)
    with chainrule.no_grad():  # the same values as PyTorch's without a graph
        ours = fn(chainrule, x)
    theirs = fn(torch, torch.tensor([1.0, 2.0]))
    np.testing.assert_allclose(ours._data, theirs.numpy(), rtol=1e-6)


def test_a_refused_in_place_op_changes_nothing() -> None:
    z = chainrule.tensor([1j, 2j])
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        z.add_(x)
    assert z._version == 0 and z.tolist() == [1j, 2j]


def test_a_custom_function_with_a_complex_output_is_refused() -> None:
    class ToComplex(chainrule.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * (1 + 1j)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad.real

    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        ToComplex.apply(x)
