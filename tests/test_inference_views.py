"""Views of inference tensors, compared with PyTorch: in or out of inference mode they are
inference tensors sharing the memory, but not views (``_is_view()`` False, no ``_base``); views
of normal tensors made in inference mode stay views; ``make_dual`` of an inference tensor.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from .outcomes import same_outcome

VIEWS = {
    "view": lambda t: t.view(2, 2),
    "t": lambda t: t.t(),
    "getitem": lambda t: t[0],
    "slice": lambda t: t[:, 1:],
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t[:1].expand(3, 2),
    "transpose": lambda t: t.transpose(0, 1),
    "diagonal": lambda t: t.diagonal(),
    "split": lambda t: t.split(1)[0],
    "unbind": lambda t: t.unbind(0)[1],
}


@pytest.mark.parametrize("name", VIEWS)
@pytest.mark.parametrize("where", ["inside", "outside"])
def test_view_of_an_inference_tensor_is_not_a_view(name: str, where: str) -> None:
    def program(lib: Any) -> Any:
        with lib.inference_mode():
            base = lib.arange(4.0).reshape(2, 2)
        if where == "inside":
            with lib.inference_mode():
                v = VIEWS[name](base)
        else:
            v = VIEWS[name](base)
        before = v.sum().item()
        with lib.inference_mode():
            base.add_(1)  # (the view shares the memory: it sees the write)
        return v._is_view(), v._base is None, v.is_inference(), v.requires_grad, before, v

    same_outcome(program)


@pytest.mark.parametrize("name", ["view", "t", "getitem", "slice"])
def test_view_of_a_normal_tensor_in_inference_mode_is_a_view(name: str) -> None:
    def program(lib: Any) -> Any:
        base = lib.arange(4.0).reshape(2, 2)
        with lib.inference_mode():
            v = VIEWS[name](base)
        return v._is_view(), v._base is base, v.is_inference()

    same_outcome(program)


def test_writes_through_such_a_view_reach_the_base() -> None:
    def program(lib: Any) -> Any:
        with lib.inference_mode():
            base = lib.zeros(2, 2)
            v = base[0]
            v += 1
            w = base.t()
            w[1, 0] = 5.0
        return base

    same_outcome(program)


def test_in_place_outside_inference_mode_is_refused() -> None:
    def program(lib: Any) -> Any:
        with lib.inference_mode():
            base = lib.zeros(2, 2)
        v = base.view(4)
        v.add_(1)

    same_outcome(program)


def test_make_dual_of_an_inference_tensor() -> None:
    def program(lib: Any) -> Any:
        fw = importlib.import_module(lib.__name__ + ".autograd.forward_ad")
        with lib.inference_mode():
            foo = lib.rand(2)
            copy = foo.clone()
            with fw.dual_level():
                dual = fw.make_dual(foo, lib.ones(2))
                first = (dual._is_view(), dual._base is None, fw.unpack_dual(dual).tangent)
                dual += 1
                changed = not lib.allclose(foo, copy)
        return first, changed

    same_outcome(program)
