"""chainrule.compile of programs with Python side effects the generated graph cannot replay
(torch.compile replays them at each call): one that prints, appends to a list it reads,
counts in a dict, or sets a module's attribute runs eagerly (a graph break), with what the
trace did undone, so each call does it once, as eagerly. Before, the effect happened once, at
the trace, and the compiled program computed with the values of that call (a counter read
back as 1 at every call: silent wrong results)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _appends(lib: Any) -> tuple[Any, Any]:
    log: list[Any] = []

    def fn(x: Any) -> Any:
        log.append(len(log))
        return x * len(log)

    return fn, lambda: list(log)


def _counts(lib: Any) -> tuple[Any, Any]:
    state = {"calls": 0, "nested": {"total": 0.0}}

    def fn(x: Any) -> Any:
        state["calls"] += 1
        state["nested"]["total"] += 0.5
        return x * state["calls"] + state["nested"]["total"]

    return fn, lambda: (state["calls"], state["nested"]["total"])


def _module_counter(lib: Any) -> tuple[Any, Any]:
    class Counted(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0
            self.linear = lib.nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            self.calls += 1
            return self.linear(x) * self.calls

    lib.manual_seed(0)
    module = Counted()
    return module, lambda: module.calls


def _prints(lib: Any) -> tuple[Any, Any]:
    def fn(x: Any) -> Any:
        print("step", x.shape[0])
        return x * 2

    return fn, lambda: None


def _caches(lib: Any) -> tuple[Any, Any]:
    class Caching(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.last_batch = None
            self.linear = lib.nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            self.last_batch = x.shape[0]
            return self.linear(x)

    lib.manual_seed(0)
    module = Caching()
    return module, lambda: module.last_batch


def _caches_a_tensor(lib: Any) -> tuple[Any, Any]:
    # (the trace leaves a Proxy in ``last``: undoing the trace must not compare it with the
    # tensor that was there, or the count is not undone)
    class Remembering(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.last = lib.zeros(1)
            self.calls = 0
            self.linear = lib.nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            self.last = x * 2
            self.calls += 1
            return self.linear(x)

    lib.manual_seed(0)
    module = Remembering()
    return module, lambda: (module.calls, module.last.detach().numpy().tolist())


@pytest.mark.parametrize(
    "make", [_appends, _counts, _module_counter, _prints, _caches, _caches_a_tensor]
)
def test_side_effects_happen_at_every_call_as_eagerly(make):
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        fn, state = make(lib)
        if name == "compiled":
            fn = chainrule.compile(fn)
        printed = io.StringIO()
        values = []
        with contextlib.redirect_stdout(printed):
            for batch in (3, 3, 3):
                x = lib.ones(batch, 2, requires_grad=True)
                out = fn(x)
                out.sum().backward()
                values += [out.detach().numpy(), x.grad.numpy()]
        results[name] = (values, state(), printed.getvalue())
        if name == "compiled":
            assert fn.graph_breaks == 1
    for name in ("eager", "torch"):
        values, state, printed = results[name]
        ours = results["compiled"]
        assert ours[1] == state and ours[2] == printed
        for a, b in zip(ours[0], values, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_tensor_constants_of_a_module_still_compile():
    class Scaled(chainrule.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = chainrule.tensor(2.0)  # (a plain attribute: no buffer)
            self.linear = chainrule.nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            return self.linear(x) * self.scale

    module = Scaled()
    fn = chainrule.compile(module)
    x = chainrule.ones(3, 2)
    np.testing.assert_array_equal(fn(x).detach().numpy(), module(x).detach().numpy())
    assert fn.graph_breaks == 0 and fn.fallback_reasons == []
    assert "linear" in fn.code
