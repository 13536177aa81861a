"""chainrule.compile guards on the constants a module's forward reads from its attributes
(``eps``, ``momentum``, ``negative_slope``, ``p``, ``stride``...), as torch.compile does:
changing one after the first call recompiles. Before, the compiled program kept the value it
was traced with (a silent wrong result: ``bn.eps = 10.0`` changed nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _batch_norm_eval(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3).eval())


def _set_eps(model: Any) -> None:
    model[1].eps = 10.0


def _batch_norm_train(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))


def _set_momentum(model: Any) -> None:
    model[1].momentum = 0.75


def _leaky(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.LeakyReLU(0.1))


def _set_slope(model: Any) -> None:
    model[1].negative_slope = 0.5


def _elu(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ELU())


def _set_alpha(model: Any) -> None:
    model[1].alpha = 3.0


def _softmax(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Softmax(dim=1))


def _set_dim(model: Any) -> None:
    model[1].dim = 0


def _conv(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Conv1d(3, 2, 2), lib.nn.Flatten())


def _set_stride(model: Any) -> None:
    model[0].stride = (2,)


CASES: list[tuple[Callable[[Any], Any], Callable[[Any], None]]] = [
    (_batch_norm_eval, _set_eps),
    (_batch_norm_train, _set_momentum),
    (_leaky, _set_slope),
    (_elu, _set_alpha),
    (_softmax, _set_dim),
    (_conv, _set_stride),
]


def _as_eager_and_pytorch(
    results: dict[str, list[Any]], rtol: float = 1e-6, atol: float = 0.0
) -> None:
    """The compiled results equal eager chainrule's to the bit, PyTorch's within rounding."""
    for ours, eager, theirs in zip(
        results["compiled"], results["eager"], results["torch"], strict=True
    ):
        np.testing.assert_array_equal(ours, eager)
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def _input(lib: Any, build: Callable[[Any], Any]) -> Any:
    shape = (4, 3, 5) if build is _conv else (4, 3)
    data = np.linspace(-2, 3, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return lib.tensor(data, requires_grad=True)


@pytest.mark.parametrize(("build", "change"), CASES)
def test_changing_an_attribute_recompiles(build, change):
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        lib.manual_seed(0)
        model = build(lib)
        fn = chainrule.compile(model) if name == "compiled" else model
        seen = []
        for step in range(3):
            if step == 1:
                change(model)
            x = _input(lib, build)
            out = fn(x)
            out.backward(lib.ones_like(out))
            seen += [out.detach().numpy().copy(), x.grad.numpy().copy()]
            seen += [b.numpy().copy() for b in model.buffers()]
        results[name] = seen
        if name == "compiled":
            assert fn.compile_count == 2 and fn.fallback_reasons == []
    _as_eager_and_pytorch(results, rtol=1e-5, atol=1e-6)


def test_an_attribute_set_back_runs_the_graph_compiled_for_it():
    model = _leaky(chainrule)
    fn = chainrule.compile(model)
    x = _input(chainrule, _leaky)
    first = fn(x)
    _set_slope(model)
    second = fn(x)
    model[1].negative_slope = 0.1
    third = fn(x)
    assert fn.compile_count == 2
    np.testing.assert_array_equal(third.detach().numpy(), first.detach().numpy())
    assert not np.array_equal(second.detach().numpy(), first.detach().numpy())


def test_a_submodule_replaced_or_added_recompiles():
    """``model[0] = nn.Linear(...)`` or a layer added after compiling: before, the compiled
    program kept running the old layers (silent)."""
    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        fn = chainrule.compile(model) if name == "compiled" else model
        x = lib.tensor([[0.5, -1.0], [2.0, 0.25]])
        seen = [fn(x).detach().numpy()]
        lib.manual_seed(1)
        model[0] = lib.nn.Linear(2, 3)
        seen.append(fn(x).detach().numpy())
        model.add_module("2", lib.nn.Tanh())
        seen.append(fn(x).detach().numpy())
        results[name] = seen
        if name == "compiled":
            assert fn.compile_count == 3
    _as_eager_and_pytorch(results)


def test_a_plain_tensor_attribute_is_read_again():
    """A module's tensor attribute that is no parameter or buffer (``self.scale =
    torch.tensor(2.0)``), rebound after compiling: before, the compiled program kept the old
    tensor (silent)."""

    def build(lib: Any) -> Any:
        class Scaled(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.scale = lib.tensor(2.0)
                self.linear = lib.nn.Linear(2, 2)

            def forward(self, x: Any) -> Any:
                return self.linear(x) * self.scale

        lib.manual_seed(0)
        return Scaled()

    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        model = build(lib)
        fn = chainrule.compile(model) if name == "compiled" else model
        x = lib.tensor([[0.5, -1.0]])
        seen = [fn(x).detach().numpy()]
        model.scale = lib.tensor(5.0)
        seen.append(fn(x).detach().numpy())
        with lib.no_grad():
            model.scale.fill_(-1.0)
        seen.append(fn(x).detach().numpy())
        model.scale = 3.0
        seen.append(fn(x).detach().numpy())
        results[name] = seen
    _as_eager_and_pytorch(results)


def test_a_replaced_forward_is_the_one_that_runs():
    """A forward set on the instance (before or after compiling) or replaced on the class
    after compiling: before, the compiled program ran the class's first forward (silent)."""

    def build(lib: Any) -> tuple[Any, Any]:
        class Wrapped(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear = lib.nn.Linear(2, 2)

            def forward(self, x: Any) -> Any:
                return self.linear(x)

        lib.manual_seed(0)
        return Wrapped, Wrapped()

    results = {}
    for name in ("torch", "eager", "compiled"):
        lib = torch if name == "torch" else chainrule
        cls, model = build(lib)
        fn = chainrule.compile(model) if name == "compiled" else model
        x = lib.tensor([[0.5, -1.0]])
        seen = [fn(x).detach().numpy()]
        cls.forward = lambda self, x: self.linear(x) * 3
        seen.append(fn(x).detach().numpy())
        original = model.forward
        model.forward = lambda x, original=original: original(x) + 10
        seen.append(fn(x).detach().numpy())
        results[name] = seen
    _as_eager_and_pytorch(results)
