"""Argument errors of in-place methods name the in-place method, as PyTorch's do.

``x.scatter_add_(0, i, 1.0)`` said ``scatter_add(): argument 'src' (position 4)`` (the
out-of-place function and its positions) where PyTorch says ``scatter_add_(): argument 'src'
(position 3)``; ``x.exp_(1)`` said ``exp() takes 1 positional arguments but 2 were given``
where PyTorch says ``TensorBase.exp_() takes no arguments (1 given)``. ``inplace_method`` now
words the errors of the function it runs as the in-place method's (ops/inplace.py). Also:
``uniform_``/``normal_`` check their bounds and refuse integer tensors as PyTorch's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch


def _idx(lib: Any) -> Any:
    return lib.tensor([[0, 1]])


CASES: dict[str, Callable[[Any], Any]] = {
    "scatter_add_ src number": lambda t: t.zeros(3, 4).scatter_add_(0, _idx(t), 1.0),
    "scatter_add_ index None": lambda t: t.zeros(3, 4).scatter_add_(0, None, t.ones(1, 2)),
    "add_ str": lambda t: t.zeros(3).add_("a"),
    "mul_ str": lambda t: t.zeros(3).mul_("a"),
    "sub_ None": lambda t: t.zeros(3).sub_(None),
    "atan2_ str": lambda t: t.zeros(3).atan2_("a"),
    "hypot_ str": lambda t: t.zeros(3).hypot_("a"),
    "logical_and_ str": lambda t: t.zeros(3).logical_and_("a"),
    "addcmul_ str": lambda t: t.zeros(3).addcmul_("a", t.zeros(3)),
    "addmm_ str": lambda t: t.zeros(3, 3).addmm_("a", "b"),
    "clamp_ str": lambda t: t.zeros(3).clamp_("a"),
    "exp_ argument": lambda t: t.zeros(3).exp_(1),
    "sigmoid_ two arguments": lambda t: t.zeros(3).sigmoid_(1, 2),
    "abs_ argument": lambda t: t.zeros(3).abs_(None),
    "arccosh_ argument": lambda t: t.zeros(3).arccosh_(1),
    "unsqueeze_ two arguments": lambda t: t.zeros(3).unsqueeze_(0, 1),
    "uniform_ from > to": lambda t: t.zeros(3).uniform_(5, 2),
    "uniform_ float bounds": lambda t: t.zeros(3).uniform_(5.5, 2.25),
    "uniform_ long": lambda t: t.zeros(3, dtype=t.long).uniform_(),
    "uniform_ bool bad bounds": lambda t: t.zeros(3, dtype=t.bool).uniform_(3, 1),
    "normal_ negative std": lambda t: t.zeros(3).normal_(0, -1),
    "normal_ nan std": lambda t: t.zeros(3).normal_(0, float("nan")),
    "normal_ int8": lambda t: t.zeros(3, dtype=t.int8).normal_(),
    "normal_ int8 negative std": lambda t: t.zeros(3, dtype=t.int8).normal_(0, -0.5),
}


def _outcome(lib: Any, fn: Callable[[Any], Any]) -> tuple[str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return type(error).__name__, str(error).replace("chainrule", "torch")
    return "OK", ""


@pytest.mark.parametrize("name", list(CASES))
def test_in_place_errors_as_pytorch(name: str) -> None:
    assert _outcome(chainrule, CASES[name]) == _outcome(torch, CASES[name])


def test_uniform_and_normal_still_fill_floating_tensors() -> None:
    for dtype in (chainrule.float32, chainrule.float16, chainrule.bfloat16, chainrule.complex64):
        x = chainrule.zeros(1000, dtype=dtype)
        x.uniform_(2, 3)
        assert bool(((x.real >= 2) & (x.real <= 3)).all())
        x.normal_(0, 0)
        assert bool((x == 0).all())


def _in_place_names() -> list[str]:
    ours = {n for n in dir(chainrule.Tensor) if n.endswith("_") and not n.startswith("_")}
    theirs = {n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_")}
    return sorted(ours & theirs)


BAD_ARGUMENTS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "str": lambda t: ("a",),
    "tensor_and_str": lambda t: (t.zeros(3, 4), "a"),
    "none": lambda t: (None,),
}


@pytest.mark.parametrize("arguments", list(BAD_ARGUMENTS))
def test_no_in_place_argument_error_names_the_out_of_place_function(arguments: str) -> None:
    """Every in-place method both libraries have, given a bad argument: when PyTorch's
    TypeError names the in-place method, chainrule's names no other function's Python-level
    name (``add(``, ``acosh(`` ...) in its place."""
    wrong = []
    for name in _in_place_names():
        outcomes = []
        for lib in (chainrule, torch):
            x = lib.zeros(3, 4)
            args = BAD_ARGUMENTS[arguments](lib)
            method = getattr(x, name)
            outcomes.append(_outcome(lib, lambda _lib, m=method, a=args: m(*a)))
        (our_type, ours), (their_type, theirs) = outcomes
        if their_type != "TypeError" or our_type != "TypeError":
            continue
        their_name = theirs.split("(")[0].removeprefix("Tensor.").removeprefix("TensorBase.")
        our_name = ours.split("(")[0].removeprefix("Tensor.").removeprefix("TensorBase.")
        if their_name == name and our_name in (name[:-1], f"_{name[:-1]}"):
            wrong.append(f"{name}: {ours}")
    assert not wrong, "\n".join(wrong)
