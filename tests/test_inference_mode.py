"""Inference mode as PyTorch has it, compared with PyTorch: which tensors are inference
tensors (made inside, their views and ``detach()`` wherever made), that they have no version
counter, cannot be saved for backward, modified in place or made to require grad outside
inference mode, and that ``inference_mode(False)`` really turns it off."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

LIBS = (chainrule, torch)


def _inference_tensor(lib: Any) -> Any:
    with lib.inference_mode():
        return lib.ones(3)


def _both(run: Callable[[Any], Any]) -> None:
    ours, theirs = (attempt(lambda lib=lib: run(lib), _described) for lib in LIBS)
    assert ours == theirs


def _described(value: Any) -> Any:
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        return (value.tolist(), value.is_inference(), value.requires_grad)
    if isinstance(value, tuple):
        return tuple(_described(v) for v in value)
    return value


IS_INFERENCE: dict[str, Callable[[Any], Any]] = {
    "made_inside": lambda lib: _inference_tensor(lib),
    "view_made_outside": lambda lib: _inference_tensor(lib).view(3),
    "slice_made_outside": lambda lib: _inference_tensor(lib)[1:],
    "detach": lambda lib: _inference_tensor(lib).detach(),
    "clone": lambda lib: _inference_tensor(lib).clone(),
    "op_outside": lambda lib: _inference_tensor(lib) * 2,
    "mixed_outside": lambda lib: _inference_tensor(lib) + lib.ones(3),
    "normal_view_inside": lambda lib: _view_inside(lib),
}


def _view_inside(lib: Any) -> Any:
    x = lib.ones(3)
    with lib.inference_mode():
        return x[:2]


@pytest.mark.parametrize("name", sorted(IS_INFERENCE))
def test_which_tensors_are_inference_tensors(name: str) -> None:
    _both(IS_INFERENCE[name])


IN_PLACE: dict[str, Callable[[Any], Any]] = {
    "add_": lambda x, lib: x.add_(1),
    "mul_": lambda x, lib: x.mul_(2),
    "sub_tensor": lambda x, lib: x.sub_(lib.ones(3)),
    "iadd": lambda x, lib: x.__iadd__(1),
    "zero_": lambda x, lib: x.zero_(),
    "fill_": lambda x, lib: x.fill_(2.0),
    "copy_": lambda x, lib: x.copy_(lib.ones(3) * 5),
    "setitem": lambda x, lib: x.__setitem__(0, 5.0),
    "clamp_": lambda x, lib: x.clamp_(0, 0.5),
    "neg_": lambda x, lib: x.neg_(),
    "relu_inplace": lambda x, lib: lib.nn.functional.relu(x, inplace=True),
    "unsqueeze_": lambda x, lib: x.unsqueeze_(0),
    "view_add_": lambda x, lib: x.view(3).add_(1),
    "slice_mul_": lambda x, lib: x[:2].mul_(3),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
@pytest.mark.parametrize("inside", [False, True])
def test_in_place_updates(name: str, inside: bool) -> None:
    """Refused outside inference mode (and nothing written), allowed inside."""

    def run(lib: Any) -> Any:
        x = _inference_tensor(lib)
        try:
            if inside:
                with lib.inference_mode():
                    IN_PLACE[name](x, lib)
            else:
                IN_PLACE[name](x, lib)
        finally:
            values = x.tolist()
        return values

    _both(run)


SAVED: dict[str, Callable[[Any, Any, Any], Any]] = {
    "mul_saves_it": lambda x, w, lib: (x * w).sum(),
    "add_saves_nothing": lambda x, w, lib: (x + w).sum(),
    "matmul": lambda x, w, lib: x @ w,
    "as_tensor_param": lambda x, w, lib: lib.nn.functional.linear(w, x.view(1, 3)),
}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_inference_tensors_cannot_be_saved_for_backward(name: str) -> None:
    def run(lib: Any) -> Any:
        x = _inference_tensor(lib)
        w = lib.ones(3, requires_grad=True)
        out = SAVED[name](x, w, lib)
        out.sum().backward()
        return w.grad

    _both(run)


def test_custom_function_cannot_save_an_inference_tensor() -> None:
    def run(lib: Any) -> Any:
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any, b: Any) -> Any:
                ctx.save_for_backward(b)
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2, None

        return Scale.apply(lib.ones(3, requires_grad=True), _inference_tensor(lib))

    _both(run)


def test_no_version_counter() -> None:
    _both(lambda lib: _inference_tensor(lib)._version)
    _both(lambda lib: _inference_tensor(lib).view(3)._version)
    _both(lambda lib: lib.ones(3)._version)


@pytest.mark.parametrize("how", ["method", "attribute", "false"])
@pytest.mark.parametrize("inside", [False, True])
def test_requires_grad_on_an_inference_tensor(how: str, inside: bool) -> None:
    def run(lib: Any) -> Any:
        x = _inference_tensor(lib)
        if inside:
            with lib.inference_mode():
                return _set_requires_grad(x, how)
        return _set_requires_grad(x, how)

    _both(run)


def _set_requires_grad(x: Any, how: str) -> Any:
    if how == "method":
        return x.requires_grad_()
    if how == "false":
        return x.requires_grad_(False)
    x.requires_grad = True
    return x


@pytest.mark.parametrize("outer", ["inference", "no_grad", "none"])
def test_inference_mode_false_turns_it_off(outer: str) -> None:
    def run(lib: Any) -> Any:
        context = {"inference": lib.inference_mode, "no_grad": lib.no_grad,
                   "none": lambda: lib.inference_mode(False)}[outer]
        with context():
            with lib.inference_mode(False):
                made = lib.ones(2)
                flags = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
            after = (lib.is_inference_mode_enabled(), lib.is_grad_enabled())
        return flags, after, made.is_inference()

    _both(run)


def test_decorates_functions_generators_and_classes() -> None:
    def run(lib: Any) -> Any:
        @lib.inference_mode()
        def function() -> Any:
            return lib.ones(1), lib.is_inference_mode_enabled()

        @lib.inference_mode
        def bare() -> Any:
            return lib.ones(1)

        @lib.inference_mode()
        def generator() -> Any:
            yield lib.ones(1)
            yield lib.is_inference_mode_enabled()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.inference_mode()
            class Holder:
                def __init__(self) -> None:
                    self.t = lib.ones(1)

        made, enabled = function()
        gen = generator()
        first = next(gen)
        still = next(gen)
        return (made.is_inference(), enabled, bare().is_inference(), first.is_inference(),
                still, lib.is_inference_mode_enabled(), Holder().t.is_inference(),
                [str(w.message) for w in caught])

    _both(run)
