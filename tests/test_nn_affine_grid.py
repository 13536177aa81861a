"""affine_grid / torch.affine_grid_generator against PyTorch: grids and gradients (2-D and 3-D,
align_corners, unit-size grids, float32/float64), the node, the gradient without graph, the
warnings and the errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

CASES = [
    ((2, 2, 3), [2, 1, 3, 4], False),
    ((2, 2, 3), [2, 1, 3, 4], True),
    ((1, 2, 3), [1, 1, 1, 5], False),
    ((1, 3, 4), [1, 1, 2, 3, 4], False),
    ((1, 3, 4), [1, 2, 3, 1, 2], True),
]


def _run(lib: Any, shape: tuple, size: list, align: bool, dtype: str) -> tuple:
    theta_values = np.random.default_rng(len(size) + int(align)).standard_normal(shape)
    theta = lib.tensor(theta_values, dtype=getattr(lib, dtype), requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = lib.nn.functional.affine_grid(theta, size, align_corners=align)
    seed = lib.tensor(
        np.linspace(-1, 1, grid.numel()).reshape(tuple(grid.shape)), dtype=getattr(lib, dtype)
    )
    (g,) = lib.autograd.grad(grid, theta, seed, create_graph=True)
    return (
        grid.detach().numpy(),
        g.detach().numpy(),
        grid.grad_fn.name(),
        g.grad_fn is None,
        sorted(n for n in dir(grid.grad_fn) if n.startswith("_saved_")),
        [str(w.message) for w in caught],
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_grid_and_gradient_match_torch(case: int, dtype: str) -> None:
    t = _run(torch, *CASES[case], dtype)
    c = _run(chainrule, *CASES[case], dtype)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(c[0], t[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(c[1], t[1], rtol=tol, atol=tol)
    assert c[2:] == t[2:]


def test_default_align_corners_warns_as_torch() -> None:
    def run(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.affine_grid(lib.ones(1, 2, 3), [1, 1, 2, 2])
        return [(w.category.__name__, str(w.message)) for w in caught]

    same_outcome(run)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "3-item size": lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (2, 1, 3), False),
    "list size": lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), [2, 1, 3], False),
    "batch": lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (3, 1, 3, 4), False),
    "integer theta": lambda t: t.nn.functional.affine_grid(
        t.ones(2, 2, 3, dtype=t.int32), (2, 1, 3, 4), False
    ),
    "zero size": lambda t: t.nn.functional.affine_grid(t.ones(2, 2, 3), (2, 1, 0, 4), False),
    "3-d theta for 2-d": lambda t: t.nn.functional.affine_grid(
        t.ones(1, 3, 4), (1, 1, 2, 3), False
    ),
    "2-d theta for 3-d": lambda t: t.nn.functional.affine_grid(
        t.ones(1, 2, 3), (1, 1, 2, 3, 4), False
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])
