"""Which overload PyTorch picks for tensor and number operands, and its errors: node names,
edges and messages of ``xlogy``, ``remainder``, ``fmod``, the comparisons and the binary
functions that take tensors only, each compared with PyTorch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

from .outcomes import same_outcome


class _Operand:
    """A Python class: PyTorch names it bare (``not _Operand``), not with its module."""


def _leaf(lib: Any) -> Any:
    return lib.tensor([[0.25, 2.0, 1.5], [0.75, 3.0, 0.5]], dtype=lib.float64,
                      requires_grad=True)


@pytest.mark.parametrize("case", [
    lambda lib: lib.xlogy(2.0, 3.0),
    lambda lib: lib.xlogy(2, None),
    lambda lib: _leaf(lib).clone().floor_divide_(2).sum().backward(),
    lambda lib: _leaf(lib).clone().__ifloordiv__(2).sum().backward(),
    lambda lib: lib.floor_divide(_leaf(lib), 2).sum().backward(),
    lambda lib: lib.xlogy(lib.tensor([1.0]), [1]),
    lambda lib: lib.xlogy("a", lib.tensor([1.0])),
    lambda lib: lib.add(lib.tensor([1.0]), "a"),
    lambda lib: lib.add(lib.tensor([1.0]), "a", alpha=2),
    lambda lib: lib.sub(lib.tensor([1.0]), None),
    lambda lib: lib.div(lib.tensor([1.0]), [2.0]),
    lambda lib: lib.fmod(1.5, _leaf(lib)),
    lambda lib: lib.eq(1.5, _leaf(lib)),
    lambda lib: lib.lt(2, _leaf(lib)),
    lambda lib: lib.atan2(1.5, _leaf(lib)),
    lambda lib: lib.atan2(_leaf(lib), 2),
    lambda lib: lib.hypot(_leaf(lib), True),
    lambda lib: lib.maximum(_leaf(lib), np.float32(1)),
    lambda lib: lib.minimum(0.5, _leaf(lib)),
    lambda lib: lib.fmax(_leaf(lib), 1.5),
    lambda lib: lib.fmin(_leaf(lib), None),
    lambda lib: lib.mul(_leaf(lib), {}),
    lambda lib: lib.remainder(1.5, _leaf(lib)).sum().backward(),
    lambda lib: (3 % _leaf(lib)).sum().backward(),
    lambda lib: _leaf(lib).atan2(1.5),
    lambda lib: _leaf(lib).mul(None),
    lambda lib: _leaf(lib).maximum(2),
    lambda lib: _leaf(lib).fmin([1.0]),
    lambda lib: lib.rsub(1.5, _leaf(lib)),
    lambda lib: lib.clamp(1.5, _leaf(lib)),
    lambda lib: lib.clamp(1.5, min=0),
    lambda lib: lib.clip(2, 1),
    lambda lib: lib.clamp_min(1.5, _leaf(lib)),
    lambda lib: lib.clamp_max(1.5, _leaf(lib)),
    lambda lib: lib.fmod(1.5, 2.0),
    lambda lib: lib.add(_leaf(lib), _Operand()),
], ids=["xlogy-numbers", "xlogy-none", "floor_divide_", "ifloordiv", "floor_divide",
        "xlogy-list", "xlogy-str", "add-str", "add-alpha-str", "sub-none", "div-list",
        "fmod-number-self", "eq-number-self", "lt-number-self", "atan2-number-input",
        "atan2-number-other", "hypot-bool", "maximum-numpy-scalar", "minimum-number",
        "fmax-number", "fmin-none", "mul-dict", "remainder-number-self", "rmod",
        "method-atan2", "method-mul", "method-maximum", "method-fmin", "rsub-number-input",
        "clamp-number-input", "clamp-number-min", "clip-numbers",
        "clamp_min-number-input", "clamp_max-number-input", "fmod-numbers",
        "python-class-operand"])
def test_messages_name_the_overload(case: Callable[[Any], Any]) -> None:
    same_outcome(case)


@pytest.mark.parametrize("case", [
    lambda lib, x: lib.xlogy(x, 2.5), lambda lib, x: lib.xlogy(3.0, x), lambda lib, x: x.xlogy(3),
    lambda lib, x: lib.xlogy(x, lib.tensor(2.0, dtype=lib.float64)),
    lambda lib, x: lib.remainder(1.5, x), lambda lib, x: 3 % x, lambda lib, x: x % 1.5,
    lambda lib, x: lib.remainder(x, x * 2), lambda lib, x: lib.fmod(x, 2),
    lambda lib, x: x.clone().gt_(1.0), lambda lib, x: x.clone().gt_(x * 0 + 1),
], ids=["xlogy-number-other", "xlogy-number-self", "xlogy-method", "xlogy-0d",
        "remainder-number-self", "rmod", "mod-number", "remainder-tensors", "fmod-number",
        "gt_-number", "gt_-tensor"])
def test_node_edges_and_saved_values_match(case: Callable[[Any, Any], Any]) -> None:
    def graph(lib: Any) -> tuple:
        node = case(lib, _leaf(lib)).grad_fn
        edges = tuple(type(f[0]).__name__ for f in node.next_functions)
        saved = sorted(a for a in dir(node) if a.startswith("_saved") and not
                       a.endswith("_sym_sizes"))
        return node.name().split("::")[-1], edges, saved

    assert graph(chainrule) == graph(torch)


@pytest.mark.parametrize("case", [
    lambda lib, x: x + 2, lambda lib, x: x + x, lambda lib, x: x - x,
    lambda lib, x: lib.add(x, x, alpha=2), lambda lib, x: x.sub(2, alpha=3),
    lambda lib, x: 2 - x, lambda lib, x: lib.rsub(x, x), lambda lib, x: x.pow(2.5),
    lambda lib, x: lib.clamp(x, min=0.5), lambda lib, x: x.lerp(x * 2, 0.25),
], ids=["add-number", "add", "sub", "add-alpha", "sub-number-alpha", "rsub-number", "rsub",
        "pow", "clamp", "lerp"])
def test_saved_numbers_are_pytorchs(case: Callable[[Any, Any], Any]) -> None:
    """PyTorch's nodes save their numbers whatever needs grad (``_saved_alpha`` of ``a + b``
    is 1 though ``add`` was given no alpha)."""
    def numbers(lib: Any) -> dict[str, str]:
        node = case(lib, _leaf(lib)).grad_fn
        return {a: str(getattr(node, a)) for a in dir(node) if a.startswith("_saved_")
                and not isinstance(getattr(node, a), lib.Tensor | tuple)}

    assert numbers(chainrule) == numbers(torch)
