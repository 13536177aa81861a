"""Matrix decompositions, solvers and matrix functions: what ``torch.linalg`` is built on.

Each op here is one node of PyTorch's (``LinalgDetBackward0``, ``LinalgSvdBackward0`` ...), its
forward on NumPy arrays (batched over leading dimensions) and its derivative written, as
PyTorch's ``FunctionsManual.cpp`` writes it, with ``ops.*`` helpers (so the same formula runs on
arrays and, with ``create_graph=True``, on recorded Tensors: second-order gradients). The public
functions check their arguments with PyTorch's messages first (a refused call changes nothing),
then call the op; what PyTorch composes from other ops (matrix_norm, cond, matrix_power,
multi_dot ...) is composed here from the same ops, so that the graph has PyTorch's nodes.

Two differences are documented: eigenvectors and singular vectors are unique only up to sign
(NumPy's LAPACK and PyTorch's MKL may pick different signs), and a singular matrix's
``inv_ex``/``solve_ex`` result is NaN where PyTorch's is whatever LAPACK left behind.
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _return_types as return_types
from .._dtype import CPP_TYPE_NAMES, SCALAR_TYPE_NAMES, from_numpy_dtype
from .._frames import user_stacklevel
from .._strides import contiguous_format
from .._tensor import Tensor, wrap, wrap_dim
from . import copying, creation, linalg, pointwise, shape
from ._registry import op, recorded_as, tensor_method
from .conjugate import flag_conjugate_result
from .pointwise import _not_implemented_node

__all__ = [
    "det", "logdet", "slogdet", "inverse", "pinverse", "matrix_power", "matrix_exp", "svd", "qr",
    "cholesky", "cholesky_solve", "cholesky_inverse", "cross", "lu", "lu_solve", "lu_unpack",
    "chain_matmul", "triangular_solve", "geqrf", "orgqr", "ormqr",
]


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (``torch.linalg.LinAlgError``,
    PyTorch's ``torch._C._LinAlgError``: a RuntimeError)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "chainrule._C"


# ----------------------------------------------------------------------------------------------
# Checks with PyTorch's messages

def _type_name(t: Tensor | np.ndarray) -> str:
    a = t._data if isinstance(t, Tensor) else t
    return SCALAR_TYPE_NAMES[from_numpy_dtype(a.dtype)]


def _is_half(t: Tensor) -> bool:
    return _type_name(t) in ("Half", "BFloat16")


def _check_float(t: Tensor, fname: str, arg: str = "input") -> None:
    """``checkFloatingOrComplex``: the message PyTorch's linalg functions give for ints."""
    if t._data.dtype.kind not in "fcV":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as {arg}. Got {_type_name(t)}")


def _check_matrix(t: Tensor, fname: str, name: str = "A") -> None:
    if t._data.ndim < 2:
        raise RuntimeError(
            f"{fname}: The input tensor {name} must have at least 2 dimensions.")


def _check_square(t: Tensor, fname: str, name: str = "A") -> None:
    """``squareCheckInputs``: at least 2-D and square."""
    _check_matrix(t, fname, name)
    m, n = t._data.shape[-2:]
    if m != n:
        raise RuntimeError(
            f"{fname}: {name} must be batches of square matrices, but they are {m} by {n} "
            "matrices")


def _check_kernel(t: Tensor, kernel: str) -> None:
    """The dispatch error of a CPU kernel that has no half-precision version."""
    if _is_half(t):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(t)}\'')


def _check_low_precision(t: Tensor, fname: str) -> None:
    if _is_half(t):
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {_type_name(t)}")


def _batch_prefix(index: int, batched: bool) -> str:
    return f"(Batch element {index}): " if batched else ""


def _first_failure(info: np.ndarray) -> tuple[int, int] | None:
    """The first batch element whose ``info`` is not 0: (flat index, info)."""
    flat = np.asarray(info).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size == 0:
        return None
    return int(bad[0]), int(flat[bad[0]])


# ----------------------------------------------------------------------------------------------
# Array helpers (the forwards)

def _mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _column_major(a: np.ndarray) -> np.ndarray:
    """A copy laid out as LAPACK returns matrices (each matrix column-major, batches in order),
    which is how PyTorch's linalg results are strided."""
    return _mT(np.ascontiguousarray(_mT(a)))


def lu_factor_arrays(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK's ``getrf`` on a batch: the packed LU factors, the 1-based pivots and ``info``
    (the 1-based index of the first zero pivot, 0 when there is none)."""
    *batch, m, n = a.shape
    k = builtins.min(m, n)
    lu = np.array(a, copy=True).reshape(-1, m, n)
    count = lu.shape[0]
    pivots = np.zeros((count, k), dtype=np.int32)
    info = np.zeros(count, dtype=np.int32)
    rows = np.arange(count)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for j in range(k):
            p = j + np.argmax(_pivot_size(lu[:, j:, j]), axis=1)
            pivots[:, j] = p + 1
            row_j = lu[rows, j, :].copy()
            lu[rows, j, :] = lu[rows, p, :]
            lu[rows, p, :] = row_j
            pivot = lu[:, j, j]
            zero = pivot == 0
            info[(info == 0) & zero] = j + 1
            scale = np.where(zero, 1, pivot)[:, None]
            lu[:, j + 1:, j] = lu[:, j + 1:, j] / scale
            lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (lu.reshape(*batch, m, n), pivots.reshape(*batch, k), info.reshape(batch))


def _pivot_size(column: np.ndarray) -> np.ndarray:
    """The size LAPACK's pivoting compares (``i?amax``): ``|re| + |im|`` for complex values,
    not the modulus."""
    if column.dtype.kind == "c":
        return np.abs(column.real) + np.abs(column.imag)
    return np.abs(column)


def _inverse_and_info(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], dtype=np.int32)
    except np.linalg.LinAlgError:
        pass
    info = lu_factor_arrays(a)[2]
    out = np.full(a.shape, np.nan, dtype=a.dtype)
    for index in np.ndindex(info.shape):
        if info[index]:
            continue
        try:
            out[index] = np.linalg.inv(a[index])
        except np.linalg.LinAlgError:
            # LAPACK met an exact zero pivot where this LU's rounding did not: singular
            # (its last diagonal element, as the LU cannot say which)
            info[index] = a.shape[-1]
    return out, info


def _as_matrix_rhs(A: np.ndarray, B: np.ndarray) -> bool:
    """PyTorch's ``linalg_solve_is_vector_rhs``: B is a (batch of) vector(s)."""
    return B.ndim == 1 or (A.ndim - 1 == B.ndim and B.shape == A.shape[:-1])


def _solve_arrays(A: np.ndarray, B: np.ndarray, left: bool = True
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``A X = B`` (``X A = B`` when not ``left``) and LU's ``info`` per matrix."""
    vector = _as_matrix_rhs(A, B)
    rhs = B[..., None] if vector else B
    if not left:
        A = _mT(A)
        rhs = _mT(rhs)
    batch = np.broadcast_shapes(A.shape[:-2], rhs.shape[:-2])
    A_b = np.broadcast_to(A, batch + A.shape[-2:])
    rhs_b = np.broadcast_to(rhs, batch + rhs.shape[-2:])
    try:
        X = np.linalg.solve(A_b, rhs_b)
        info = np.zeros(batch, dtype=np.int32)
    except np.linalg.LinAlgError:
        info = lu_factor_arrays(A_b)[2]
        X = np.full(np.broadcast_shapes(A_b.shape[:-1] + (1,), rhs_b.shape), np.nan,
                    dtype=np.result_type(A, B))
        for index in np.ndindex(info.shape):
            if info[index]:
                continue
            try:
                X[index] = np.linalg.solve(A_b[index], rhs_b[index])
            except np.linalg.LinAlgError:  # (as in _inverse_and_info)
                info[index] = A_b.shape[-1]
    if not left:
        X = _mT(X)
    if vector:  # (PyTorch lays a batch of solution vectors out as the matrix it solved for)
        X = X[..., 0]
        return (_column_major(X) if X.ndim >= 2 else X), info
    # (PyTorch solves X A = B as A^T X^T = B^T: the result is row-major)
    return (_column_major(X) if left else np.ascontiguousarray(X)), info


def _triangular_arrays(A: np.ndarray, B: np.ndarray, upper: bool, left: bool,
                       unitriangular: bool) -> np.ndarray:
    """Forward or back substitution with the ``upper`` (lower) triangle of ``A`` (LAPACK's
    trsm: a zero on the diagonal gives inf/nan, no error)."""
    if not left:  # X A = B  <=>  A^T X^T = B^T, and A^T's triangle is the other one
        return _column_major(
            _mT(_triangular_arrays(_mT(A), _mT(B), not upper, True, unitriangular)))
    n = A.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    dtype = np.result_type(A, B)
    X = np.zeros(batch + B.shape[-2:], dtype=dtype)
    Bb = np.broadcast_to(B, batch + B.shape[-2:])
    Ab = np.broadcast_to(A, batch + A.shape[-2:])
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in order:
            if upper:
                row = Ab[..., i, i + 1:]
                acc = Bb[..., i, :] - np.einsum("...k,...kj->...j", row, X[..., i + 1:, :])
            else:
                row = Ab[..., i, :i]
                acc = Bb[..., i, :] - np.einsum("...k,...kj->...j", row, X[..., :i, :])
            X[..., i, :] = acc if unitriangular else acc / Ab[..., i, i][..., None]
    return _column_major(X)


def _cholesky_arrays(A: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    """The Cholesky factor from the lower (``upper``: upper) triangle of A, and ``info`` (the
    order of the first leading minor that is not positive-definite)."""
    src = np.conj(_mT(A)) if upper else A
    try:
        L = np.linalg.cholesky(src)
        info = np.zeros(A.shape[:-2], dtype=np.int32)
    except np.linalg.LinAlgError:
        L, info = _cholesky_loop(src)
    if upper:
        L = np.conj(_mT(L))
    return _column_major(L), info


def _cholesky_loop(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's unblocked ``potf2`` on a batch, stopping per matrix at its first failure (the
    failing diagonal keeps the value that was not positive, as LAPACK leaves it)."""
    *batch, n, _ = A.shape
    L = np.tril(np.array(A, copy=True)).reshape(-1, n, n)
    info = np.zeros(L.shape[0], dtype=np.int32)
    with np.errstate(invalid="ignore"):
        for j in range(n):
            active = info == 0
            d = L[:, j, j] - np.einsum("bk,bk->b", L[:, j, :j], np.conj(L[:, j, :j]))
            d = np.real(d)
            failed = active & ~(d > 0)
            info[failed] = j + 1
            L[failed, j, j] = d[failed]
            go = active & (d > 0)
            if not np.any(go):
                continue
            root = np.sqrt(d[go])
            L[go, j, j] = root
            below = L[go, j + 1:, j] - np.einsum(
                "bik,bk->bi", L[go, j + 1:, :j], np.conj(L[go, j, :j]))
            L[go, j + 1:, j] = below / root[:, None]
    return L.reshape(*batch, n, n), info.reshape(batch)


def _matrix_exp_arrays(A: np.ndarray) -> np.ndarray:
    """``exp(A)`` by scaling and squaring with the degree-13 Padé approximant (Higham 2005),
    in double precision, rounded once to A's dtype."""
    if A.size == 0:
        return np.array(A, copy=True)
    dtype = A.dtype
    work = A.astype(np.complex128 if dtype.kind == "c" else np.float64)
    n = work.shape[-1]
    b = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0)
    norm1 = np.max(np.sum(np.abs(work), axis=-2), axis=-1)
    theta13 = 5.371920351148152
    with np.errstate(divide="ignore"):
        s = np.where(norm1 > theta13, np.ceil(np.log2(norm1 / theta13)), 0)
    s = np.nan_to_num(s, nan=0, posinf=0).astype(np.int64)
    work = work / (2.0 ** s)[..., None, None]
    ident = np.eye(n, dtype=work.dtype)
    A2 = work @ work
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = work @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2)
                + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
        + b[0] * ident
    R = np.linalg.solve(V - U, V + U)
    flat_R = R.reshape(-1, n, n)
    flat_s = s.reshape(-1)
    for i in range(flat_R.shape[0]):
        for _ in range(int(flat_s[i])):
            flat_R[i] = flat_R[i] @ flat_R[i]
    return flat_R.reshape(R.shape).astype(dtype)


def _eye_for(ops: Any, like: Any, n: int) -> Any:
    """The identity of size n as the kind of value ``like`` is (array or Tensor)."""
    if isinstance(like, np.ndarray):
        return np.eye(n, dtype=like.dtype)
    return creation.eye(n, dtype=like.dtype)


def _mH(ops: Any, x: Any) -> Any:
    return ops.conj(ops.transpose(x, -2, -1))


# ----------------------------------------------------------------------------------------------
# Determinants

@op("LinalgDetBackward0", inputs=("A",), complex_ok=True)
def _linalg_det(A):
    if A.shape[-1] == 0:
        return np.ones(A.shape[:-2], dtype=A.dtype)
    det = np.asarray(np.linalg.det(A), dtype=A.dtype)
    singular = det == 0
    if np.any(singular):  # the signed zero of LU's product, as LAPACK's
        det = np.where(singular, _lu_det(A), det).astype(A.dtype)
    return det


def _lu_det(A: np.ndarray) -> np.ndarray:
    """The determinant as the product of LU's diagonal and the pivots' sign."""
    lu, pivots, _ = lu_factor_arrays(A)
    swaps = np.sum(pivots != np.arange(1, pivots.shape[-1] + 1), axis=-1)
    diagonal = np.diagonal(lu, axis1=-2, axis2=-1)
    return np.prod(diagonal, axis=-1) * np.where(swaps % 2 == 1, -1.0, 1.0)


def _prod_others(ops: Any, S: Any) -> Any:
    """For each entry of the last dimension, the product of the others (the gradient of a
    product that stays right when entries are zero)."""
    n = S.shape[-1]
    ones = ops.zeros_like(ops.narrow(S, -1, 0, 1)) + 1
    left = ops.cumprod(ops.cat([ones, ops.narrow(S, -1, 0, n - 1)], -1), -1)
    right = ops.flip(ops.cumprod(ops.flip(ops.cat([ops.narrow(S, -1, 1, n - 1), ones], -1),
                                          (-1,)), -1), (-1,))
    return left * right


@_linalg_det.derivative("A")
def _(ops, grad, A, result):
    # gA solves A^H gA = det(A)^* grad I: the cofactor matrix. For (nearly) singular matrices,
    # PyTorch's adjugate from the SVD: U diag(prod of the other singular values) V^H times
    # det(U) det(V^H).
    if A.shape[-1] == 0:
        return ops.zeros_like(A)
    n = A.shape[-1]
    eps = np.finfo(np.dtype(_array_dtype(A))).eps
    singular = np.abs(_data(result)) < 100.0 * eps
    if not np.any(singular):
        return _det_nonsingular(ops, grad, A, result)
    if np.all(singular):
        return _det_singular(ops, grad, A)
    # Each matrix by its own formula (PyTorch's masked_fmap): the other formula runs on a
    # harmless stand-in (the identity, or distinct singular values), and ``where`` picks.
    mask = _constant(A, singular[..., None, None])
    eye = _eye_for(ops, _data_like(A, grad), n)
    spread = _constant(A, np.diag(np.arange(1.0, n + 1.0)).astype(_array_dtype(A)))
    regular = _det_nonsingular(ops, grad, ops.where(mask, eye, A), result)
    adjugate = _det_singular(ops, grad, ops.where(mask, A, spread))
    return ops.where(mask, adjugate, regular)


def _constant(like: Any, value: np.ndarray) -> Any:
    """``value`` as the kind of value ``like`` is (an array, or a Tensor without history)."""
    if isinstance(like, np.ndarray):
        return value
    return wrap(np.asarray(value))


def _det_nonsingular(ops: Any, grad: Any, A: Any, det: Any) -> Any:
    """The cofactor matrix: the solution of ``A^H G = det^* grad I``."""
    d_diag = ops.unsqueeze(ops.unsqueeze(grad * ops.conj(det), -1), -1)
    d = d_diag * _eye_for(ops, _data_like(A, d_diag), A.shape[-1])
    return ops.solve(_mH(ops, A), d)


def _det_singular(ops: Any, grad: Any, A: Any) -> Any:
    """The adjugate from the SVD (Higham): ``U diag(prod of the other singular values) V^H``
    times ``det(U) det(V^H)``, right for singular matrices."""
    U, S, Vh = ops.svd(A)
    alpha = ops.conj(ops.det(U) * ops.det(Vh)) * grad
    D = ops.unsqueeze(alpha, -1) * _prod_others(ops, S)
    return ops.matmul(U * ops.unsqueeze(D, -2), Vh)


def _data(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else x


def _array_dtype(x: Any) -> np.dtype:
    return _data(x).dtype


@op("LinalgSlogdetBackward0", inputs=("A",), num_outputs=2, complex_ok=True)
def _linalg_slogdet(A):
    if A.shape[-1] == 0:
        return np.ones(A.shape[:-2], dtype=A.dtype), np.zeros(A.shape[:-2], dtype=A.dtype)
    sign, logabs = np.linalg.slogdet(A)
    sign = np.asarray(sign, dtype=A.dtype)
    singular = sign == 0
    if np.any(singular):  # the signed zero of LU's product, as LAPACK's
        sign = np.where(singular, np.copysign(0.0, _lu_det(A)), sign).astype(A.dtype)
    return sign, np.asarray(logabs, dtype=np.real(A).dtype)


@_linalg_slogdet.derivative("A")
def _(ops, grads, A, result):
    # d logabsdet = A^{-H}. A real matrix's sign has no gradient; a complex one's, e^{i theta},
    # adds i Im(g_sign conj(sign)) to the gradient of log det (PyTorch's slogdet_backward).
    g = grads[1]
    if _array_dtype(A).kind == "c":
        g_sign = grads[0]
        if np.any(_data(g_sign)):
            g = g + ops.imag(g_sign * ops.conj(result)) * 1j
    n = A.shape[-1]
    d = ops.unsqueeze(ops.unsqueeze(g, -1), -1) * _eye_for(ops, _data_like(A, g), n)
    return ops.solve(_mH(ops, A), d)


def _data_like(A: Any, g: Any) -> Any:
    return g if isinstance(g, Tensor) else np.asarray(g)


# ----------------------------------------------------------------------------------------------
# Inverse and solvers

# inv_ex, solve_ex and cholesky_ex also return LAPACK's ``info``, which has no gradient: the ops
# return the differentiable result and ``info`` is read from it (a NaN inverse or solution, a
# non-positive diagonal of the Cholesky factor) and the input.

@op("LinalgInvExBackward0", inputs=("A",), complex_ok=True)
def _linalg_inv_ex(A):
    return _column_major(_inverse_and_info(A)[0])


def _lu_info(A: np.ndarray, result: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """``info`` of an inverse or solve: LU's, looked for only when the result has NaN."""
    if not np.isnan(result).any():
        return np.zeros(batch, dtype=np.int32)
    A = np.broadcast_to(A, batch + A.shape[-2:])
    info = lu_factor_arrays(A)[2]
    # A matrix LAPACK found singular (its result NaN-filled) where this LU's rounding met no
    # zero pivot: singular too, at its last diagonal element.
    per_matrix = np.isnan(result).reshape(batch + (-1,))
    refused = per_matrix.all(axis=-1) & ~np.isnan(A).any(axis=(-2, -1))
    return np.where((info == 0) & refused, np.int32(A.shape[-1]), info).astype(np.int32)


def _cholesky_info(L: np.ndarray) -> np.ndarray:
    """The order of the first diagonal entry of the factor that is not positive, 0 if none."""
    diagonal = np.real(np.diagonal(L, axis1=-2, axis2=-1))
    bad = ~(diagonal > 0)
    first = np.argmax(bad, axis=-1) + 1 if diagonal.shape[-1] else np.zeros(bad.shape[:-1])
    return np.where(bad.any(axis=-1), first, 0).astype(np.int32)


@_linalg_inv_ex.derivative("A")
def _(ops, gI, result):
    inverse = result
    inv_h = _mH(ops, inverse)
    return -ops.matmul(inv_h, ops.matmul(gI, inv_h))


@op("LinalgSolveExBackward0", inputs=("A", "B"), complex_ok=True)
def _linalg_solve_ex(A, B, left=True):
    return _solve_arrays(A, B, left)[0]


def _solve_grad_B(ops: Any, grad: Any, A: Any, left: bool) -> Any:
    return ops.solve(_mH(ops, A), grad, left)


@_linalg_solve_ex.derivative("A")
def _(ops, g, A, B, left, result):
    X = result
    gB = _solve_grad_B(ops, g, A, left)
    if _as_matrix_rhs(_data(A), _data(B)):
        return -ops.unsqueeze(gB, -1) * ops.conj(ops.unsqueeze(X, -2))
    return -ops.matmul(gB, _mH(ops, X)) if left else -ops.matmul(_mH(ops, X), gB)


@_linalg_solve_ex.derivative("B")
def _(ops, g, A, left):
    return _solve_grad_B(ops, g, A, left)


@op("LinalgSolveTriangularBackward0", inputs=("self", "B"), complex_ok=True)
def _linalg_solve_triangular(self, B, upper, left=True, unitriangular=False):
    return _triangular_arrays(self, B, upper, left, unitriangular)


@_linalg_solve_triangular.derivative("self")
def _(ops, grad, self, upper, left, unitriangular, result):
    gB = ops.solve_triangular(_mH(ops, self), grad, not upper, left, unitriangular)
    X_h = _mH(ops, result)
    gA = -ops.matmul(gB, X_h) if left else -ops.matmul(X_h, gB)
    return ops.triu(gA, int(unitriangular)) if upper else ops.tril(gA, -int(unitriangular))


@_linalg_solve_triangular.derivative("B")
def _(ops, grad, self, upper, left, unitriangular):
    return ops.solve_triangular(_mH(ops, self), grad, not upper, left, unitriangular)


@op("LinalgCholeskyExBackward0", complex_ok=True)
def _linalg_cholesky_ex(self, upper=False):
    return _cholesky_arrays(self, upper)[0]


@_linalg_cholesky_ex.derivative("self")
def _(ops, gL, upper, result):
    # Murray (2016): gA = L^{-H} Phi(L^H gL) L^{-1}, Phi taking the lower triangle with half
    # its diagonal, symmetrised.
    L = result
    if upper:
        L = _mH(ops, L)
        gL = _mH(ops, gL)
    gA = ops.tril(ops.matmul(_mH(ops, L), gL))
    gA = ops.mul(gA + _mH(ops, ops.tril(gA, -1)), 0.5)
    gA = ops.solve_triangular(_mH(ops, L), gA, True, True, False)
    return ops.solve_triangular(L, gA, False, False, False)


# ----------------------------------------------------------------------------------------------
# Eigenvalues, SVD, QR

@op("LinalgEighBackward0", inputs=("A",), num_outputs=2, complex_ok=True)
def _linalg_eigh(A, UPLO="L"):
    if A.shape[-1] == 0:
        return (np.zeros(A.shape[:-1], dtype=np.real(A).dtype), np.array(A, copy=True))
    L, V = np.linalg.eigh(A, UPLO=UPLO)
    return L.astype(np.real(A).dtype), _column_major(V.astype(A.dtype))


# A multi-output node keeps only its first output: the derivatives of eigh, svd and qr redo the
# decomposition from the saved input (the same LAPACK call on the same values gives the same
# factors, and with create_graph=True the recomputed factors carry the graph back to A).

@_linalg_eigh.derivative("A")
def _(ops, grads, A, UPLO):
    gL, gV = grads
    L, V = ops.eigh(A, UPLO)
    if not np.any(_data(gV)):
        return ops.matmul(V * ops.unsqueeze(gL, -2), _mH(ops, V))
    VhgV = ops.matmul(_mH(ops, V), gV)
    if _array_dtype(V).kind == "c" and not np.allclose(_imag_diagonal(VhgV), 0, 1e-2, 1e-2):
        raise RuntimeError(
            "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined.")
    VhgV = ops.mul(VhgV - _mH(ops, VhgV), 0.5)
    n = L.shape[-1]
    eye = _eye_for(ops, _data_like(V, L), n)
    E = ops.unsqueeze(L, -2) - ops.unsqueeze(L, -1) + eye
    with np.errstate(divide="ignore", invalid="ignore"):
        gA = VhgV / E
    gA = gA * (1 - eye) + ops.diag_embed(gL)
    return ops.matmul(V, ops.matmul(gA, _mH(ops, V)))


@op("LinalgSvdBackward0", inputs=("A",), num_outputs=3, complex_ok=True)
def _linalg_svd(A, full_matrices=True):
    m, n = A.shape[-2:]
    real = np.real(A).dtype
    if m == 0 or n == 0:
        batch = A.shape[:-2]
        ku = m if full_matrices else 0
        kv = n if full_matrices else 0
        U = np.broadcast_to(np.eye(m, ku, dtype=A.dtype), batch + (m, ku))
        Vh = np.broadcast_to(np.eye(kv, n, dtype=A.dtype), batch + (kv, n))
        return _column_major(U), np.zeros(batch + (0,), dtype=real), _column_major(Vh)
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return (_column_major(U.astype(A.dtype)), S.astype(real),
            _column_major(Vh.astype(A.dtype)))


@_linalg_svd.derivative("A")
def _(ops, grads, A, full_matrices):
    gU, gS, gVh = grads
    U, S, Vh = ops.svd(A, full_matrices)
    m, n = U.shape[-2], Vh.shape[-1]
    has_u, has_v = bool(np.any(_data(gU))), bool(np.any(_data(gVh)))
    k = S.shape[-1]  # (full_matrices: the extra singular vectors get no gradient, as PyTorch)
    if full_matrices:
        U = ops.narrow(U, -1, 0, k)
        Vh = ops.narrow(Vh, -2, 0, k)
        gU = ops.narrow(gU, -1, 0, k)
        gVh = ops.narrow(gVh, -2, 0, k)
    if not has_u and not has_v:
        if m >= n:
            return ops.matmul(U, ops.unsqueeze(gS, -1) * Vh)
        return ops.matmul(U * ops.unsqueeze(gS, -2), Vh)
    eye = _eye_for(ops, _data_like(U, S), k)
    S2 = S * S
    E = ops.unsqueeze(S2, -2) - ops.unsqueeze(S2, -1) + eye
    with np.errstate(divide="ignore", invalid="ignore"):
        if has_u:
            UhgU = ops.matmul(_mH(ops, U), gU)
            UhgU = UhgU - _mH(ops, UhgU)
        if has_v:
            VhgV = ops.matmul(Vh, _mH(ops, gVh))
            VhgV = VhgV - _mH(ops, VhgV)
        if has_u and has_v:
            gA = (UhgU * ops.unsqueeze(S, -2) + ops.unsqueeze(S, -1) * VhgV) / E
        elif has_u:
            gA = (UhgU / E) * ops.unsqueeze(S, -2)
        else:
            gA = ops.unsqueeze(S, -1) * (VhgV / E)
        gA = gA + ops.diag_embed(gS)
        if _array_dtype(A).kind == "c":
            _check_svd_phase(UhgU if has_u else None, VhgV if has_v else None)
            if has_u:  # (+ i Im(diag(U^H gU)) / S: the skew part's diagonal is 2i Im(...))
                gA = gA + ops.diag_embed(ops.imag(ops.diagonal(UhgU, 0, -2, -1)) / (S * 2) * 1j)
        if m > n and has_u:
            gA = ops.matmul(U, gA)
            gUSinv = gU / ops.unsqueeze(S, -2)
            gA = gA + gUSinv - ops.matmul(U, ops.matmul(_mH(ops, U), gUSinv))
            return ops.matmul(gA, Vh)
        if m < n and has_v:
            gA = ops.matmul(gA, Vh)
            SinvgVh = gVh / ops.unsqueeze(S, -1)
            gA = gA + SinvgVh - ops.matmul(ops.matmul(SinvgVh, _mH(ops, Vh)), Vh)
            return ops.matmul(U, gA)
    if m >= n:
        return ops.matmul(U, ops.matmul(gA, Vh))
    return ops.matmul(ops.matmul(U, gA), Vh)


def _check_svd_phase(UhgU: Any, VhgV: Any) -> None:
    """PyTorch's refusal of a loss that depends on the phases of complex singular vectors:
    the imaginary parts of the diagonals of ``skew(U^H gU)`` and ``-skew(V^H gV)`` differ
    (a missing gradient counts as zeros)."""
    u_side = _imag_diagonal(UhgU)
    v_side = _imag_diagonal(VhgV)
    if u_side is None:
        u_side = np.zeros_like(v_side)
    v_side = np.zeros_like(u_side) if v_side is None else -v_side
    if not np.allclose(u_side, v_side, rtol=1e-2, atol=1e-2):
        raise RuntimeError(
            "svd_backward: The singular vectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this phase "
            "term, making it ill-defined.")


def _imag_diagonal(X: Any) -> np.ndarray | None:
    if X is None:
        return None
    return np.imag(np.diagonal(_data(X), axis1=-2, axis2=-1))


@op("LinalgQrBackward0", inputs=("A",), num_outputs=2, complex_ok=True)
def _linalg_qr(A, mode="reduced"):
    m, n = A.shape[-2:]
    if A.size == 0:
        k = builtins.min(m, n)
        qcols = m if mode == "complete" else k
        rrows = m if mode == "complete" else k
        batch = A.shape[:-2]
        Q = _column_major(np.broadcast_to(np.eye(m, qcols, dtype=A.dtype), batch + (m, qcols)))
        if mode == "r":
            Q = np.zeros((0,), dtype=A.dtype)
        return Q, _column_major(np.zeros(batch + (rrows, n), dtype=A.dtype))
    if mode == "r":
        R = np.linalg.qr(A, mode="r")
        return np.zeros((0,), dtype=A.dtype), _column_major(R.astype(A.dtype))
    Q, R = np.linalg.qr(A, mode=mode)
    return _column_major(Q.astype(A.dtype)), _column_major(R.astype(A.dtype))


@_linalg_qr.derivative("A")
def _(ops, grads, A, mode):
    gQ, gR = grads
    Q, R = ops.qr(A, mode)
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
            "through linalg.qr.")
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    has_q, has_r = bool(np.any(_data(gQ))), bool(np.any(_data(gR)))
    if has_q and has_r:
        gA = ops.matmul(gR, _mH(ops, R)) - ops.matmul(_mH(ops, Q), gQ)
    elif has_q:
        gA = -ops.matmul(_mH(ops, Q), gQ)
    else:
        gA = ops.matmul(gR, _mH(ops, R))
    if m >= n:
        X = ops.triu(gA)
        eye = _eye_for(ops, _data_like(Q, X), X.shape[-1])
        sym = X + _mH(ops, X)
        sym = sym - ops.mul(sym * eye, 0.5)
        gA = ops.matmul(Q, sym)
        if has_q:
            gA = gA + gQ
        return ops.solve_triangular(_mH(ops, R), gA, False, False, False)
    # The lower triangle of the skew-Hermitian -gA + gA^H, its diagonal (2i Im, zero for real
    # matrices) halved.
    skew = ops.tril(_mH(ops, gA) - gA)
    eye = _eye_for(ops, _data_like(Q, skew), m)
    skew = skew - ops.mul(skew * eye, 0.5)
    gA = ops.matmul(Q, skew)
    gA = ops.solve_triangular(_mH(ops, ops.narrow(R, -1, 0, m)), gA, False, False, False)
    zeros = ops.zeros_like(ops.narrow(R, -1, 0, n - m))
    gA = ops.cat([gA, zeros], -1)
    if has_r:
        gA = gA + ops.matmul(Q, gR)
    return gA


# ----------------------------------------------------------------------------------------------
# Pseudo-inverse, matrix exponential, cross product

def _tolerances(A: np.ndarray, atol: Any, rtol: Any) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's ``get_atol_rtol``: atol defaults to 0, rtol to eps * max(m, n) unless a
    positive atol is given."""
    atol_a = np.zeros((), np.float64) if atol is None else np.asarray(atol, np.float64)
    if rtol is not None:
        return atol_a, np.asarray(rtol, np.float64)
    eps = np.finfo(np.real(A).dtype).eps
    default = np.asarray(eps * builtins.max(A.shape[-1], A.shape[-2]), np.float64)
    if atol is None:
        return atol_a, default
    return atol_a, np.where(atol_a > 0, 0.0, default)


@op("LinalgPinvBackward0", tensor_params=("atol", "rtol"), complex_ok=True)
def _linalg_pinv(self, atol=None, rtol=None, hermitian=False):
    m, n = self.shape[-2:]
    if self.size == 0:
        return np.zeros(self.shape[:-2] + (n, m), dtype=self.dtype)
    atol_a, rtol_a = _tolerances(self, atol, rtol)
    with np.errstate(divide="ignore"):
        if not hermitian:
            U, S, Vh = np.linalg.svd(self, full_matrices=False)
            tol = np.maximum(atol_a[..., None], rtol_a[..., None] * S[..., :1])
            S_inv = np.where(S > tol, 1 / S, 0).astype(self.dtype)
            out = (_mT(Vh).conj() * S_inv[..., None, :]) @ _mT(U).conj()
        else:
            S, U = np.linalg.eigh(self)
            S_abs = np.abs(S)
            tol = np.maximum(atol_a[..., None], rtol_a[..., None] * S_abs.max(-1, keepdims=True))
            S_inv = np.where(S_abs > tol, 1 / S, 0).astype(self.dtype)
            out = (U * S_inv[..., None, :]) @ _mT(U).conj()
    return np.ascontiguousarray(out.astype(self.dtype))


@_linalg_pinv.derivative("self")
def _(ops, grad, self, result):
    return _pinv_backward(ops, grad, result, self)


def _pinv_backward(ops: Any, grad: Any, pinvA: Any, A: Any) -> Any:
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = _mH(ops, pinvA)
    gradh = _mH(ops, grad)
    if m <= n:
        K = ops.matmul(gradh, pinvA)
        KpinvAh = ops.matmul(K, pinvAh)
        return (-_mH(ops, ops.matmul(pinvA, K)) + KpinvAh
                - ops.matmul(ops.matmul(A, pinvA), KpinvAh)
                + ops.matmul(ops.matmul(pinvAh, pinvA), gradh - ops.matmul(K, A)))
    K = ops.matmul(pinvA, gradh)
    pinvAhK = ops.matmul(pinvAh, K)
    return (-_mH(ops, ops.matmul(K, pinvA))
            + ops.matmul(ops.matmul(gradh - ops.matmul(A, K), pinvA), pinvAh) + pinvAhK
            - ops.matmul(ops.matmul(pinvAhK, pinvA), A))


@op("LinalgMatrixExpBackward0", complex_ok=True)
def _linalg_matrix_exp(self):
    return _matrix_exp_arrays(self)


@_linalg_matrix_exp.derivative("self")
def _(ops, grad, self):
    # The adjoint of the differential: the top-right block of exp([[A^H, G], [0, A^H]]).
    n = self.shape[-1]
    A_h = _mH(ops, self)
    top = ops.cat([A_h, grad], -1)
    bottom = ops.cat([ops.zeros_like(A_h), A_h], -1)
    big = ops.matrix_exp(ops.cat([top, bottom], -2))
    return ops.narrow(ops.narrow(big, -2, 0, n), -1, n, n)


@op("LinalgCrossBackward0", inputs=("self", "other"), half_native=True, complex_ok=True)
def _linalg_cross(self, other, dim=-1):
    return np.ascontiguousarray(np.cross(self, other, axis=dim), dtype=np.result_type(self, other))


@_linalg_cross.derivative("self")
def _(ops, grad, other, dim):
    return ops.cross(ops.conj(other), grad, dim)


@_linalg_cross.derivative("other")
def _(ops, grad, self, dim):
    return ops.cross(grad, ops.conj(self), dim)


def _lstsq_arrays(A: np.ndarray, B: np.ndarray, rcond: Any, driver: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Least squares per matrix (batches broadcast): the minimum-norm solution, the residuals
    (squared column norms of ``A X - B``, when ``m > n``, A has full rank and the driver
    computes them), the rank and the singular values (for the drivers that report them)."""
    vector = B.ndim == A.ndim - 1
    rhs = B[..., None] if vector else B
    m, n = A.shape[-2:]
    k = rhs.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], rhs.shape[:-2])
    A_b = np.broadcast_to(A, batch + (m, n)).reshape(-1, m, n)
    B_b = np.broadcast_to(rhs, batch + (m, k)).reshape(-1, m, k)
    count = A_b.shape[0]
    dtype = A.dtype
    X = np.zeros((count, n, k), dtype=dtype)
    ranks = np.zeros(count, dtype=np.int64)
    svals = np.zeros((count, builtins.min(m, n)), dtype=np.real(A).dtype)
    cond = rcond if rcond is not None else np.finfo(np.real(A).dtype).eps * builtins.max(m, n)
    for i in range(count):
        if m == 0 or n == 0:
            break
        x, _, rank, sv = np.linalg.lstsq(A_b[i], B_b[i], rcond=cond)
        X[i], ranks[i], svals[i] = x, rank, sv
    X = X.reshape(batch + (n, k))
    residuals = np.zeros((0,), dtype=np.real(A).dtype)
    full_rank = bool(np.all(ranks == n))
    if m > n and driver != "gelsy" and full_rank and count:
        r = (A_b @ X.reshape(-1, n, k) - B_b).reshape(batch + (m, k))
        residuals = np.sum(np.abs(r) ** 2, axis=-2).astype(np.real(A).dtype)
    # (LAPACK writes the solution over B, padded to max(m, n) rows: a column-major view)
    rows = builtins.max(m, n)
    buffer = _column_major(np.zeros(batch + (rows, k), dtype=dtype))
    buffer[..., :n, :] = X
    X = buffer[..., :n, :]
    if vector:
        X = X[..., 0]
    rank_out = ranks.reshape(batch) if driver != "gels" else np.zeros((0,), np.int64)
    svals_out = (svals.reshape(batch + (builtins.min(m, n),)) if driver in ("gelsd", "gelss")
                 else np.zeros((0,), dtype=np.real(A).dtype))
    return X, residuals, rank_out, svals_out


@op("LinalgLstsqBackward0", inputs=("self", "b"), num_outputs=2, complex_ok=True)
def _linalg_lstsq(self, b, rcond=None, driver="gelsy"):
    X, residuals, _, _ = _lstsq_arrays(self, b, rcond, driver)
    return X, residuals


@_linalg_lstsq.derivative("self")
def _(ops, grads, self, b, result):
    # PyTorch's linalg_lstsq_backward: the solution's gradient through pinv(A) (pinv_backward of
    # gX B^H), the residuals' (when computed) 2 (gL r) X^H with r = A X - B.
    gX, gL = grads
    vector = len(b.shape) == len(self.shape) - 1
    B = ops.unsqueeze(b, -1) if vector else b
    X = ops.unsqueeze(result, -1) if vector else result
    out = None
    if np.any(_data(gX)):
        gX_m = ops.unsqueeze(gX, -1) if vector else gX
        pinvA = ops.pinv(self)
        out = _pinv_backward(ops, ops.matmul(gX_m, _mH(ops, B)), pinvA, self)
    if _data(gL).size and np.any(_data(gL)):
        r = ops.matmul(self, X) - B
        gL_m = ops.unsqueeze(ops.unsqueeze(gL, -1), -2) if vector else ops.unsqueeze(gL, -2)
        term = ops.mul(ops.matmul(gL_m * r, _mH(ops, X)), 2.0)
        out = term if out is None else out + term
    return ops.zeros_like(self) if out is None else out


@_linalg_lstsq.derivative("b")
def _(ops, grads, self, b, result):
    gX, gL = grads
    vector = len(b.shape) == len(self.shape) - 1
    B = ops.unsqueeze(b, -1) if vector else b
    X = ops.unsqueeze(result, -1) if vector else result
    out = None
    if np.any(_data(gX)):
        gX_m = ops.unsqueeze(gX, -1) if vector else gX
        out = ops.matmul(_mH(ops, ops.pinv(self)), gX_m)
        if vector:
            out = out[..., 0]
    if _data(gL).size and np.any(_data(gL)):
        r = ops.matmul(self, X) - B
        gL_m = ops.unsqueeze(ops.unsqueeze(gL, -1), -2) if vector else ops.unsqueeze(gL, -2)
        term = ops.mul(gL_m * r, -2.0)
        if vector:
            term = term[..., 0]
        out = term if out is None else out + term
    return ops.zeros_like(b) if out is None else out


# ----------------------------------------------------------------------------------------------
# General eigendecomposition (complex results)

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128),
               np.dtype(np.complex64): np.dtype(np.complex64),
               np.dtype(np.complex128): np.dtype(np.complex128)}


@op("LinalgEigBackward0", inputs=("self",), num_outputs=2, complex_ok=True)
def _linalg_eig(self):
    complex_dtype = _COMPLEX_OF[self.dtype]
    if self.shape[-1] == 0:
        return (np.zeros(self.shape[:-1], dtype=complex_dtype),
                np.zeros(self.shape, dtype=complex_dtype))
    L, V = np.linalg.eig(self)
    return L.astype(complex_dtype), _column_major(V.astype(complex_dtype))


@_linalg_eig.derivative("self")
def _(ops, grads, self):
    # gA = V^{-H} (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)) V^H, with
    # E_ij = L_j - L_i (PyTorch's linalg_eig_backward); a real A takes the real part.
    gL, gV = grads
    L, V = ops.eig(self)
    V_h = _mH(ops, V)
    if not np.any(_data(gV)):
        return ops.solve(V_h, ops.unsqueeze(gL, -1) * V_h)
    VhgV = ops.matmul(V_h, gV)
    diag = np.diagonal(_data(VhgV), axis1=-2, axis2=-1)
    if not np.allclose(np.imag(diag), 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError(
            "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined.")
    n = L.shape[-1]
    eye = _constant(V, np.eye(n, dtype=_array_dtype(V)))
    real_diag = ops.real(ops.sum(VhgV * eye, -1, False))
    VhgV = VhgV - ops.matmul(V_h, V * ops.unsqueeze(real_diag, -2))
    L_conj = ops.conj(L)
    E = ops.unsqueeze(L_conj, -2) - ops.unsqueeze(L_conj, -1) + eye
    with np.errstate(divide="ignore", invalid="ignore"):
        gA = (VhgV / E) * (1 - eye) + ops.diag_embed(gL)
    return ops.solve(V_h, ops.matmul(gA, V_h))


# ----------------------------------------------------------------------------------------------
# Householder products

def _householder_arrays(A: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^H`` (v_i: column
    i of A below the diagonal, 1 on it), as LAPACK's orgqr."""
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    batch = np.broadcast_shapes(A.shape[:-2], tau.shape[:-1])
    Q = np.broadcast_to(np.eye(m, dtype=A.dtype), batch + (m, m)).copy()
    V = np.tril(A, -1) + np.eye(m, n, dtype=A.dtype)
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i, None, None] * (v @ (np.conj(_mT(v)) @ Q))
    return _column_major(Q[..., :, :n])


def _householder_grads(ops: Any, grad: Any, A: Any, tau: Any) -> tuple[Any, Any]:
    """Gradients of the product of reflectors in A and tau, through the chain
    ``Q = H_1 ... H_k``: ``gH_i = (H_1..H_{i-1})^H G (H_{i+1}..H_k)^H`` with G the gradient
    padded to m columns, then through ``H_i = I - tau_i v_i v_i^H``: ``g_tau_i = -v_i^H gH_i v_i``
    and ``g_v_i = -(conj(tau_i) gH_i + tau_i gH_i^H) v_i``."""
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    eye_m = _constant(A, np.eye(m, dtype=_array_dtype(A)))
    V = ops.tril(A, -1) + _constant(A, np.eye(m, n, dtype=_array_dtype(A)))
    vs = [ops.narrow(V, -1, i, 1) for i in range(k)]
    taus = [ops.unsqueeze(ops.narrow(tau, -1, i, 1), -1) for i in range(k)]
    H = [eye_m - t * ops.matmul(v, _mH(ops, v)) for v, t in zip(vs, taus, strict=True)]
    if m > n:
        pad = ops.zeros_like(ops.narrow(ops.narrow(H[0], -1, 0, m - n), -2, 0, m))
        G = ops.cat([grad, pad + ops.zeros_like(ops.narrow(grad, -1, 0, 1))], -1)
    else:
        G = grad
    prefix = [eye_m]
    for i in range(k - 1):
        prefix.append(ops.matmul(prefix[-1], H[i]))
    suffix = [eye_m]
    for i in range(k - 1, 0, -1):
        suffix.append(ops.matmul(H[i], suffix[-1]))
    suffix.reverse()
    v_grads, tau_grads = [], []
    for i in range(k):
        gH = ops.matmul(ops.matmul(_mH(ops, prefix[i]), G), _mH(ops, suffix[i]))
        v = vs[i]
        tau_grads.append(-ops.sum(ops.conj(v) * ops.matmul(gH, v), (-2, -1), False))
        v_grads.append(-ops.matmul(ops.conj(taus[i]) * gH + taus[i] * _mH(ops, gH), v))
    if n > k:
        v_grads.append(ops.zeros_like(ops.narrow(A, -1, k, n - k)))
    A_grad = ops.tril(ops.cat(v_grads, -1), -1) if v_grads else ops.zeros_like(A)
    tau_grad = ops.stack(tau_grads, -1) if tau_grads else ops.zeros_like(tau)
    return A_grad, tau_grad


@op("LinalgHouseholderProductBackward0", inputs=("input", "tau"), complex_ok=True)
def _linalg_householder_product(input, tau):  # noqa: A002 - PyTorch's name
    return _householder_arrays(input, tau)


@_linalg_householder_product.derivative("input")
def _(ops, grad, input, tau):  # noqa: A002
    return _householder_grads(ops, grad, input, tau)[0]


@_linalg_householder_product.derivative("tau")
def _(ops, grad, input, tau):  # noqa: A002
    return _householder_grads(ops, grad, input, tau)[1]


# ----------------------------------------------------------------------------------------------
# LDL (Bunch-Kaufman), which PyTorch does not differentiate

_BK_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _sytf2_lower(A: np.ndarray, hermitian: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK's unblocked ``sytf2``/``hetf2`` (lower) on one matrix: ``A = L D L^T``
    (``L D L^H``) with Bunch-Kaufman pivoting; 1-based pivots, negative for 2x2 blocks."""
    a = np.tril(np.array(A, copy=True))
    n = a.shape[-1]
    conj = np.conj if hermitian else (lambda x: x)
    # (LAPACK's complex routines compare |re| + |im|, not the modulus)
    mag = (lambda x: np.abs(np.real(x)) + np.abs(np.imag(x))) if a.dtype.kind == "c" \
        else np.abs
    pivots = np.zeros(n, dtype=np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(np.real(a[k, k])) if hermitian else mag(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(mag(a[k + 1:, k])))
            colmax = mag(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if builtins.max(absakk, colmax) == 0 or np.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
        else:
            if absakk >= _BK_ALPHA * colmax:
                kp = k
            else:
                rowmax = np.max(mag(a[imax, k:imax]))
                if imax < n - 1:
                    rowmax = builtins.max(rowmax, np.max(mag(a[imax + 1:, imax])))
                diag_imax = abs(np.real(a[imax, imax])) if hermitian else mag(a[imax, imax])
                if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag_imax >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp = imax
                    kstep = 2
            kk = k + kstep - 1
            if kp != kk:
                if kp < n - 1:
                    col = a[kp + 1:, kk].copy()
                    a[kp + 1:, kk] = a[kp + 1:, kp]
                    a[kp + 1:, kp] = col
                segment = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = conj(segment)
                if hermitian:
                    a[kp, kk] = np.conj(a[kp, kk])
                diag = a[kk, kk]
                a[kk, kk] = a[kp, kp]
                a[kp, kp] = diag
                if kstep == 2:
                    off = a[k + 1, k]
                    a[k + 1, k] = a[kp, k]
                    a[kp, k] = off
            if kstep == 1:
                if k < n - 1:
                    r1 = 1.0 / (np.real(a[k, k]) if hermitian else a[k, k])
                    col = a[k + 1:, k].copy()
                    update = r1 * np.outer(col, conj(col))
                    a[k + 1:, k + 1:] -= np.tril(update)
                    a[k + 1:, k] = col * r1
            elif k < n - 2:
                d21 = a[k + 1, k]
                if hermitian:
                    d = abs(d21)
                    d11 = np.real(a[k + 1, k + 1]) / d
                    d22 = np.real(a[k, k]) / d
                    tt = 1.0 / (d11 * d22 - 1.0)
                    d21 = d21 / d
                    d = tt / d
                    for j in range(k + 2, n):
                        wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
                        wkp1 = d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
                        a[j:, j] -= a[j:, k] * np.conj(wk) + a[j:, k + 1] * np.conj(wkp1)
                        a[j, k] = wk
                        a[j, k + 1] = wkp1
                        a[j, j] = np.real(a[j, j])
                else:
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    tt = 1.0 / (d11 * d22 - 1.0)
                    d21 = tt / d21
                    for j in range(k + 2, n):
                        wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                        wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
                        a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
                        a[j, k] = wk
                        a[j, k + 1] = wkp1
        if kstep == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += kstep
    return a, pivots, info


def ldl_factor_arrays(A: np.ndarray, hermitian: bool
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sytrf``/``hetrf`` (lower) on a batch: compact LD, pivots and info."""
    *batch, n, _ = A.shape
    flat = A.reshape((-1, n, n) if A.size else (int(np.prod(batch)), n, n))
    LD = np.zeros_like(flat)
    pivots = np.zeros((flat.shape[0], n), dtype=np.int32)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in range(flat.shape[0]):
            LD[i], pivots[i], info[i] = _sytf2_lower(flat[i], hermitian)
    return (_column_major(LD.reshape(*batch, n, n)), pivots.reshape(*batch, n),
            info.reshape(batch))


def _ldl_solve_arrays(LD: np.ndarray, pivots: np.ndarray, B: np.ndarray,
                      hermitian: bool) -> np.ndarray:
    """LAPACK's ``sytrs``/``hetrs`` (lower): ``A X = B`` from A's LDL factorisation."""
    n = LD.shape[-1]
    batch = np.broadcast_shapes(LD.shape[:-2], B.shape[:-2], pivots.shape[:-1])
    LDb = np.broadcast_to(LD, batch + (n, n)).reshape(-1, n, n)
    pivb = np.broadcast_to(pivots, batch + (n,)).reshape(-1, n)
    X = np.array(np.broadcast_to(B, batch + B.shape[-2:]), dtype=np.result_type(LD, B))
    X = X.reshape(-1, n, B.shape[-1])
    conj = np.conj if hermitian else (lambda x: x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for b in range(X.shape[0]):
            a, ipiv, x = LDb[b], pivb[b], X[b]
            k = 0
            while k < n:
                if ipiv[k] > 0:
                    kp = ipiv[k] - 1
                    if kp != k:
                        x[[k, kp]] = x[[kp, k]]
                    if k < n - 1:
                        x[k + 1:] -= np.outer(a[k + 1:, k], x[k])
                    x[k] = x[k] / (np.real(a[k, k]) if hermitian else a[k, k])
                    k += 1
                else:
                    kp = -ipiv[k] - 1
                    if kp != k + 1:
                        x[[k + 1, kp]] = x[[kp, k + 1]]
                    if k < n - 2:
                        x[k + 2:] -= np.outer(a[k + 2:, k], x[k])
                        x[k + 2:] -= np.outer(a[k + 2:, k + 1], x[k + 1])
                    akm1k = a[k + 1, k]
                    akm1 = a[k, k] / conj(akm1k)
                    ak = a[k + 1, k + 1] / akm1k
                    denom = akm1 * ak - 1.0
                    bkm1 = x[k] / conj(akm1k)
                    bk = x[k + 1] / akm1k
                    x[k] = (ak * bkm1 - bk) / denom
                    x[k + 1] = (akm1 * bk - bkm1) / denom
                    k += 2
            k = n - 1
            while k >= 0:
                if ipiv[k] > 0:
                    if k < n - 1:
                        x[k] -= conj(a[k + 1:, k]) @ x[k + 1:]
                    kp = ipiv[k] - 1
                    if kp != k:
                        x[[k, kp]] = x[[kp, k]]
                    k -= 1
                else:
                    if k < n - 1:
                        x[k] -= conj(a[k + 1:, k]) @ x[k + 1:]
                        x[k - 1] -= conj(a[k + 1:, k - 1]) @ x[k + 1:]
                    kp = -ipiv[k] - 1
                    if kp != k:
                        x[[k, kp]] = x[[kp, k]]
                    k -= 2
    return _column_major(X.reshape(batch + B.shape[-2:]))


@op("NotImplemented", tensor_params=("pivots",))
def _linalg_ldl_factor_ex(self, hermitian=False, LD=None, pivots=None):
    return np.array(LD, copy=True)


@op("NotImplemented", inputs=("LD", "B"), tensor_params=("pivots",))
def _linalg_ldl_solve(LD, pivots, B, hermitian=False):
    return _ldl_solve_arrays(LD, pivots, B, hermitian)


_not_implemented_node(_linalg_ldl_factor_ex, "linalg_ldl_factor_ex")
_not_implemented_node(_linalg_ldl_solve, "linalg_ldl_solve")


# ----------------------------------------------------------------------------------------------
# LU

def lu_unpack_arrays(LU: np.ndarray, pivots: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``P, L, U`` from LAPACK's packed LU and 1-based pivots (A = P L U)."""
    m, n = LU.shape[-2:]
    k = builtins.min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
    U = np.triu(LU[..., :k, :])
    batch = LU.shape[:-2]
    perm = np.broadcast_to(np.arange(m), batch + (m,)).copy().reshape(-1, m)
    piv = np.asarray(pivots).reshape(-1, k) - 1
    rows = np.arange(perm.shape[0])
    for j in range(k):
        target = piv[:, j]
        row_j = perm[rows, j].copy()
        perm[rows, j] = perm[rows, target]
        perm[rows, target] = row_j
    # A = P L U: row i of L U is row perm[i] of A, so P[perm[i], i] = 1
    P = np.zeros((perm.shape[0], m, m), dtype=LU.dtype)
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1
    return P.reshape(batch + (m, m)), L, U


def _unpack_ops(ops: Any, LU: Any, pivots: np.ndarray) -> tuple[Any, Any, Any]:
    """``P`` (a constant), ``L`` and ``U`` from LU with the ops (differentiable in LU)."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    P = lu_unpack_arrays(np.zeros(_data(LU).shape, _array_dtype(LU)), _data(pivots))[0]
    eye = _constant(LU, np.eye(m, k, dtype=_array_dtype(LU)))
    L = ops.tril(ops.narrow(LU, -1, 0, k), -1) + eye
    U = ops.triu(ops.narrow(LU, -2, 0, k))
    return _constant(LU, P), L, U


def _lu_backward(ops: Any, L_grad: Any, U_grad: Any, P: Any, L: Any, U: Any) -> Any:
    """PyTorch's linalg_lu_backward (pivoted): the gradient of A = P L U from those of L, U."""
    m, n = L.shape[-2], U.shape[-1]
    k = builtins.min(m, n)
    if m == n:
        A_grad = ops.tril(ops.matmul(_mH(ops, L), L_grad), -1) \
            + ops.triu(ops.matmul(U_grad, _mH(ops, U)))
        A_grad = ops.solve_triangular(_mH(ops, U), A_grad, False, False, False)
        A_grad = ops.solve_triangular(_mH(ops, L), A_grad, True, True, True)
        return ops.matmul(P, A_grad)
    if m < n:
        U1 = ops.narrow(U, -1, 0, k)
        A_grad = ops.matmul(_mH(ops, L), L_grad) - ops.matmul(ops.triu(U_grad), _mH(ops, U))
        A_grad = ops.solve_triangular(_mH(ops, U1), ops.tril(A_grad, -1), False, False, False)
        A_grad = ops.cat([A_grad + ops.triu(ops.narrow(U_grad, -1, 0, k)),
                          ops.narrow(U_grad, -1, k, n - k)], -1)
        A_grad = ops.solve_triangular(_mH(ops, L), A_grad, True, True, True)
        return ops.matmul(P, A_grad)
    L1 = ops.narrow(L, -2, 0, k)
    A_grad = ops.matmul(U_grad, _mH(ops, U)) - ops.matmul(_mH(ops, L), ops.tril(L_grad, -1))
    A_grad = ops.solve_triangular(_mH(ops, L1), ops.triu(A_grad), True, True, True)
    A_grad = ops.cat([A_grad + ops.tril(ops.narrow(L_grad, -2, 0, k), -1),
                      ops.narrow(L_grad, -2, k, m - k)], -2)
    A_grad = ops.solve_triangular(_mH(ops, U), A_grad, False, False, False)
    return ops.matmul(P, A_grad)


@op("LinalgLuFactorExBackward0", inputs=("A",), tensor_params=("pivots",), complex_ok=True)
def _linalg_lu_factor_ex(A, pivots):
    """The packed LU (the public function computed ``pivots`` from the same factorisation)."""
    return _column_major(lu_factor_arrays(A)[0])


@_linalg_lu_factor_ex.derivative("A")
def _(ops, grad, pivots, result):
    P, L, U = _unpack_ops(ops, result, pivots)
    m, n = result.shape[-2], result.shape[-1]
    k = builtins.min(m, n)
    return _lu_backward(ops, ops.narrow(grad, -1, 0, k), ops.narrow(grad, -2, 0, k), P, L, U)


@op("LinalgLuBackward0", inputs=("A",), num_outputs=2, complex_ok=True)
def _linalg_lu(A, pivot=True):
    LU, pivots, _ = lu_factor_arrays(A)
    _, L, U = lu_unpack_arrays(LU, pivots)
    return np.ascontiguousarray(L), np.ascontiguousarray(U)


@_linalg_lu.derivative("A")
def _(ops, grads, A, pivot):
    L_grad, U_grad = grads
    P, L, U = ops.lu(A)
    return _lu_backward(ops, L_grad, U_grad, P, L, U)


def _lu_solve_arrays(LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, left: bool,
                     adjoint: bool) -> np.ndarray:
    """``A X = B`` with ``A = P L U`` given packed (``adjoint``: ``A^H X = B``; not ``left``:
    ``X A = B``)."""
    # As LAPACK's getrs: a permutation and two triangular solves with the factors given (a zero
    # on U's diagonal gives inf/NaN, no error; A = P L U is never formed and refactored).
    P, L, U = lu_unpack_arrays(LU, pivots)
    if left:
        X = _lu_solve_left(P, L, U, B, "H" if adjoint else "N")
        return _column_major(X)
    # X A = B: A^T X^T = B^T; X A^H = B: A X^H = B^H
    X = _lu_solve_left(P, L, U, np.conj(_mT(B)) if adjoint else _mT(B), "N" if adjoint else "T")
    return np.ascontiguousarray(np.conj(_mT(X)) if adjoint else _mT(X))


def _lu_solve_left(P: np.ndarray, L: np.ndarray, U: np.ndarray, rhs: np.ndarray,
                   trans: str) -> np.ndarray:
    """``op(A) X = rhs`` for ``A = P L U``; ``trans`` "N": op(A) = A, "T": A^T, "H": A^H."""
    if trans == "N":  # X = U^-1 L^-1 P^T rhs
        y = _mT(P) @ rhs
        y = _triangular_arrays(L, y, upper=False, left=True, unitriangular=True)
        return _triangular_arrays(U, y, upper=True, left=True, unitriangular=False)
    conj = np.conj if trans == "H" else (lambda a: a)
    # op(A) = op(U) op(L) P^T: X = P op(L)^-1 op(U)^-1 rhs
    y = _triangular_arrays(conj(_mT(U)), rhs, upper=False, left=True, unitriangular=False)
    y = _triangular_arrays(conj(_mT(L)), y, upper=True, left=True, unitriangular=True)
    return P @ y


@op("LinalgLuSolveBackward0", inputs=("LU", "B"), tensor_params=("pivots",), complex_ok=True)
def _linalg_lu_solve(LU, pivots, B, left=True, adjoint=False):
    return _lu_solve_arrays(LU, pivots, B, left, adjoint)


@_linalg_lu_solve.derivative("B")
def _(ops, grad, LU, pivots, left, adjoint):
    return ops.lu_solve(LU, pivots, grad, left, not adjoint)


@_linalg_lu_solve.derivative("LU")
def _(ops, gX, LU, pivots, left, adjoint, result):
    X = result
    P, L, U = _unpack_ops(ops, LU, pivots)
    if left != adjoint:
        gR = ops.solve_triangular(
            _mH(ops, U), -ops.matmul(gX if left else _mH(ops, gX), _mH(ops, X) if left else X),
            False, True, False)
        gL = ops.tril(ops.solve_triangular(_mH(ops, L), ops.matmul(gR, _mH(ops, U)),
                                           True, True, True), -1)
        return gL + ops.triu(gR)
    gR = -ops.matmul(ops.matmul(ops.matmul(ops.transpose(P, -2, -1), X if left else _mH(ops, X)),
                                _mH(ops, gX) if left else gX), P)
    gR = ops.solve_triangular(_mH(ops, L), gR, True, False, True)
    gU = ops.triu(ops.solve_triangular(_mH(ops, U), ops.matmul(_mH(ops, L), gR),
                                       False, False, False))
    return ops.tril(gR, -1) + gU


# ----------------------------------------------------------------------------------------------
# The public functions (torch.linalg's, and torch's own names for some)

def _linalg_type(name: str, fields: tuple[str, ...]) -> Any:
    return return_types._make(name, fields)


linalg_slogdet_type = _linalg_type("linalg_slogdet", ("sign", "logabsdet"))
slogdet_type = _linalg_type("slogdet", ("sign", "logabsdet"))
linalg_inv_ex_type = _linalg_type("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex_type = _linalg_type("linalg_solve_ex", ("result", "info"))
linalg_cholesky_ex_type = _linalg_type("linalg_cholesky_ex", ("L", "info"))
linalg_eigh_type = _linalg_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd_type = _linalg_type("linalg_svd", ("U", "S", "Vh"))
linalg_qr_type = _linalg_type("linalg_qr", ("Q", "R"))
svd_type = _linalg_type("svd", ("U", "S", "V"))
qr_type = _linalg_type("qr", ("Q", "R"))
lu_with_info_type = _linalg_type("_lu_with_info", ("LU", "pivots", "info"))
lu_unpack_type = _linalg_type("lu_unpack", ("P", "L", "U"))


def linalg_det(A: Tensor) -> Tensor:
    """The determinant of each square matrix of ``A`` (``LinalgDetBackward0``).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.det(torch.tensor([[2., 0.], [0., 3.]]))
        tensor(6.)
    """
    _check_square(A, "linalg.det")
    _check_float(A, "linalg.det")
    _check_kernel(A, "lu_cpu")
    return _linalg_det(A)


@tensor_method
def det(input: Tensor) -> Tensor:
    """The determinant (``torch.det``: :func:`chainrule.linalg.det`)."""
    return linalg_det(input)


def _slogdet(A: Tensor, result_type: Any, fname: str = "linalg.slogdet") -> Any:
    _check_square(A, fname)
    _check_float(A, fname)
    _check_low_precision(A, fname)
    sign, logabs = _linalg_slogdet(A)
    return result_type((sign, logabs))


def linalg_slogdet(A: Tensor) -> Any:
    """``(sign, logabsdet)`` of the determinant of each square matrix of ``A``."""
    return _slogdet(A, linalg_slogdet_type)


@tensor_method
def slogdet(input: Tensor) -> Any:
    """``(sign, logabsdet)`` (``torch.slogdet``)."""
    return _slogdet(input, slogdet_type)


@tensor_method
def logdet(input: Tensor) -> Tensor:
    """The log-determinant: ``log(det)``, NaN for a negative determinant (PyTorch's
    composition from slogdet: ``where(sign == -1, nan, logabsdet)``)."""
    _check_square(input, "logdet")
    _check_float(input, "logdet")
    _check_low_precision(input, "logdet")
    sign, logabs = _linalg_slogdet(input)
    if input._data.dtype.kind == "c":
        return pointwise.log(sign) + logabs
    return pointwise.where(sign == -1, math.nan, logabs)


def _inv_checks(A: Tensor) -> None:
    _check_square(A, "linalg.inv")
    _check_float(A, "linalg.inv")
    _check_low_precision(A, "linalg.inv")


def linalg_inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """``(inverse, info)``: the inverse of each square matrix and LAPACK's ``info`` (0, or the
    index of the zero pivot of a singular matrix, whose ``inverse`` is NaN here)."""
    _inv_checks(A)
    inverse = _linalg_inv_ex(A)
    info = wrap(_lu_info(A._data, inverse._data, A._data.shape[:-2]))
    if check_errors:
        _raise_inv(info, "linalg.inv_ex")
    return linalg_inv_ex_type((inverse, info))


def _raise_inv(info: Tensor, fname: str = "linalg.inv") -> None:
    failure = _first_failure(info._data)
    if failure is not None:
        index, value = failure
        raise LinAlgError(
            f"{fname}: {_batch_prefix(index, info._data.ndim > 0)}The diagonal element "
            f"{value} is zero, the inversion could not be completed because the input matrix "
            "is singular.")


def linalg_inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix of ``A`` (``LinalgInvExBackward0``); a singular
    matrix raises ``LinAlgError``.

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.inv(torch.tensor([[2., 0.], [0., 4.]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    _inv_checks(A)
    inverse = _linalg_inv_ex(A)
    info = _lu_info(A._data, inverse._data, A._data.shape[:-2])
    if info.any():  # (the recorded result is dropped: nothing the caller sees changed)
        _raise_inv(wrap(info))
    return inverse


@tensor_method
def inverse(input: Tensor) -> Tensor:
    """The inverse (``torch.inverse``: :func:`chainrule.linalg.inv`)."""
    return linalg_inv(input)


def _solve_checks(A: Tensor, B: Tensor, left: bool, fname: str = "linalg.solve") -> None:
    _check_float(A, fname)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(
            f"{fname}: Expected A and B to have the same dtype, but found A of type "
            f"{_type_name(A)} and B of type {_type_name(B)} instead")
    _check_square(A, fname)
    _check_kernel(A, "lu_cpu")
    a, b = A._data, B._data
    vector = _as_matrix_rhs(a, b)
    rows, cols = (b.shape[-1], 1) if vector else b.shape[-2:]
    n = a.shape[-1]
    if (rows if left else cols) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{fname}: Incompatible shapes of A and B for the equation {equation} "
            f"({a.shape[-2]}x{n} and {rows}x{cols})")


def linalg_solve_ex(A: Tensor, B: Tensor, *, left: bool = True,
                    check_errors: bool = False) -> Any:
    """``(result, info)``: the solution of ``A X = B`` (``X A = B`` when not ``left``) and
    LAPACK's ``info``."""
    _solve_checks(A, B, left)
    X = _linalg_solve_ex(A, B, left)
    info = wrap(_lu_info(A._data, X._data, _solve_batch(A, B)))
    if check_errors:
        _raise_solve(info)
    # (PyTorch solves X A = B as A^H X^H = B^H: a complex X is the conjugate view of that)
    return linalg_solve_ex_type((X if left else flag_conjugate_result(X), info))


def _raise_solve(info: Tensor) -> None:
    failure = _first_failure(info._data)
    if failure is not None:
        raise LinAlgError(
            f"torch.linalg.solve: {_batch_prefix(failure[0], info._data.ndim > 0)}The solver "
            "failed because the input matrix is singular.")


def linalg_solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` when not ``left``), batched and
    broadcast; B may be a (batch of) vector(s) (``LinalgSolveExBackward0``).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.solve(torch.tensor([[2., 0.], [0., 4.]]), torch.tensor([2., 2.]))
        tensor([1.0000, 0.5000])
    """
    _solve_checks(A, B, left)
    X = _linalg_solve_ex(A, B, left)
    info = _lu_info(A._data, X._data, _solve_batch(A, B))
    if info.any():  # (the recorded result is dropped: nothing the caller sees changed)
        _raise_solve(wrap(info))
    return X if left else flag_conjugate_result(X)


_MISSING: Any = object()


def linalg_solve_triangular(A: Tensor, B: Tensor, *, upper: bool = _MISSING, left: bool = True,
                            unitriangular: bool = False) -> Tensor:
    """The solution of ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A`` (only
    its ``upper`` or lower triangle is read; ``unitriangular``: its diagonal taken as ones)."""
    if upper is _MISSING:
        raise TypeError(
            'linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    fname = "linalg.solve_triangular"
    _check_float(A, fname)
    _check_square(A, fname)
    _check_matrix(B, fname, "B")
    _check_kernel(A, "triangular_solve_cpu")
    n = A._data.shape[-1]
    rows, cols = B._data.shape[-2:]
    if (rows if left else cols) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{fname}: Incompatible shapes of A and B for the equation {equation} "
            f"({A._data.shape[-2]}x{n} and {rows}x{cols})")
    return _linalg_solve_triangular(A, B, bool(upper), bool(left), bool(unitriangular))


def _cholesky_checks(A: Tensor) -> None:
    _check_square(A, "linalg.cholesky")
    _check_float(A, "linalg.cholesky")
    _check_kernel(A, "cholesky_cpu")


def linalg_cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``(L, info)``: the Cholesky factor and LAPACK's ``info`` (the order of the first leading
    minor that is not positive-definite, 0 when A is)."""
    _cholesky_checks(A)
    L = _linalg_cholesky_ex(A, bool(upper))
    info = wrap(_cholesky_info(L._data))
    if check_errors:
        _raise_cholesky(info, "linalg.cholesky_ex")
    return linalg_cholesky_ex_type((L, info))


def _raise_cholesky(info: Tensor, fname: str = "linalg.cholesky") -> None:
    failure = _first_failure(info._data)
    if failure is not None:
        index, order = failure
        raise LinAlgError(
            f"{fname}: {_batch_prefix(index, info._data.ndim > 0)}The factorization "
            "could not be completed because the input is not positive-definite (the leading "
            f"minor of order {order} is not positive-definite).")


def linalg_cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (``A = L L^H``; ``upper``: ``U`` with ``A = U^H U``) of each
    Hermitian positive-definite matrix (``LinalgCholeskyExBackward0``)."""
    _cholesky_checks(A)
    L = _linalg_cholesky_ex(A, bool(upper))
    _raise_cholesky(wrap(_cholesky_info(L._data)))
    return L


def _eigh_checks(A: Tensor, UPLO: str) -> None:
    _check_square(A, "linalg.eigh")
    if A._data.dtype.kind not in "fc" or _is_half(A):
        raise NotImplementedError(f'"linalg_eigh_cpu" not implemented for \'{_type_name(A)}\'')
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def linalg_eigh(A: Tensor, UPLO: str = "L") -> Any:  # noqa: N803 - PyTorch's name
    """``(eigenvalues, eigenvectors)`` of each Hermitian matrix (its ``UPLO`` triangle is read),
    eigenvalues ascending. Eigenvectors are unique up to sign only."""
    _eigh_checks(A, UPLO)
    L, V = _linalg_eigh(A, UPLO.upper())
    return linalg_eigh_type((L, V))


def linalg_eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803 - PyTorch's name
    """The eigenvalues of each Hermitian matrix, ascending (``LinalgEighBackward0``)."""
    _eigh_checks(A, UPLO)
    return _linalg_eigh(A, UPLO.upper())[0]


def _svd_checks(A: Tensor) -> None:
    _check_matrix(A, "linalg.svd")
    _check_float(A, "linalg.svd")
    _check_kernel(A, "linalg_svd_cpu")


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> Any:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending. Singular vectors
    are unique up to sign only."""
    _svd_checks(A)
    U, S, Vh = _linalg_svd(A, bool(full_matrices))
    return linalg_svd_type((U, S, Vh))


def linalg_svdvals(A: Tensor, *, driver: Any = None) -> Tensor:
    """The singular values of each matrix, descending (``LinalgSvdBackward0``)."""
    _svd_checks(A)
    return _linalg_svd(A, False)[1]


def linalg_qr(A: Tensor, mode: str = "reduced") -> Any:
    """``(Q, R)`` with ``A = Q R``: ``mode`` ``'reduced'``, ``'complete'`` or ``'r'`` (Q
    empty)."""
    _check_matrix(A, "linalg.qr")
    _check_float(A, "linalg.qr")
    _check_kernel(A, "geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'")
    Q, R = _linalg_qr(A, mode)
    return linalg_qr_type((Q, R))


linalg_lstsq_type = _linalg_type("linalg_lstsq", ("solution", "residuals", "rank",
                                                   "singular_values"))


def linalg_lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,
                 driver: str | None = None) -> Any:
    """The least-squares solution of ``A X = B`` (minimum norm when A is rank-deficient),
    with the residuals, rank and singular values the ``driver`` reports
    (``LinalgLstsqBackward0`` on the solution and the residuals)."""
    fname = "torch.linalg.lstsq"
    a, b = A._data, B._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    if b.ndim < 1:
        raise RuntimeError(f"{fname}: other must have at least 1 dimension.")
    if _is_half(A) and rcond is not None:  # (the default rcond is what refuses otherwise)
        raise NotImplementedError(f'"linalg_lstsq_cpu" not implemented for \'{_type_name(A)}\'')
    if a.dtype.kind not in "fc" or _is_half(A):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"{fname}: Expected input and other to have the same dtype, but got input's dtype "
            f"{_type_name(A)} and other's dtype {_type_name(B)}")
    vector = b.ndim == a.ndim - 1
    rhs_batch = b.shape[:-1] if vector else b.shape[:-2]
    a_batch = a.shape[:-2]
    for i in range(1, builtins.max(len(a_batch), len(rhs_batch)) + 1):
        x = a_batch[-i] if i <= len(a_batch) else 1
        y = rhs_batch[-i] if i <= len(rhs_batch) else 1
        if x != y and 1 not in (x, y):
            dim = builtins.max(len(a_batch), len(rhs_batch)) - i
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {dim}")
    if vector and a.shape[-2] != b.shape[-1]:
        raise RuntimeError(f"{fname}: input.size(-2) should match other.size(-1)")
    if not vector and a.shape[-2] != b.shape[-2]:
        raise RuntimeError(f"{fname}: input.size(-2) should match other.size(-2)")
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(
            f"{fname}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    X, residuals = _linalg_lstsq(A, B, rcond, driver)
    rank, svals = _lstsq_arrays(a, b, rcond, driver)[2:]
    return linalg_lstsq_type((X, residuals, wrap(rank), wrap(svals)))


linalg_lu_factor_type = _linalg_type("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex_type = _linalg_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu_type = _linalg_type("linalg_lu", ("P", "L", "U"))


def _lu_checks(A: Tensor, fname: str, pivot: bool) -> None:
    if A._data.ndim < 2:
        shape = ", ".join(str(s) for s in A._data.shape)
        raise RuntimeError(
            f"{fname}: Expected tensor with 2 or more dimensions. Got size: [{shape}] instead")
    _check_kernel(A, "lu_cpu")
    if A._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{_type_name(A)}\'')
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor_call(A: Tensor, pivot: bool) -> tuple[Tensor, Tensor, Tensor]:
    _, pivots, info = lu_factor_arrays(A._data)
    piv = wrap(pivots)
    return _linalg_lu_factor_ex(A, piv), piv, wrap(info)


def linalg_lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """``(LU, pivots, info)``: the packed LU decomposition with partial pivoting (LAPACK's
    getrf; ``info`` the 1-based index of the first zero pivot, 0 when none)."""
    _lu_checks(A, "torch.lu_factor", pivot)
    LU, pivots, info = _lu_factor_call(A, pivot)
    if check_errors:
        _raise_lu(info, "torch.linalg.lu_factor_ex")
    return linalg_lu_factor_ex_type((LU, pivots, info))


def _raise_lu(info: Tensor, fname: str) -> None:
    failure = _first_failure(info._data)
    if failure is not None:
        index, value = failure
        raise RuntimeError(
            f"{fname}: {_batch_prefix(index, info._data.ndim > 0)}U[{value},{value}] is zero "
            "and using it on lu_solve would result in a division by zero. If you still want to "
            "perform the factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)")


def linalg_lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``(LU, pivots)``: the packed LU decomposition with partial pivoting
    (``LinalgLuFactorExBackward0``); a zero pivot raises."""
    _lu_checks(A, "torch.lu_factor", pivot)
    LU, pivots, info = _lu_factor_call(A, pivot)
    _raise_lu(info, "torch.linalg.lu_factor")
    return linalg_lu_factor_type((LU, pivots))


def linalg_lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``(P, L, U)`` with ``A = P L U`` (``LinalgLuBackward0`` on L and U)."""
    _lu_checks(A, "linalg.lu", pivot)
    L, U = _linalg_lu(A, bool(pivot))
    LU, pivots, _ = lu_factor_arrays(A._data)
    P = lu_unpack_arrays(LU, pivots)[0]
    return linalg_lu_type((wrap(np.ascontiguousarray(P)), L, U))


def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                    adjoint: bool = False) -> Tensor:
    """The solution of ``A X = B`` from A's packed LU decomposition (``adjoint``:
    ``A^H X = B``; not ``left``: ``X A = B``)."""
    fname = "linalg.lu_solve"
    if LU._data.dtype != B._data.dtype:
        raise RuntimeError(
            f"{fname}: Expected LU and B to have the same dtype, but found LU of type "
            f"{_type_name(LU)} and B of type {_type_name(B)} instead")
    if pivots._data.dtype != np.int32:
        raise RuntimeError(f"{fname}: pivots should be a Tensor of scalar type torch.int32")
    _check_square(LU, "torch.linalg.lu_solve")
    _check_matrix(B, fname, "B")
    n = LU._data.shape[-1]
    rows, cols = B._data.shape[-2:]
    if (rows if left else cols) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{fname}: Incompatible shapes of A and B for the equation {equation} "
            f"({n}x{n} and {rows}x{cols})")
    if pivots._data.ndim == 0 or pivots._data.shape[-1] != n:
        raise RuntimeError(
            f"{fname}: Number of pivots per batch should be same as the dimension of the matrix")
    if pivots._data.shape != LU._data.shape[:-1]:
        raise RuntimeError(
            f"{fname}: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
            f"with shape [{', '.join(map(str, pivots._data.shape))}] instead")
    X = _linalg_lu_solve(LU, pivots, B, bool(left), bool(adjoint))
    # (PyTorch solves X A = B as A^H X^H = B^H: a complex X is the conjugate view of that)
    return X if left else flag_conjugate_result(X)


def linalg_householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of the product of Householder reflectors ``I - tau_i v_i v_i^H``
    stored as geqrf stores them (``LinalgHouseholderProductBackward0``)."""
    fname = "torch.linalg.householder_product"
    a, t = A._data, tau._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(
            f"{fname}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if t.ndim and a.shape[-1] < t.shape[-1]:
        raise RuntimeError(
            f"{fname}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if a.ndim - t.ndim != 1:
        raise RuntimeError(
            f"{fname}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {t.ndim} and input.ndim is equal to {a.ndim}")
    if t.shape[:-1] != a.shape[:-2]:
        shape = ", ".join(str(d) for d in t.shape[:-1])
        raise RuntimeError(
            f"{fname}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
            f"got [{shape}]")
    if t.dtype != a.dtype:
        raise RuntimeError(
            f"{fname}: tau dtype {_type_name(tau)} does not match input dtype {_type_name(A)}")
    if a.dtype.kind not in "fc" or _is_half(A):
        raise NotImplementedError(f'"orgqr_cpu" not implemented for \'{_type_name(A)}\'')
    return _linalg_householder_product(A, tau)


linalg_eig_type = _linalg_type("linalg_eig", ("eigenvalues", "eigenvectors"))


def _eig_checks(A: Tensor, fname: str) -> None:
    _check_square(A, fname)
    _check_kernel(A, "linalg_eig_out_cpu")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A)}")


def linalg_eig(A: Tensor) -> Any:
    """``(eigenvalues, eigenvectors)`` of each square matrix, complex (LAPACK's geev: vectors
    of norm 1, unique up to a phase; ``LinalgEigBackward0``)."""
    _eig_checks(A, "linalg.eig")
    L, V = _linalg_eig(A)
    return linalg_eig_type((L, V))


def linalg_eigvals(A: Tensor) -> Tensor:
    """The complex eigenvalues of each square matrix (``LinalgEigBackward0``)."""
    _eig_checks(A, "linalg.eigvals")
    return _linalg_eig(A)[0]


linalg_ldl_factor_type = _linalg_type("linalg_ldl_factor", ("LD", "pivots"))
linalg_ldl_factor_ex_type = _linalg_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _ldl_call(A: Tensor, hermitian: bool, fname: str, check_errors: bool) -> tuple:
    _check_square(A, "torch.linalg.ldl_factor_ex")
    _check_float(A, "torch.linalg.ldl_factor_ex")
    _check_kernel(A, "ldl_factor_kernel_cpu")
    LD, pivots, info = ldl_factor_arrays(A._data, bool(hermitian))
    if check_errors:
        failure = _first_failure(info)
        if failure is not None:
            # (PyTorch's message for a zero pivot, an internal assert, as it reads)
            raise RuntimeError(
                'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. '
                f"{fname}: Unknown error code: {failure[1]}.")
    piv = wrap(pivots)
    return _linalg_ldl_factor_ex(A, bool(hermitian), LD, piv), piv, wrap(info)


def linalg_ldl_factor_ex(A: Tensor, *, hermitian: bool = False,
                         check_errors: bool = False) -> Any:
    """``(LD, pivots, info)``: the Bunch-Kaufman LDL factorisation of each symmetric
    (``hermitian``: Hermitian) matrix, from its lower triangle, as LAPACK's sytrf stores it.
    PyTorch does not differentiate it (its node raises in backward)."""
    LD, pivots, info = _ldl_call(A, hermitian, "torch.linalg.ldl_factor_ex", check_errors)
    return linalg_ldl_factor_ex_type((LD, pivots, info))


def linalg_ldl_factor(A: Tensor, *, hermitian: bool = False) -> Any:
    """``(LD, pivots)``: :func:`linalg_ldl_factor_ex` raising on a zero pivot."""
    LD, pivots, _ = _ldl_call(A, hermitian, "torch.linalg.ldl_factor", True)
    return linalg_ldl_factor_type((LD, pivots))


def linalg_ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *,
                     hermitian: bool = False) -> Tensor:
    """The solution of ``A X = B`` from A's LDL factorisation (not differentiable)."""
    if B._data.dtype != LD._data.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_type_name(B)} and "
            f"A of type {_type_name(LD)} instead.")
    _check_square(LD, "torch.linalg.ldl_solve", "LD")
    _check_matrix(B, "torch.linalg.ldl_solve", "B")
    n = LD._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(
            f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {n} by "
            f"{n} but each b matrix is {B._data.shape[-2]} by {B._data.shape[-1]}")
    if pivots._data.dtype != np.int32:
        raise RuntimeError(
            "torch.linalg.ldl_solve: Expected pivots to be integers. Got "
            f"{_type_name(pivots)}")
    return _linalg_ldl_solve(LD, pivots, B, bool(hermitian))


def _tolerance_value(t: Any) -> Any:
    if t is None:
        return None
    return t._data if isinstance(t, Tensor) else t


def linalg_pinv(A: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD (``hermitian``: its
    eigendecomposition); singular values below ``max(atol, rtol * largest)`` are dropped."""
    if A._data.ndim < 2 or A._data.dtype.kind not in "fc" or _is_half(A):
        shape = ", ".join(str(s) for s in A._data.shape)
        raise RuntimeError(
            f"linalg.pinv({_type_name(A)}{{[{shape}]}}): expected a tensor with 2 or more "
            "dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    return _linalg_pinv(A, _tolerance_value(atol), _tolerance_value(rtol), bool(hermitian))


@tensor_method
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """The pseudo-inverse with singular values below ``rcond * largest`` dropped."""
    return linalg_pinv(input, rtol=rcond)


def linalg_matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix (``LinalgMatrixExpBackward0``)."""
    _check_square(A, "linalg.matrix_exp")
    _check_float(A, "linalg.matrix_exp")
    return _linalg_matrix_exp(A)


@tensor_method
def matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential (``torch.matrix_exp``)."""
    return linalg_matrix_exp(input)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (broadcast; ``LinalgCrossBackward0``)."""
    a, b = input._data, other._data
    d_a = wrap_dim(dim, builtins.max(a.ndim, 1))
    d_b = wrap_dim(dim, builtins.max(b.ndim, 1))
    if a.ndim != b.ndim:
        raise RuntimeError(
            "linalg.cross: inputs must have the same number of dimensions.")
    if a.shape[d_a] != 3 or b.shape[d_b] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{a.shape[d_a]} and {b.shape[d_b]}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        for i in range(a.ndim - 1, -1, -1):
            if a.shape[i] != b.shape[i] and 1 not in (a.shape[i], b.shape[i]):
                raise RuntimeError(
                    f"The size of tensor a ({a.shape[i]}) must match the size of tensor b "
                    f"({b.shape[i]}) at non-singleton dimension {i}") from None
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected scalar type {_type_name(input)} but found {_type_name(other)}")
    return _linalg_cross(input, other, d_a)


def _matrix_power(A: Tensor, n: int) -> Tensor:
    """PyTorch's composition: an identity copy, the inverse for negative powers, and the
    binary decomposition of n into matrix products."""
    _check_square(A, "linalg.matrix_power")
    if n == 0:
        eye = creation.eye(A._data.shape[-1], dtype=A.dtype)
        return A.clone(memory_format=contiguous_format).copy_(eye.expand_as(A))
    if n == -1:  # (the inverse itself, column-major as LAPACK's: no clone)
        return linalg_inv(A)
    if n < 0:
        A = linalg_inv(A)
        n = -n
    if n == 1:
        return A.clone(memory_format=contiguous_format)
    if n == 2:
        return linalg.matmul(A, A)
    if n == 3:
        return linalg.matmul(linalg.matmul(A, A), A)
    z: Tensor | None = None
    result: Tensor | None = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = A if z is None else linalg.matmul(z, z)
        if bit == 1:
            result = z if result is None else linalg.matmul(result, z)
    assert result is not None
    return result


@tensor_method
def matrix_power(input: Tensor, n: int) -> Tensor:
    """``input`` to the integer power ``n`` (negative: of its inverse), by repeated matrix
    products as PyTorch computes it."""
    return _matrix_power(input, int(n))


def linalg_multi_dot(tensors: Sequence[Tensor], *, out: Any = None) -> Tensor:
    """The product of a chain of matrices, parenthesised to take the fewest operations (the
    first may be a row vector and the last a column vector, 1-D).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.multi_dot([torch.ones(2), torch.ones(2, 3), torch.ones(3)])
        tensor(6.)
    """
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first_dim = tensors[0]._data.ndim
    last_dim = tensors[-1]._data.ndim
    if first_dim not in (1, 2):
        raise RuntimeError(
            f"multi_dot(): the first tensor must be 1D or 2D but got {first_dim}D")
    if last_dim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last_dim}D")
    for i in range(1, n - 1):
        if tensors[i]._data.ndim != 2:
            raise RuntimeError(
                f"multi_dot(): tensor {i} must be 2D but got {tensors[i]._data.ndim}D")
    dtype = tensors[0]._data.dtype
    for i in range(1, n):
        if tensors[i]._data.dtype != dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{CPP_TYPE_NAMES[from_numpy_dtype(dtype)]} and tensor {i} "
                f"{CPP_TYPE_NAMES[from_numpy_dtype(tensors[i]._data.dtype)]}")
    if first_dim == 1:
        tensors[0] = shape.unsqueeze(tensors[0], 0)
    if last_dim == 1:
        tensors[-1] = shape.unsqueeze(tensors[-1], -1)
    for i in range(n - 1):
        left, right = tensors[i]._data.shape, tensors[i + 1]._data.shape
        if left[1] != right[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes "
                f"[{left[0]}, {left[1]}] and [{right[0]}, {right[1]}] cannot be multiplied")
    if n == 2:
        result = linalg.mm(tensors[0], tensors[1])
    elif n == 3:
        a = tensors[0]._data.shape[0]
        b = tensors[1]._data.shape[0]
        c = tensors[2]._data.shape[0]
        d = tensors[2]._data.shape[1]
        cost_1 = (a * c) * (b + d)
        cost_2 = (b * d) * (a + c)
        if cost_1 > cost_2:
            result = linalg.mm(tensors[0], linalg.mm(tensors[1], tensors[2]))
        else:
            result = linalg.mm(linalg.mm(tensors[0], tensors[1]), tensors[2])
    else:
        result = _chain(tensors)
    rows = () if first_dim == 1 else (tensors[0]._data.shape[0],)
    cols = () if last_dim == 1 else (tensors[-1]._data.shape[1],)
    return shape.view(result, rows + cols)


def _chain(tensors: list[Tensor]) -> Tensor:
    """The matrix chain product in the cheapest order (dynamic programming, as PyTorch's
    ``multi_dot_impl``), built without recursion."""
    n = len(tensors)
    p = [t._data.shape[0] for t in tensors] + [tensors[-1]._data.shape[1]]
    cost = [[0] * n for _ in range(n)]
    order = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] == -1 or q < cost[i][j]:
                    cost[i][j] = q
                    order[i][j] = k
    # Evaluate the parenthesisation bottom-up with an explicit stack (post-order).
    results: dict[tuple[int, int], Tensor] = {}
    stack: list[tuple[int, int, bool]] = [(0, n - 1, False)]
    while stack:
        i, j, expanded = stack.pop()
        if i == j:
            results[(i, j)] = tensors[i]
            continue
        k = order[i][j]
        if expanded:
            results[(i, j)] = linalg.mm(results.pop((i, k)), results.pop((k + 1, j)))
            continue
        stack.append((i, j, True))
        stack.append((k + 1, j, False))
        stack.append((i, k, False))
    return results[(0, n - 1)]


# ----------------------------------------------------------------------------------------------
# torch-level names from before torch.linalg (several deprecated, warning once as PyTorch's)

_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """PyTorch's TORCH_WARN_ONCE: the first call in the process warns."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=user_stacklevel())


_TRIGGERED = " (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/{}.)"


@tensor_method
def svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``(U, S, V)`` with ``input = U diag(S) V^H`` (``some``: reduced; without
    ``compute_uv``, U and V are zero matrices). V is ``linalg.svd``'s ``Vh.mH``."""
    if input._data.ndim < 2:
        raise RuntimeError(
            "linalg.svd: input should have at least 2 dimensions, but has "
            f"{input._data.ndim} dimensions instead")
    if not compute_uv:
        S = linalg_svdvals(input)
        m, n = input._data.shape[-2:]
        batch = input._data.shape[:-2]
        U = wrap(np.zeros(batch + (m, m), dtype=input._data.dtype))
        V = wrap(_column_major(np.zeros(batch + (n, n), dtype=input._data.dtype)))
        return svd_type((U, S, V))
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    return svd_type((U, S, shape.matrix_conj_transpose(Vh)))


@tensor_method
def qr(input: Tensor, some: bool = True) -> Any:
    """``(Q, R)``: ``linalg.qr`` in mode ``'reduced'`` (``some``) or ``'complete'``
    (deprecated by PyTorch, which warns once)."""
    _warn_once("qr", (
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')"
        + _TRIGGERED.format("BatchLinearAlgebra.cpp:2505")))
    Q, R = linalg_qr(input, "reduced" if some else "complete")
    return qr_type((Q, R))


_cholesky_legacy = recorded_as(_linalg_cholesky_ex, "CholeskyBackward0")


@tensor_method
def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """The Cholesky factor (``CholeskyBackward0``; deprecated by PyTorch, which warns once)."""
    _warn_once("cholesky", (
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
        "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs."
        + _TRIGGERED.format("BatchLinearAlgebra.cpp:1765")))
    _check_square(input, "cholesky")
    _check_kernel(input, "cholesky_cpu")
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"cholesky_cpu" not implemented for \'{_type_name(input)}\'')
    L = _cholesky_legacy(input, bool(upper))
    _raise_cholesky(wrap(_cholesky_info(L._data)), "cholesky")
    return L


def _cholesky_solve_arrays(B: np.ndarray, L: np.ndarray, upper: bool) -> np.ndarray:
    A = (np.conj(_mT(L)) @ L) if upper else (L @ np.conj(_mT(L)))
    batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    X = np.linalg.solve(np.broadcast_to(A, batch + A.shape[-2:]),
                        np.broadcast_to(B, batch + B.shape[-2:]))
    return _column_major(X)


@op("CholeskySolveBackward0", inputs=("self", "input2"), complex_ok=True)
def _cholesky_solve(self, input2, upper=False):
    return _cholesky_solve_arrays(self, input2, upper)


@_cholesky_solve.derivative("self")
def _(ops, grad, input2, upper):
    return ops.cholesky_solve(grad, input2, upper)


@_cholesky_solve.derivative("input2")
def _(ops, grad, input2, upper, result):
    grad_self = ops.cholesky_solve(grad, input2, upper)
    common = ops.matmul(grad_self, _mH(ops, result))
    common = common + _mH(ops, common)
    return -ops.matmul(input2, common) if upper else -ops.matmul(common, input2)


@tensor_method
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """The solution of ``A X = input`` from A's Cholesky factor ``input2``
    (``CholeskySolveBackward0``)."""
    b, L = input._data, input2._data
    if b.ndim < 2:
        raise RuntimeError(
            f"b should have at least 2 dimensions, but has {b.ndim} dimensions instead")
    if L.ndim < 2:
        raise RuntimeError(
            f"u should have at least 2 dimensions, but has {L.ndim} dimensions instead")
    if b.dtype != L.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_type_name(input)} "
            f"and A of type {_type_name(input2)} instead.")
    _check_kernel(input, "cholesky_solve_cpu")
    if L.shape[-1] != L.shape[-2] or L.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-2]} by "
            f"{L.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    return _cholesky_solve(input, input2, bool(upper))


@op("CholeskyInverseBackward0", complex_ok=True)
def _cholesky_inverse(self, upper=False):
    A = (np.conj(_mT(self)) @ self) if upper else (self @ np.conj(_mT(self)))
    return _column_major(np.linalg.inv(A))


@_cholesky_inverse.derivative("self")
def _(ops, grad, self, upper, result):
    common = grad + _mH(ops, grad)
    common = ops.matmul(result, ops.matmul(common, result))
    return -ops.matmul(self, common) if upper else -ops.matmul(common, self)


@tensor_method
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``L L^H`` (``U^H U`` when ``upper``) from its Cholesky factor
    (``CholeskyInverseBackward0``)."""
    _check_square(input, "cholesky_inverse")
    _check_float(input, "cholesky_inverse")
    _check_kernel(input, "cholesky_inverse_out_cpu")
    diagonal = np.diagonal(input._data, axis1=-2, axis2=-1)
    info = np.where((diagonal == 0).any(-1), np.argmax(diagonal == 0, -1) + 1, 0)
    failure = _first_failure(info)
    if failure is not None:
        raise LinAlgError(
            f"cholesky_inverse: {_batch_prefix(failure[0], info.ndim > 0)}The diagonal element "
            f"{failure[1]} is zero, the inversion could not be completed because the input "
            "matrix is singular.")
    return _cholesky_inverse(input, bool(upper))


_NO_DIM: Any = object()


@tensor_method
def cross(input: Tensor, other: Tensor, dim: Any = None) -> Tensor:
    """The cross product along ``dim`` (default: the first dimension of size 3, with PyTorch's
    deprecation warning; ``LinalgCrossBackward0``)."""
    if dim is None:
        _warn_once("cross", (
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
            "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
            "dim will change to agree with that of linalg.cross in a future release."
            + _TRIGGERED.format("Cross.cpp:63")))
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        found = [i for i, size in enumerate(shape) if size == 3]
        if not found:
            raise RuntimeError("no dimension of size 3 in input")
        dim = found[0]
    return linalg_cross(input, other, dim=dim)


@tensor_method
def lu(input: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    """``(LU, pivots)`` (and ``infos``): ``linalg.lu_factor_ex`` (deprecated by PyTorch)."""
    _warn_once("lu", (
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, "
        "get_infos=True)\nshould be replaced with\nLU, pivots, info = "
        "torch.linalg.lu_factor_ex(A, compute_pivots)"
        + _TRIGGERED.format("BatchLinearAlgebra.cpp:2073")))
    LU, pivots, info = linalg_lu_factor_ex(input, pivot=pivot)
    if get_infos:
        return lu_with_info_type((LU, pivots, info))
    return (LU, pivots)


@tensor_method
def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """``linalg.lu_solve(LU_data, LU_pivots, input)`` (deprecated by PyTorch)."""
    _warn_once("lu_solve", (
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in "
        "a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)"
        + _TRIGGERED.format("BatchLinearAlgebra.cpp:2254")))
    return linalg_lu_solve(LU_data, LU_pivots, input)


@op("LuUnpackBackward0", inputs=("LU_data",), num_outputs=2, tensor_params=("LU_pivots",),
    complex_ok=True)
def _lu_unpack(LU_data, LU_pivots):
    _, L, U = lu_unpack_arrays(LU_data, LU_pivots)
    return np.ascontiguousarray(L), np.ascontiguousarray(U)


@_lu_unpack.derivative("LU_data")
def _(ops, grads, LU_data):
    L_grad, U_grad = grads
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = builtins.min(m, n)
    if m == n:
        return ops.tril(L_grad, -1) + ops.triu(U_grad)
    A1 = ops.tril(ops.narrow(L_grad, -2, 0, k), -1) + ops.triu(ops.narrow(U_grad, -1, 0, k))
    if m > n:
        return ops.cat([A1, ops.narrow(L_grad, -2, k, m - k)], -2)
    return ops.cat([A1, ops.narrow(U_grad, -1, k, n - k)], -1)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> Any:
    """``(P, L, U)`` from a packed LU decomposition (``LuUnpackBackward0`` on L and U)."""
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
            "dtype.\nNote: this function is intended to be used with the output produced by "
            "torch.linalg.lu_factor")
    empty = wrap(np.zeros((0,), dtype=LU_data._data.dtype))
    if unpack_pivots:
        P = lu_unpack_arrays(LU_data._data, LU_pivots._data)[0]
        P_t = wrap(np.ascontiguousarray(P))
    else:
        P_t = empty
    if unpack_data:
        L, U = _lu_unpack(LU_data, LU_pivots)
    else:
        L, U = empty, wrap(np.zeros((0,), dtype=LU_data._data.dtype))
    return lu_unpack_type((P_t, L, U))


def chain_matmul(*matrices: Tensor, out: Any = None) -> Tensor:
    """The product of the matrices (``linalg.multi_dot``; deprecated by PyTorch)."""
    _warn_once("chain_matmul", (
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather "
        "than multiple parameters." + _TRIGGERED.format("LinearAlgebra.cpp:1102")))
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return copying.clone(matrices[0])
    return linalg_multi_dot(list(matrices))


@op("TriangularSolveBackward0", inputs=("self", "A"), num_outputs=2, complex_ok=True)
def _triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    # (``transpose``: op(A) = A^T, whose other triangle is read)
    coefficient = _mT(A) if transpose else A
    X = _triangular_arrays(coefficient, self, upper != transpose, True, unitriangular)
    batch = X.shape[:-2]  # (the coefficient is returned broadcast to the batch)
    return X, _column_major(np.broadcast_to(A, batch + A.shape[-2:]))


@_triangular_solve.derivative("self")
def _(ops, grads, A, upper, transpose, unitriangular):
    grad_x = grads[0]
    # (op(A)^H: conj(A) when op(A) is A^T)
    return ops.solve_triangular(ops.conj(A) if transpose else _mH(ops, A), grad_x,
                                upper if transpose else not upper, True, unitriangular)


@_triangular_solve.derivative("A")
def _(ops, grads, A, upper, transpose, unitriangular, result):
    # PyTorch's triangular_solve_backward: grad_b as above, grad_a = -grad_b X^H (transposed
    # for ``transpose``) on the triangle read, plus the cloned coefficient's gradient.
    grad_x, grad_m = grads
    grad_b = ops.solve_triangular(ops.conj(A) if transpose else _mH(ops, A), grad_x,
                                  upper if transpose else not upper, True, unitriangular)
    if transpose:
        grad_a = -ops.matmul(ops.conj(result), ops.transpose(grad_b, -2, -1))
    else:
        grad_a = -ops.matmul(grad_b, _mH(ops, result))
    grad_a = ops.triu(grad_a, int(unitriangular)) if upper else \
        ops.tril(grad_a, -int(unitriangular))
    return grad_a + grad_m


triangular_solve_type = _linalg_type("triangular_solve", ("solution", "cloned_coefficient"))


@tensor_method
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True,  # noqa: N803 - PyTorch's
                     transpose: bool = False, unitriangular: bool = False) -> Any:
    """``(solution, cloned_coefficient)`` of ``op(A) X = input`` with triangular A
    (``TriangularSolveBackward0``; deprecated by PyTorch, which warns once)."""
    _warn_once("triangular_solve", (
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
        "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B)." + _TRIGGERED.format("BatchLinearAlgebra.cpp:2273")))
    b, a = input._data, A._data
    if b.ndim < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{b.ndim} dimensions instead")
    if a.ndim < 2:
        raise RuntimeError(
            "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
            f"{a.ndim} dimensions instead")
    if b.dtype != a.dtype:
        raise RuntimeError(
            f"Expected b and A to have the same dtype, but found b of type {_type_name(input)} "
            f"and A of type {_type_name(A)} instead.")
    _check_kernel(A, "triangular_solve_cpu")
    if a.shape[-1] != a.shape[-2] or a.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for triangular_solve: each A matrix is {a.shape[-2]} "
            f"by {a.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    X, M = _triangular_solve(input, A, bool(upper), bool(transpose), bool(unitriangular))
    return triangular_solve_type((X, M))


@op("GeqrfBackward0", num_outputs=2)
def _geqrf(self):
    if self.size == 0:
        k = builtins.min(self.shape[-2:])
        return _column_major(np.array(self, copy=True)), np.zeros(self.shape[:-2] + (k,),
                                                                  dtype=self.dtype)
    h, tau = np.linalg.qr(self, mode="raw")  # (h: the factors transposed, as Fortran's)
    return _column_major(np.swapaxes(h, -1, -2).astype(self.dtype)), tau.astype(self.dtype)


@_geqrf.derivative("self")
def _(ops, grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


geqrf_type = _linalg_type("geqrf", ("a", "tau"))


@tensor_method
def geqrf(input: Tensor) -> Any:
    """``(a, tau)``: LAPACK's geqrf, R above the diagonal of ``a`` and the Householder vectors
    below it (PyTorch does not differentiate it: its backward raises)."""
    if input._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_kernel(input, "geqrf_cpu")
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{_type_name(input)}\'')
    a, tau = _geqrf(input)
    return geqrf_type((a, tau))


def _padded_square(ops: Any, A: Any) -> Any:
    """A with zero columns appended to make it square (the reflectors it stores unchanged)."""
    m, n = A.shape[-2], A.shape[-1]
    if n == m:
        return A
    zeros = ops.zeros_like(ops.narrow(ops.cat([A] * (m // n + 1), -1), -1, 0, m - n))
    return ops.cat([A, zeros], -1)


def _ormqr_arrays(input: np.ndarray, tau: np.ndarray, other: np.ndarray,  # noqa: A002
                  left: bool, transpose: bool) -> np.ndarray:
    m = input.shape[-2]
    padded = np.concatenate(
        [input, np.zeros(input.shape[:-1] + (m - input.shape[-1],), input.dtype)], -1)
    Q = _householder_arrays(padded, tau)
    op_Q = np.conj(_mT(Q)) if transpose else Q
    return _column_major(op_Q @ other) if left else _column_major(other @ op_Q)


@op("OrmqrBackward0", inputs=("self", "input2", "input3"), complex_ok=True)
def _ormqr(self, input2, input3, left=True, transpose=False):
    return _ormqr_arrays(self, input2, input3, left, transpose)


def _ormqr_Q(ops: Any, self: Any, input2: Any) -> tuple[Any, Any]:
    padded = _padded_square(ops, self)
    return padded, ops.householder(padded, input2)


@_ormqr.derivative("input3")
def _(ops, grad, self, input2, left, transpose):
    _, Q = _ormqr_Q(ops, self, input2)
    op_Q = Q if transpose else _mH(ops, Q)  # (the adjoint of op(Q))
    return ops.matmul(op_Q, grad) if left else ops.matmul(grad, op_Q)


def _ormqr_reflector_grads(ops: Any, grad: Any, self: Any, input2: Any, input3: Any,
                           left: bool, transpose: bool) -> tuple[Any, Any]:
    """The gradient of Q (the full product of reflectors), then through the reflectors."""
    padded, _ = _ormqr_Q(ops, self, input2)
    if left:
        gQ = ops.matmul(input3, _mH(ops, grad)) if transpose else \
            ops.matmul(grad, _mH(ops, input3))
    else:
        gQ = ops.matmul(_mH(ops, grad), input3) if transpose else \
            ops.matmul(_mH(ops, input3), grad)
    A_grad, tau_grad = _householder_grads(ops, gQ, padded, input2)
    return ops.narrow(A_grad, -1, 0, self.shape[-1]), tau_grad


@_ormqr.derivative("self")
def _(ops, grad, self, input2, input3, left, transpose):
    return _ormqr_reflector_grads(ops, grad, self, input2, input3, left, transpose)[0]


@_ormqr.derivative("input2")
def _(ops, grad, self, input2, input3, left, transpose):
    return _ormqr_reflector_grads(ops, grad, self, input2, input3, left, transpose)[1]


@tensor_method
def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False) -> Tensor:
    """``op(Q) @ input3`` (``input3 @ op(Q)`` when not ``left``) with Q the product of the
    Householder reflectors geqrf stores in ``input``/``input2`` (``OrmqrBackward0``)."""
    a, t, c = input._data, input2._data, input3._data
    fname = "torch.ormqr"
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    if c.ndim < 2:
        raise RuntimeError(f"{fname}: other must have at least 2 dimensions.")
    if c.ndim != a.ndim:
        raise RuntimeError(
            f"{fname}: Expected other to have the same number of dimensions as input, but got "
            f"other.ndim equal to {c.ndim} and input.ndim is equal to {a.ndim}")
    size = c.shape[-2] if left else c.shape[-1]
    if not t.ndim or t.shape[-1] != builtins.min(size, a.shape[-1]):
        raise RuntimeError(
            f"{fname}: tau.shape[-1] must be equal to min(other.shape[{-2 if left else -1}], "
            "input.shape[-1])")
    if size != a.shape[-2]:
        raise RuntimeError(
            f"{fname}: other.shape[{-2 if left else -1}] must be equal to input.shape[-2]")
    if c.dtype != a.dtype:
        raise RuntimeError(
            f"{fname}: Expected input and other to have the same dtype, but input has dtype"
            f"{_type_name(input)} and other has dtype {_type_name(input3)}")
    _check_kernel(input, "ormqr_cpu")
    if a.dtype.kind not in "fc":
        raise NotImplementedError(f'"ormqr_cpu" not implemented for \'{_type_name(input)}\'')
    return _ormqr(input, input2, input3, bool(left), bool(transpose))


@tensor_method
def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``linalg.householder_product(input, input2)``."""
    return linalg_householder_product(input, input2)


# ----------------------------------------------------------------------------------------------
# The derivative namespaces' helpers: (on arrays, on Tensors)

def _solve_batch(A: Tensor, B: Tensor) -> tuple[int, ...]:
    a, b = A._data, B._data
    rhs = b[..., None] if _as_matrix_rhs(a, b) else b
    return tuple(np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2]))


def _solve_array(A: np.ndarray, B: np.ndarray, left: bool = True) -> np.ndarray:
    return _solve_arrays(A, B, left)[0]


def _solve_tensor(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    return linalg_solve(A, B, left=left)


def _triangular_tensor(A: Tensor, B: Tensor, upper: bool, left: bool,
                       unitriangular: bool) -> Tensor:
    return linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def _svd_array(A: np.ndarray, full_matrices: bool = False) -> tuple[np.ndarray, ...]:
    return _linalg_svd.op.forward(A, full_matrices)


def _svd_tensor(A: Tensor, full_matrices: bool = False) -> Any:
    return linalg_svd(A, full_matrices)


def _eigh_tensor(A: Tensor, UPLO: str = "L") -> Any:  # noqa: N803 - PyTorch's name
    return linalg_eigh(A, UPLO)


def _qr_tensor(A: Tensor, mode: str = "reduced") -> Any:
    return linalg_qr(A, mode)


def _lu_array(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    LU, pivots, _ = lu_factor_arrays(A)
    return lu_unpack_arrays(LU, pivots)


def _lu_tensor(A: Tensor) -> Any:
    return linalg_lu(A)


def _lu_solve_tensor(LU: Tensor, pivots: Any, B: Tensor, left: bool, adjoint: bool) -> Tensor:
    return _linalg_lu_solve(LU, pivots if isinstance(pivots, Tensor) else wrap(pivots), B,
                            left, adjoint)


def _cross_array(a: np.ndarray, b: np.ndarray, dim: int) -> np.ndarray:
    return _linalg_cross.op.forward(a, b, dim)


def _cross_tensor(a: Tensor, b: Tensor, dim: int) -> Tensor:
    return _linalg_cross(a, b, dim)


HELPERS: dict[str, tuple[Any, Any]] = {
    "matmul": (np.matmul, linalg.matmul),
    "solve": (_solve_array, _solve_tensor),
    "solve_triangular": (_triangular_arrays, _triangular_tensor),
    "det": (_linalg_det.op.forward, linalg_det),
    "svd": (_svd_array, _svd_tensor),
    "pinv": (_linalg_pinv.op.forward, linalg_pinv),
    "lu": (_lu_array, _lu_tensor),
    "lu_solve": (_lu_solve_arrays, _lu_solve_tensor),
    "cholesky_solve": (_cholesky_solve_arrays, _cholesky_solve),
    "householder": (_householder_arrays, _linalg_householder_product),
    "eigh": (_linalg_eigh.op.forward, _eigh_tensor),
    "eig": (_linalg_eig.op.forward, lambda A: linalg_eig(A)),
    "qr": (_linalg_qr.op.forward, _qr_tensor),
    "matrix_exp": (_matrix_exp_arrays, linalg_matrix_exp),
    "cross": (_cross_array, _cross_tensor),
    "diag_embed": (shape.diag_embed.op.forward, shape.diag_embed),
    "narrow": (lambda a, dim, start, length: np.take(a, range(start, start + length), axis=dim),
               shape.narrow),
}
