"""pdist (torch.pdist / F.pdist) against PyTorch: values and gradients for every kind of p,
equal rows (zero distances), equal coordinates, float32/float64, non-contiguous input, the
node and its saved values, the refused double backward, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

P_VALUES = [0, 0.5, 1, 1.5, 2, 3, float("inf")]
ROWS = np.array(
    [[1.0, 2.0, -1.0], [1.0, 2.0, -1.0], [0.0, 2.0, 0.5], [3.0, -1.0, 0.5], [0.25, 0.5, 2.0]]
)


def _run(lib: Any, x: np.ndarray, p: float, dtype: str, transposed: bool) -> tuple:
    leaf = lib.tensor(
        x.T.copy() if transposed else x, dtype=getattr(lib, dtype), requires_grad=True
    )
    inp = leaf.t() if transposed else leaf
    y = lib.nn.functional.pdist(inp, p)
    seed = lib.tensor(np.linspace(-1.0, 2.0, y.numel()), dtype=getattr(lib, dtype))
    (g,) = lib.autograd.grad(y, leaf, seed)
    node = y.grad_fn
    return (
        y.detach().numpy(),
        g.numpy(),
        node.name(),
        node._saved_p,
        sorted(n for n in dir(node) if n.startswith("_saved_")),
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", P_VALUES)
def test_values_and_gradients_match_torch(p: float, dtype: str) -> None:
    for transposed in (False, True):
        t = _run(torch, ROWS, p, dtype, transposed)
        c = _run(chainrule, ROWS, p, dtype, transposed)
        tol = 1e-6 if dtype == "float32" else 1e-14
        np.testing.assert_allclose(c[0], t[0], rtol=tol, atol=tol)
        np.testing.assert_allclose(c[1], t[1], rtol=tol, atol=tol)
        assert c[2:] == t[2:]


def test_top_level_and_random_rows_match_torch() -> None:
    x = np.random.default_rng(3).standard_normal((7, 4))
    out = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        y = lib.pdist(leaf, 2.5)
        y.backward(lib.ones_like(y))
        out.append((y.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-13)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12)


def test_double_backward_is_refused_as_in_torch() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(ROWS, requires_grad=True)
        (g,) = lib.autograd.grad(lib.pdist(x).sum(), x, create_graph=True)
        return g.grad_fn.name(), lib.autograd.grad(g.sum(), x)

    same_outcome(run)


ERRORS = {
    "1-d": lambda t: t.pdist(t.ones(3)),
    "3-d": lambda t: t.pdist(t.ones(2, 3, 4)),
    "negative p": lambda t: t.pdist(t.ones(3, 2), -1),
    "integer": lambda t: t.pdist(t.ones(3, 2, dtype=t.int64)),
    "half": lambda t: t.pdist(t.ones(3, 2, dtype=t.float16)),
    "bfloat16": lambda t: t.pdist(t.ones(3, 2, dtype=t.bfloat16)),
    "complex": lambda t: t.pdist(t.ones(3, 2, dtype=t.complex64)),
    "no rows": lambda t: t.pdist(t.ones(0, 3)),
    "no columns": lambda t: t.pdist(t.ones(3, 0)),
    "one row": lambda t: t.pdist(t.ones(1, 3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_and_empty_inputs_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])
