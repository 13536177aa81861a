"""The smaller names of torch.nn and nn.functional against PyTorch: the deprecated
nn.Container and nn.NLLLoss2d (their FutureWarnings, reprs and results), nn.factory_kwargs,
F.assert_int_or_pair and F.has_torch_function(_unary/_variadic)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _warned(make: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = make()
    return value, [(w.category.__name__, str(w.message)) for w in caught]


def test_container_is_deprecated_as_in_torch() -> None:
    out = []
    for lib in (torch, chainrule):
        module, caught = _warned(
            lambda lib=lib: lib.nn.Container(a=lib.nn.Linear(2, 1), b=lib.nn.ReLU())
        )
        out.append(
            (
                repr(module),
                caught,
                [name for name, _ in module.named_children()],
                isinstance(module, lib.nn.Module),
            )
        )
    assert out[1] == out[0]


def test_nllloss2d_is_a_deprecated_nllloss() -> None:
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(3), size=(2, 2, 2))).transpose(0, 3, 1, 2)
    t = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    out = []
    for lib in (torch, chainrule):
        loss, caught = _warned(lambda lib=lib: lib.nn.NLLLoss2d(ignore_index=2, reduction="sum"))
        value = loss(lib.tensor(x.copy()), lib.tensor(t))
        out.append((repr(loss), caught, isinstance(loss, lib.nn.NLLLoss), value.item()))
    assert out[1][:3] == out[0][:3]
    assert out[1][3] == pytest.approx(out[0][3], rel=1e-12)


FACTORY: dict[str, Callable[[Any], Any]] = {
    "none": lambda t: t.nn.factory_kwargs(None),
    "dtype and device": lambda t: sorted(
        t.nn.factory_kwargs({"dtype": t.float64, "device": "cpu"}).items()
    ),
    "nested": lambda t: sorted(
        t.nn.factory_kwargs({"factory_kwargs": {"dtype": t.float16}, "device": "cpu"}).items()
    ),
    "unexpected": lambda t: t.nn.factory_kwargs({"foo": 1}),
    "twice": lambda t: t.nn.factory_kwargs(
        {"dtype": t.float32, "factory_kwargs": {"dtype": t.float64}}
    ),
    "assert_int_or_pair int": lambda t: t.nn.functional.assert_int_or_pair(3, "k", "{} bad"),
    "assert_int_or_pair pair": lambda t: t.nn.functional.assert_int_or_pair((1, 2), "k", "{}"),
    "assert_int_or_pair triple": lambda t: t.nn.functional.assert_int_or_pair(
        [1, 2, 3], "kernel_size", "{} must be int or pair"
    ),
}


@pytest.mark.parametrize("name", sorted(FACTORY))
def test_factory_kwargs_and_assert_int_or_pair_match_torch(name: str) -> None:
    same_outcome(FACTORY[name])


def test_has_torch_function_matches_torch() -> None:
    out = []
    for lib in (torch, chainrule):
        F = lib.nn.functional

        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
                return super().__torch_function__(func, types, args, kwargs or {})

        plain = lib.ones(2)
        sub = plain.as_subclass(Sub)
        param = lib.nn.Parameter(lib.ones(2))
        out.append(
            (
                F.has_torch_function((plain, 1)),
                F.has_torch_function((plain, sub)),
                F.has_torch_function_unary(plain),
                F.has_torch_function_unary(sub),
                F.has_torch_function_unary(param),
                F.has_torch_function_variadic(plain, 2),
                F.has_torch_function_variadic(plain, sub),
            )
        )
    assert out[1] == out[0]
