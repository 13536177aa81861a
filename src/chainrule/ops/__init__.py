"""The op table and the public functions built on it.

Importing this package registers every op, builds the two ``ops`` namespaces derivatives receive
(NumPy forwards for the fast path, the public ops for ``create_graph=True``) and attaches the
ops to :class:`~chainrule.Tensor` as methods and operators.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from .._backend import special
from .._tensor import Tensor
from . import (
    activation,
    copying,
    creation,
    indexing,
    inplace,
    linalg,
    nn_ops,
    pointwise,
    reduction,
    sampling,
    shape,
    special_ops,
)
from ._dispatch import make_operator
from ._registry import as_method, bind_namespaces

__all__ = [
    "activation", "copying", "creation", "indexing", "linalg", "pointwise", "reduction", "shape",
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
_PRIMITIVES.update(reduction.PRIMITIVES)
# Layers' adjoints (a convolution's gradient is a convolution, pooling's a scatter ...).
_PRIMITIVES.update(nn_ops.PRIMITIVES)


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
    bind_namespaces(numpy_ns, tensor_ns)


_build_namespaces()


# ----------------------------------------------------------------------------------------------
# Tensor methods

_METHODS: dict[str, Any] = {}
for _module in (pointwise, reduction, linalg, activation):
    for _name in _module.__all__:
        _fn = getattr(_module, _name)
        if callable(_fn) and not _name.startswith("_"):
            _METHODS[_name] = _fn
# Functions of these modules that are no Tensor methods in PyTorch.
for _name in ("apply_reduction", "binary_cross_entropy_with_logits", "softplus_", "linear",
              "normalize_dims", "expand_reduced", "var_mean", "std_mean", "rsub"):
    _METHODS.pop(_name, None)


def _where_method(self: Tensor, condition: Any, other: Any) -> Tensor:
    """``x.where(condition, y)``: ``torch.where(condition, x, y)`` (the method's self is input)."""
    return pointwise.where(condition, self, other)


_METHODS["where"] = _where_method

_METHODS.update(
    {
        "view": shape.view,
        "view_as": shape.view_as,
        "reshape": shape.reshape,
        "reshape_as": shape.reshape_as,
        "flatten": shape.flatten,
        "ravel": shape.ravel,
        "unflatten": shape.unflatten,
        "squeeze": shape.squeeze,
        "unsqueeze": shape.unsqueeze,
        "t": shape.t,
        "transpose": shape.transpose,
        "swapaxes": shape.swapaxes,
        "swapdims": shape.swapdims,
        "permute": shape.permute,
        "movedim": shape.movedim,
        "moveaxis": shape.moveaxis,
        "adjoint": shape.adjoint,
        "expand": shape.expand,
        "expand_as": shape.expand_as,
        "broadcast_to": shape.broadcast_to,
        "clone": copying.clone,
        "contiguous": copying.contiguous,
        "to": copying.to,
        "float": copying.float_,
        "double": copying.double,
        "half": copying.half,
        "long": copying.long,
        "int": copying.int_,
        "short": copying.short,
        "char": copying.char,
        "byte": copying.byte,
        "bool": copying.bool_,
        "cpu": copying.cpu,
        "cuda": copying.cuda,
        "type_as": copying.type_as,
        "softmax": activation.softmax,
        "log_softmax": activation.log_softmax,
        "new_tensor": None,
    }
)
_METHODS.pop("new_tensor")
_METHODS.update(shape.TENSOR_METHODS)  # repeat, split, narrow, flip ...
_METHODS.update(indexing.TENSOR_METHODS)  # __getitem__, __setitem__, __iter__, gather ...
_METHODS.update({"bernoulli": sampling.bernoulli, "bernoulli_": sampling.bernoulli_,
                 "multinomial": creation.multinomial})
_METHODS.update(pointwise.SHIFT_METHODS)  # (their errors list the methods' overloads)

for _name, _fn in _METHODS.items():
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
    if not _operand_ok(other):
        return NotImplemented
    # PyTorch computes ``other / self`` as ``self.reciprocal() * other``.
    return pointwise.reciprocal(self) * other


def _floordiv(self: Tensor, other: Any) -> Any:
    return pointwise.floor_divide(self, other) if _operand_ok(other) else NotImplemented


def _rfloordiv(self: Tensor, other: Any) -> Any:
    if not _operand_ok(other):
        return NotImplemented
    return pointwise.floor_divide(_as_tensor_like(other, self), self)


def _mod(self: Tensor, other: Any) -> Any:
    return pointwise.remainder(self, other) if _operand_ok(other) else NotImplemented


def _rmod(self: Tensor, other: Any) -> Any:
    if not _operand_ok(other):
        return NotImplemented
    return pointwise.remainder(other, self)  # (a number: PyTorch's Scalar-Tensor overload)


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    """A number as a 0-d tensor, with the dtype PyTorch's wrapped numbers get."""
    from .. import _dtype

    d = _dtype.combine(None, None, _dtype.scalar_category(value))
    return creation.tensor(value, dtype=d)


def _pow(self: Tensor, other: Any) -> Any:
    return pointwise.pow(self, other) if _operand_ok(other) else NotImplemented


def _rpow(self: Tensor, other: Any) -> Any:
    return pointwise.pow(other, self) if _operand_ok(other) else NotImplemented


def _matmul(self: Tensor, other: Any) -> Any:
    return linalg.matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul(self: Tensor, other: Any) -> Any:
    return linalg.matmul(other, self) if isinstance(other, Tensor) else NotImplemented


def _compare(fn: Any) -> Any:
    def compare(self: Tensor, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return fn(self, other)

    return compare


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
Tensor.__pos__ = lambda self: self  # type: ignore[method-assign]
Tensor.__abs__ = pointwise.abs  # type: ignore[method-assign]
Tensor.__invert__ = pointwise.bitwise_not  # type: ignore[method-assign]
Tensor.__eq__ = _compare(pointwise.eq)  # type: ignore[method-assign,assignment]
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
# In-place methods: the out-of-place op, written into ``self`` (see ops/inplace.py).

_INPLACE_FROM: dict[str, Any] = {
    name: getattr(pointwise, name)
    for name in (
        "add", "sub", "subtract", "mul", "div", "divide", "true_divide", "floor_divide",
        "remainder", "fmod", "pow",
        "neg", "negative", "abs", "absolute", "sign", "sgn", "reciprocal", "exp", "exp2", "expm1",
        "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square", "sin", "cos", "tan", "asin",
        "acos", "atan", "arcsin", "arccos", "arctan", "atan2", "arctan2", "sinh", "cosh", "tanh",
        "asinh", "acosh", "atanh", "sigmoid", "relu", "erf", "erfc", "clamp", "clip",
        "clamp_min", "clamp_max", "lerp", "floor", "ceil", "round", "trunc", "frac", "hypot",
        "xlogy", "nan_to_num", "logical_and", "logical_or", "logical_xor", "logical_not",
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    )
    if hasattr(pointwise, name)
}
for _name in ("masked_fill", "index_add", "scatter", "scatter_add", "index_put", "put",
              "index_fill", "fix", "erfinv", "digamma", "lgamma", "cumsum", "cumprod", "tril",
              "triu", "addmm"):
    if hasattr(Tensor, _name):
        _INPLACE_FROM[_name] = getattr(Tensor, _name)
# In place, comparisons record a node of their own (``gt_`` and its alias ``greater_``:
# GtBackward0/1, a zero derivative), where out of place they have no history.
_INPLACE_FROM.update(pointwise.COMPARISONS_IN_PLACE)
for _alias, _name in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"),
                      ("less_equal", "le"), ("not_equal", "ne")):
    _INPLACE_FROM[_alias] = pointwise.COMPARISONS_IN_PLACE[_name]
_INPLACE_FROM["polygamma"] = special_ops.polygamma_in_place_op
_INPLACE_FROM["floor_divide"] = pointwise.floor_divide_in_place_op
_INPLACE_FROM.update(inplace.SHIFTS_IN_PLACE)
for _name, _fn in _INPLACE_FROM.items():
    setattr(Tensor, _name + "_", inplace.inplace_method(_fn, _name + "_"))
for _name in ("fill_", "zero_", "copy_", "uniform_", "normal_", "t_", "transpose_", "swapaxes_",
              "swapdims_", "squeeze_", "unsqueeze_"):
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
Tensor.__ilshift__ = inplace.augmented(_INPLACE_FROM["bitwise_left_shift"], "__ilshift__")  # type: ignore[attr-defined]
Tensor.__irshift__ = inplace.augmented(_INPLACE_FROM["bitwise_right_shift"], "__irshift__")  # type: ignore[attr-defined]
