"""torch.gradient: central differences inside, one-sided at the edges, as PyTorch composes it.

chainrule had no ``gradient`` (AttributeError). Written as PyTorch's composition of slices,
differences, divisions and a cat, so values, dtypes and the graph's gradients are PyTorch's;
uniform spacings bit for bit, sample coordinates to the last bit of float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule

from .outcomes import same_outcome

X = np.array([[1.0, 2.0, 4.0, 8.0, 3.0], [10.0, 20.0, 40.0, 80.0, -2.0], [0.0, 1.0, 0.0, 1.0, 5.0]])

CASES = {
    "defaults": {},
    "number spacing": {"spacing": 2.0},
    "spacing per dim": {"spacing": [2.0, 3.0]},
    "int spacings": {"spacing": [2, 3]},
    "0-d tensor spacing": {"spacing": "tensor(2.)"},
    "one dim": {"dim": 1},
    "dim list with spacing": {"dim": [1], "spacing": [2.0]},
    "dim tuple": {"dim": (0, 1)},
    "negative dim, edge order 2": {"dim": -1, "edge_order": 2},
    "edge order 2": {"edge_order": 2},
    "spacing for listed dims": {"spacing": 2, "dim": [0, 1], "edge_order": 2},
    "coordinates": {"spacing": "coordinates"},
    "coordinates, edge order 2": {"spacing": "coordinates", "edge_order": 2},
    "coordinates of one dim": {"spacing": "coordinates of dim 1", "dim": 1},
    # errors
    "edge order 3": {"edge_order": 3},
    "edge order 0": {"edge_order": 0},
    "too many spacings": {"spacing": [1.0, 2.0, 3.0]},
    "too few spacings": {"spacing": (2.0,)},
    "spacings and dims differ": {"dim": [0], "spacing": [1.0, 2.0]},
    "spacings for one dim": {"spacing": [1.0, 2.0], "dim": 1},
    "dim out of range": {"dim": 2},
    "repeated dim": {"dim": [0, 0]},
    "2-d coordinates": {"spacing": "2-d coordinates"},
    "a str spacing": {"spacing": "a"},
    "a float dim": {"dim": 1.5},
    "a float edge order": {"edge_order": 1.5},
    "a list with a str": {"spacing": [1, "a"]},
    "coordinates and a number": {"spacing": "coordinates and a number"},
}


def _options(lib: Any, options: dict) -> dict:
    options = dict(options)
    special = {
        "tensor(2.)": lambda: lib.tensor(2.0),
        "coordinates": lambda: (lib.tensor([0.0, 1.0, 3.0]), lib.tensor([0.0, 1, 1.5, 3.5, 4])),
        "coordinates of dim 1": lambda: [lib.tensor([0.0, 1, 1.5, 3.5, 4])],
        "2-d coordinates": lambda: (lib.tensor([[0.0, 1, 2]]), lib.tensor([0.0, 1, 2, 3, 4])),
        "coordinates and a number": lambda: (lib.tensor([0.0, 1, 2]), 3),
    }
    spacing = options.get("spacing")
    if isinstance(spacing, str) and spacing in special:
        options["spacing"] = special[spacing]()
    return options


def _run(lib: Any, dtype: str, options: dict) -> Any:
    x = lib.tensor(X).to(getattr(lib, dtype))
    differentiable = dtype != "int64"
    if differentiable:
        x.requires_grad_()
    out = lib.gradient(x, **_options(lib, options))
    grad = None
    if differentiable and out:
        weighted = sum((o * (k + 1)).sum() for k, o in enumerate(out))
        weighted.backward()
        grad = x.grad
    return out, [type(o.grad_fn).__name__ for o in out if o.grad_fn is not None], grad


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize("case", list(CASES))
def test_gradient(case: str, dtype: str) -> None:
    options = CASES[case]
    if dtype == "float32" and options.get("spacing") in ("coordinates", "coordinates of dim 1"):
        # (the backward sums the slices' gradients in its own order: last-bit differences)
        out, nodes, grad = _run(chainrule, dtype, options)
        theirs, their_nodes, their_grad = _run(torch, dtype, options)
        assert nodes == their_nodes
        for a, b in zip(out, theirs, strict=True):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        np.testing.assert_allclose(grad.numpy(), their_grad.numpy(), rtol=1e-6, atol=1e-6)
        return
    same_outcome(lambda lib: _run(lib, dtype, options))


@pytest.mark.parametrize(
    "make",
    ["ones(1, 4)", "uint8", "int64", "0-d", "bool", "complex64"],
)
def test_inputs(make: str) -> None:
    def program(lib: Any) -> Any:
        x = {
            "ones(1, 4)": lambda: lib.ones(1, 4),
            "uint8": lambda: lib.ones(4, dtype=lib.uint8),
            "int64": lambda: lib.arange(4) ** 2,
            "0-d": lambda: lib.ones(()),
            "bool": lambda: lib.ones(4, dtype=lib.bool),
            "complex64": lambda: lib.tensor([1 + 1j, 2 - 1j, 4 + 0j]),
        }[make]()
        return lib.gradient(x)

    same_outcome(program)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_through_the_coordinates(edge_order: int) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor(X, requires_grad=True)
        rows = lib.tensor([0.0, 1.0, 3.0], dtype=lib.float64, requires_grad=True)
        columns = lib.tensor([0.0, 1, 1.5, 3.5, 4], dtype=lib.float64, requires_grad=True)
        out = lib.gradient(x, spacing=(rows, columns), edge_order=edge_order)
        (out[0] * 2 + out[1].sin()).sum().backward()
        return out, x.grad, rows.grad, columns.grad

    same_outcome(program)
