"""Results PyTorch's linalg returns as conjugate views, and the layout of matrix_power(A, -1).

PyTorch solves ``X A = B`` (``left=False``) as ``A^H X^H = B^H`` and returns the conjugate view
of that solution: for complex inputs ``linalg.solve``, ``linalg.solve_ex`` and
``linalg.lu_solve`` give ``is_conj() == True`` (``numpy()`` refuses them, ``resolve_conj()``
copies); writing into them is allowed, as nothing else shares their memory. chainrule's
results had no conjugate bit. ``matrix_power(A, -1)`` is the inverse itself
(``LinalgInvExBackward0``, column-major), where chainrule cloned it row-major.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

RNG = np.random.default_rng(2)
A = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)) + 3 * np.eye(3)
B = RNG.standard_normal((4, 2, 3)) + 1j * RNG.standard_normal((4, 2, 3))


def _lu_solve(lib: Any, a: Any, b: Any, **kwargs: Any) -> Any:
    return lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, **kwargs)


CALLS = {
    "solve_right": lambda lib, a, b: lib.linalg.solve(a, b, left=False),
    "solve_ex_right": lambda lib, a, b: lib.linalg.solve_ex(a, b, left=False).result,
    "lu_solve_right": lambda lib, a, b: _lu_solve(lib, a, b, left=False),
    "lu_solve_right_adjoint": lambda lib, a, b: _lu_solve(lib, a, b, left=False, adjoint=True),
    "solve_left": lambda lib, a, b: lib.linalg.solve(a, b.mT),
    "lu_solve_left_adjoint": lambda lib, a, b: _lu_solve(lib, a, b.mT, adjoint=True),
    "solve_triangular_right": lambda lib, a, b: lib.linalg.solve_triangular(
        a.triu(), b, upper=True, left=False
    ),
}


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "float64"])
@pytest.mark.parametrize("name", list(CALLS))
def test_conjugate_bit_of_solutions_as_pytorch(name: str, dtype: str) -> None:
    results = []
    for lib in (chainrule, torch):
        a = lib.tensor(A if "complex" in dtype else A.real.copy()).to(getattr(lib, dtype))
        b = lib.tensor(B if "complex" in dtype else B.real.copy()).to(getattr(lib, dtype))
        x = CALLS[name](lib, a, b)
        results.append((x.is_conj(), tuple(x.stride()), x.resolve_conj().numpy()))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-4)


def test_a_conjugated_solution_keeps_the_bit_through_views_and_can_be_written() -> None:
    outcomes = []
    for lib in (chainrule, torch):
        x = lib.linalg.solve(lib.tensor(A), lib.tensor(B[0]), left=False)
        with pytest.raises(RuntimeError, match="resolve_conj"):
            x.numpy()
        x.add_(1)
        x[0, 0] = 5
        outcomes.append(
            (
                x.is_conj(),
                x[0].is_conj(),
                x.detach().is_conj(),
                x.clone().is_conj(),
                (x * 1).is_conj(),
                x.resolve_conj().is_conj(),
                x.resolve_conj().numpy().tolist(),
            )
        )
    assert outcomes[0][:6] == outcomes[1][:6]
    np.testing.assert_allclose(outcomes[0][6], outcomes[1][6], rtol=1e-12)


def test_gradients_through_a_conjugated_solution_as_pytorch() -> None:
    grads = []
    for lib in (chainrule, torch):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        x = lib.linalg.solve(a, b, left=False)
        (x * lib.tensor(np.cos(np.arange(24.0)).reshape(4, 2, 3))).real.sum().backward()
        grads.append((a.grad.resolve_conj().numpy(), b.grad.resolve_conj().numpy()))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_conj_views_still_refuse_writes() -> None:
    c = chainrule.tensor([1 + 1j]).conj()
    with pytest.raises(RuntimeError, match="conj"):
        c.add_(1)
    with pytest.raises(RuntimeError, match="conj"):
        c[0] = 2


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("n", [-3, -2, -1, 0, 1, 2, 3])
def test_matrix_power_layout_and_node_as_pytorch(n: int, dtype: str) -> None:
    results = []
    for lib in (chainrule, torch):
        a = lib.tensor(A if dtype == "complex128" else A.real.copy(), requires_grad=True)
        batch = lib.tensor(np.stack([A, A.conj()]) if dtype == "complex128" else A.real[None])
        r = lib.linalg.matrix_power(a, n)
        results.append(
            (
                tuple(r.stride()),
                r.grad_fn.name().replace("chainrule::", "torch::"),
                tuple(lib.linalg.matrix_power(batch, n).stride()),
                r.detach().numpy(),
            )
        )
    assert results[0][:3] == results[1][:3]
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-10)
