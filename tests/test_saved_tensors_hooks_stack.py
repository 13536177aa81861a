"""The saved-tensor hooks stack as PyTorch keeps it: entering ``saved_tensors_hooks`` pushes a
pair, exiting pops the top one, and a backward pass restores the stack it started with when it
ends (an unpack hook that enters or exits a hooks block, which PyTorch does not support, changes
nothing after the pass: grad mode stays on, no hook is left installed, no hook is kept alive).

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns must be equal.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import chainrule

from .conftest import torch


def _both(program: Any) -> None:
    expected = program(torch)
    got = program(chainrule)
    assert got == expected


def _pack_calls_after(lib: Any) -> int:
    """How many pack hooks run when a tensor is saved now (0: no hooks on the stack)."""
    calls = []
    a = lib.tensor(1.0, requires_grad=True)
    try:
        a.exp().grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as error:
        calls.append(str(error))
    return len(calls)


def test_extra_exit_during_backward_is_undone() -> None:
    def program(lib: Any) -> Any:
        seen = []

        def unpack(t: Any) -> Any:
            inner.__exit__()
            return t

        inner = lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack)
        outer = lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
        for _ in range(3):
            with outer:
                inner.__enter__()
                x = lib.ones(2, 2, requires_grad=True)
                x.sin().sum().backward()
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())
            seen.append(round(x.grad.sum().item(), 5))
        for _ in range(3):
            inner.__exit__()
        seen.append(_pack_calls_after(lib))
        seen.append(lib.is_grad_enabled())
        return seen

    _both(program)


def test_extra_enter_during_backward_is_undone_and_frees_the_hooks() -> None:
    def program(lib: Any) -> Any:
        def scope() -> Any:
            def unpack(t: Any) -> Any:
                weak_hooks().__enter__()
                return t

            hooks = lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack)
            weak_hooks = weakref.ref(hooks)
            x = lib.ones(3, requires_grad=True)
            with hooks:
                x.sin().sum().backward()
            return weakref.ref(unpack), x.grad.tolist()

        gc.disable()
        try:
            ref, grad = scope()
            freed = ref() is None
        finally:
            gc.enable()
        y = lib.ones(2, requires_grad=True) * 2
        return (
            freed,
            [round(g, 6) for g in grad],
            lib.is_grad_enabled(),
            y.requires_grad,
            (_pack_calls_after(lib)),
        )

    _both(program)


def test_exit_pops_the_top_pair_whichever_block_it_is() -> None:
    def program(lib: Any) -> Any:
        log = []
        first = lib.autograd.graph.saved_tensors_hooks(
            lambda t: log.append("first") or t, lambda t: t
        )
        second = lib.autograd.graph.saved_tensors_hooks(
            lambda t: log.append("second") or t, lambda t: t
        )
        x = lib.ones(2, requires_grad=True)
        first.__enter__()
        second.__enter__()
        first.__exit__()  # pops `second`, the top pair
        x.exp()
        second.__exit__()
        x.exp()
        return log, _pack_calls_after(lib)

    _both(program)


def test_grad_mode_after_hooks_block_entered_in_backward() -> None:
    def program(lib: Any) -> Any:
        outer = lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
        states = []

        def unpack(t: Any) -> Any:
            outer.__enter__()
            states.append(lib.is_grad_enabled())
            return t

        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = (x * x).sum()
        y.backward()
        states.append(lib.is_grad_enabled())
        states.append((lib.ones(1, requires_grad=True) + 1).requires_grad)
        states.append(_pack_calls_after(lib))
        return states

    _both(program)
