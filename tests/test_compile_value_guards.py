"""chainrule.compile guards on the constants a program reads from the lists, dicts and plain
objects in its globals and closure (``scales[0]``, ``cfg["k"]``, ``opts.k``), as torch.compile
guards on what it reads: a change in place recompiles. Before, the compiled program kept the
values it was traced with (a silent wrong result). Constants compare by type and value, a
float by its repr (``-0.0`` is not ``0.0``; a NaN does not recompile at every call)."""

from __future__ import annotations

import types
from typing import Any

import numpy as np

import chainrule

from .conftest import torch

SCALES = [2.0, [1.0]]
CONFIG = {"k": 2.0, "inner": {"shift": 1.0}}
OPTIONS = types.SimpleNamespace(k=2.0, power=2)
FACTOR = 0.0


class _Settings:
    def __init__(self) -> None:
        self.k = 2.0


SETTINGS = _Settings()


def _from_list(lib: Any) -> Any:
    return lambda x: x * SCALES[0] + SCALES[1][0]


def _from_dict(lib: Any) -> Any:
    return lambda x: x * CONFIG["k"] + CONFIG["inner"]["shift"]


def _from_namespace(lib: Any) -> Any:
    return lambda x: (x * OPTIONS.k) ** OPTIONS.power


def _from_object(lib: Any) -> Any:
    return lambda x: x * SETTINGS.k


def _changes() -> list[Any]:
    def reset() -> None:
        SCALES[:] = [2.0, [1.0]]
        CONFIG.update(k=2.0, inner={"shift": 1.0})
        OPTIONS.k, OPTIONS.power = 2.0, 2
        SETTINGS.k = 2.0

    def first() -> None:
        SCALES[0] = 3.0
        CONFIG["k"] = 3.0
        OPTIONS.k = 3.0
        SETTINGS.k = 3.0

    def nested() -> None:
        SCALES[1][0] = -1.0
        CONFIG["inner"]["shift"] = -1.0
        OPTIONS.power = 3
        SETTINGS.k = -0.0

    return [reset, first, nested]


def test_changes_in_place_recompile():
    for make in (_from_list, _from_dict, _from_namespace, _from_object):
        results = {}
        for name in ("torch", "eager", "compiled"):
            lib = torch if name == "torch" else chainrule
            fn = make(lib)
            if name == "compiled":
                fn = chainrule.compile(fn)
            seen = []
            for change in _changes():
                change()
                x = lib.tensor([-1.5, 0.0, 2.0], requires_grad=True)
                out = fn(x)
                out.backward(lib.ones_like(out))
                seen += [out.detach().numpy(), x.grad.numpy()]
            results[name] = seen
            if name == "compiled":
                assert fn.compile_count == 3, make.__name__
        for ours, eager, theirs in zip(
            results["compiled"], results["eager"], results["torch"], strict=True
        ):
            np.testing.assert_array_equal(ours, eager, err_msg=make.__name__)
            np.testing.assert_array_equal(ours, theirs, err_msg=make.__name__)
            np.testing.assert_array_equal(np.signbit(ours), np.signbit(eager))


def test_a_float_constant_compares_by_repr():
    global FACTOR

    def scaled(x: Any) -> Any:
        return x * FACTOR

    fn = chainrule.compile(scaled)
    x = chainrule.tensor([-1.0, 1.0])
    signs = []
    for value in (0.0, -0.0, float("nan"), float("nan"), 0.0):
        FACTOR = value
        out = fn(x).numpy()
        np.testing.assert_array_equal(out, scaled(x).numpy())
        signs.append(np.signbit(out).tolist())
    FACTOR = 0.0
    assert signs[0] == [True, False] and signs[1] == [False, True]
    assert fn.compile_count == 3  # (0.0, -0.0, NaN: the second NaN and 0.0 again reuse)


def test_a_float_argument_is_guarded_by_repr():
    """``f(x, -0.0)`` after ``f(x, 0.0)`` ran 0.0's graph (the signs of zero were 0.0's), and
    every NaN argument compiled again."""

    def scaled(x: Any, factor: float) -> Any:
        return x * factor

    fn = chainrule.compile(scaled)
    x = chainrule.tensor([-1.0, 1.0])
    for value in (0.0, -0.0, float("nan"), float("nan"), 0.0):
        out = fn(x, value).numpy()
        expected = torch.tensor([-1.0, 1.0]) * value
        np.testing.assert_array_equal(out, expected.numpy())
        np.testing.assert_array_equal(np.signbit(out), np.signbit(expected.numpy()))
    assert fn.compile_count == 3
