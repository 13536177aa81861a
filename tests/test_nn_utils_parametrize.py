"""nn.utils.parametrize against PyTorch: registering, chaining, assigning through
right_inverse, caching, removing, tensors parametrized by several originals, the module's
repr, parameter names and state_dict keys, gradients through the parametrization, and the
errors."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

LIBS = (torch, chainrule)


def _modules(lib: Any) -> dict[str, type]:
    """The tutorial-style parametrizations, defined for one library."""
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return lib.matrix_exp(X)

    class Scale(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def forward(self, X):
            self.calls += 1
            return X * 2

        def right_inverse(self, X):
            return X / 2

    class RankOne(nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0].clone(), Z[0, :].clone()

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:-1]

    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class BadInverse(nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    return {
        "Symmetric": Symmetric,
        "Skew": Skew,
        "MatrixExponential": MatrixExponential,
        "Scale": Scale,
        "RankOne": RankOne,
        "Shrink": Shrink,
        "ToDouble": ToDouble,
        "BadInverse": BadInverse,
    }


def _linear(lib: Any, n_in: int = 3, n_out: int = 3) -> Any:
    layer = lib.nn.Linear(n_in, n_out).double()
    rng = np.random.default_rng(n_in * 10 + n_out)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(rng.standard_normal((n_out, n_in))))
        layer.bias.copy_(lib.tensor(rng.standard_normal(n_out)))
    return layer


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy().copy()


def _text(obj: Any) -> str:
    return str(obj).replace("chainrule", "torch")


@pytest.mark.parametrize("chain", [["Symmetric"], ["Skew", "MatrixExponential"], ["Scale"]])
def test_values_names_repr_and_gradients(chain: list[str]) -> None:
    x = np.random.default_rng(1).standard_normal((4, 3))
    seen = []
    for lib in LIBS:
        mods = _modules(lib)
        layer = _linear(lib)
        for name in chain:
            lib.nn.utils.parametrize.register_parametrization(layer, "weight", mods[name]())
        out = layer(lib.tensor(x))
        (out**2).sum().backward()
        original = layer.parametrizations.weight.original
        seen.append(
            (
                _np(layer.weight),
                _np(out),
                _np(original.grad),
                _np(layer.bias.grad),
                _text(layer),
                type(layer).__name__,
                lib.nn.utils.parametrize.type_before_parametrizations(layer).__name__,
                [n for n, _ in layer.named_parameters()],
                list(layer.state_dict()),
                type(layer.parametrizations).__name__,
                type(layer.parametrizations.weight).__name__,
                lib.nn.utils.parametrize.is_parametrized(layer),
                lib.nn.utils.parametrize.is_parametrized(layer, "weight"),
                lib.nn.utils.parametrize.is_parametrized(layer, "bias"),
                type(lib.nn.Linear(2, 2)).__name__,  # other instances keep their class
                layer.weight.grad_fn is not None,
            )
        )
    theirs, ours = seen
    for a, b in zip(theirs, ours, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
        else:
            assert b == a


def test_assignment_runs_right_inverse_in_place() -> None:
    X = np.random.default_rng(2).standard_normal((3, 3))
    X = X - X.T
    seen = []
    for lib in LIBS:
        mods = _modules(lib)
        layer = _linear(lib)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", mods["Skew"]())
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", mods["Scale"]())
        original = layer.parametrizations.weight.original
        version = original._version
        layer.weight = lib.tensor(X)
        seen.append(
            (
                _np(layer.weight),
                _np(original),
                layer.parametrizations.weight.original is original,
                original._version > version,
                original.requires_grad,
                original.grad_fn is None,
            )
        )
    np.testing.assert_allclose(seen[1][0], seen[0][0], rtol=1e-12)
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-12)
    assert seen[1][2:] == seen[0][2:]


def test_cached_computes_once_and_forgets_after() -> None:
    counts = []
    for lib in LIBS:
        mods = _modules(lib)
        layer = _linear(lib)
        scale = mods["Scale"]()
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", scale)
        after_register = scale.calls
        _ = layer.weight + layer.weight
        outside = scale.calls
        with lib.nn.utils.parametrize.cached():
            first = layer.weight
            second = layer.weight
            with lib.nn.utils.parametrize.cached():
                third = layer.weight
            fourth = layer.weight
            inside = scale.calls
        _ = layer.weight
        counts.append(
            (after_register, outside, inside, scale.calls, first is second, third is fourth)
        )
    assert counts[1] == counts[0]


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations(leave_parametrized: bool) -> None:
    seen = []
    for lib in LIBS:
        mods = _modules(lib)
        layer = _linear(lib)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", mods["Skew"]())
        original = layer.parametrizations.weight.original
        lib.nn.utils.parametrize.remove_parametrizations(
            layer, "weight", leave_parametrized=leave_parametrized
        )
        seen.append(
            (
                _np(layer.weight),
                layer.weight is original,
                type(layer).__name__,
                hasattr(layer, "parametrizations"),
                type(layer.weight).__name__,
                [n for n, _ in layer.named_parameters()],
                _text(layer),
            )
        )
    np.testing.assert_allclose(seen[1][0], seen[0][0], rtol=1e-12)
    assert seen[1][1:] == seen[0][1:]


def test_several_originals() -> None:
    seen = []
    for lib in LIBS:
        mods = _modules(lib)
        layer = _linear(lib, 3, 4)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", mods["RankOne"]())
        plist = layer.parametrizations.weight
        layer(lib.ones(2, 3, dtype=lib.float64)).sum().backward()
        seen.append(
            (
                _np(layer.weight),
                [n for n, _ in layer.named_parameters()],
                plist.is_tensor,
                plist.ntensors,
                _np(plist.original0.grad),
                _np(plist.original1.grad),
                type(plist.original0).__name__,
            )
        )
        layer.weight = lib.ones(4, 3, dtype=lib.float64) * 3
        seen.append(_np(layer.weight))
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight")
        seen.append((_np(layer.weight), type(layer.weight).__name__, type(layer).__name__))
    half = len(seen) // 2
    for a, b in zip(seen[:half], seen[half:], strict=True):
        a_items = a if isinstance(a, tuple) else (a,)
        b_items = b if isinstance(b, tuple) else (b,)
        for x, y in zip(a_items, b_items, strict=True):
            if isinstance(x, np.ndarray):
                np.testing.assert_allclose(y, x, rtol=1e-12)
            else:
                assert y == x


def test_buffer_stays_a_buffer() -> None:
    seen = []
    for lib in LIBS:
        mods = _modules(lib)
        bn = lib.nn.BatchNorm1d(3)
        lib.nn.utils.parametrize.register_parametrization(bn, "running_var", mods["Scale"]())
        seen.append(
            (
                [n for n, _ in bn.named_buffers()],
                list(bn.state_dict()),
                _np(bn.running_var),
            )
        )
    assert seen[1][:2] == seen[0][:2]
    np.testing.assert_allclose(seen[1][2], seen[0][2])


def test_deepcopy_and_pickling() -> None:
    for lib in LIBS:
        mods = _modules(lib)
        layer = _linear(lib)
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", mods["Symmetric"]())
        clone = copy.deepcopy(layer)
        assert type(clone) is type(layer)
        np.testing.assert_array_equal(_np(clone.weight), _np(layer.weight))
        assert clone.parametrizations.weight.original is not layer.parametrizations.weight.original
    same_outcome(lambda lib: _pickled(lib))


def _pickled(lib: Any) -> Any:
    layer = _linear(lib)
    lib.nn.utils.parametrize.register_parametrization(layer, "weight", _modules(lib)["Skew"]())
    return pickle.dumps(layer)


def test_unsafe_allows_a_new_shape() -> None:
    shapes = []
    for lib in LIBS:
        layer = _linear(lib, 3, 4)
        lib.nn.utils.parametrize.register_parametrization(
            layer, "weight", _modules(lib)["Shrink"](), unsafe=True
        )
        shapes.append((tuple(layer.weight.shape), layer.parametrizations.weight.unsafe))
    assert shapes[1] == shapes[0]


def _register(lib: Any, names: list[str], tensor_name: str = "weight", **kwargs: Any) -> Any:
    mods = _modules(lib)
    layer = _linear(lib, 3, 4)
    for name in names:
        lib.nn.utils.parametrize.register_parametrization(
            layer, tensor_name, mods[name](), **kwargs
        )
    return layer


@pytest.mark.parametrize(
    "names",
    [["Shrink"], ["ToDouble"], ["Symmetric", "Shrink"], ["Scale", "ToDouble"], ["BadInverse"]],
)
def test_registration_errors(names: list[str]) -> None:
    same_outcome(lambda lib: _register(lib, names).weight.shape)


def test_other_errors() -> None:
    same_outcome(lambda lib: _register(lib, ["Scale"], tensor_name="nothing"))
    same_outcome(lambda lib: lib.nn.utils.parametrize.ParametrizationList([], lib.ones(2)))
    same_outcome(
        lambda lib: lib.nn.utils.parametrize.remove_parametrizations(_linear(lib), "weight")
    )
    same_outcome(
        lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
            _register(lib, ["RankOne"]), "weight", leave_parametrized=False
        )
    )
    same_outcome(lambda lib: setattr(_register(lib, ["Symmetric"]), "weight", lib.ones(4, 3)))
    same_outcome(lambda lib: lib.nn.utils.parametrize.is_parametrized(_linear(lib), "weight"))


def test_transfer_parametrizations_and_params() -> None:
    seen = []
    for lib in LIBS:
        source = _register(lib, ["Scale"])
        target = _linear(lib, 3, 4)
        lib.nn.utils.parametrize.transfer_parametrizations_and_params(source, target)
        seen.append(
            (
                _np(target.weight),
                target.parametrizations.weight.original is source.parametrizations.weight.original,
                type(target).__name__,
            )
        )
    np.testing.assert_allclose(seen[1][0], seen[0][0])
    assert seen[1][1:] == seen[0][1:]
