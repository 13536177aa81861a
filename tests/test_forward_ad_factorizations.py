"""Forward-mode AD of linalg.eig/eigvals, the LU family and householder_product, against PyTorch.

These refused tangents (NotImplementedError) where PyTorch computes them. Each case compares the
tangents with PyTorch's (real and complex, square, wide and tall) and with central finite
differences of chainrule's own forward.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

RNG = np.random.default_rng(44)


def _draw(*shape: int, complex_: bool = False) -> np.ndarray:
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


def _inputs(complex_: bool) -> dict[str, np.ndarray]:
    return {
        "A": _draw(2, 4, 4, complex_=complex_),
        "A_t": _draw(2, 4, 4, complex_=complex_),
        "wide": _draw(3, 5, complex_=complex_),
        "wide_t": _draw(3, 5, complex_=complex_),
        "tall": _draw(5, 3, complex_=complex_),
        "tall_t": _draw(5, 3, complex_=complex_),
        "B": _draw(2, 4, 3, complex_=complex_),
        "B_t": _draw(2, 4, 3, complex_=complex_),
        "tau": np.abs(_draw(2, complex_=False)) + 0.5 + (0.3j if complex_ else 0),
        "tau_t": _draw(2, complex_=complex_),
    }


REAL, COMPLEX = _inputs(False), _inputs(True)
Fn = Callable[..., Any]


def _solve_with(lib: Any, a: Any, b: Any, left: bool, adjoint: bool) -> Any:
    LU, pivots = lib.linalg.lu_factor(a)
    return lib.linalg.lu_solve(LU, pivots, b if left else b.mT, left=left, adjoint=adjoint)


def _lu_unpacked(lib: Any, a: Any) -> tuple[Any, Any]:
    """``a`` read as a packed LU (with the pivots of its own factorisation)."""
    _, L, U = lib.lu_unpack(a, lib.linalg.lu_factor(a.detach())[1])
    return L, U


CASES: dict[str, tuple[Fn, tuple[str, ...]]] = {
    "eig": (lambda lib, a: tuple(lib.linalg.eig(a)), ("A",)),
    "eigvals": (lambda lib, a: lib.linalg.eigvals(a), ("A",)),
    "lu": (lambda lib, a: tuple(lib.linalg.lu(a))[1:], ("A",)),
    "lu_wide": (lambda lib, a: tuple(lib.linalg.lu(a))[1:], ("wide",)),
    "lu_tall": (lambda lib, a: tuple(lib.linalg.lu(a))[1:], ("tall",)),
    "lu_factor": (lambda lib, a: lib.linalg.lu_factor(a)[0], ("A",)),
    "lu_factor_wide": (lambda lib, a: lib.linalg.lu_factor(a)[0], ("wide",)),
    "lu_factor_tall": (lambda lib, a: lib.linalg.lu_factor_ex(a)[0], ("tall",)),
    "torch_lu": (lambda lib, a: lib.lu(a)[0], ("A",)),
    "lu_solve": (lambda lib, a, b: _solve_with(lib, a, b, True, False), ("A", "B")),
    "lu_solve_adjoint": (lambda lib, a, b: _solve_with(lib, a, b, True, True), ("A", "B")),
    "lu_solve_right": (lambda lib, a, b: _solve_with(lib, a, b, False, False), ("A", "B")),
    "lu_solve_right_adjoint": (lambda lib, a, b: _solve_with(lib, a, b, False, True), ("A", "B")),
    "torch_lu_solve": (
        lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a)),
        ("A", "B"),
    ),
    "lu_unpack": (_lu_unpacked, ("A",)),
    "lu_unpack_wide": (_lu_unpacked, ("wide",)),
    "lu_unpack_tall": (_lu_unpacked, ("tall",)),
    "householder_product": (
        lambda lib, a, tau: lib.linalg.householder_product(a, tau),
        ("tall", "tau"),
    ),
}


def _run(
    lib: Any,
    name: str,
    values: dict[str, np.ndarray],
    dtype: str,
    tangent_names: tuple[str, ...] | None = None,
) -> list[np.ndarray]:
    """The tangents of case ``name`` (those of the inputs in ``tangent_names``, all when None)."""
    fn, names = CASES[name]
    fa = lib.autograd.forward_ad
    kind = getattr(lib, dtype)
    with warnings.catch_warnings(), fa.dual_level():
        warnings.simplefilter("ignore")
        args = []
        for key in names:
            x = lib.tensor(values[key]).to(kind)
            if tangent_names is None or key in tangent_names:
                x = fa.make_dual(x, lib.tensor(values[key + "_t"]).to(kind))
            args.append(x)
        out = fn(lib, *args)
        outs = out if isinstance(out, tuple) else (out,)
        return [fa.unpack_dual(o).tangent.resolve_conj().numpy() for o in outs]


def _value(name: str, values: dict[str, np.ndarray], shift: float) -> list[np.ndarray]:
    fn, names = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = [chainrule.tensor(values[k] + shift * values[k + "_t"]) for k in names]
        out = fn(chainrule, *args)
    return [o.resolve_conj().numpy() for o in (out if isinstance(out, tuple) else (out,))]


def _as_pytorch_orders(A: np.ndarray, dtype: str, tangents: list[np.ndarray]) -> list[np.ndarray]:
    """chainrule's eig tangents in the order and phases of PyTorch's eigenpairs. In single
    precision PyTorch's LAPACK build may list the eigenvalues in another order and pick other
    phases for the vectors (each unique up to one); the tangents turn with their pairs."""
    kind = getattr(torch, dtype)
    L_theirs, V_theirs = (x.numpy() for x in torch.linalg.eig(torch.tensor(A).to(kind)))
    L_ours, V_ours = (
        x.numpy() for x in chainrule.linalg.eig(chainrule.tensor(A).to(getattr(chainrule, dtype)))
    )
    order = np.abs(L_theirs[..., :, None] - L_ours[..., None, :]).argmin(-1)
    aligned = [np.take_along_axis(tangents[0], order, -1)]
    if len(tangents) == 2:
        columns = np.broadcast_to(order[..., None, :], V_ours.shape)
        V_ours = np.take_along_axis(V_ours, columns, -1)
        ratio = (V_theirs * V_ours.conj()).sum(-2, keepdims=True)
        aligned.append(np.take_along_axis(tangents[1], columns, -1) * ratio / np.abs(ratio))
    return aligned


DTYPES = ["float64", "float32", "complex128", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CASES))
def test_tangents_as_pytorch(name: str, dtype: str) -> None:
    values = COMPLEX if dtype.startswith("complex") else REAL
    ours = _run(chainrule, name, values, dtype)
    theirs = _run(torch, name, values, dtype)
    assert len(ours) == len(theirs)
    if name in ("eig", "eigvals"):
        ours = _as_pytorch_orders(values["A"], dtype, ours)
    rtol = 1e-8 if dtype.endswith("128") or dtype == "float64" else 2e-3
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_finite_differences(name: str, complex_: bool) -> None:
    values = COMPLEX if complex_ else REAL
    dtype = "complex128" if complex_ else "float64"
    eps = 1e-6
    ours = _run(chainrule, name, values, dtype)
    # (eigenvectors are unique up to a phase, which LAPACK picks anew at each point: their
    # tangent is checked through the differentiated eigen-equation below)
    for tangent, hi, lo in zip(
        ours[:1] if name == "eig" else ours,
        _value(name, values, eps),
        _value(name, values, -eps),
        strict=False,
    ):
        np.testing.assert_allclose(tangent, (hi - lo) / (2 * eps), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("which", ["A", "B"])
def test_lu_solve_one_tangent(which: str) -> None:
    for lib_values in (REAL, COMPLEX):
        dtype = "complex128" if lib_values is COMPLEX else "float64"
        ours = _run(chainrule, "lu_solve", lib_values, dtype, (which,))
        theirs = _run(torch, "lu_solve", lib_values, dtype, (which,))
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-9)


def test_householder_one_tangent() -> None:
    for which in ("tall", "tau"):
        ours = _run(chainrule, "householder_product", REAL, "float64", (which,))
        theirs = _run(torch, "householder_product", REAL, "float64", (which,))
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("complex_", [False, True])
def test_eig_tangents_solve_the_differentiated_equation(complex_: bool) -> None:
    """``A_t V + A V_t = V_t diag(L) + V diag(L_t)``, and ``Re(v^H v_t) = 0`` (the vectors keep
    norm 1), as PyTorch's tangents do."""
    values = COMPLEX if complex_ else REAL
    dtype = "complex128" if complex_ else "float64"
    L_t, V_t = _run(chainrule, "eig", values, dtype)
    A, A_t = values["A"], values["A_t"]
    L, V = (x.numpy() for x in chainrule.linalg.eig(chainrule.tensor(A)))
    left = A_t @ V + A @ V_t
    right = V_t * L[..., None, :] + V * L_t[..., None, :]
    np.testing.assert_allclose(left, right, atol=1e-10)
    along = np.einsum("...ij,...ij->...j", V.conj(), V_t).real
    np.testing.assert_allclose(along, 0, atol=1e-10)
