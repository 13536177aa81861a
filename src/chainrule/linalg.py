"""``torch.linalg``: norms, determinants, inverses, solvers, decompositions and matrix functions.

Each function computes what PyTorch's does, records PyTorch's nodes (``LinalgDetBackward0``,
``LinalgSvdBackward0`` ...; what PyTorch composes from other ops, such as ``matrix_norm``,
``cond`` or ``multi_dot``, is composed from the same ops here) and raises PyTorch's errors.
The decompositions and their derivatives live in :mod:`chainrule.ops.linalg_decomp`.

Example:
    >>> import chainrule as torch
    >>> A = torch.tensor([[4., 1.], [1., 3.]], requires_grad=True)
    >>> torch.linalg.det(A)
    tensor(11., grad_fn=<LinalgDetBackward0>)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._tensor import Tensor
from ._tensor import wrap_dim as _wrap_dim
from .ops import conjugate as _conjugate
from .ops import linalg as _products
from .ops import pointwise as _pointwise
from .ops import reduction as _reduction
from .ops import shape as _shape
from .ops.linalg_decomp import (
    LinAlgError,
    _check_float,
    _check_matrix,
    _type_name,
    matrix_power,
)
from .ops.linalg_decomp import linalg_cholesky as cholesky
from .ops.linalg_decomp import linalg_cholesky_ex as cholesky_ex
from .ops.linalg_decomp import linalg_cross as cross
from .ops.linalg_decomp import linalg_det as det
from .ops.linalg_decomp import linalg_eig as eig
from .ops.linalg_decomp import linalg_eigh as eigh
from .ops.linalg_decomp import linalg_eigvals as eigvals
from .ops.linalg_decomp import linalg_eigvalsh as eigvalsh
from .ops.linalg_decomp import linalg_householder_product as householder_product
from .ops.linalg_decomp import linalg_inv as inv
from .ops.linalg_decomp import linalg_inv_ex as inv_ex
from .ops.linalg_decomp import linalg_ldl_factor as ldl_factor
from .ops.linalg_decomp import linalg_ldl_factor_ex as ldl_factor_ex
from .ops.linalg_decomp import linalg_ldl_solve as ldl_solve
from .ops.linalg_decomp import linalg_lstsq as lstsq
from .ops.linalg_decomp import linalg_lu as lu
from .ops.linalg_decomp import linalg_lu_factor as lu_factor
from .ops.linalg_decomp import linalg_lu_factor_ex as lu_factor_ex
from .ops.linalg_decomp import linalg_lu_solve as lu_solve
from .ops.linalg_decomp import linalg_matrix_exp as matrix_exp
from .ops.linalg_decomp import linalg_multi_dot as multi_dot
from .ops.linalg_decomp import linalg_pinv as pinv
from .ops.linalg_decomp import linalg_qr as qr
from .ops.linalg_decomp import linalg_slogdet as slogdet
from .ops.linalg_decomp import linalg_solve as solve
from .ops.linalg_decomp import linalg_solve_ex as solve_ex
from .ops.linalg_decomp import linalg_solve_triangular as solve_triangular
from .ops.linalg_decomp import linalg_svd as svd
from .ops.linalg_decomp import linalg_svdvals as svdvals

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
    "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
    "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]

matmul = _products.matmul


def _dims(dim: Any) -> tuple[int, ...] | None:
    if dim is None:
        return None
    if isinstance(dim, int | np.integer):
        return (int(dim),)
    return tuple(int(d) for d in dim)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements when None):
    ``(sum |x|^ord)^(1/ord)``, max/min ``|x|`` for ``±inf``, the count of non-zeros for 0
    (``LinalgVectorNormBackward0``).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.vector_norm(torch.tensor([3., 4.]))
        tensor(5.)
    """
    if isinstance(ord, str) or not isinstance(ord, int | float | np.number):
        raise TypeError(
            f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
            f"{type(ord).__name__}")
    if dtype is not None:
        from ._dtype import to_dtype

        wanted = to_dtype(dtype)
        if not (wanted.is_floating_point or wanted.is_complex):
            raise RuntimeError(
                "linalg.vector_norm: dtype should be floating point or complex, but got "
                f"{_dtype_name(wanted)}")
    return _reduction.norm(x, float(ord), dim, keepdim, dtype=dtype)


def _dtype_name(d: Any) -> str:
    from ._dtype import SCALAR_TYPE_NAMES

    return SCALAR_TYPE_NAMES[d]


def _backshift(dim0: int, dim1: int, ndim: int) -> list[int]:
    """PyTorch's ``create_dim_backshift_permutation``: dim0 and dim1 moved to the end."""
    perm = [i for i in range(ndim) if i not in (dim0, dim1)]
    return perm + [dim0, dim1]


def _inverse_permutation(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1),  # noqa: A002
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The matrix ``ord``-norm over the two dimensions ``dim``: ``'fro'``, ``'nuc'`` (sum of
    singular values), ``±2`` (largest/smallest singular value), ``±1``/``±inf`` (max/min
    column/row absolute sum).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.matrix_norm(torch.tensor([[3., 0.], [0., 4.]]))
        tensor(5.)
    """
    _check_matrix(A, "linalg.matrix_norm")
    dims = _dims(dim)
    if dims is None or len(dims) != 2:
        shown = dims[0] if dims is not None and len(dims) == 1 else dim
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {_fmt_dims(shown)}")
    ndim = A._data.ndim
    d0, d1 = _wrap_dim(dims[0], ndim), _wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        _check_float(A, "linalg.matrix_norm")
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
        if dtype is not None:
            A = A.to(dtype)
        return _singular_value_norm(A, d0, d1, keepdim, "sum")
    value = float(ord)
    if builtins.abs(value) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt_number(ord)} not supported.")
    _check_float(A, "linalg.matrix_norm")
    if builtins.abs(value) == 2.0:
        if dtype is not None:
            A = A.to(dtype)
        return _singular_value_norm(A, d0, d1, keepdim, "amax" if value > 0 else "amin")
    if math.isinf(value):
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    sums = vector_norm(A, 1.0, (d0,), keepdim, dtype=dtype)
    reduce = _reduction.amax if value > 0 else _reduction.amin
    return reduce(sums, d1, keepdim)


def _fmt_dims(dims: Any) -> str:
    if isinstance(dims, tuple | list):
        return "[" + ", ".join(str(d) for d in dims) + "]"
    return str(dims)


def _fmt_number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if not math.isinf(value) else str(value)
    return str(value)


def _singular_value_norm(A: Tensor, d0: int, d1: int, keepdim: bool, how: str) -> Tensor:
    perm = _backshift(d0, d1, A._data.ndim)
    S = svdvals(_shape.permute(A, *perm))
    if how == "sum":
        result = _reduction.sum(S, -1)
    elif how == "amax":
        result = _reduction.amax(S, -1)
    else:
        result = _reduction.amin(S, -1)
    if keepdim:
        result = _shape.unsqueeze(_shape.unsqueeze(result, -1), -1)
        result = _shape.permute(result, *_inverse_permutation(perm))
    return result


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """A vector norm (1-D input, one ``dim``, or ``ord`` None) or a matrix norm (2-D input or
    two ``dim``), as :func:`vector_norm` and :func:`matrix_norm` compute them.

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.norm(torch.tensor([[1., 2.], [2., 4.]]))
        tensor(5.)
    """
    dims = _dims(dim)
    ndim = A._data.ndim
    if dims is not None:
        if len(dims) not in (1, 2):
            raise RuntimeError(
                "linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                f"{_fmt_dims(dims)}")
    elif ord is not None and ndim not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
            f"{ndim}D.")
    if isinstance(ord, str):
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype=dtype)
    if ord is not None and ((dims is not None and len(dims) == 2) or
                            (dims is None and ndim == 2)):
        return matrix_norm(A, ord, dims if dims is not None else (0, 1), keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number of each matrix in the ``p``-norm (default 2: the ratio of the
    largest to the smallest singular value).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.cond(torch.tensor([[2., 0.], [0., 1.]]))
        tensor(2.)
    """
    if A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord_value: Any = 2 if p is None else p
    if isinstance(ord_value, str):
        if ord_value not in ("fro", "nuc"):
            raise RuntimeError(
                f"linalg.cond got an invalid norm type: {ord_value}")
    elif float(ord_value) not in (1.0, -1.0, 2.0, -2.0, math.inf, -math.inf):
        raise RuntimeError(
            f"linalg.cond got an invalid norm type: {_fmt_number(ord_value)}")
    if A._data.size == 0:
        from .ops import creation

        real = np.real(A._data).dtype
        out = np.zeros(A._data.shape[:-2], dtype=real)
        return creation.tensor(out)
    if not isinstance(ord_value, str) and builtins.abs(float(ord_value)) == 2.0:
        S = svdvals(A)
        s_max = _shape.narrow(S, -1, 0, 1)
        s_min = _shape.narrow(S, -1, -1, 1)
        ratio = _pointwise.div(s_min, s_max) if float(ord_value) < 0 else \
            _pointwise.div(s_max, s_min)
        return _shape.squeeze(ratio, -1)
    from .ops.linalg_decomp import _check_square, linalg_inv_ex

    shown = f"{float(ord_value):f}" if isinstance(ord_value, float) else str(ord_value)
    _check_square(A, f"linalg.cond(ord={shown})")
    inverse, info = linalg_inv_ex(A)
    info = _shape.unsqueeze(_shape.unsqueeze(info, -1), -1)
    inverse.masked_fill_(info > 0, math.inf)  # (in place, as PyTorch: backward then refuses)
    result = matrix_norm(A, ord_value) * matrix_norm(inverse, ord_value)
    return _pointwise.nan_to_num(result, math.inf, math.inf, -math.inf)


def matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None) -> Tensor:
    """The number of singular values (``hermitian``: absolute eigenvalues) above
    ``max(atol, rtol * largest)`` (int64; not differentiable)."""
    from .ops import creation
    from .ops.linalg_decomp import _tolerances

    if A._data.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A._data.dtype.kind not in "fc" or _type_name(A) in ("Half", "BFloat16"):
        raise RuntimeError("This function doesn't handle types other than float and double")
    a = A._data
    if tol is not None:
        atol, rtol = tol, 0.0
    atol_v = atol._data if isinstance(atol, Tensor) else atol
    rtol_v = rtol._data if isinstance(rtol, Tensor) else rtol
    if a.size == 0:
        return creation.tensor(np.zeros(a.shape[:-2], dtype=np.int64))
    atol_a, rtol_a = _tolerances(a, atol_v, rtol_v)
    if hermitian:
        S = np.abs(np.linalg.eigvalsh(a))
        largest = S.max(-1, keepdims=True)
    else:
        S = np.linalg.svd(a, compute_uv=False)
        largest = S[..., :1]
    tol_a = np.maximum(atol_a[..., None], rtol_a[..., None] * largest)
    return creation.tensor(np.sum(S > tol_a, axis=-1).astype(np.int64))


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (``x`` conjugated), broadcast.

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.vecdot(torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor(11.)
    """
    _check_float(x, "linalg.vecdot")
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{_type_name(x)} and y of type {_type_name(y)} instead")
    if x._data.ndim == 1 and y._data.ndim == 1:
        return _products.vdot(x, y)
    # As PyTorch: (x.conj() * y).sum(dim) - ConjBackward0, MulBackward0, SumBackward1.
    return _reduction.sum(_pointwise.mul(_conjugate.conj(x), y), dim)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of ``x``: columns ``x^0, x^1, ..., x^(N-1)`` (N defaults to
    the length of the last dimension).

    Example:
        >>> import chainrule as torch
        >>> torch.linalg.vander(torch.tensor([1., 2., 3.]))
        tensor([[1., 1., 1.],
                [1., 2., 4.],
                [1., 3., 9.]])
    """
    from .ops import creation

    if x._data.ndim < 1:
        raise RuntimeError("N must be greater than 1.")
    if x._data.dtype == np.bool_ or _type_name(x) in ("Half", "BFloat16"):
        raise RuntimeError(
            "linalg.vander supports floating point, complex, and integer tensors, but got "
            f"{_type_name(x)}")
    n = x._data.shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    x_ = _shape.unsqueeze(x, -1)
    ones = creation.ones_like(x_)
    shape = tuple(x._data.shape) + (n - 1,)
    powers = _reduction.cumprod(x_.expand(*shape), -1)
    return _shape.cat([ones, powers], -1)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix of ``A`` (a view: ``A.diagonal(offset, dim1, dim2)``)."""
    return _shape.diagonal(A, offset, dim1, dim2)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its last ``ndim - ind`` dimensions to its
    first ``ind`` (so that ``tensordot(tensorinv(A), A, ind)`` is the identity)."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._data.shape)
    start, end = shape[:ind], shape[ind:]
    prod_start = int(np.prod(start)) if start else 1
    prod_end = int(np.prod(end)) if end else 1
    if prod_start != prod_end:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {prod_end} != {prod_start}")
    result = inv(_shape.reshape(A, (prod_start, -1)))
    return _shape.reshape(result, end + start)


def tensorsolve(A: Tensor, B: Tensor, dims: Sequence[int] | None = None) -> Tensor:
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``."""
    if dims is not None:
        ndim = A._data.ndim
        dest = list(range(ndim - len(dims), ndim))
        A = _shape.movedim(A, list(dims), dest)
    shape = tuple(A._data.shape)
    result_shape = shape[B._data.ndim:]
    prod_result = int(np.prod(result_shape)) if result_shape else 1
    prod_b = int(B._data.size)
    if prod_result != prod_b:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {prod_result} != {prod_b}")
    A2 = _shape.reshape(A, (prod_b, prod_result))
    b = _shape.reshape(B, (prod_b,))
    return _shape.reshape(solve(A2, b), result_shape)
