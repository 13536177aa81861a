"""The op table and the public functions built on it.

Importing this package registers every op, builds the two ``ops`` namespaces derivatives receive
(NumPy forwards for the fast path, the public ops for ``create_graph=True``) and attaches to
:class:`~chainrule.Tensor` the methods and in-place methods the ops modules declare (where each
function is defined: ``@op(..., method=True, inplace=True)``, ``@tensor_method``), and the
operators.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from .._backend import special
from .._tensor import Tensor

# (importing a module registers its ops and declares its Tensor methods)
from . import (
    _jvp_rules,  # noqa: F401 (the forward-mode allowlist)
    activation,
    combinatorics,  # noqa: F401 (combinations, vander)
    combining,
    complex_ops,
    conjugate,
    contractions,
    copying,
    counting,
    covariance,  # noqa: F401 (cov, corrcoef)
    creation,
    cumulative,
    differences,  # noqa: F401 (diff, trapezoid ...)
    distances,
    distribution_sampling,
    divisibility,  # noqa: F401 (gcd, lcm)
    fft_ops,
    filling,  # noqa: F401 (torch.fill)
    float_parts,  # noqa: F401 (ldexp, frexp)
    fused_products,  # noqa: F401 (addmv, addr, baddbmm, addbmm)
    histograms,  # noqa: F401 (histogram, histogramdd)
    index_reductions,
    index_writes,
    indexing,
    inplace,
    inplace_functions,  # noqa: F401 (torch.exp_ ...)
    linalg,
    linalg_decomp,
    lookup,  # noqa: F401 (isin, unravel_index)
    masked_writes,  # noqa: F401 (masked_scatter)
    min_max,  # noqa: F401 (aminmax)
    new_tensors,  # noqa: F401 (Tensor.new_zeros ...)
    nn_ops,
    order_statistics,  # noqa: F401 (nanmedian, mode)
    pointwise,
    quantiles,  # noqa: F401 (quantile, nanquantile)
    queries,  # noqa: F401 (is_signed, is_nonzero ...)
    rearranging,
    reduction,
    renorm,
    sampling,
    scatter_views,
    shape,
    special_ops,
    stft,  # noqa: F401 (stft, istft)
    unsafe_splits,  # noqa: F401 (unsafe_split, unsafe_chunk ...)
    view_copies,  # noqa: F401 (t_copy, transpose_copy ...)
    windows,  # noqa: F401 (hann_window ...)
)
from ._dispatch import make_operator
from ._dispatch_modes import aten  # torch.ops.aten: operators as dispatch modes see them
from ._registry import as_method, bind_namespaces, declared_methods

__all__ = [
    "aten", "activation", "complex_ops", "conjugate", "copying", "creation", "indexing", "linalg",
    "pointwise", "reduction", "shape",
]


# ----------------------------------------------------------------------------------------------
# The derivative namespaces. Each entry is a public op; on the fast path its NumPy forward is
# used directly (same signature, arrays in and out).

_PRIMITIVES: dict[str, Any] = {
    "exp": pointwise.exp,
    "log": pointwise.log,
    "log1p": pointwise.log1p,
    "sqrt": pointwise.sqrt,
    "sin": pointwise.sin,
    "cos": pointwise.cos,
    "sinh": pointwise.sinh,
    "cosh": pointwise.cosh,
    "tanh": pointwise.tanh,
    "sigmoid": pointwise.sigmoid,
    "sign": pointwise.sign,
    "sgn": pointwise.sgn,
    "abs": pointwise.abs,
    "floor": pointwise.floor,
    "trunc": pointwise.trunc,
    "isnan": pointwise.isnan,
    "isfinite": pointwise.isfinite,
    "where": pointwise._where,
    "clamp": pointwise._clamp_scalar,
    "maximum": pointwise.maximum,
    "mul": pointwise.mul,  # for a number factor: float16 scaled in float32, as PyTorch
    "minimum": pointwise.minimum,
    "sum": reduction._sum_dim,
    "cumsum": reduction._cumsum,
    "cumprod": reduction._cumprod,
    "gather_along": reduction._gather_along,
    "scatter_along": reduction._scatter_along,
    "digamma": special_ops.digamma,
    "polygamma": special_ops._polygamma,
    "expand": shape._expand,
    "reshape": shape._unsafe_view,
    "unsqueeze": shape.unsqueeze,
    "t": shape.t,
    "transpose": shape.transpose,
    "permute": shape._permute,
    "mm": linalg.mm,
    "mv": linalg.mv,
    "bmm": linalg.bmm,
}
# Slicing views, indexing and their backward helpers (select_backward, index_backward ...).
_PRIMITIVES.update(shape.PRIMITIVES)
_PRIMITIVES.update(indexing.PRIMITIVES)
# Element-wise helpers the derivatives share (pow with PyTorch's fast paths ...).
_PRIMITIVES.update(pointwise.PRIMITIVES)
_PRIMITIVES.update(special_ops.PRIMITIVES)
_PRIMITIVES.update(fft_ops.PRIMITIVES)
_PRIMITIVES.update(distances.PRIMITIVES)
_PRIMITIVES.update(renorm.PRIMITIVES)
_PRIMITIVES.update(distribution_sampling.PRIMITIVES)
_PRIMITIVES.update(reduction.PRIMITIVES)
_PRIMITIVES.update(rearranging.PRIMITIVES)
_PRIMITIVES.update(cumulative.PRIMITIVES)
_PRIMITIVES.update(scatter_views.PRIMITIVES)
_PRIMITIVES.update(index_writes.PRIMITIVES)
_PRIMITIVES.update(index_reductions.PRIMITIVES)
# Layers' adjoints (a convolution's gradient is a convolution, pooling's a scatter ...).
_PRIMITIVES.update(nn_ops.PRIMITIVES)


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _numpy_outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.multiply.outer(a, b)


def _build_namespaces() -> None:
    numpy_ns = SimpleNamespace(**{name: fn.op.forward for name, fn in _PRIMITIVES.items()})
    numpy_ns.outer = _numpy_outer
    numpy_ns.erf = special.erf
    # A derivative that is exactly zero (PyTorch's zeros_like: no graph behind it).
    numpy_ns.zeros_like = np.zeros_like
    tensor_ns = SimpleNamespace(**_PRIMITIVES)
    tensor_ns.outer = linalg.outer
    tensor_ns.erf = pointwise.erf
    tensor_ns.zeros_like = creation.zeros_like
    # cat and stack take a list of tensors: one op per list length, so bound by hand.
    numpy_ns.cat = shape.cat_arrays
    numpy_ns.stack = shape.stack_arrays
    tensor_ns.cat = shape.cat
    tensor_ns.stack = shape.stack
    # Complex values (PyTorch's formulas conjugate where the Wirtinger convention needs it;
    # ``conj`` of a real value is the value itself).
    numpy_ns.conj = conjugate.conj_value
    tensor_ns.conj = conjugate.conj_tensor
    numpy_ns.real = np.real
    tensor_ns.real = complex_ops.real
    numpy_ns.imag = np.imag
    tensor_ns.imag = complex_ops.imag
    numpy_ns.view_as_real = complex_ops._view_as_real.op.forward
    tensor_ns.view_as_real = complex_ops.view_as_real
    numpy_ns.view_as_complex = complex_ops._view_as_complex.op.forward
    tensor_ns.view_as_complex = complex_ops.view_as_complex
    numpy_ns.contiguous = np.ascontiguousarray
    tensor_ns.contiguous = copying.contiguous
    numpy_ns.resolve_conj = _same
    tensor_ns.resolve_conj = conjugate.resolve_conj
    # Matrix helpers of the linalg derivatives (products, solves, decompositions).
    for name, (array_fn, tensor_fn) in linalg_decomp.HELPERS.items():
        setattr(numpy_ns, name, array_fn)
        setattr(tensor_ns, name, tensor_fn)
    bind_namespaces(numpy_ns, tensor_ns)


_build_namespaces()


# ----------------------------------------------------------------------------------------------
# Tensor methods

# Each ops module declares its methods where it defines them (``@op(..., method=True,
# inplace=True)``, ``@tensor_method``: see ops/_registry.py); here they are attached. An op's
# public function becomes its method form (argument errors count positions after ``self``).
_DECLARED_METHODS, _DECLARED_IN_PLACE = declared_methods()
for _name, _fn in _DECLARED_METHODS.items():
    setattr(Tensor, _name, as_method(_fn))


def _property(fn: Any, doc: str) -> property:
    return property(fn, doc=doc)


Tensor.T = _property(shape.full_transpose, "All dimensions reversed.")  # type: ignore[attr-defined]
Tensor.mT = _property(shape.matrix_transpose, "The last two dimensions swapped.")  # type: ignore[attr-defined]
Tensor.H = _property(shape.conj_transpose, "Conjugate transpose of a matrix.")  # type: ignore[attr-defined]
Tensor.mH = _property(shape.matrix_conj_transpose, "Conjugate ``mT``.")  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------------------------
# Operators. The common case goes straight to ``apply`` with positional arguments.

_number_types = (int, float, bool, complex)


def _operand_ok(other: Any) -> bool:
    return (
        isinstance(other, Tensor) or type(other) in _number_types or isinstance(other, np.generic)
    )


# ``a + b``, ``a * b`` ... are the ops' own fast paths (alpha defaults to 1), which return
# NotImplemented for an operand that is no tensor or number, as PyTorch's operators do.
Tensor.__add__ = Tensor.__radd__ = make_operator(pointwise._add.op)  # type: ignore[method-assign]
Tensor.__mul__ = Tensor.__rmul__ = make_operator(pointwise.mul.op)  # type: ignore[method-assign]
Tensor.__sub__ = make_operator(pointwise._sub.op)  # type: ignore[method-assign]
Tensor.__truediv__ = make_operator(pointwise._div.op)  # type: ignore[method-assign]


def _rsub(self: Tensor, other: Any) -> Any:
    if not _operand_ok(other):
        return NotImplemented
    return pointwise.rsub(self, other)


def _rtruediv(self: Tensor, other: Any) -> Any:
    if isinstance(other, np.ndarray):
        # PyTorch's ``other / self`` is ``self.reciprocal() * other`` even for an array: the
        # product goes to NumPy (ndarray's reflected multiply), which returns a tensor.
        return pointwise.reciprocal(self) * other
    if not _operand_ok(other):
        return NotImplemented
    # PyTorch computes ``other / self`` as ``self.reciprocal() * other``.
    return pointwise.reciprocal(self) * other


def _floordiv(self: Tensor, other: Any) -> Any:
    return pointwise.floor_divide(self, other) if _operand_ok(other) else NotImplemented


def _rfloordiv(self: Tensor, other: Any) -> Any:
    if not _operand_ok(other):
        return NotImplemented
    # PyTorch's ``torch.floor_divide(other, self)``: the number is a wrapped scalar, so a 0-d
    # integer ``self`` keeps its dtype (``2 // tensor(3, dtype=uint8)`` is uint8).
    return pointwise.floor_divide(other, self)


def _mod(self: Tensor, other: Any) -> Any:
    return pointwise.remainder(self, other) if _operand_ok(other) else NotImplemented


def _rmod(self: Tensor, other: Any) -> Any:
    if not _operand_ok(other):
        return NotImplemented
    return pointwise.remainder(other, self)  # (a number: PyTorch's Scalar-Tensor overload)


def _pow(self: Tensor, other: Any) -> Any:
    return pointwise.pow(self, other) if _operand_ok(other) else NotImplemented


def _rpow(self: Tensor, other: Any) -> Any:
    return pointwise.pow(other, self) if _operand_ok(other) else NotImplemented


def _invert(self: Tensor) -> Tensor:
    """``~self``: PyTorch's operator refuses floating and complex tensors itself (a TypeError,
    where ``bitwise_not`` names its kernel)."""
    if self._data.dtype.kind not in "iub":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return pointwise.bitwise_not(self)


def _matmul(self: Tensor, other: Any) -> Any:
    return linalg.matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul(self: Tensor, other: Any) -> Any:
    return linalg.matmul(other, self) if isinstance(other, Tensor) else NotImplemented


def _compare(fn: Any) -> Any:
    def compare(self: Tensor, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return fn(self, other)

    compare.__name__ = f"__{fn.__name__}__"  # (PyTorch's: what modes and profilers see)
    return compare


def _eq(self: Tensor, other: Any) -> Any:
    """``self == other``; unlike the other comparisons, PyTorch's ``==`` takes a NumPy array,
    as ``torch.from_numpy`` would (its errors too; an array of a type it lacks: NotImplemented,
    so Python compares identities)."""
    if isinstance(other, np.ndarray):
        try:
            other = creation.from_numpy(other)
        except TypeError:
            return NotImplemented
    elif not _operand_ok(other):
        return NotImplemented
    return pointwise.eq(self, other)


def _logical(fn: Any) -> Any:
    def logical(self: Tensor, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return fn(self, other)

    return logical


def _reflected(fn: Any) -> Any:
    """``other <op> self`` (``__rlshift__`` ...): ``fn(other, self)``."""

    def reflected(self: Tensor, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return fn(other, self)

    return reflected


Tensor.__rsub__ = _rsub  # type: ignore[method-assign]
Tensor.__rtruediv__ = _rtruediv  # type: ignore[method-assign]
Tensor.__floordiv__ = _floordiv  # type: ignore[method-assign]
Tensor.__rfloordiv__ = _rfloordiv  # type: ignore[method-assign]
Tensor.__mod__ = _mod  # type: ignore[method-assign]
Tensor.__rmod__ = _rmod  # type: ignore[method-assign]
Tensor.__pow__ = _pow  # type: ignore[method-assign]
Tensor.__rpow__ = _rpow  # type: ignore[method-assign]
Tensor.__matmul__ = _matmul  # type: ignore[method-assign]
Tensor.__rmatmul__ = _rmatmul  # type: ignore[method-assign]
Tensor.__neg__ = pointwise.neg  # type: ignore[method-assign]
Tensor.__pos__ = pointwise.positive  # type: ignore[method-assign]
Tensor.__abs__ = pointwise.abs  # type: ignore[method-assign]
Tensor.__invert__ = _invert  # type: ignore[method-assign]
Tensor.__eq__ = _eq  # type: ignore[method-assign,assignment]
Tensor.__ne__ = _compare(pointwise.ne)  # type: ignore[method-assign,assignment]
Tensor.__lt__ = _compare(pointwise.lt)  # type: ignore[method-assign]
Tensor.__le__ = _compare(pointwise.le)  # type: ignore[method-assign]
Tensor.__gt__ = _compare(pointwise.gt)  # type: ignore[method-assign]
Tensor.__ge__ = _compare(pointwise.ge)  # type: ignore[method-assign]
Tensor.__and__ = Tensor.__rand__ = _logical(pointwise.bitwise_and)  # type: ignore[method-assign]
Tensor.__or__ = Tensor.__ror__ = _logical(pointwise.bitwise_or)  # type: ignore[method-assign]
Tensor.__xor__ = Tensor.__rxor__ = _logical(pointwise.bitwise_xor)  # type: ignore[method-assign]
_lshift = pointwise.SHIFT_OPS["bitwise_left_shift"]
_rshift = pointwise.SHIFT_OPS["bitwise_right_shift"]
Tensor.__lshift__ = make_operator(_lshift.op)  # type: ignore[method-assign]
Tensor.__rshift__ = make_operator(_rshift.op)  # type: ignore[method-assign]
Tensor.__rlshift__ = _reflected(_lshift)  # type: ignore[method-assign]
Tensor.__rrshift__ = _reflected(_rshift)  # type: ignore[method-assign]
Tensor.__hash__ = lambda self: id(self)  # type: ignore[method-assign,assignment]


# ----------------------------------------------------------------------------------------------
# In-place methods: an op's result, written into ``self`` (see ops/inplace.py). For each declared
# in-place form, ``Tensor.<name>_`` writes what was declared: the out-of-place function, the op
# PyTorch records in place (``gt_``: GtBackward0/1), or ``"method"``: ``Tensor.<name>``.
for _name, _source in _DECLARED_IN_PLACE.items():
    _out_of_place = getattr(Tensor, _name) if _source == "method" else _source
    setattr(Tensor, _name + "_", inplace.inplace_method(_out_of_place, _name + "_"))
for _name in ("fill_", "zero_", "copy_", "uniform_", "normal_", "t_", "transpose_", "swapaxes_",
              "swapdims_", "squeeze_", "unsqueeze_", "as_strided_", "resize_", "resize_as_",
              "set_"):
    setattr(Tensor, _name, getattr(inplace, _name))

Tensor.__iadd__ = inplace.augmented(pointwise._add, "__iadd__")  # type: ignore[method-assign,attr-defined]
Tensor.__isub__ = inplace.augmented(pointwise._sub, "__isub__")  # type: ignore[method-assign,attr-defined]
Tensor.__imul__ = inplace.augmented(pointwise.mul, "__imul__")  # type: ignore[method-assign,attr-defined]
Tensor.__itruediv__ = inplace.augmented(pointwise._div, "__itruediv__")  # type: ignore[attr-defined]
Tensor.__ipow__ = inplace.augmented(pointwise.pow, "__ipow__")  # type: ignore[attr-defined]
Tensor.__ifloordiv__ = inplace.augmented(pointwise.floor_divide_in_place_op, "__ifloordiv__")  # type: ignore[attr-defined]
Tensor.__imod__ = inplace.augmented(pointwise.remainder, "__imod__")  # type: ignore[attr-defined]
Tensor.__iand__ = inplace.augmented(pointwise.bitwise_and, "__iand__")  # type: ignore[attr-defined]
Tensor.__ior__ = inplace.augmented(pointwise.bitwise_or, "__ior__")  # type: ignore[attr-defined]
Tensor.__ixor__ = inplace.augmented(pointwise.bitwise_xor, "__ixor__")  # type: ignore[attr-defined]
_shifts = inplace.SHIFTS_IN_PLACE
Tensor.__ilshift__ = inplace.augmented(_shifts["bitwise_left_shift"], "__ilshift__")  # type: ignore[attr-defined]
Tensor.__irshift__ = inplace.augmented(_shifts["bitwise_right_shift"], "__irshift__")  # type: ignore[attr-defined]
