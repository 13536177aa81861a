"""Products added to a tensor, as one op: ``addmv`` (``beta * self + alpha * mat @ vec``),
``addr`` (``... + alpha * outer(vec1, vec2)``), ``baddbmm`` (batched matrix products) and
``addbmm`` (batched products summed over the batch). ``self`` broadcasts to the product's
shape; with ``beta == 0`` it is ignored (NaN and infinity in it do not propagate).

Each is one node, as in PyTorch (``AddmvBackward0`` ...), with PyTorch's formulas: the
gradient of ``self`` is ``beta * grad``, those of the factors ``alpha`` times the product of
``grad`` with the other factor transposed. (``addmm`` is in ops/linalg.py.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import CPP_TYPE_NAMES, REDUCED_FLOATS, bfloat16, from_numpy_dtype, no_kernel
from .._strides import empty_like_preserving
from .._tensor import Tensor
from . import out_arguments
from ._dispatch import ARITH
from ._registry import declare_methods, op
from .indexing import _scalar_name
from .linalg import _check_expandable
from .scalar_conversion import check_scalar_fits, fill_value_for

__all__ = ["addmv", "addr", "baddbmm", "addbmm"]

_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)
_BFLOAT16 = bfloat16.np
_REDUCED = REDUCED_FLOATS  # float16 and bfloat16


def _combine(
    self: np.ndarray, product: np.ndarray, beta: Any, alpha: Any, dtype: np.dtype
) -> np.ndarray:
    """``beta * self + alpha * product`` in ``dtype`` (``self`` ignored when ``beta`` is 0;
    integer results take the numbers truncated to integers, as PyTorch's kernels)."""
    if dtype.kind in "iu":  # (read as Scalars of the type: uint8 refuses 1000, wraps -1)
        beta, alpha = int(fill_value_for(beta, dtype)), int(fill_value_for(alpha, dtype))
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        out = product
    else:
        out = product + (self if beta == 1 else beta * self)
    return np.ascontiguousarray(np.broadcast_to(out, product.shape), dtype=dtype)


def _in_single_if_half(
    forward: Any, self: np.ndarray, a: np.ndarray, b: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray | None:
    """float16: computed in float32 and rounded once, as PyTorch's CPU kernels do."""
    if self.dtype != _HALF:
        return None
    wide = forward(self.astype(_SINGLE), a.astype(_SINGLE), b.astype(_SINGLE), beta, alpha)
    return wide.astype(_HALF)


def _check_real_scalars(dtype: np.dtype, beta: Any, alpha: Any) -> None:
    """PyTorch's error for a complex ``beta`` or ``alpha`` converted to a real ``dtype``."""
    if dtype.kind == "c":
        return
    for scalar in (beta, alpha):
        if isinstance(scalar, complex) and scalar.imag:  # (no imaginary part: it converts)
            check_scalar_fits(scalar, dtype)


def _as_real(dtype: np.dtype, scalar: Any) -> Any:
    """A complex ``scalar`` (checked to have no imaginary part) as the real number a real
    ``dtype`` takes."""
    return scalar.real if isinstance(scalar, complex) and dtype.kind != "c" else scalar


def _check_scalars(dtype: np.dtype, beta: Any, alpha: Any) -> None:
    """PyTorch's errors for scalars an integer, bool or real result cannot take."""
    if dtype.kind in "fV":  # (V: bfloat16)
        _check_real_scalars(dtype, beta, alpha)
    if dtype.kind == "b":
        for which, scalar in (("beta", beta), ("alpha", alpha)):
            if isinstance(scalar, float | complex):
                raise RuntimeError(
                    f"For integral input tensors, argument {which} must not be a floating "
                    "point number."
                )
        return
    if isinstance(beta, bool) and dtype.kind != "b":
        raise RuntimeError("Boolean beta only supported for Boolean results.")
    if isinstance(alpha, bool) and dtype.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.kind in "iu" and isinstance(beta, float | complex):
        raise RuntimeError(
            "For integral input tensors, argument beta must not be a floating point number."
        )
    if dtype.kind in "iu" and isinstance(alpha, float | complex):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )


# ----------------------------------------------------------------------------------------------
# addmv


def _check_addmv(self: Any, mat: Any, vec: Any, beta: Any, alpha: Any) -> None:
    """addmv's checks, on the arguments' own dtypes (a bfloat16 one computes in float32): the
    shapes and dtypes, then the types PyTorch's kernel has (none for bool and wide unsigned
    integers), then the scalars' conversion to the result's type."""
    if not all(isinstance(a, np.ndarray) for a in (self, mat, vec)):
        return
    _check_addmv_arrays(self, mat, vec)
    if self.dtype.kind == "b" or self.dtype in _UNSIGNED_WITHOUT_KERNEL:
        raise no_kernel("addmv_impl_cpu", self.dtype)
    _check_real_scalars(self.dtype, beta, alpha)


_UNSIGNED_WITHOUT_KERNEL = (np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64))


def _check_addmv_arrays(self: np.ndarray, mat: np.ndarray, vec: np.ndarray) -> None:
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, {vec.ndim}"
        )
    if not self.dtype == mat.dtype == vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_scalar_name(self.dtype)}, {_scalar_name(mat.dtype)}, and "
            f"{_scalar_name(vec.dtype)}"
        )
    if mat.shape[1] != vec.shape[0] or self.ndim and self.shape[0] not in (1, mat.shape[0]):
        size = f"({self.shape[0]})" if self.ndim else "()"
        raise RuntimeError(
            f"size mismatch, got input {size}, mat ({mat.shape[0]}x{mat.shape[1]}), vec "
            f"({vec.shape[0]})"
        )


@op(
    "AddmvBackward0",
    inputs=("self", "mat", "vec"),
    method=True,
    inplace="method",
    check=_check_addmv,
)
def addmv(self, mat, vec, *, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``: a matrix-vector product added to a vector.

    Example:
        >>> import chainrule as torch
        >>> torch.addmv(torch.ones(2), torch.eye(2), torch.tensor([2., 3.]))
        tensor([3., 4.])
    """
    _check_addmv_arrays(self, mat, vec)
    if self.dtype == np.bool_:
        raise no_kernel("addmv_impl_cpu", self.dtype)
    beta, alpha = _as_real(self.dtype, beta), _as_real(self.dtype, alpha)
    if self.dtype == _HALF:
        return _addmv_half(self, mat, vec, beta, alpha)
    return _combine(self, mat @ vec, beta, alpha, self.dtype)


def _addmv_half(
    self: np.ndarray, mat: np.ndarray, vec: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """float16 as PyTorch's CPU kernel: ``beta * self`` rounded to float16 first, then the
    product (in float32) times ``alpha`` (rounded to float16) added, rounded once."""
    product = mat.astype(_SINGLE) @ vec.astype(_SINGLE)
    scaled = product * _SINGLE.type(np.float16(alpha))
    if beta != 0:
        start = self if beta == 1 else (beta * self.astype(_SINGLE)).astype(_HALF)
        scaled = scaled + start.astype(_SINGLE)
    return np.ascontiguousarray(np.broadcast_to(scaled, product.shape), dtype=_HALF)


@addmv.derivative("self")
def _(ops, grad, beta):
    return grad if beta == 1 else ops.mul(grad, beta)


@addmv.derivative("mat")
def _(ops, grad, vec, alpha):
    g = ops.outer(grad, vec)
    return g if alpha == 1 else ops.mul(g, alpha)


@addmv.derivative("vec")
def _(ops, grad, mat, alpha):
    g = ops.mv(ops.t(mat), grad)
    return g if alpha == 1 else ops.mul(g, alpha)


# ----------------------------------------------------------------------------------------------
# addr


def _check_addr_half(self: Any, vec1: Any, vec2: Any, beta: Any, alpha: Any) -> None:
    """A bfloat16 ``addr`` computes in float32: its complex-scalar error names bfloat16 (the
    forward checks every other case, after the shapes)."""
    if getattr(self, "dtype", None) != _BFLOAT16 or vec1.dtype != _BFLOAT16:
        return
    if vec2.dtype != _BFLOAT16 or vec1.ndim != 1 or vec2.ndim != 1:
        return
    _check_expandable(self.shape, (vec1.shape[0], vec2.shape[0]), self.dtype)
    _check_real_scalars(self.dtype, beta, alpha)


@op(
    "AddrBackward0",
    inputs=("self", "vec1", "vec2"),
    promote=ARITH,
    method=True,
    check=_check_addr_half,
)
def addr(self, vec1, vec2, *, beta=1, alpha=1):
    """``beta * self + alpha * outer(vec1, vec2)``: an outer product added to a matrix.

    Example:
        >>> import chainrule as torch
        >>> torch.addr(torch.zeros(2, 2), torch.tensor([1., 2.]), torch.tensor([3., 4.]))
        tensor([[3., 4.],
                [6., 8.]])
    """
    if vec1.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    target = (vec1.shape[0], vec2.shape[0])
    _check_expandable(self.shape, target, self.dtype)
    _check_scalars(self.dtype, beta, alpha)
    beta, alpha = _as_real(self.dtype, beta), _as_real(self.dtype, alpha)
    if self.dtype == _HALF:
        out = _addr_half(self, vec1, vec2, beta, alpha)
    elif self.dtype.kind == "b":  # (bool: and for products, or for sums)
        product = np.logical_and.outer(vec1, vec2) & bool(alpha)
        out = np.ascontiguousarray(np.broadcast_to(product | (self & bool(beta)), target))
    else:
        out = _combine(self, np.multiply.outer(vec1, vec2), beta, alpha, self.dtype)
    if self.shape != target or self.flags.c_contiguous:
        return out
    # An element-wise kernel in PyTorch: the result takes the layout of a full-size ``self``.
    laid_out = empty_like_preserving(self)
    np.copyto(laid_out, out)
    return laid_out


@addr.derivative("self")
def _(ops, grad, beta):
    return grad if beta == 1 else ops.mul(grad, beta)


@addr.derivative("vec1")
def _(ops, grad, vec2, alpha):
    g = ops.mv(grad, vec2)
    return g if alpha == 1 else ops.mul(g, alpha)


@addr.derivative("vec2")
def _(ops, grad, vec1, alpha):
    g = ops.mv(ops.t(grad), vec1)
    return g if alpha == 1 else ops.mul(g, alpha)


def _addr_in_place(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``self.addr_(vec1, vec2)``'s result, after PyTorch's checks of ``addr_``: tensors for the
    vectors, then ``self`` a matrix of exactly the outer product's shape (it does not
    broadcast), before the dtype checks."""
    if len(args) > 2:
        raise TypeError(f"addr_() takes 2 positional arguments but {len(args)} were given")
    names = ("vec1", "vec2")
    vectors = list(args) + [kwargs.pop(n) for n in names[len(args) :] if n in kwargs]
    for position, (name, value) in enumerate(zip(names, vectors, strict=False), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"addr_(): argument '{name}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )
    if len(vectors) == 2:
        vec1, vec2 = vectors[0]._data, vectors[1]._data
        for name, v in zip(names, (vec1, vec2), strict=True):
            if v.ndim != 1:
                raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
        shape = self._data.shape
        if len(shape) != 2:
            raise RuntimeError(f"2D tensor expected, got {len(shape)}D tensor for input")
        if shape != (vec1.shape[0], vec2.shape[0]):
            raise RuntimeError(
                f"size mismatch, input: [{shape[0]}, {shape[1]}], v1: [{vec1.shape[0]}], "
                f"v2: [{vec2.shape[0]}]"
            )
    # The scalars against self's own dtype (a bfloat16 self computes in float32 below).
    _check_scalars(self._data.dtype, kwargs.get("beta", 1), kwargs.get("alpha", 1))
    return addr(self, *vectors, **kwargs)


declare_methods("addr", inplace=_addr_in_place)


# ----------------------------------------------------------------------------------------------
# baddbmm, addbmm


def _check_batches(name: str, self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray) -> None:
    if batch1.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor, got {batch1.ndim}-D")
    if batch2.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor, got {batch2.ndim}-D")
    if name == "baddbmm":
        if not self.dtype == batch1.dtype == batch2.dtype:
            raise RuntimeError(
                f"Input dtypes must be the same, got: input {_c_name(self)}, batch1: "
                f"{_c_name(batch1)}, batch2: {_c_name(batch2)}"
            )
        if batch2.shape[:2] != (batch1.shape[0], batch1.shape[2]):
            raise RuntimeError(
                "Expected size for first two dimensions of batch2 tensor to be: "
                f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                f"[{batch2.shape[0]}, {batch2.shape[1]}]."
            )
        return
    if self.dtype != batch2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got "
            f"{_scalar_name(self.dtype)} and {_scalar_name(batch2.dtype)}"
        )
    if batch1.dtype != batch2.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got "
            f"{_scalar_name(batch1.dtype)} and {_scalar_name(batch2.dtype)}"
        )
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            f"batch1 and batch2 must have same number of batches, got "
            f"{batch1.shape[0]} and {batch2.shape[0]}"
        )
    _check_expandable(self.shape, (batch1.shape[1], batch2.shape[2]), self.dtype)
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
            f"{batch2.shape[1]}x{batch2.shape[2]})"
        )


def _c_name(a: np.ndarray) -> str:
    """A dtype as PyTorch's C++ type name (``float``, ``double``)."""
    return CPP_TYPE_NAMES[from_numpy_dtype(a.dtype)]


@op("BaddbmmBackward0", inputs=("self", "batch1", "batch2"), method=True, inplace="method")
def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * (batch1 @ batch2)``, matrix by matrix over the batch.

    Example:
        >>> import chainrule as torch
        >>> torch.baddbmm(torch.zeros(1, 1, 1), torch.ones(1, 1, 2), torch.ones(1, 2, 1))
        tensor([[[2.]]])
    """
    _check_batches("baddbmm", self, batch1, batch2)
    target = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    _check_expandable(self.shape, target, self.dtype)
    if self.dtype == np.bool_:
        raise no_kernel("baddbmm", self.dtype)
    half = _in_single_if_half(baddbmm.op.forward, self, batch1, batch2, beta, alpha)
    if half is not None:
        return half
    return _combine(self, np.matmul(batch1, batch2), beta, alpha, self.dtype)


@baddbmm.derivative("self")
def _(ops, grad, beta):
    return grad if beta == 1 else ops.mul(grad, beta)


@baddbmm.derivative("batch1")
def _(ops, grad, batch2, alpha):
    g = ops.bmm(grad, ops.transpose(batch2, 1, 2))
    return g if alpha == 1 else ops.mul(g, alpha)


@baddbmm.derivative("batch2")
def _(ops, grad, batch1, alpha):
    g = ops.bmm(ops.transpose(batch1, 1, 2), grad)
    return g if alpha == 1 else ops.mul(g, alpha)


# (half_native: bfloat16 rounds after each batch element, as float16, not once at the end)
@op(
    "AddbmmBackward0",
    inputs=("self", "batch1", "batch2"),
    method=True,
    inplace="method",
    half_native=True,
)
def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``: the batch's matrix products,
    summed, added to a matrix.

    Example:
        >>> import chainrule as torch
        >>> torch.addbmm(torch.zeros(1, 1), torch.ones(3, 1, 2), torch.ones(3, 2, 1))
        tensor([[6.]])
    """
    _check_batches("addbmm", self, batch1, batch2)
    if self.dtype == np.bool_:
        raise no_kernel("addmm_impl_cpu_", self.dtype)
    if self.dtype in _REDUCED:
        return _addbmm_half(self, batch1, batch2, beta, alpha)
    n, m = batch1.shape[0], batch1.shape[2]
    # (one matrix product over the batch and inner dims together: sum_b A_b @ B_b)
    flat1 = np.moveaxis(batch1, 0, 1).reshape(batch1.shape[1], n * m)
    flat2 = batch2.reshape(n * m, batch2.shape[2])
    return _combine(self, flat1 @ flat2, beta, alpha, self.dtype)


def _addbmm_half(
    self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """float16 and bfloat16 as PyTorch's CPU kernel: one ``addmm`` per batch element into the
    result (each in float32, rounded to the half type), ``beta * self`` in the first."""
    target = (batch1.shape[1], batch2.shape[2])
    if beta == 0:
        out = np.zeros(target, _SINGLE)
    else:
        out = beta * np.broadcast_to(self, target).astype(_SINGLE)
    for b in range(len(batch1)):
        product = batch1[b].astype(_SINGLE) @ batch2[b].astype(_SINGLE)
        out = (np.asarray(out, _SINGLE) + alpha * product).astype(self.dtype)
    return np.ascontiguousarray(out, dtype=self.dtype)


def _addr_half(
    self: np.ndarray, vec1: np.ndarray, vec2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """float16 as PyTorch's CPU kernel: ``beta * self + alpha * vec1 * vec2`` element-wise,
    each operation rounded to float16 (the numbers too)."""
    beta16 = _SINGLE.type(np.float16(beta))
    alpha16 = _SINGLE.type(np.float16(alpha))
    scaled1 = (alpha16 * vec1.astype(_SINGLE)).astype(_HALF).astype(_SINGLE)
    product = np.multiply.outer(scaled1, vec2.astype(_SINGLE)).astype(_HALF)
    if beta == 0:
        out = product
    else:
        scaled = (beta16 * self.astype(_SINGLE)).astype(_HALF).astype(_SINGLE)
        out = (scaled + product.astype(_SINGLE)).astype(_HALF)
    return np.ascontiguousarray(np.broadcast_to(out, product.shape))


def _batch_expanded(ops: Any, grad: Any, batches: int) -> Any:
    rows, cols = grad.shape
    return ops.expand(ops.unsqueeze(grad, 0), (batches, rows, cols))


@addbmm.derivative("self")
def _(ops, grad, beta):
    return grad if beta == 1 else ops.mul(grad, beta)


@addbmm.derivative("batch1")
def _(ops, grad, batch2, alpha):
    g = ops.bmm(_batch_expanded(ops, grad, batch2.shape[0]), ops.transpose(batch2, 1, 2))
    return g if alpha == 1 else ops.mul(g, alpha)


@addbmm.derivative("batch2")
def _(ops, grad, batch1, alpha):
    g = ops.bmm(ops.transpose(batch1, 1, 2), _batch_expanded(ops, grad, batch1.shape[0]))
    return g if alpha == 1 else ops.mul(g, alpha)


out_arguments.allow_out(out_arguments.SAME, addmv, baddbmm)
out_arguments.allow_out(out_arguments.CAST, addr)
out_arguments.allow_out(out_arguments.ADDBMM, addbmm)
