"""Matrix products in float16 against PyTorch, rounding for rounding.

PyTorch's CPU kernels compute a float16 product in float32 and round once; where an op is a
composition (bilinear's ``_trilinear``), each step rounds to float16 in PyTorch's order. A
product rounded to float16 before a bias is added loses the digits a cancellation then exposes
(``linear`` was 29 ulps off), and another pairing of the three factors of ``bilinear`` rounds
other intermediates: these tests compare bit for bit, on random cases, so such differences show.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

HALF = np.float16


def _ulps(ours: np.ndarray, theirs: np.ndarray) -> float:
    """The largest difference in units of PyTorch's float16 last place."""
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    spacing = np.spacing(np.abs(theirs)).astype(np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(spacing, 2.0 ** -24), initial=0.0))


def _run(lib: Any, fn: Any, arrays: list[np.ndarray], cotangent: np.ndarray) -> list[np.ndarray]:
    xs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = fn(lib, *xs)
    grads = lib.autograd.grad(out, xs, lib.from_numpy(cotangent.copy()))
    return [out.detach().numpy()] + [g.numpy() for g in grads]


def _addmm(lib: Any, c: Any, a: Any, b: Any) -> Any:
    return lib.addmm(c, a, b, beta=0.5, alpha=2.0)


#: name -> (call, input shapes from four random sizes, the input whose gradient the engine
#: sums over broadcast rows, or None). That sum is autograd/engine.py's ``sum_to_shape``, which
#: adds float16 in float16 where PyTorch adds in float32 (reported): not compared here.
CASES = {
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b), lambda r: [(r[2],), (r[0], r[1]),
                                                                 (r[1], r[2])], 0),
    "addmm_scaled": (_addmm, lambda r: [(r[0], r[2]), (r[0], r[1]), (r[1], r[2])], None),
    "linear_1d": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
                  lambda r: [(r[1],), (r[2], r[1]), (r[2],)], None),
    "linear_3d": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
                  lambda r: [(2, r[0], r[1]), (r[2], r[1]), (r[2],)], 2),
    "bilinear": (lambda lib, x1, x2, w: lib.nn.functional.bilinear(x1, x2, w),
                 lambda r: [(r[0], r[1]), (r[0], r[2]), (r[3], r[1], r[2])], None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_float16_products_round_as_torch(name: str) -> None:
    fn, shapes_of, engine_reduced = CASES[name]
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(60):
        sizes = [int(n) for n in rng.integers(1, 9, 4)]
        arrays = [rng.uniform(-2, 2, s).astype(HALF) for s in shapes_of(sizes)]
        with chainrule.no_grad():
            out_shape = fn(chainrule, *[chainrule.from_numpy(a) for a in arrays]).shape
        cotangent = rng.uniform(-1, 1, tuple(out_shape)).astype(HALF)
        ours = _run(chainrule, fn, arrays, cotangent)
        theirs = _run(torch, fn, arrays, cotangent)
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert a.dtype == b.dtype == HALF
            if engine_reduced is None or k != engine_reduced + 1:
                worst = max(worst, _ulps(a, b))
    # PyTorch's float32 sums may round a tie the other way: one ulp, nothing more.
    assert worst <= 1.0, f"{name}: {worst} ulps"


def test_addmm_float16_rounds_once_where_terms_cancel() -> None:
    """The product and the bias cancel: rounding the product first would be 1/8 off here."""
    for lib in (chainrule, torch):
        bias = lib.tensor([-1.0], dtype=lib.float16)
        mat1 = lib.tensor([[1.0, 2.0 ** -11]], dtype=lib.float16)
        mat2 = lib.tensor([[1.0], [1.0]], dtype=lib.float16)
        out = lib.addmm(bias, mat1, mat2)
        assert out.item() == 2.0 ** -11, lib.__name__


# A rank-1 matrix (an outer product) in which LAPACK's LU meets an exact zero pivot where
# chainrule's own LU (used for ``info``) rounds to a tiny non-zero one. NumPy's "Singular matrix"
# LinAlgError once leaked out of inv/solve/tensorinv here. (PyTorch's MKL rounds its way to a
# huge finite inverse; chainrule calls the matrix singular, with PyTorch's error type.)
_NUMERICALLY_SINGULAR = [
    [0.0804012992252251, 0.09577177862739723, -0.2827285115400019],
    [-0.47140875302799795, -0.561528920217376, 1.657693300417697],
    [0.6642248074306372, 0.7912060107122535, -2.3357245833396876],
]


@pytest.mark.parametrize("call", ["inv", "tensorinv", "solve", "solve_batched"])
def test_numerically_singular_matrix_raises_pytorchs_error_type(call: str) -> None:
    A = chainrule.tensor(_NUMERICALLY_SINGULAR, dtype=chainrule.float64)
    run = {
        "inv": lambda: chainrule.linalg.inv(A),
        "tensorinv": lambda: chainrule.linalg.tensorinv(A, ind=1),
        "solve": lambda: chainrule.linalg.solve(A, chainrule.ones(3, dtype=chainrule.float64)),
        "solve_batched": lambda: chainrule.linalg.solve(
            chainrule.stack([A, A + chainrule.eye(3, dtype=chainrule.float64)]),
            chainrule.ones(2, 3, 1, dtype=chainrule.float64)),
    }[call]
    with pytest.raises(chainrule.linalg.LinAlgError) as info:
        run()
    assert "singular" in str(info.value)
    assert type(info.value).__name__ == type(torch.linalg.LinAlgError("")).__name__
    ex = chainrule.linalg.inv_ex(A)
    assert int(ex.info) == 3 and bool(ex.inverse.isnan().all())


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
@pytest.mark.parametrize("batch", [(), (2,), (3, 1)], ids=str)
def test_lu_solve_with_the_factors_as_pytorch(dtype, left, adjoint, batch) -> None:
    rng = np.random.default_rng(len(batch) + 3 * left + 7 * adjoint)
    n = 4
    A = rng.standard_normal((*batch, n, n))
    B = rng.standard_normal((*batch, n, 2) if left else (*batch, 2, n))
    if dtype == "complex128":
        A = A + 1j * rng.standard_normal(A.shape)
        B = B + 1j * rng.standard_normal(B.shape)
    results = []
    for lib in (torch, chainrule):
        a, b = lib.tensor(A), lib.tensor(B)
        LU, pivots = lib.linalg.lu_factor(a)
        results.append(lib.linalg.lu_solve(LU, pivots, b, left=left, adjoint=adjoint)
                       .resolve_conj().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


def test_lu_solve_uses_the_factors_it_is_given() -> None:
    # (it once multiplied P L U back together and solved that with NumPy, whose "Singular
    # matrix" error leaked for factors of a numerically singular matrix)
    A = chainrule.tensor(_NUMERICALLY_SINGULAR, dtype=chainrule.float64)
    LU, pivots, _ = chainrule.linalg.lu_factor_ex(A)
    P, L, U = (t.numpy() for t in chainrule.lu_unpack(LU, pivots))
    X = chainrule.linalg.lu_solve(LU, pivots, chainrule.ones(3, 1, dtype=chainrule.float64))
    assert np.abs(np.diagonal(U)).min() > 0  # (a tiny pivot, not a zero one)
    expected = np.linalg.solve(U, np.linalg.solve(L, P.T @ np.ones((3, 1))))
    np.testing.assert_allclose(X.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "case", ["not_square", "pivots_of_fewer_rows", "pivots_short", "pivots_unbatched"])
def test_lu_solve_refusals_as_pytorch(case: str) -> None:
    arguments = {
        "not_square": lambda LU, pivots: (LU[..., :2], pivots[..., :2]),
        "pivots_of_fewer_rows": lambda LU, pivots: (LU, pivots[:1]),
        "pivots_short": lambda LU, pivots: (LU, pivots[:, :2]),
        "pivots_unbatched": lambda LU, pivots: (LU, pivots[0]),
    }[case]
    messages = []
    for lib in (torch, chainrule):
        A = lib.tensor(np.arange(18.0).reshape(2, 3, 3) + np.eye(3))
        LU, pivots = arguments(*lib.linalg.lu_factor(A))
        with pytest.raises(RuntimeError) as info:
            lib.linalg.lu_solve(LU, pivots, lib.ones(2, 3, 1, dtype=lib.float64))
        messages.append(str(info.value))
    assert messages[1] == messages[0]
