"""Forward-mode rules of the general eigendecomposition, the LU family and the Householder
product (``linalg.eig``/``eigvals``, ``linalg.lu``, ``lu_factor(_ex)``, ``torch.lu``,
``lu_solve``, ``lu_unpack``, ``householder_product``), beside the other linear-algebra rules of
ops/_jvp_rules.py (which imports this module; the rules are keyed by PyTorch's node names).

Each is the directional derivative PyTorch's forward formulas compute, derived from the
factorisation's defining equations; tests/test_forward_ad_factorizations.py compares them with
PyTorch's tangents and with finite differences, real and complex.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from .._tensor import wrap
from ._forward import allow_jvp_nodes

if TYPE_CHECKING:
    from ._registry import OpDef

__all__: list[str] = []


def _eye(n: int, like: Any, columns: int | None = None) -> Any:
    """The ``n x columns`` identity in ``like``'s dtype."""
    from .creation import eye

    return eye(n, n if columns is None else columns, dtype=like.dtype)


def _solve_triangular(A: Any, B: Any, upper: bool, left: bool, unitriangular: bool) -> Any:
    from .linalg_decomp import _linalg_solve_triangular

    return _linalg_solve_triangular(A, B, upper, left, unitriangular)


# ----------------------------------------------------------------------------------------------
# linalg.eig / eigvals


def _eig_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """PyTorch's ``linalg_eig_jvp``: with ``dP = V^{-1} A_t V``, ``L_t = diag(dP)`` and
    ``V_t = dX - V Re(diag(V^H dX))``, ``dX = V (dP / E)``, ``E_ij = L_j - L_i`` off the
    diagonal and a zero diagonal (the second term keeps the eigenvectors' norm 1)."""
    from .linalg_decomp import _linalg_solve_ex

    values, vectors = result
    A_t = tangents[0]
    if A_t.dtype != vectors.dtype:
        A_t = A_t.to(vectors.dtype)
    dP = _linalg_solve_ex(vectors, A_t @ vectors)
    values_t = dP.diagonal(0, -2, -1).clone()
    n = values.shape[-1]
    off_diagonal = _eye(n, dP) == 0
    gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
    gaps = gaps.masked_fill(~off_diagonal, 1)
    dX = vectors @ (dP / gaps).masked_fill(~off_diagonal, 0)
    norm_change = (vectors.mH @ dX).diagonal(0, -2, -1).real
    return values_t, dX - vectors * norm_change.unsqueeze(-2)


# ----------------------------------------------------------------------------------------------
# LU: A = P L U


def _lu_tangents(A_t: Any, P: Any, L: Any, U: Any) -> tuple[Any, Any]:
    """``(L_t, U_t)`` of ``A = P L U`` (PyTorch's ``linalg_lu_jvp``). From ``P^T A_t = L_t U +
    L U_t``: on the leading square block ``dK = L^{-1} P^T A_t U^{-1}`` splits into
    ``L^{-1} L_t`` (strictly lower) and ``U_t U^{-1}`` (upper), so ``L_t = L tril(dK, -1)``,
    ``U_t = triu(dK) U``; the extra columns of a wide ``A`` give ``U_t2 = L^{-1} (P^T A_t2 -
    L_t U_2)``, the extra rows of a tall one ``L_t2 = (P^T A_t2 - L_2 U_t) U^{-1}``."""
    from .shape import cat

    m, n = A_t.shape[-2], A_t.shape[-1]
    k = builtins.min(m, n)
    moved = P.mT @ A_t
    L1, U1 = L[..., :k, :], U[..., :, :k]
    dK = _solve_triangular(L1, moved[..., :k, :k], False, True, True)
    dK = _solve_triangular(U1, dK, True, False, False)
    L_t = L1 @ dK.tril(-1)
    U_t = dK.triu() @ U1
    if m < n:
        rest = moved[..., :, k:] - L_t @ U[..., :, k:]
        U_t = cat([U_t, _solve_triangular(L1, rest, False, True, True)], -1)
    elif m > n:
        rest = moved[..., k:, :] - L[..., k:, :] @ U_t
        L_t = cat([L_t, _solve_triangular(U1, rest, True, False, False)], -2)
    return L_t, U_t


def _unpacked(LU: Any, pivots: np.ndarray) -> tuple[Any, Any, Any]:
    """``P`` (a constant), ``L`` and ``U`` of a packed LU (a Tensor)."""
    from .linalg_decomp import lu_unpack_arrays

    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    P = lu_unpack_arrays(np.zeros(LU._data.shape, LU._data.dtype), pivots)[0]
    L = LU[..., :, :k].tril(-1) + _eye(m, LU, k)
    U = LU[..., :k, :].triu()
    return wrap(np.ascontiguousarray(P)), L, U


def _packed(L_t: Any, U_t: Any) -> Any:
    """``L_t`` (strictly lower) and ``U_t`` (upper) written into one packed tangent."""
    from .shape import cat

    m, n = L_t.shape[-2], U_t.shape[-1]
    if m >= n:
        return cat([L_t[..., :n, :] + U_t, L_t[..., n:, :]], -2)
    return cat([U_t[..., :, :m] + L_t, U_t[..., :, m:]], -1)


def _lu_factor_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``linalg.lu_factor(_ex)``, ``torch.lu``: the packed ``L_t + U_t`` (PyTorch's
    ``lu_factor_ex_jvp``)."""
    P, L, U = _unpacked(result, args[1]._data)
    return _packed(*_lu_tangents(tangents[0], P, L, U))


def _lu_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``linalg.lu``: ``(L_t, U_t)`` (``P`` has no tangent)."""
    from .linalg_decomp import lu_factor_arrays, lu_unpack_arrays

    A = args[0]
    L, U = result
    LU, pivots, _ = lu_factor_arrays(A._data)
    P = lu_unpack_arrays(LU, pivots)[0]
    return _lu_tangents(tangents[0], wrap(np.ascontiguousarray(P)), L, U)


def _lu_solve_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``linalg.lu_solve``: ``op(A) X = B`` (``X op(A) = B`` on the right, ``op`` the adjoint
    or not) gives ``X_t = op(A)^{-1} (B_t - op(A_t) X)`` (``(B_t - X op(A_t)) op(A)^{-1}``),
    solved with the same factors; ``A_t = P (tril(LU_t, -1) U + L triu(LU_t))``."""
    LU, pivots, B, left, adjoint = args
    LU_t, B_t = tangents
    X = result
    rhs = B_t
    if LU_t is not None:
        P, L, U = _unpacked(LU, pivots._data)
        A_t = P @ (LU_t.tril(-1) @ U + L @ LU_t.triu())
        if adjoint:
            A_t = A_t.mH
        moved = A_t @ X if left else X @ A_t
        rhs = -moved if B_t is None else B_t - moved
    return op.publics[False](LU, pivots, rhs, left, adjoint)


def _lu_unpack_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """``lu_unpack``: linear in the packed LU, ``L_t = tril(LU_t[:, :k], -1)`` and ``U_t =
    triu(LU_t[:k])`` (the unit diagonal of L is a constant)."""
    (LU_t,) = tangents
    k = builtins.min(LU_t.shape[-2], LU_t.shape[-1])
    return LU_t[..., :, :k].tril(-1), LU_t[..., :k, :].triu()


# ----------------------------------------------------------------------------------------------
# householder_product: Q = (H_1 ... H_k)[:, :n], H_i = I - tau_i v_i v_i^H


def _householder_rule(op: OpDef, args: tuple, tangents: list[Any], result: Any) -> Any:
    """The product rule over the reflectors: ``Q_t = sum_i H_1..H_{i-1} dH_i H_{i+1}..H_k``
    (first ``n`` columns), ``dH_i = -(tau_t_i v_i v_i^H + tau_i (v_t_i v_i^H + v_i v_t_i^H))``
    with ``v_t_i`` column ``i`` of ``tril(A_t, -1)``."""
    A, tau = args
    A_t, tau_t = tangents
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    eye_m = _eye(m, A)
    V = A.tril(-1) + _eye(m, A, n)
    V_t = None if A_t is None else A_t.tril(-1)
    vs = [V[..., :, i : i + 1] for i in range(k)]
    taus = [tau[..., i : i + 1].unsqueeze(-1) for i in range(k)]
    H = [eye_m - t * (v @ v.mH) for v, t in zip(vs, taus, strict=True)]
    suffix = [eye_m[..., :, :n]]  # (H_{i+1} .. H_k, only its first n columns are needed)
    for i in range(k - 1, 0, -1):
        suffix.append(H[i] @ suffix[-1])
    suffix.reverse()
    total = None
    prefix = eye_m
    for i in range(k):
        v = vs[i]
        dH = None
        if tau_t is not None:
            dH = tau_t[..., i : i + 1].unsqueeze(-1) * (v @ v.mH)
        if V_t is not None:
            v_t = V_t[..., :, i : i + 1]
            term = taus[i] * (v_t @ v.mH + v @ v_t.mH)
            dH = term if dH is None else dH + term
        if dH is not None:
            term = prefix @ (dH @ suffix[i])
            total = term if total is None else total + term
        prefix = prefix @ H[i]
    if total is None:
        from .creation import zeros_like

        return zeros_like(result)
    return -total


for _rule in (
    _eig_rule,
    _lu_factor_rule,
    _lu_rule,
    _lu_solve_rule,
    _lu_unpack_rule,
    _householder_rule,
):
    # (directional derivatives written with conjugate transposes: they hold for complex values)
    _rule.holds_for_complex = True  # type: ignore[attr-defined]

allow_jvp_nodes(_eig_rule, "LinalgEigBackward0")
allow_jvp_nodes(_lu_factor_rule, "LinalgLuFactorExBackward0")
allow_jvp_nodes(_lu_rule, "LinalgLuBackward0")
allow_jvp_nodes(_lu_solve_rule, "LinalgLuSolveBackward0")
allow_jvp_nodes(_lu_unpack_rule, "LuUnpackBackward0")
allow_jvp_nodes(_householder_rule, "LinalgHouseholderProductBackward0")
