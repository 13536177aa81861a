"""chainrule.compile of the callables torch.compile takes besides functions and modules: a
function of ``*args``/``**kwargs`` (before: the trace took ``*args`` for one argument and the
call raised TypeError where eager runs; now a graph break, run eagerly), a bound method of a
module (before: its weights were unknown tensors and it ran eagerly; now compiled, reading
them at each call), a callable object and a ``functools.partial``. Values against eager and
PyTorch's torch.compile(backend="eager")."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import chainrule

from .conftest import torch


def _compiler(lib: Any) -> Any:
    if lib is torch:
        return lambda fn: torch.compile(fn, backend="eager")
    return chainrule.compile


def _calls(lib: Any) -> tuple[list[np.ndarray], list[Any]]:
    compile_ = _compiler(lib)
    lib.manual_seed(0)
    linear = lib.nn.Linear(2, 2)
    x = lib.tensor([[0.5, -1.5]])
    seen = []
    method = compile_(linear.forward)
    seen.append(method(x))
    with lib.no_grad():
        linear.weight.mul_(2)
    seen.append(method(x))

    def varargs(*args: Any, **kwargs: Any) -> Any:
        return args[0] * kwargs.get("scale", 1) + args[1]

    packed = compile_(varargs)
    seen += [packed(x, x, scale=3), packed(x, x), packed(x, 2 * x, scale=-1)]

    class Scaler:
        def __init__(self) -> None:
            self.weight = lib.tensor([3.0, -2.0])

        def __call__(self, x: Any) -> Any:
            return x * self.weight

    scaler = Scaler()
    called = compile_(scaler)
    seen.append(called(x))
    scaler.weight = lib.tensor([5.0, 0.5])
    seen.append(called(x))
    partial = compile_(functools.partial(lambda a, b: a * b, b=4.0))
    seen.append(partial(x))
    return [s.detach().numpy() for s in seen], [method, packed]


def test_call_forms_compute_as_eager_and_pytorch():
    ours, (method, packed) = _calls(chainrule)
    theirs, _ = _calls(torch)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert method.fallback_reasons == [] and method.graph_breaks == 0
    # (*args, **kwargs: each new call form breaks the graph and runs eagerly)
    assert packed.graph_breaks == packed.compile_count == 3
