"""``torch.linalg``: norms, determinants, inverses, solvers, decompositions, matrix functions,
and the torch-level names backed by them (``det``, ``inverse``, ``matrix_power`` ...).

Inputs are well-conditioned: square matrices are diagonally dominant, symmetric ones are
``A + A^T`` (the gradient flows through the symmetrisation, which makes it well defined), positive
definite ones ``X X^T + n I``. Eigenvectors and singular vectors are unique up to sign only
(NumPy's LAPACK and PyTorch's MKL pick differently), so the entries that return them fix the sign
of each vector (its first entry made positive) with ``sgn``, which has no gradient: the values
compared are then defined, and the gradients flow through the vectors themselves.
"""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _finite(low, high):
    """Uniform inputs (``make_inputs``, which also keeps an entry out of the special-values
    sweep: LAPACK's results on inf and NaN are whatever its loops leave, not comparable)."""
    def make(rng, shapes, dtype):
        return [rng.uniform(low, high, s).astype(dtype) for s in shapes]

    return make


def _dominant(rng, shapes, dtype):
    """Square matrices with a dominant diagonal (well-conditioned, positive determinant);
    other shapes uniform."""
    out = []
    for s in shapes:
        a = rng.uniform(-1.0, 1.0, s)
        if len(s) >= 2 and s[-1] == s[-2]:
            a = a + s[-1] * np.eye(s[-1])
        out.append(a.astype(dtype))
    return out


def _spd(rng, shapes, dtype):
    """Symmetric positive-definite first input (``X X^T + n I``), the others uniform."""
    first, *rest = shapes
    x = rng.uniform(-1.0, 1.0, first)
    a = x @ np.swapaxes(x, -1, -2) + first[-1] * np.eye(first[-1])
    return [a.astype(dtype)] + [rng.uniform(-1.0, 1.0, s).astype(dtype) for s in rest]


def _spread(rng, shapes, dtype):
    """Matrices with well-separated singular values / eigenvalues: a random orthogonal-ish
    mix of a diagonal 1, 2, 3 ... (uniform noise added), so their derivatives are tame."""
    out = []
    for s in shapes:
        a = rng.uniform(-0.3, 0.3, s)
        if len(s) < 2:
            out.append(rng.uniform(-1.0, 1.0, s).astype(dtype))
            continue
        k = min(s[-2], s[-1])
        idx = np.arange(k)
        a[..., idx, idx] += 1.0 + idx
        out.append(a.astype(dtype))
    return out


def _fix_sign(lib, V, dim=-2):
    """Each vector (column, or row for dim=-1) with its first entry made positive."""
    first = V.narrow(dim, 0, 1)
    return V * lib.sgn(first)


def _eigh(lib, a):
    L, V = lib.linalg.eigh(a + a.mT)
    return L, _fix_sign(lib, V)


def _eigh_upper(lib, a):
    L, V = lib.linalg.eigh(a + a.mT, UPLO="U")
    return L, _fix_sign(lib, V)


def _eig(lib, a):
    """Eigenvalues and eigenvectors as real views, each vector's phase fixed (its first entry
    made real and positive: the loss is then phase-invariant, as PyTorch requires)."""
    L, V = lib.linalg.eig(a)
    V = V * lib.sgn(V.select(-2, 0).unsqueeze(-2)).conj()
    return lib.view_as_real(L), lib.view_as_real(V)


def _svd(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    sign = lib.sgn(U.narrow(-2, 0, 1))
    return U * sign, S, Vh * sign.mT


def _svd_u_only(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return U * lib.sgn(U.narrow(-2, 0, 1))


def _svd_vh_only(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return Vh * lib.sgn(Vh.narrow(-1, 0, 1))


def _fixed_svd(lib, usv):
    U, S, V = usv
    sign = lib.sgn(U.narrow(-2, 0, 1))
    return U * sign, S, V * sign


def _lower(a):
    """A Cholesky-like factor: a's strict lower triangle, a positive diagonal."""
    return a.tril(-1) + (a.diagonal(0, -2, -1).abs() + 2).diag_embed()


def _svd_complete(lib, a):
    """torch.svd(some=False): the singular vectors beyond min(m, n) are any basis of the
    complement, so the first min(m, n) of each are compared."""
    U, S, V = lib.svd(a, some=False)
    k = S.shape[-1]
    return _fixed_svd(lib, (U.narrow(-1, 0, k), S, V.narrow(-1, 0, k)))


def _qr(lib, a, mode="reduced"):
    return tuple(lib.linalg.qr(a, mode=mode))


SQUARE = [((3, 3),), ((2, 4, 4),), ((1, 1),), ((2, 1, 3, 3),)]
RECT = [((3, 3),), ((4, 2),), ((2, 5),), ((2, 4, 3),), ((2, 3, 4),)]
INF = float("inf")


OPS = [
    # norms
    OpInfo("linalg.vector_norm", lambda lib, x: lib.linalg.vector_norm(x),
           [((3, 4),), ((5,),), ((2, 3, 2),)]),
    OpInfo("linalg.vector_norm_ord", lambda lib, x: lib.linalg.vector_norm(x, 3, dim=1),
           [((3, 4),), ((2, 3, 2),)]),
    OpInfo("linalg.vector_norm_ord1_keepdim",
           lambda lib, x: lib.linalg.vector_norm(x, 1, dim=(0, -1), keepdim=True),
           [((3, 4),), ((2, 3, 2),)]),
    OpInfo("linalg.vector_norm_inf", lambda lib, x: lib.linalg.vector_norm(x, INF, dim=-1),
           [((3, 4),)]),
    OpInfo("linalg.vector_norm_half_ord", lambda lib, x: lib.linalg.vector_norm(x, 0.5),
           [((3, 4),)]),
    OpInfo("linalg.vector_norm_dtype",
           lambda lib, x: lib.linalg.vector_norm(x, dtype=lib.float64), [((3, 4),)]),
    OpInfo("linalg.matrix_norm_fro", lambda lib, x: lib.linalg.matrix_norm(x),
           [((3, 4),), ((2, 3, 3),)]),
    OpInfo("linalg.matrix_norm_nuc", lambda lib, x: lib.linalg.matrix_norm(x, "nuc"),
           [((3, 4),), ((2, 3, 3),)], make_inputs=_spread),
    OpInfo("linalg.matrix_norm_2", lambda lib, x: lib.linalg.matrix_norm(x, 2),
           [((3, 4),), ((2, 3, 3),)], make_inputs=_spread),
    OpInfo("linalg.matrix_norm_-2_keepdim",
           lambda lib, x: lib.linalg.matrix_norm(x, -2, keepdim=True),
           [((3, 4),), ((2, 3, 3),)], make_inputs=_spread),
    OpInfo("linalg.matrix_norm_1", lambda lib, x: lib.linalg.matrix_norm(x, 1),
           [((3, 4),), ((2, 3, 3),)]),
    OpInfo("linalg.matrix_norm_-1_dims",
           lambda lib, x: lib.linalg.matrix_norm(x, -1, dim=(2, 0)), [((3, 4, 2),)]),
    OpInfo("linalg.matrix_norm_inf_keepdim",
           lambda lib, x: lib.linalg.matrix_norm(x, INF, keepdim=True), [((2, 3, 4),)]),
    OpInfo("linalg.matrix_norm_-inf", lambda lib, x: lib.linalg.matrix_norm(x, -INF),
           [((3, 4),)]),
    OpInfo("linalg.matrix_norm_nuc_dims",
           lambda lib, x: lib.linalg.matrix_norm(x, "nuc", dim=(0, 2), keepdim=True),
           [((3, 2, 3),)], make_inputs=_spread),
    OpInfo("linalg.norm", lambda lib, x: lib.linalg.norm(x), [((3, 4),), ((2, 3, 2),)]),
    OpInfo("linalg.norm_ord_vector", lambda lib, x: lib.linalg.norm(x, 3), [((5,),)]),
    OpInfo("linalg.norm_ord_matrix", lambda lib, x: lib.linalg.norm(x, 1), [((3, 4),)]),
    OpInfo("linalg.norm_fro_dims", lambda lib, x: lib.linalg.norm(x, "fro", dim=(0, 1)),
           [((3, 4, 2),)]),
    OpInfo("linalg.norm_dim", lambda lib, x: lib.linalg.norm(x, dim=1), [((3, 4),)]),
    OpInfo("linalg.cond", lambda lib, x: lib.linalg.cond(x), [((3, 3),), ((2, 4, 3),)],
           make_inputs=_spread),
    OpInfo("linalg.cond_-2", lambda lib, x: lib.linalg.cond(x, -2), [((3, 3),)],
           make_inputs=_spread),
    # (PyTorch's cond for these orders fills the inverse in place, after linalg.inv_ex saved
    # it: its backward refuses, as chainrule's does (tests/test_linalg_functions.py))
    OpInfo("linalg.cond_1", lambda lib, x: lib.linalg.cond(x, 1), [((3, 3),), ((2, 3, 3),)],
           make_inputs=_dominant, grad=False),
    OpInfo("linalg.cond_fro", lambda lib, x: lib.linalg.cond(x, "fro"), [((3, 3),)],
           make_inputs=_dominant, grad=False),
    OpInfo("linalg.cond_inf", lambda lib, x: lib.linalg.cond(x, -INF), [((3, 3),)],
           make_inputs=_dominant, grad=False),
    # determinants
    OpInfo("linalg.det", lambda lib, x: lib.linalg.det(x), SQUARE, make_inputs=_dominant),
    OpInfo("det", lambda lib, x: lib.det(x), [((3, 3),)], make_inputs=_dominant),
    OpInfo("Tensor.det", lambda lib, x: x.det(), [((2, 2),)], make_inputs=_dominant),
    OpInfo("linalg.det_any_sign", lambda lib, x: lib.linalg.det(x), [((3, 3),), ((4, 4),)]),
    OpInfo("linalg.slogdet", lambda lib, x: tuple(lib.linalg.slogdet(x)), SQUARE,
           make_inputs=_dominant),
    OpInfo("slogdet", lambda lib, x: tuple(lib.slogdet(x)), [((3, 3),)],
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("Tensor.slogdet", lambda lib, x: tuple(x.slogdet()), [((3, 3),)],
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("logdet", lambda lib, x: lib.logdet(x), [((3, 3),), ((2, 2, 2),)],
           make_inputs=_dominant),
    OpInfo("Tensor.logdet", lambda lib, x: x.logdet(), [((3, 3),)], make_inputs=_dominant),
    # inverses and solvers
    OpInfo("linalg.inv", lambda lib, x: lib.linalg.inv(x), SQUARE, make_inputs=_dominant),
    OpInfo("linalg.inv_ex", lambda lib, x: tuple(lib.linalg.inv_ex(x)), [((3, 3),),
                                                                         ((2, 3, 3),)],
           make_inputs=_dominant),
    OpInfo("inverse", lambda lib, x: lib.inverse(x), [((3, 3),)], make_inputs=_dominant),
    OpInfo("Tensor.inverse", lambda lib, x: x.inverse(), [((3, 3),)], make_inputs=_dominant),
    OpInfo("linalg.solve", lambda lib, a, b: lib.linalg.solve(a, b),
           [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (3, 4)), ((3, 3), (2, 3, 1)),
            ((2, 3, 3), (2, 3)), ((1, 1), (1, 1))], make_inputs=_dominant),
    OpInfo("linalg.solve_left_false", lambda lib, a, b: lib.linalg.solve(a, b, left=False),
           [((3, 3), (2, 3)), ((2, 3, 3), (4, 3))], make_inputs=_dominant),
    OpInfo("linalg.solve_ex", lambda lib, a, b: tuple(lib.linalg.solve_ex(a, b)),
           [((3, 3), (3, 2))], make_inputs=_dominant),
    OpInfo("linalg.solve_triangular_upper",
           lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
           [((3, 3), (3, 2)), ((2, 3, 3), (3, 4))], make_inputs=_dominant),
    OpInfo("linalg.solve_triangular_lower_right",
           lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, left=False),
           [((3, 3), (2, 3)), ((2, 3, 3), (2, 4, 3))], make_inputs=_dominant),
    OpInfo("linalg.solve_triangular_unit",
           lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
           [((3, 3), (3, 2))], make_inputs=_dominant),
    # (symmetrised: the factorisation reads one triangle, while PyTorch's gradient is the
    # symmetric one, which finite differences only see through a symmetric input)
    OpInfo("linalg.cholesky", lambda lib, a: lib.linalg.cholesky(a + a.mT),
           [((3, 3),), ((2, 4, 4),), ((1, 1),)], make_inputs=_spd),
    OpInfo("linalg.cholesky_upper", lambda lib, a: lib.linalg.cholesky(a + a.mT, upper=True),
           [((3, 3),), ((2, 3, 3),)], make_inputs=_spd),
    OpInfo("linalg.cholesky_ex", lambda lib, a: tuple(lib.linalg.cholesky_ex(a + a.mT)),
           [((3, 3),)], make_inputs=_spd),
    # eigenvalues, singular values, QR
    OpInfo("linalg.eigh", _eigh, [((3, 3),), ((2, 4, 4),)], make_inputs=_spread),
    OpInfo("linalg.eigh_upper", _eigh_upper, [((3, 3),)], make_inputs=_spread),
    # (one triangle read, the gradient the symmetric one, as PyTorch: no finite differences)
    OpInfo("linalg.eigh_one_triangle", lambda lib, a: lib.linalg.eigvalsh(a),
           [((3, 3),), ((2, 3, 3),)], make_inputs=_spread, gradcheck=False),
    OpInfo("linalg.eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a + a.mT),
           [((3, 3),), ((2, 4, 4),)], make_inputs=_spread),
    # (second order: chainrule's solve is not on the complex autograd allowlist, so the double
    # backward through eig's complex formula refuses; tests/test_linalg_functions.py)
    OpInfo("linalg.eig", _eig, [((3, 3),), ((2, 4, 4),)], second_order=False,
           extra={"record_gradients": False},
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("linalg.eigvals", lambda lib, a: lib.view_as_real(lib.linalg.eigvals(a)),
           [((3, 3),), ((2, 2, 2),)], second_order=False, extra={"record_gradients": False},
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("linalg.svd", _svd, RECT, make_inputs=_spread),
    OpInfo("linalg.svd_u", _svd_u_only, [((4, 3),), ((3, 4),)], make_inputs=_spread),
    OpInfo("linalg.svd_vh", _svd_vh_only, [((4, 3),), ((3, 4),)], make_inputs=_spread),
    OpInfo("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a), RECT, make_inputs=_spread),
    OpInfo("linalg.qr", _qr, RECT, make_inputs=_spread),
    OpInfo("linalg.qr_complete", lambda lib, a: _qr(lib, a, "complete"),
           [((3, 3),), ((2, 4),)], make_inputs=_spread),
    OpInfo("linalg.qr_r", lambda lib, a: lib.linalg.qr(a, mode="r")[1], [((4, 3),)],
           make_inputs=_spread, grad=False),
    OpInfo("linalg.pinv", lambda lib, a: lib.linalg.pinv(a), RECT, make_inputs=_spread),
    OpInfo("linalg.pinv_hermitian", lambda lib, a: lib.linalg.pinv(a + a.mT, hermitian=True),
           [((3, 3),), ((2, 3, 3),)], make_inputs=_spread),
    OpInfo("pinverse", lambda lib, a: lib.pinverse(a), [((3, 2),)], make_inputs=_spread),
    OpInfo("Tensor.pinverse", lambda lib, a: a.pinverse(), [((2, 3),)], make_inputs=_spread),
    OpInfo("linalg.lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b)[0],
           [((4, 3), (4, 2)), ((3, 3), (3,)), ((2, 4, 2), (2, 4)), ((2, 4, 3), (1, 4, 2)),
            ((2, 4), (2, 3))], make_inputs=_spread),
    # (rank and singular values are not differentiable: compared in tests/test_linalg_functions)
    OpInfo("linalg.lstsq_gelsd",
           lambda lib, a, b: tuple(lib.linalg.lstsq(a, b, driver="gelsd"))[:2],
           [((4, 3), (4, 2)), ((4, 2), (4,)), ((3, 3), (3, 2))], make_inputs=_spread),
    OpInfo("linalg.lstsq_gels_rcond",
           lambda lib, a, b: tuple(lib.linalg.lstsq(a, b, 1e-3, driver="gels"))[:2],
           [((4, 3), (4, 2))], make_inputs=_spread),
    OpInfo("linalg.lu_factor", lambda lib, a: lib.linalg.lu_factor(a)[0],
           [((3, 3),), ((2, 4, 4),), ((4, 2),), ((2, 4),)], make_inputs=_spread),
    OpInfo("linalg.lu_factor_ex", lambda lib, a: lib.linalg.lu_factor_ex(a)[0],
           [((3, 3),)], make_inputs=_spread),
    OpInfo("linalg.lu", lambda lib, a: tuple(lib.linalg.lu(a)),
           [((3, 3),), ((2, 4, 4),), ((4, 2),), ((2, 4),)], make_inputs=_spread),
    OpInfo("linalg.lu_solve", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b),
           [((3, 3), (3, 2)), ((2, 3, 3), (3, 1))], make_inputs=_spread),
    OpInfo("linalg.lu_solve_adjoint",
           lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True),
           [((3, 3), (3, 2))], make_inputs=_spread),
    OpInfo("linalg.lu_solve_right",
           lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=False),
           [((3, 3), (2, 3))], make_inputs=_spread),
    OpInfo("linalg.lu_solve_right_adjoint",
           lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=False,
                                                 adjoint=True),
           [((3, 3), (2, 3))], make_inputs=_spread),
    OpInfo("linalg.householder_product",
           lambda lib, a, t: lib.linalg.householder_product(a, t),
           [((4, 3), (2,)), ((3, 3), (3,)), ((2, 4, 2), (2, 2)), ((3, 1), (1,))],
           make_inputs=_finite(0.1, 0.9)),
    # (PyTorch records a NotImplemented node for these: tests/test_linalg_functions.py)
    OpInfo("linalg.ldl_factor", lambda lib, a: tuple(lib.linalg.ldl_factor(a + a.mT)),
           [((3, 3),), ((2, 5, 5),), ((1, 1),)], grad=False,
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("linalg.ldl_factor_ex", lambda lib, a: tuple(lib.linalg.ldl_factor_ex(a + a.mT)),
           [((4, 4),)], grad=False,
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("linalg.ldl_solve",
           lambda lib, a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a + a.mT), b),
           [((3, 3), (3, 2)), ((2, 4, 4), (4, 1))], grad=False, make_inputs=_dominant),
    # torch-level names from before torch.linalg
    OpInfo("svd", lambda lib, a: _fixed_svd(lib, lib.svd(a)), RECT, make_inputs=_spread),
    OpInfo("svd_complete", _svd_complete, [((4, 3),), ((2, 4),)], make_inputs=_spread),
    OpInfo("svd_values_only", lambda lib, a: tuple(lib.svd(a, compute_uv=False)),
           [((4, 3),), ((2, 2, 3),)], make_inputs=_spread),
    OpInfo("Tensor.svd", lambda lib, a: a.svd()[1], [((3, 3),)], make_inputs=_spread),
    OpInfo("qr", lambda lib, a: tuple(lib.qr(a)), [((4, 3),), ((2, 3, 3),)],
           make_inputs=_spread),
    OpInfo("Tensor.qr", lambda lib, a: tuple(a.qr(some=False)), [((3, 3),), ((2, 4),)],
           make_inputs=_spread),
    OpInfo("cholesky", lambda lib, a: lib.cholesky(a + a.mT), [((3, 3),), ((2, 3, 3),)],
           make_inputs=_spd),
    OpInfo("Tensor.cholesky", lambda lib, a: (a + a.mT).cholesky(upper=True), [((3, 3),)],
           make_inputs=_spd),
    OpInfo("cholesky_solve",
           lambda lib, b, a: lib.cholesky_solve(b, _lower(a)),
           [((3, 2), (3, 3)), ((2, 3, 1), (3, 3))],
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("Tensor.cholesky_solve",
           lambda lib, b, a: b.cholesky_solve(_lower(a).mT,
                                              upper=True),
           [((3, 2), (3, 3))],
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("cholesky_inverse",
           lambda lib, a: lib.cholesky_inverse(_lower(a)),
           [((3, 3),), ((2, 3, 3),)],
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("Tensor.cholesky_inverse",
           lambda lib, a: (_lower(a).mT).cholesky_inverse(
               upper=True),
           [((3, 3),)],
           make_inputs=_finite(-2.0, 2.0)),
    OpInfo("cross", lambda lib, a, b: lib.cross(a, b, dim=1), [((2, 3), (2, 3))]),
    OpInfo("Tensor.cross", lambda lib, a, b: a.cross(b, dim=0), [((3, 2), (3, 1))]),
    OpInfo("lu", lambda lib, a: lib.lu(a)[0], [((3, 3),), ((2, 4, 3),)], make_inputs=_spread),
    OpInfo("Tensor.lu", lambda lib, a: tuple(a.lu(get_infos=True))[0], [((3, 3),)],
           make_inputs=_spread),
    OpInfo("lu_solve", lambda lib, b, a: lib.lu_solve(b, *lib.linalg.lu_factor(a)),
           [((3, 2), (3, 3))], make_inputs=_spread),
    OpInfo("Tensor.lu_solve", lambda lib, b, a: b.lu_solve(*lib.linalg.lu_factor(a)),
           [((2, 3, 1), (2, 3, 3))], make_inputs=_spread),
    OpInfo("lu_unpack", lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a)))[1:],
           [((3, 3),), ((4, 2),), ((2, 2, 4),)], make_inputs=_spread),
    OpInfo("triangular_solve", lambda lib, b, a: tuple(lib.triangular_solve(b, a)),
           [((3, 2), (3, 3)), ((2, 3, 1), (3, 3))], make_inputs=_dominant),
    OpInfo("triangular_solve_flags",
           lambda lib, b, a: tuple(lib.triangular_solve(b, a, upper=False, transpose=True)),
           [((3, 2), (3, 3))], make_inputs=_dominant),
    OpInfo("Tensor.triangular_solve",
           lambda lib, b, a: tuple(b.triangular_solve(a, transpose=True, unitriangular=True)),
           [((3, 2), (3, 3))], make_inputs=_dominant),
    OpInfo("geqrf", lambda lib, a: tuple(lib.geqrf(a)), [((4, 3),), ((2, 3, 5),)],
           make_inputs=_spread, grad=False),
    OpInfo("Tensor.geqrf", lambda lib, a: a.geqrf()[1], [((3, 3),)], make_inputs=_spread,
           grad=False),
    OpInfo("orgqr", lambda lib, a, t: lib.orgqr(a, t), [((4, 3),(3,))],
           make_inputs=_finite(0.1, 0.9)),
    OpInfo("Tensor.orgqr", lambda lib, a, t: a.orgqr(t), [((3, 3), (2,))],
           make_inputs=_finite(0.1, 0.9)),
    OpInfo("ormqr", lambda lib, a, t, c: lib.ormqr(a, t, c),
           [((4, 3), (3,), (4, 2)), ((2, 3, 3), (2, 3), (2, 3, 1))],
           make_inputs=_finite(0.1, 0.6)),
    OpInfo("ormqr_transpose", lambda lib, a, t, c: lib.ormqr(a, t, c, transpose=True),
           [((4, 3), (3,), (4, 2))],
           make_inputs=_finite(0.1, 0.6)),
    OpInfo("Tensor.ormqr", lambda lib, a, t, c: a.ormqr(t, c, left=False),
           [((4, 3), (3,), (2, 4))],
           make_inputs=_finite(0.1, 0.6)),
    OpInfo("ormqr_right_transpose",
           lambda lib, a, t, c: lib.ormqr(a, t, c, left=False, transpose=True),
           [((3, 3), (3,), (2, 3))],
           make_inputs=_finite(0.1, 0.6)),
    OpInfo("chain_matmul", lambda lib, a, b, c: lib.chain_matmul(a, b, c),
           [((2, 3), (3, 4), (4, 1))]),
    OpInfo("linalg.matrix_rank", lambda lib, a: lib.linalg.matrix_rank(a),
           [((3, 3),), ((2, 4, 3),)], grad=False,
           make_inputs=_finite(-2.0, 2.0)),
    # matrix functions and products
    OpInfo("linalg.matrix_power_3", lambda lib, a: lib.linalg.matrix_power(a, 3),
           [((3, 3),), ((2, 2, 2),)]),
    OpInfo("linalg.matrix_power_5", lambda lib, a: lib.linalg.matrix_power(a, 5),
           [((3, 3),)], low=-0.5, high=0.5),
    OpInfo("linalg.matrix_power_2", lambda lib, a: lib.linalg.matrix_power(a, 2), [((3, 3),)]),
    OpInfo("linalg.matrix_power_1", lambda lib, a: lib.linalg.matrix_power(a, 1), [((3, 3),)]),
    OpInfo("linalg.matrix_power_0", lambda lib, a: lib.linalg.matrix_power(a, 0),
           [((3, 3),), ((2, 2, 2),)]),
    OpInfo("linalg.matrix_power_-2", lambda lib, a: lib.linalg.matrix_power(a, -2),
           [((3, 3),)], make_inputs=_dominant),
    OpInfo("matrix_power", lambda lib, a: lib.matrix_power(a, 6), [((2, 2),)],
           low=-0.5, high=0.5),
    OpInfo("Tensor.matrix_power", lambda lib, a: a.matrix_power(2), [((2, 2),)]),
    OpInfo("linalg.matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a),
           [((3, 3),), ((2, 2, 2),), ((1, 1),)]),
    OpInfo("linalg.matrix_exp_large", lambda lib, a: lib.linalg.matrix_exp(a),
           [((3, 3),)], low=-4.0, high=4.0),
    OpInfo("matrix_exp", lambda lib, a: lib.matrix_exp(a), [((2, 2),)]),
    OpInfo("Tensor.matrix_exp", lambda lib, a: a.matrix_exp(), [((2, 2),)]),
    OpInfo("linalg.cross", lambda lib, a, b: lib.linalg.cross(a, b),
           [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (1, 3))]),
    OpInfo("linalg.cross_dim", lambda lib, a, b: lib.linalg.cross(a, b, dim=0),
           [((3, 2), (3, 2))]),
    OpInfo("linalg.vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b),
           [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,))]),
    OpInfo("linalg.vecdot_dim", lambda lib, a, b: lib.linalg.vecdot(a, b, dim=0),
           [((3, 2), (3, 2))]),
    OpInfo("linalg.multi_dot", lambda lib, a, b: lib.linalg.multi_dot([a, b]),
           [((2, 3), (3, 4)), ((3,), (3, 2)), ((3,), (3,))]),
    OpInfo("linalg.multi_dot_3", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]),
           [((2, 3), (3, 4), (4, 5)), ((5, 2), (2, 6), (6, 1)), ((3,), (3, 3), (3,))]),
    OpInfo("linalg.multi_dot_5",
           lambda lib, a, b, c, d, e: lib.linalg.multi_dot([a, b, c, d, e]),
           [((2, 3), (3, 4), (4, 1), (1, 5), (5,)), ((4,), (4, 2), (2, 6), (6, 1), (1, 3))]),
    OpInfo("linalg.vander", lambda lib, x: lib.linalg.vander(x), [((3,),), ((2, 4),)]),
    OpInfo("linalg.vander_N", lambda lib, x: lib.linalg.vander(x, N=5), [((3,),)]),
    OpInfo("linalg.diagonal", lambda lib, x: lib.linalg.diagonal(x), [((3, 3),), ((2, 3, 4),)]),
    OpInfo("linalg.diagonal_offset",
           lambda lib, x: lib.linalg.diagonal(x, offset=1, dim1=0, dim2=2), [((3, 2, 4),)]),
    OpInfo("linalg.tensorinv", lambda lib, x: lib.linalg.tensorinv(x, ind=1),
           [((3, 3),)], make_inputs=_dominant),
    OpInfo("linalg.tensorinv_4d",
           lambda lib, x: lib.linalg.tensorinv(x.reshape(2, 3, 6) + 0, ind=2),
           [((6, 6),)], make_inputs=_dominant),
    OpInfo("linalg.tensorsolve",
           lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 3, 6), b),
           [((6, 6), (2, 3))], make_inputs=_dominant),
    OpInfo("linalg.matmul", lambda lib, a, b: lib.linalg.matmul(a, b), [((2, 3), (3, 4))]),
]
