"""``func.functional_call`` and ``func.stack_module_state`` against PyTorch's: values,
gradients, tied weights, strict mode, restoring the module, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, torch

RNG = np.random.default_rng(3)
W1 = RNG.standard_normal((2, 2)).astype(np.float32)
B1 = RNG.standard_normal(2).astype(np.float32)
B2 = RNG.standard_normal(2).astype(np.float32)
X = RNG.standard_normal((3, 2)).astype(np.float32)


def _tied_module(lib):
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = lib.nn.Linear(2, 2)
            self.l2 = lib.nn.Linear(2, 2)
            self.l2.weight = self.l1.weight
            self.register_buffer("buf", lib.ones(2))
            with lib.no_grad():
                self.l1.weight.copy_(lib.tensor(W1))
                self.l1.bias.copy_(lib.tensor(B1))
                self.l2.bias.copy_(lib.tensor(B2))

        def forward(self, x):
            return self.l2(self.l1(x)) + self.buf

    return Tied()


def _both(fn):
    return fn(chainrule), fn(torch)


def _error(fn, lib):
    with pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's
        fn(lib)
    return type(info.value).__name__, str(info.value)


def _same_error(fn) -> None:
    assert _error(fn, chainrule) == _error(fn, torch)


@pytest.mark.parametrize("tie_weights", [True, False])
@pytest.mark.parametrize("how", ["dict", "dicts", "tuple_args"])
def test_values_and_tied_weights(tie_weights: bool, how: str) -> None:
    def run(lib):
        module = _tied_module(lib)
        w = lib.tensor(np.full((2, 2), 0.5, dtype=np.float32))
        x = lib.tensor(X)
        if how == "dict":
            given, args = {"l1.weight": w}, x
        elif how == "dicts":
            given, args = ({"l1.weight": w}, {"buf": lib.zeros(2)}), x
        else:
            given, args = {"l1.weight": w, "l1.bias": lib.zeros(2)}, (x,)
        out = lib.func.functional_call(module, given, args, tie_weights=tie_weights)
        assert module.l1.weight is module.l2.weight
        assert isinstance(module.l1.weight, lib.nn.Parameter)
        return out, module(x)

    ours, theirs = _both(run)
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_gradients_through_the_swapped_parameters() -> None:
    def run(lib):
        module = _tied_module(lib)
        params = {k: v.detach().clone().requires_grad_() for k, v in module.named_parameters()}
        loss = lib.func.functional_call(module, params, lib.tensor(X), {}).pow(2).sum()
        loss.backward()
        assert all(p.grad is None for p in module.parameters())
        return [params[k].grad for k in params]

    ours, theirs = _both(run)
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-6, atol=1e-6)


def test_grad_of_functional_call_matches_torch_func() -> None:
    def run(lib):
        module = _tied_module(lib)
        params = {k: v.detach() for k, v in module.named_parameters()}

        def loss(p, x):
            return lib.func.functional_call(module, p, (x,)).square().mean()

        return lib.func.grad(loss)(params, lib.tensor(X))

    ours, theirs = _both(run)
    assert list(ours) == list(theirs)
    for key in theirs:
        assert_close(ours[key], theirs[key], rtol=1e-6, atol=1e-6)


def test_kwargs_are_passed() -> None:
    def run(lib):
        class Scale(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2))

            def forward(self, x, *, factor=1.0):
                return self.w * x * factor

        return lib.func.functional_call(
            Scale(), {"w": lib.tensor([2.0, 3.0])}, lib.ones(2), {"factor": 4.0}
        )

    ours, theirs = _both(run)
    assert_close(ours, theirs)


def _boom_module(lib):
    class Boom(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)

        def forward(self, x):
            raise ValueError("boom")

    return Boom()


def test_module_restored_when_the_call_raises() -> None:
    for lib in (chainrule, torch):
        module = _boom_module(lib)
        weight = module.lin.weight
        with pytest.raises(ValueError, match="boom"):
            lib.func.functional_call(
                module, {"lin.weight": lib.zeros(2, 2), "new": lib.ones(1)}, lib.ones(2)
            )
        assert module.lin.weight is weight
        assert not hasattr(module, "new")


def test_rebinding_inside_the_call_updates_the_given_dict() -> None:
    def run(lib):
        class Inc(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("foo", lib.zeros(()))

            def forward(self, x):
                self.foo = self.foo + 1
                return x

        given = {"foo": lib.zeros(())}
        module = Inc()
        lib.func.functional_call(module, given, lib.ones(()))
        return module.foo, given["foo"]

    ours, theirs = _both(run)
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b)


@pytest.mark.parametrize(
    "given",
    [
        {"l1.weight": "w", "zzz": "w"},  # unexpected and missing
        {"l1.weight": "w", "l1.bias": "w", "l2.weight": "w", "l2.bias": "w", "buf": "w"},
    ],
)
def test_strict(given) -> None:
    def call(lib):
        module = _tied_module(lib)
        w = lib.ones(2, 2)
        values = {k: (w if k.endswith("weight") or k == "zzz" else lib.ones(2)) for k in given}
        return lib.func.functional_call(module, values, lib.tensor(X), strict=True)

    if "zzz" in given:
        _same_error(call)
    else:
        ours, theirs = _both(call)
        assert_close(ours, theirs)


@pytest.mark.parametrize(
    "case",
    [
        "tied_conflict",
        "repeated_key",
        "not_a_dict",
        "list_with_non_dict",
        "not_a_tensor",
        "bad_submodule",
        "non_module_path",
    ],
)
def test_errors(case: str) -> None:
    def call(lib):
        module = _tied_module(lib)
        w = lib.ones(2, 2)
        given = {
            "tied_conflict": {"l1.weight": w, "l2.weight": w * 2},
            "repeated_key": ({"l1.weight": w}, {"l1.weight": w}),
            "not_a_dict": 3,
            "list_with_non_dict": [{"l1.weight": w}, 3],
            "not_a_tensor": {"l1.weight": 3.0},
            "bad_submodule": {"nope.weight": w},
            "non_module_path": {"buf.x": w},
        }[case]
        return lib.func.functional_call(module, given, lib.tensor(X))

    _same_error(call)


def test_tied_weights_given_the_same_value_twice() -> None:
    def run(lib):
        w = lib.tensor(np.full((2, 2), 0.25, dtype=np.float32))
        return lib.func.functional_call(
            _tied_module(lib), {"l1.weight": w, "l2.weight": w}, lib.tensor(X)
        )

    ours, theirs = _both(run)
    assert_close(ours, theirs)


def test_stack_module_state() -> None:
    def run(lib):
        models = []
        for k in range(3):
            model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))
            with lib.no_grad():
                for p in model.parameters():
                    p.copy_(lib.tensor(np.full(tuple(p.shape), k + 0.5, dtype=np.float32)))
            models.append(model)
        params, buffers = lib.func.stack_module_state(models)
        shapes = {k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()}
        shapes.update({k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in buffers.items()})
        return shapes, [params[k] for k in params], [buffers[k] for k in buffers]

    ours, theirs = _both(run)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1] + ours[2], theirs[1] + theirs[2], strict=True):
        assert_close(a, b)


@pytest.mark.parametrize("case", ["empty", "modes", "classes", "requires_grad"])
def test_stack_module_state_errors(case: str) -> None:
    def call(lib):
        models = [lib.nn.Linear(3, 2) for _ in range(2)]
        if case == "empty":
            models = []
        elif case == "modes":
            models[1].eval()
        elif case == "classes":
            models.append(lib.nn.ReLU())
        else:
            models[1].weight.requires_grad_(False)
        return lib.func.stack_module_state(models)

    _same_error(call)
