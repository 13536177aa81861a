"""What the engine does to a gradient on its way, against PyTorch: casts to the dtype of the
tensor it belongs to (root gradients too), reduction of broadcast float16 gradients in float32,
and the layout AccumulateGrad gives a leaf's ``.grad`` (the "gradient layout contract") and
``retain_grad`` a non-leaf's."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chainrule

from .test_tensor_api import assert_same

# ----------------------------------------------------------------------------------------------
# Root gradients are cast to their output's dtype (PyTorch's validate_outputs on root edges)


def _grad_through_half(lib: Any) -> Any:
    x = lib.tensor([1.0, -3.0, 7.25], dtype=lib.float64, requires_grad=True)
    cotangent = lib.tensor([0.1, 1e-5, 70000.0], dtype=lib.float64)
    return lib.autograd.grad(x.half(), x, cotangent)


def _backward_through_half(lib: Any) -> Any:
    x = lib.tensor([1.0, -3.0], dtype=lib.float64, requires_grad=True)
    x.half().backward(lib.tensor([0.1, 1e-5], dtype=lib.float64))
    return x.grad


def _half_leaf_root(lib: Any) -> Any:
    z = lib.tensor([1.0, 2.0], dtype=lib.float16, requires_grad=True)
    z.backward(lib.tensor([0.1, 3.3], dtype=lib.float64))
    return z.grad


def _half_leaf_grad_of_itself(lib: Any) -> Any:
    z = lib.tensor([1.0, 2.0], dtype=lib.float16, requires_grad=True)
    return lib.autograd.grad(z, z, lib.tensor([0.1, 3.3], dtype=lib.float64))


def _recorded_cast_of_cotangent(lib: Any) -> Any:
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([0.1, 0.7], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(x.half(), x, v, create_graph=True)
    (gv,) = lib.autograd.grad(g.sum(), v)
    return g, g.grad_fn.name(), g.grad_fn.next_functions[0][0].name(), gv


@pytest.mark.parametrize("case", [
    _grad_through_half, _backward_through_half, _half_leaf_root,
    _half_leaf_grad_of_itself, _recorded_cast_of_cotangent,
], ids=lambda f: f.__name__.strip("_"))
def test_root_gradient_is_cast_to_the_output_dtype(case: Any) -> None:
    assert_same(case)


# ----------------------------------------------------------------------------------------------
# Undoing broadcasting in float16: summed in float32, rounded once


@pytest.mark.parametrize(("shape", "small"), [((4096, 3), (3,)), ((64, 64, 3), (64, 1, 3))])
def test_float16_broadcast_gradient_is_summed_in_float32(
    shape: tuple[int, ...], small: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float16)
    g = (rng.standard_normal(shape) + 0.3).astype(np.float16)

    def run(lib: Any) -> Any:
        b = lib.full(small, 0.5, dtype=lib.float16, requires_grad=True)
        out = lib.from_numpy(a.copy()) * b
        return lib.autograd.grad(out, b, lib.from_numpy(g.copy()))

    assert_same(run)


# ----------------------------------------------------------------------------------------------
# The layout of .grad (AccumulateGrad's gradient layout contract)


def _transposed(lib: Any) -> Any:
    return lib.arange(12.0).reshape(3, 4).t().detach().requires_grad_()


def _name(node: Any) -> str:
    """A node's name(), PyTorch's C++ namespace written as chainrule's."""
    return node.name().replace("torch::", "chainrule::")


def _layout(t: Any) -> tuple:
    return tuple(t.shape), t.stride(), t.is_contiguous()


LEAF_CASES = {
    # The gradient reaches the leaf laid out otherwise (mul of an expanded gradient, sum's
    # expansion, a given root gradient, indexing): copied into the leaf's strides.
    "mul": lambda lib, x: (x * 2).sum().backward(),
    "sum": lambda lib, x: x.sum().backward(),
    "given_gradient": lambda lib, x: (x * 2).backward(lib.ones(4, 3)),
    "leaf_is_root": lambda lib, x: x.backward(lib.ones(4, 3)),
    "contiguous_then_mul": lambda lib, x: (x.contiguous() * 2).sum().backward(),
    "indexing": lambda lib, x: (x[:2] * 2).sum().backward(),
    "twice": lambda lib, x: [(x * 2).sum().backward() for _ in range(2)],
}


@pytest.mark.parametrize("name", sorted(LEAF_CASES))
def test_grad_of_a_transposed_leaf_has_its_strides(name: str) -> None:
    def run(lib: Any) -> Any:
        x = _transposed(lib)
        LEAF_CASES[name](lib, x)
        return _layout(x.grad), x.grad

    assert_same(run)


def test_grad_of_a_contiguous_leaf_is_row_major_whatever_the_gradient() -> None:
    def run(lib: Any) -> Any:
        x = _transposed(lib)
        y = lib.ones(4, 3, requires_grad=True)
        (x * y).sum().backward()  # y's gradient comes laid out as x
        return _layout(y.grad), y.grad

    assert_same(run)


@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(12.0).reshape(3, 4),
    lambda lib: lib.arange(12.0).reshape(3, 4).t(),
    lambda lib: lib.arange(4.0).expand(3, 4),
], ids=["contiguous", "transposed", "expanded"])
def test_grad_under_create_graph_is_copied_as_pytorch_copies_it(make: Any) -> None:
    """``copy_`` into an empty tensor with the leaf's strides (CopyBackwards, whose first edge
    is None), or a row-major clone for a leaf that is not dense (CloneBackward0)."""

    def run(lib: Any) -> Any:
        x = make(lib).detach().requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x).sum().backward(create_graph=True)
        fn = x.grad.grad_fn
        edges = [(None if n is None else _name(n), nr) for n, nr in fn.next_functions]
        (gg,) = lib.autograd.grad(x.grad.sum(), x)
        return _layout(x.grad), _name(fn), repr(fn).split(" ")[0], edges, x.grad._version, gg

    assert_same(run)


def test_later_gradients_are_added_in_place_even_into_a_recorded_grad() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x).sum().backward(create_graph=True)
        first = x.grad
        (x * 3).sum().backward()
        return first is x.grad, _name(x.grad.grad_fn), x.grad._version, x.grad

    assert_same(run)


def test_retained_grad_is_row_major() -> None:
    def run(lib: Any) -> Any:
        x = _transposed(lib)
        y = x * 3
        y.retain_grad()
        (y * y).sum().backward()
        return _layout(y.grad), y.grad

    assert_same(run)


def test_retained_grad_under_create_graph_is_a_row_major_clone() -> None:
    def run(lib: Any) -> Any:
        x = _transposed(lib)
        y = x * 3
        y.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (y * y).sum().backward(create_graph=True)
        return _layout(y.grad), y.grad.grad_fn.name(), y.grad

    assert_same(run)


_LAYOUT_WARNING_SCRIPT = """
import sys, warnings
lib = __import__(sys.argv[1])
warnings.simplefilter("always")
x = lib.arange(12.0).reshape(3, 4).t().detach().requires_grad_()
x.grad = lib.zeros(4, 3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    y = lib.arange(12.0).reshape(3, 4).t().detach().requires_grad_()
    y.grad = lib.zeros(4, 3)
    (y * y).sum().backward(create_graph=True)
    (y * y).sum().backward(create_graph=True)
    z = lib.arange(12.0).reshape(3, 4).t().detach().requires_grad_()
    (z * 2).sum().backward()
    (z * 2).sum().backward()
for w in caught:
    if "layout contract" in str(w.message):
        print(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
print(x.grad.stride(), y.grad.stride(), z.grad.stride())
"""


def test_grad_against_the_layout_contract_warns_once_per_place() -> None:
    """PyTorch warns (once per process and per kind of sum) when a ``.grad`` set by hand does
    not follow the leaf's layout: run in fresh interpreters, as the warning is once only."""
    outputs = []
    # The chainrule under test, wherever the suite found it.
    env = {**os.environ, "PYTHONPATH": str(Path(chainrule.__file__).parents[1])}
    for lib in ("chainrule", "torch"):
        done = subprocess.run(
            [sys.executable, "-c", _LAYOUT_WARNING_SCRIPT, lib], capture_output=True, text=True,
            check=True, env=env,
        )
        outputs.append(done.stdout.replace("torch", "chainrule"))
    assert outputs[0] == outputs[1]
    assert outputs[0].count("gradient layout contract") == 2
