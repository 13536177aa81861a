"""Reentrant backward to any depth: a backward (or ``autograd.grad``) called inside a custom
Function's backward or a hook, nested a thousand times, as PyTorch runs it (it moves deep
reentrancy to a new thread's stack; so does chainrule, without ``RecursionError``), with the
same gradients, grad mode and errors inside."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import chainrule

from .conftest import torch

LIBS = [chainrule, torch]


def _nested_backward(lib: Any, depth: int, use_grad: bool) -> tuple[list[float], list[bool]]:
    """Each level's backward runs the next level's forward and backward; returns the leaf's
    gradient and whether grad mode was on inside each backward."""
    modes: list[bool] = []

    class Nest(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, level: int) -> Any:
            ctx.level = level
            return x * 3

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            modes.append(lib.is_grad_enabled())
            if ctx.level > 0:
                with lib.enable_grad():
                    inner = lib.ones(1, requires_grad=True)
                    out = Nest.apply(inner, ctx.level - 1).sum()
                    if use_grad:
                        (g,) = lib.autograd.grad(out, inner)
                    else:
                        out.backward()
                        g = inner.grad
                assert float(g) == 3.0
            return grad * 3, None

    x = lib.ones(1, requires_grad=True)
    Nest.apply(x, depth).sum().backward()
    return x.grad.tolist(), modes


@pytest.mark.parametrize("use_grad", [False, True], ids=["backward", "autograd_grad"])
def test_a_thousand_nested_backward_passes_as_pytorch(use_grad: bool) -> None:
    depth = max(1000, sys.getrecursionlimit())
    ours, theirs = (_nested_backward(lib, depth, use_grad) for lib in LIBS)
    assert ours == theirs
    assert len(ours[1]) == depth + 1 and not any(ours[1])


def _failing_deep_inside(lib: Any) -> tuple[str, Any]:
    """1,500 nested passes whose deepest backward raises: the message, and the leaf's grad."""

    class Fails(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, level: int) -> Any:
            ctx.level = level
            return x.clone()

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            if ctx.level == 0:
                raise ValueError("deepest level failed")
            with lib.enable_grad():
                y = lib.ones(1, requires_grad=True)
                Fails.apply(y, ctx.level - 1).sum().backward()
            return grad, None

    x = lib.ones(1, requires_grad=True)
    with pytest.raises(ValueError) as error:
        Fails.apply(x, 1500).sum().backward()
    return str(error.value), x.grad


def test_an_error_deep_inside_is_raised_to_the_caller() -> None:
    (ours, our_grad), (theirs, their_grad) = (_failing_deep_inside(lib) for lib in LIBS)
    assert ours == theirs == "deepest level failed"
    assert our_grad is None and their_grad is None
