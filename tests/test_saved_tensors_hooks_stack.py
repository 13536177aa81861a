"""The saved-tensor hooks stack as PyTorch keeps it: entering ``saved_tensors_hooks`` pushes a
pair, exiting pops the top one, and a backward pass restores the stack it started with when it
ends (an unpack hook that enters or exits a hooks block, which PyTorch does not support, changes
nothing after the pass: grad mode stays on, no hook is left installed, no hook is kept alive).

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns must be equal.
"""

from __future__ import annotations

import ast
import gc
import os
import subprocess
import sys
import weakref
from typing import Any

import chainrule

from .conftest import torch

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _both(program: str) -> None:
    """``program(chainrule)`` returns what ``program(torch)`` returns in a fresh interpreter:
    PyTorch does not support entering or exiting hooks blocks out of order or inside a
    backward pass, and such a run can corrupt its memory (a crash later in the process), so
    its side runs apart; what it printed counts even if it crashes on the way out."""
    code = (
        f"import torch, tests.test_saved_tensors_hooks_stack as m; print(repr(m.{program}(torch)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=_ROOT,
        env={**os.environ, "PYTHONPATH": _ROOT},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr
    expected = ast.literal_eval(lines[-1])
    got = globals()[program](chainrule)
    assert got == expected
    assert torch.__version__  # (the reference must be installed)


def _pack_calls_after(lib: Any) -> int:
    """How many pack hooks run when a tensor is saved now (0: no hooks on the stack)."""
    calls = []
    a = lib.tensor(1.0, requires_grad=True)
    try:
        a.exp().grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as error:
        calls.append(str(error))
    return len(calls)


def _extra_exit(lib: Any) -> Any:
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


def test_extra_exit_during_backward_is_undone() -> None:
    _both("_extra_exit")


def _extra_enter(lib: Any) -> Any:
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
    return freed, [round(g, 6) for g in grad], lib.is_grad_enabled()


def test_extra_enter_during_backward_is_undone_and_frees_the_hooks() -> None:
    _both("_extra_enter")


def _grad_mode_after(lib: Any) -> Any:
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


def test_grad_mode_after_hooks_block_entered_in_backward() -> None:
    _both("_grad_mode_after")
