"""Element-wise ops: arithmetic, powers, exponentials, trigonometry, activations, comparisons.

Each op: its NumPy forward, then one derivative per differentiable input. Gradients are returned
at the broadcast shape; the engine reduces them to each input's shape.
"""

from __future__ import annotations

import cmath
import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype
from .._backend import special
from .._meta import ITEM_MESSAGE, MetaArray, refuse_data_dependent
from .._strides import copy_preserving_layout, empty_preserving_layout, full_preserving_layout
from .._tensor import Tensor, wrap
from ..autograd.grad_mode import GRAD, mode_get
from ..autograd.node import type_name
from . import out_arguments
from ._dispatch import broadcast_error
from ._registry import (
    ARITH,
    COMPARE,
    FLOAT,
    KEEP,
    argument_position,
    declare_methods,
    recorded_as,
    refuses_complex,
    tensor_method,
    zero_derivative,
)
from ._registry import op as table_op
from .scalar_conversion import check_number_argument, number_operand_dtype

#: Every op of this module is element-wise (a TensorIterator op in PyTorch): declared with
#: ``elementwise=True``, so a result of several tensors is laid out as PyTorch lays it out.
op = functools.partial(table_op, elementwise=True)

# PyTorch's complex errors worded otherwise than "<kernel>" not implemented for '<type>'.
_CLAMP_COMPLEX = "clamp is not supported for complex types"  # clamp, relu, hardtanh
_SIGN_COMPLEX = (
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
    "use torch.sgn instead."
)

__all__ = [
    "addcmul",
    "addcdiv",
    "logaddexp",
    "logaddexp2",
    "copysign",
    "add",
    "sub",
    "subtract",
    "rsub",
    "mul",
    "div",
    "true_divide",
    "floor_divide",
    "remainder",
    "fmod",
    "pow",
    "neg",
    "negative",
    "abs",
    "absolute",
    "sign",
    "sgn",
    "reciprocal",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sqrt",
    "rsqrt",
    "square",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "arcsin",
    "arccos",
    "arctan",
    "atan2",
    "arctan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "multiply",
    "sigmoid",
    "relu",
    "erf",
    "erfc",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "minimum",
    "maximum",
    "fmin",
    "fmax",
    "where",
    "lerp",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "greater",
    "less",
    "greater_equal",
    "less_equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "isnan",
    "isinf",
    "isfinite",
    "nan_to_num",
    "hypot",
    "xlogy",
    "heaviside",
    "divide",
    "fix",
    "float_power",
    "isclose",
    "allclose",
    "equal",
    "deg2rad",
    "rad2deg",
    "signbit",
    "isposinf",
    "isneginf",
    "isreal",
    "positive",
]

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# ------------------------------------------------------------------------------------------------
# Half precision: PyTorch's CPU kernels compute float16 in float32 and round once


_HALF = np.dtype(np.float16)
_BFLOAT16 = _dtype.BFLOAT16
_SINGLE = np.dtype(np.float32)
_INT64 = np.dtype(np.int64)
_DOUBLE = np.dtype(np.float64)


def _single_in_double(ufunc: Any, x: np.ndarray) -> np.ndarray:
    """``ufunc(x)``; for float32 computed in float64 and rounded once. PyTorch's float32
    kernels (SLEEF, within an ulp) agree with the correctly rounded value far more often than
    NumPy's float32 loops do: exp 99% of random inputs against 60%, tanh 99.9% against 68%,
    log10 99.9% against 50% (/tmp/ulp3.py; sin, cos, log, atan: 92-95% against 73-87%)."""
    if type(x) is not np.ndarray or x.dtype != _SINGLE:
        return ufunc(x)
    with np.errstate(over="ignore", under="ignore"):
        return ufunc(x.astype(_DOUBLE)).astype(_SINGLE)
_REDUCED = _dtype.REDUCED_FLOATS  # float16 and bfloat16


def _half_type(value: Any) -> np.dtype | None:
    """The half-precision dtype (float16, bfloat16) of an array or Tensor; None otherwise."""
    data = value._data if isinstance(value, Tensor) else value
    if type(data) is np.ndarray and data.dtype in _REDUCED:
        return data.dtype
    return None


def _is_half(value: Any) -> bool:
    return _half_type(value) is not None


def _to_single(value: Any) -> Any:
    if type(value) is np.ndarray:
        return value.astype(_SINGLE) if value.dtype in _REDUCED else value
    if isinstance(value, Tensor) and value._data.dtype in _REDUCED:
        from .copying import _to_copy

        return _to_copy(value, _dtype.float32)  # recorded: create_graph differentiates it
    if isinstance(value, tuple | list):
        return type(value)(_to_single(v) for v in value)
    return value


def _to_half(value: Any, half: np.dtype = _HALF) -> Any:
    """Float32 results rounded to the half-precision type ``half``."""
    if type(value) is np.ndarray or type(value) is np.float32:  # (0-d ufunc results: scalars)
        return value.astype(half) if value.dtype == _SINGLE else value
    if isinstance(value, Tensor) and value._data.dtype == _SINGLE:
        from .copying import _to_copy

        return _to_copy(value, _dtype.from_numpy_dtype(half))
    if isinstance(value, tuple | list):
        return type(value)(_to_half(v, half) for v in value)
    return value


def _first_half_type(values: Any) -> np.dtype | None:
    for v in values:
        half = _half_type(v)
        if half is not None:
            return half
    return None


def half_in_float32(forward: Any) -> Any:
    """Decorate an op's forward (before ``@op``): float16 inputs are computed in float32 and the
    result rounded to float16 once, as PyTorch's CPU kernels do for half precision. A forward
    of several NumPy steps would otherwise round after each and drift from PyTorch's numbers
    (``gelu``, ``softplus`` ...); single-ufunc forwards need no help (NumPy's float16 ufuncs
    already compute in float32). Float32 and float64 inputs pay one dtype check. (bfloat16
    inputs never get here: the dispatch computes them in float32, ``_bfloat16``.)"""
    from ._registry import _positional

    positional = _positional(forward)

    @functools.wraps(forward)
    def run(*args: Any) -> Any:
        first = args[0]
        if type(first) is np.ndarray:  # the common case: the (promoted) tensor comes first
            if first.dtype is not _HALF:
                return positional(*args)
        elif not any(_is_half(a) for a in args):
            return positional(*args)
        return _to_half(positional(*[_to_single(a) for a in args]))

    return run


def fast_path_in_float32(derivative: Any) -> Any:
    """Decorate a derivative: on the fast path a half-precision gradient is computed in
    float32 and rounded once, as PyTorch's fused backward kernels do (``silu_backward``,
    ``mish_backward`` ...). The fast path is arrays, or for bfloat16 Tensors with grad mode
    off (``_opnode``'s bfloat16 backward); the recorded path (``create_graph=True``) runs the
    formula as written, in the tensors' dtype, as PyTorch's differentiable version of it does."""

    @functools.wraps(derivative)
    def run(ops: Any, grad: Any, *args: Any) -> Any:
        if type(grad) is np.ndarray:
            if grad.dtype == _HALF:
                out = derivative(ops, grad.astype(_SINGLE), *[_to_single(a) for a in args])
                return _to_half(out)
        elif (
            isinstance(grad, Tensor)
            and grad._data.dtype is _dtype.BFLOAT16
            and not (mode_get() & GRAD)
        ):
            out = derivative(ops, _to_single(grad), *[_to_single(a) for a in args])
            return _to_half(out, _dtype.BFLOAT16)
        return derivative(ops, grad, *args)

    return run


def derivative_in_float32(derivative: Any) -> Any:
    """Decorate a derivative PyTorch computes with a fused kernel also when the backward is
    recorded (``_softmax_backward_data``, ``native_layer_norm_backward`` ...): with a
    half-precision gradient it is evaluated in float32 and rounded once, on the fast path and
    on the recorded one (the casts recorded too, so the result is differentiable again)."""

    @functools.wraps(derivative)
    def run(ops: Any, grad: Any, *args: Any) -> Any:
        half = _first_half_type(grad) if type(grad) in (tuple, list) else _half_type(grad)
        if half is not None:
            out = derivative(ops, _to_single(grad), *[_to_single(a) for a in args])
            return _to_half(out, half)
        return derivative(ops, grad, *args)

    return run


def laid_out_like(out: np.ndarray, self: np.ndarray) -> np.ndarray:
    """``out``, an element-wise result of ``self`` computed by code that does not keep
    ``self``'s layout (SciPy, several NumPy steps), in the layout PyTorch's TensorIterator gives
    it: ``self``'s when that is dense, otherwise its dimensions ordered by stride with expanded
    ones kept in place (see :mod:`chainrule._strides`). Contiguous inputs cost one check."""
    if self.flags.c_contiguous or out.ndim < 2 or out.shape != self.shape:
        return out
    wanted = empty_preserving_layout(self, out.dtype)
    if wanted.strides == out.strides:
        return out
    wanted[...] = out
    return wanted


def _is_bool(x: Any) -> bool:
    return isinstance(x, np.ndarray | np.bool_) and x.dtype == np.bool_ or type(x) is bool


def _check_bool_sub(self, other, *_options):
    """PyTorch's refusal of bool subtraction (the ops' ``check``, run before promotion)."""
    if _is_bool(self) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if _is_bool(self) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


# ------------------------------------------------------------------------------------------------
# add / sub / mul / div


# add and sub without ``alpha`` (the operators' case) save nothing for backward; the ``alpha``
# variants read it. Both are PyTorch's AddBackward0 / SubBackward0.

_ndarray = np.ndarray


def _half_and_number(a: Any, b: Any) -> bool:
    """A float16 array with a Python number (called when the operands are not two arrays).
    PyTorch multiplies and divides those in float32 with the number as it is, and rounds once;
    NumPy would first round the number to float16 (0.1 to 0.0999755859375, and 120000 to
    inf). Its add and sub do round the number to float16, as NumPy does (checked on 20000
    values per number)."""
    if type(a) is _ndarray:
        return a.dtype is _HALF and type(b) in _PY_NUMBERS
    return type(b) is _ndarray and b.dtype is _HALF and type(a) in _PY_NUMBERS


_PY_NUMBERS = (int, float)


def _in_single(ufunc: Any, a: Any, b: Any) -> np.ndarray:
    """``ufunc(a, b)`` for a float16 array and a number, computed in float32, rounded once."""
    a = a.astype(_SINGLE) if type(a) is _ndarray else a
    b = b.astype(_SINGLE) if type(b) is _ndarray else b
    return ufunc(a, b).astype(_HALF)


@op(
    "AddBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    name="add",
    saved_constants={"alpha": 1},
    half_rounds_numbers=True,
    complex_ok=True,
)
def _add(self, other):
    return self + other


@_add.derivative("self")
def _(ops, grad):
    return grad


@_add.derivative("other")
def _(ops, grad):
    return grad


def _check_alpha(dtype: np.dtype, alpha: Any) -> None:
    """PyTorch's checks of ``alpha`` against the result's dtype (after promotion)."""
    if isinstance(alpha, bool | np.bool_):
        if dtype.kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
        return
    inexact = isinstance(alpha, float | complex | np.floating | np.complexfloating)
    if inexact and dtype.kind in "biu":
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if isinstance(alpha, complex | np.complexfloating) and dtype.kind != "c":
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )


def _scaled(ops: Any, grad: Any, number: Any) -> Any:
    """``grad * number`` as PyTorch's mul by a Scalar: a Python number scales a half-precision
    gradient in float32, rounded once (NumPy's ``*`` would round the number to the half type
    first: 100000 to inf, 0.3 to 0.2998); a tensor multiplies as it is."""
    return ops.mul(grad, number) if type(number) in _PY_NUMBERS else grad * number


def _is_unit(alpha: Any) -> bool:
    """``alpha`` is the int 1 (add/sub without scaling; ``1.0`` and ``True`` are checked)."""
    return type(alpha) is int and alpha == 1


def _negated(alpha: Any) -> Any:
    """``-alpha`` as PyTorch's Scalar negation (sub is add of ``-alpha``): an int wraps in 64
    bits, so ``-(-2**63)`` is ``-2**63``."""
    if type(alpha) is int:
        if not -_INT64_WRAP <= alpha < _INT64_WRAP:
            _dtype.is_uint64_number(alpha)  # (its OverflowError beyond 64 bits)
        return (_INT64_WRAP - alpha) % (2 * _INT64_WRAP) - _INT64_WRAP
    return -alpha


_INT64_WRAP = 1 << 63


def _fused_multiply_add(self, other, alpha, sign=1):
    """``self + sign * alpha * other`` as PyTorch's add (``sign=1``) and sub (``sign=-1``)
    kernels compute it.

    ``alpha`` is first cast to the result's dtype (wrapping for unsigned integers, rounding for
    float16/float32). float32 and float64 round the product, then the sum, where PyTorch's
    kernels fuse them into one multiply-add rounded once: at most an ulp apart (NumPy has no
    FMA; an exact one through float64 costs three times the add on the optimizers' hot path,
    and through extended precision 25 times). Where the rounded product overflows, float32 is
    recomputed exactly, so ``3e38 - 2 * 3e38`` is ``-3e38`` as in PyTorch, not ``-inf``.
    float16 and bfloat16 round the product, then the sum, to their type, as PyTorch's element
    loop (every small tensor) does; its vectorised loop over long float16 tensors rounds once,
    an ulp apart at most. Bool results are ``self or (alpha and other)``.
    """
    dtype = (self if type(self) is _ndarray else np.asarray(other)).dtype
    _check_alpha(dtype, alpha)
    if sign < 0:
        alpha = _negated(alpha)
    if type(alpha) is not bool:  # (read as a Scalar of the result's type: uint8 refuses 1000;
        check_number_argument(alpha, dtype)  # sub negates first, so int32 takes 2**31)
    if dtype is _SINGLE:
        return multiply_add_single(self, other, alpha)
    if dtype in _REDUCED:  # float16, bfloat16 (numbers among the operands rounded to it)
        scale, other, self = (
            np.asarray(v).astype(dtype).astype(_SINGLE) for v in (alpha, other, self)
        )
        return (self + (other * scale).astype(dtype).astype(_SINGLE)).astype(dtype)
    if dtype.kind == "b":
        return np.logical_or(self, np.logical_and(other, bool(alpha)))
    if dtype.kind in "iu":
        scale = np.array(alpha).astype(dtype)  # -3 as uint8 is 253: the product wraps as there
        return self + scale * np.asarray(other, dtype)
    return self + alpha * other


def multiply_add_single(self: Any, other: Any, alpha: Any, out: Any = None) -> Any:
    """``self + alpha * other`` in float32 as :func:`_fused_multiply_add` computes it (``alpha``
    rounded to float32; an overflowing product recomputed through float64), written into
    ``out`` when given (``self``'s own array for ``add_``: the optimizers' step, where
    allocating the sum and copying it back cost 8 times the arithmetic on a large weight).

    A product can overflow only when ``|alpha| > 1``; only then are its elements checked.
    """
    scale = _SINGLE.type(alpha)
    product = np.multiply(other, scale, dtype=_SINGLE)
    if -1 <= scale <= 1 or np.isfinite(product).all():
        if out is None and type(product) is _ndarray and product.shape == np.shape(self):
            out = product  # (a new array of the result's shape: the sum may go there)
        return np.add(self, product, dtype=_SINGLE, out=out)
    wide = np.add(np.multiply(other, float(scale), dtype=np.float64), self, dtype=np.float64)
    if out is None:
        return np.asarray(wide).astype(_SINGLE)
    np.copyto(out, wide, casting="unsafe")
    return out


@op(
    "AddBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    name="add",
    half_native=True,
    complex_ok=True,
)
def _add_alpha(self, other, alpha):
    return _fused_multiply_add(self, other, alpha)


@_add_alpha.derivative("self")
def _(ops, grad):
    return grad


@_add_alpha.derivative("other")
def _(ops, grad, alpha):
    return _scaled(ops, grad, ops.conj(alpha))  # PyTorch: grad * alpha.conj()


@tensor_method(inplace=True)
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting; ``out=``: written into that tensor (the
    function only: ``Tensor.add`` refuses it, as PyTorch's).

    Example:
        >>> import chainrule as torch
        >>> torch.add(torch.tensor([1., 2.]), 1)
        tensor([2., 3.])
    """
    if out is not None:
        return _add_out(input, other, alpha, out)
    if _is_unit(alpha):
        return _add(input, other)
    return _add_alpha(input, other, alpha)


def _add_out(input: Any, other: Any, alpha: Any, out: Any) -> Tensor:
    """``torch.add(input, other, alpha=alpha, out=out)`` (:mod:`.out_arguments`' rules)."""
    if argument_position(1) == 0:  # called as ``x.add(y, out=z)``
        raise TypeError("add() got an unexpected keyword argument 'out'")
    out_arguments.check_out("add", out, (input, other))
    result = add(input, other, alpha=alpha)
    return out_arguments.write_out("add", out, result, out_arguments.CAST, [input, other])


@op(
    "SubBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    check=_check_bool_sub,
    name="sub",
    saved_constants={"alpha": 1},
    half_rounds_numbers=True,
    complex_ok=True,
)
def _sub(self, other):
    return self - other


@_sub.derivative("self")
def _(ops, grad):
    return grad


@_sub.derivative("other")
def _(ops, grad):
    return -grad


@op(
    "SubBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    check=_check_bool_sub,
    name="sub",
    half_native=True,
    complex_ok=True,
)
def _sub_alpha(self, other, alpha):
    return _fused_multiply_add(self, other, alpha, -1)


@_sub_alpha.derivative("self")
def _(ops, grad):
    return grad


@_sub_alpha.derivative("other")
def _(ops, grad, alpha):
    return _scaled(ops, grad, -ops.conj(alpha))  # PyTorch: -grad * alpha.conj()


@tensor_method(inplace=True, aliases=("subtract",))
def sub(input, other, *, alpha=1):
    """``input - alpha * other``, broadcasting."""
    if _is_unit(alpha):
        return _sub(input, other)
    return _sub_alpha(input, other, alpha)


subtract = sub


def _rsub(self, other, alpha):
    """``other - alpha * self``: half precision always through the multiply-add (which rounds
    a number operand to the type first, as PyTorch's sub kernel does)."""
    if _is_unit(alpha) and (type(self) is not _ndarray or self.dtype not in _REDUCED):
        return other - self
    return _fused_multiply_add(other, self, alpha, -1)


@op(
    "RsubBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    check=_check_bool_sub,
    half_native=True,
    complex_ok=True,
)
def _rsub_tensor(self, other, *, alpha=1):
    return _rsub(self, other, alpha)


@_rsub_tensor.derivative("self")
def _(ops, grad, alpha):
    # PyTorch: -grad * alpha.conj()
    return -grad if _is_unit(alpha) else _scaled(ops, grad, -ops.conj(alpha))


@_rsub_tensor.derivative("other")
def _(ops, grad):
    return grad


@op(
    "RsubBackward1",
    inputs=("self",),
    promote=ARITH,
    promote_with=("other",),
    check=_check_bool_sub,
    half_native=True,
    complex_ok=True,
)
def _rsub_scalar(self, other, alpha=1):
    return _rsub(self, other, alpha)


@_rsub_scalar.derivative("self")
def _(ops, grad, alpha):
    return -grad if _is_unit(alpha) else _scaled(ops, grad, -ops.conj(alpha))


_RSUB_SIGNATURES = (
    "(Tensor input, Tensor other, *, Number alpha = 1)",
    "(Tensor input, Number other, Number alpha = 1)",
)


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    if not isinstance(input, Tensor):
        raise _no_overload(
            "rsub", (input, other), {"alpha": alpha} if alpha != 1 else {}, _RSUB_SIGNATURES
        )
    if isinstance(other, Tensor):
        return _rsub_tensor(input, other, alpha=alpha)
    return _rsub_scalar(input, other, alpha)


@op(
    "MulBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    method=True,
    inplace=True,
    complex_ok=True,
    aliases=("multiply",),
)
def mul(self, other):
    """Element-wise product, broadcasting."""
    if type(self) is not _ndarray or type(other) is not _ndarray:
        if _half_and_number(self, other):
            return _in_single(np.multiply, self, other)
    return self * other


# A number operand scales (or divides) a half-precision gradient in float32, rounded once, as
# PyTorch's mul and div with a wrapped number (``_scaled``, ``ops.div``).
@mul.derivative("self")
def _(ops, grad, other):
    return _scaled(ops, grad, ops.conj(other))  # PyTorch: grad * other.conj()


@mul.derivative("other")
def _(ops, grad, self):
    return grad * ops.conj(self)


multiply = mul
out_arguments.allow_out(out_arguments.CAST, mul)


@op("DivBackward0", inputs=("self", "other"), promote=FLOAT, name="div", complex_ok=True)
def _div(self, other):
    if type(self) is not _ndarray or type(other) is not _ndarray:
        if _half_and_number(self, other):
            return _in_single(np.true_divide, self, other)
    return self / other


mul.op.half_takes_scalar_tensors = True
_div.op.half_takes_scalar_tensors = True


@_div.derivative("self")
def _(ops, grad, other):
    # PyTorch: grad / other.conj()
    return ops.div(grad, other) if type(other) in _PY_NUMBERS else grad / ops.conj(other)


@_div.derivative("other")
def _(ops, grad, self, other):
    # As PyTorch: -grad * ((self / other) / other).conj(), which does not overflow where
    # other * other would.
    return -grad * ops.conj((self / other) / other)


def _check_integer_division(kernel, out, self, other):
    """PyTorch's errors for an integer quotient or remainder (checked on the result's dtype,
    after promotion): division by zero is a RuntimeError (NumPy would give 0), and two bool
    operands have no kernel. The result is not written anywhere before this check."""
    if out.dtype.kind not in "iub":
        return
    if _is_bool(self) and _is_bool(other):
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if np.any(np.equal(other, 0)):
        raise RuntimeError("ZeroDivisionError")


@op("DivBackward2", inputs=("self", "other"), promote=ARITH, name="div")
def _div_rounding(self, other, rounding_mode):
    if rounding_mode in ("trunc", "floor") and (np.iscomplexobj(self) or np.iscomplexobj(other)):
        raise _no_kernel(f"div_{rounding_mode}_cpu", np.result_type(self, other))
    if rounding_mode == "trunc":
        if np.asarray(self).dtype.kind in "iub" and np.asarray(other).dtype.kind in "iub":
            out = _int_div_trunc(self, other)
            _check_integer_division("div_trunc_cpu", out, self, other)
            return out
        return np.trunc(self / other)
    if rounding_mode == "floor":
        out = np.floor_divide(self, other)
        _check_integer_division("div_floor_cpu", out, self, other)
        return out
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def _int_div_trunc(a, b):
    q = np.floor_divide(a, b)
    r = a - q * b
    return q + ((r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0)))


# DivBackward2 saves other, self and rounding_mode as PyTorch's does (its zero gradients do not
# read them, but saved_tensors_hooks and grad_fn._saved_* see them).


@_div_rounding.derivative("self")
def _(ops, grad, other, rounding_mode):
    return ops.zeros_like(grad)  # PyTorch: grad.new_zeros(grad.sizes())


@_div_rounding.derivative("other")
def _(ops, grad, self, other, rounding_mode):
    return ops.zeros_like(grad)


@op("DivBackward2", inputs=("self", "other"), promote=FLOAT, name="div")
def _div_mode_none(self, other, rounding_mode):
    """True division when ``rounding_mode=None`` is given: PyTorch's div.Tensor_mode."""
    return _div.op.forward(self, other)


@_div_mode_none.derivative("self")
def _(ops, grad, other, rounding_mode):
    return grad / other


@_div_mode_none.derivative("other")
def _(ops, grad, self, other, rounding_mode):
    return -grad * ((self / other) / other)


_NO_ROUNDING_MODE: Any = object()


@tensor_method(inplace=True, aliases=("divide",))
def div(input, other, *, rounding_mode=_NO_ROUNDING_MODE):
    """``input / other`` (true division), or rounded with ``rounding_mode='trunc'|'floor'``.

    Without ``rounding_mode`` the node is DivBackward0; with one (even ``None``, true
    division) DivBackward2, as PyTorch picks its overloads. Integer division by zero raises
    PyTorch's ``RuntimeError: ZeroDivisionError``.
    """
    if rounding_mode is _NO_ROUNDING_MODE:
        return _div(input, other)
    if rounding_mode is None:
        return _div_mode_none(input, other, None)
    if type(rounding_mode) is not str:
        raise _no_overload("div", (input, other), {"rounding_mode": rounding_mode}, _DIV_SIGNATURES)
    return _div_rounding(input, other, rounding_mode)


_DIV_SIGNATURES = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
    "(Tensor input, Number other, *, str rounding_mode)",
)


@tensor_method(inplace=True)
def true_divide(input, other):
    """Alias of ``div`` without rounding."""
    return _div(input, other)


divide = div


def _not_implemented_node(public: Any, aten_name: str) -> None:
    """Make an op's node PyTorch's ``NotImplemented``: what its autograd fallback records for
    an op without a derivative. Its ``name()`` is the C++ class's (in this package's
    namespace); running it raises ``derivative for aten::<aten_name> is not implemented``."""
    public.op.name = aten_name

    def name(self: Any) -> str:
        """``'chainrule::autograd::NotImplemented'`` (PyTorch's C++ name, this package's)."""
        return "chainrule::autograd::NotImplemented"

    public.op.node_cls.name = name


def _edges_of_inputs_needing_grad(result: Tensor) -> Tensor:
    """PyTorch's fallback gives a ``NotImplemented`` node an edge for each input that requires
    grad, and none for the others (not a ``(None, 0)`` placeholder, as generated nodes have)."""
    node = result._grad_node
    if node is not None and None in node._in_meta:
        keep = [i for i, meta in enumerate(node._in_meta) if meta is not None]
        node._next_fns = tuple(node._next_fns[i] for i in keep)
        node._next_nrs = tuple(node._next_nrs[i] for i in keep)
        node._in_meta = tuple(node._in_meta[i] for i in keep)
    return result


@op("NotImplemented", inputs=("self", "other"), promote=ARITH)
@refuses_complex("div_floor_cpu", operands=2)
def _floor_divide(self, other):
    out = np.floor_divide(self, other)
    _check_integer_division("div_floor_cpu", out, self, other)
    return out


_not_implemented_node(_floor_divide, "floor_divide")
_floor_divide_in_place = recorded_as(_floor_divide, "NotImplemented")
_not_implemented_node(_floor_divide_in_place, "floor_divide_")


def floor_divide_in_place_op(self: Tensor, other: Any) -> Tensor:
    """``self.floor_divide_(other)``'s op (``//=``): its NotImplemented node names
    ``aten::floor_divide_``, as PyTorch's."""
    return _edges_of_inputs_needing_grad(_floor_divide_in_place(self, other))


@tensor_method(inplace=floor_divide_in_place_op)
def floor_divide(input, other):
    """Floor of the quotient (Python's ``//``); not differentiable, as in PyTorch (the result
    of inputs that require grad has a ``NotImplemented`` node). Integer division by zero raises
    ``RuntimeError: ZeroDivisionError``."""
    return _edges_of_inputs_needing_grad(_floor_divide(input, other))


def _mod(self, other):
    out = np.mod(self, other)
    _check_integer_division("remainder_cpu", out, self, other)
    if out.dtype.kind == "f":
        # PyTorch adjusts fmod(self, other), so a zero keeps the sign of ``self``; NumPy's
        # zero takes the sign of ``other`` (2 % -2.0 is 0.0 in PyTorch, -0.0 in NumPy).
        zero = out == 0
        if np.any(zero):
            signed = np.copysign(np.zeros((), out.dtype), self)
            if type(out) is np.ndarray and out.ndim:
                np.copyto(out, signed, where=zero)
            else:
                out = np.where(zero, signed, out)
    return out


@op("RemainderBackward1", inputs=("self", "other"), promote=ARITH)
@refuses_complex("remainder_cpu", operands=2)
def _remainder_tensor(self, other):
    return _mod(self, other)


@_remainder_tensor.derivative("self")
def _(ops, grad):
    return grad


@_remainder_tensor.derivative("other")
def _(ops, grad, self, other):
    # PyTorch's formula, with the floored quotient as div(rounding_mode='floor') computes it
    # (Python's algorithm: 1e-45 // -2.5 is -1, where floor(1e-45 / -2.5) is -0).
    return -grad * ops.div_rounding(self, other, "floor")


@op("RemainderBackward0", inputs=("self",), promote=ARITH, promote_with=("other",))
@refuses_complex("remainder_cpu", operands=2)
def _remainder_scalar(self, other):
    return _mod(self, other)


@_remainder_scalar.derivative("self")
def _(ops, grad):
    return grad


@op("NotImplemented", inputs=("self", "other"), promote=ARITH)
@refuses_complex("remainder_cpu", operands=2)
def _remainder_number_self(self, other):
    return _mod(self, other)


_not_implemented_node(_remainder_number_self, "remainder")


@tensor_method(inplace=True)
def remainder(input, other):
    """Python-style modulus: the result has the sign of ``other``. Integer division by zero
    raises ``RuntimeError: ZeroDivisionError``."""
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return _remainder_tensor(input, other)
        return _remainder_scalar(input, other)
    if isinstance(other, Tensor):
        # PyTorch's Scalar-Tensor overload has no derivative: its autograd fallback's node.
        return _edges_of_inputs_needing_grad(_remainder_number_self(input, other))
    from .creation import scalar_tensor

    return _remainder_tensor(scalar_tensor(input), other)


# PyTorch's overloads of a binary function whose ``other`` may be a number (``fmod``, ``eq`` ...).
_TENSOR_OR_NUMBER_OTHER = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)


def _fmod_array(self, other):
    out = np.fmod(self, other)
    _check_integer_division("fmod_cpu", out, self, other)
    return out


@op(
    "FmodBackward1",
    inputs=("self", "other"),
    promote=ARITH,
    name="fmod",
    tensor_only=("self",),
    signatures=_TENSOR_OR_NUMBER_OTHER,
)
@refuses_complex("fmod_cpu", operands=2)
def _fmod_tensor(self, other):
    return _fmod_array(self, other)


@_fmod_tensor.derivative("self")
def _(ops, grad):
    return grad


@_fmod_tensor.derivative("other")
def _(ops, grad, self, other):
    return -grad * ops.div_rounding(self, other, "trunc")


@op(
    "FmodBackward0",
    inputs=("self",),
    promote=ARITH,
    promote_with=("other",),
    name="fmod",
    tensor_only=("self",),
    signatures=_TENSOR_OR_NUMBER_OTHER,
)
@refuses_complex("fmod_cpu", operands=2)
def _fmod_scalar(self, other):
    return _fmod_array(self, other)


@_fmod_scalar.derivative("self")
def _(ops, grad):
    return grad


@tensor_method(inplace=True)
def fmod(input, other):
    """C-style modulus: the result has the sign of ``input``. Integer division by zero raises
    ``RuntimeError: ZeroDivisionError``."""
    if isinstance(other, Tensor):
        return _fmod_tensor(input, other)
    return _fmod_scalar(input, other)


# ------------------------------------------------------------------------------------------------
# powers


def _check_int_pow(base, exponent):
    if (
        isinstance(base, np.ndarray)
        and base.dtype.kind in "iu"
        and np.any(np.asarray(exponent) < 0)
        and np.asarray(exponent).dtype.kind in "iu"
    ):
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _half_pair(a: Any, b: Any) -> bool:
    """One operand bfloat16 and the other float16 (NumPy has no common dtype for them)."""
    kinds = {getattr(a, "dtype", None), getattr(b, "dtype", None)}
    return kinds == {_BFLOAT16, _HALF}


def _integer_power(base, exponent, order="K"):
    """``base ** exponent`` with a tensor exponent, as PyTorch's integer kernel computes it: a
    negative exponent gives 1 for base 1, +-1 for base -1 (by the exponent's parity) and 0
    otherwise (NumPy refuses it; only a number exponent is refused by PyTorch). Two bool
    tensors: PyTorch has no bool kernel. bfloat16 with float16 (which NumPy cannot promote, a
    derivative's operands keep their own dtypes) computes in float32, PyTorch's promotion."""
    if _half_pair(base, exponent):
        base, exponent = np.asarray(base, np.float32), np.asarray(exponent, np.float32)
    out_dtype = np.result_type(base, exponent)
    if out_dtype.kind == "b":
        raise _no_kernel("pow", out_dtype)
    if out_dtype.kind != "i" or not np.any(np.asarray(exponent) < 0):
        return np.power(base, exponent, order=order)
    negative = exponent < 0
    out = np.power(base, np.where(negative, 0, exponent).astype(out_dtype), order=order)
    odd = (exponent % 2) != 0
    special = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    np.copyto(out, special.astype(out_dtype), where=negative)
    return out


def _number(value):
    """A number argument that promotion may have turned into a 0-d array, as a number."""
    return value.item() if type(value) is np.ndarray else value


def _pow_array(self, exponent):
    """``self ** exponent`` for a number exponent, computed as PyTorch's CPU kernel computes it.

    Its fast paths are not ``pow``: ``x ** -0.5`` is ``1 / sqrt(x)`` (``-inf`` at ``-0.``, NaN
    at ``-inf``, where ``pow`` gives ``inf`` and 0), ``x ** 2`` is ``x * x`` ... and a float16
    base is raised in float32 to the exponent rounded to float16, with no fast path. A
    bfloat16 base takes the fast paths, each step rounded to bfloat16 (``x ** 3`` rounds
    ``x * x`` first), as PyTorch's element loop (every short tensor; its vectorised loop over
    long ones computes ``x ** -0.5`` as one rounded rsqrt), and otherwise the float16 way.
    """
    exponent = _number(exponent)
    if exponent == 0:
        return full_preserving_layout(self, 1)
    if exponent == 1:
        return copy_preserving_layout(self)
    if self.dtype.kind in "fcV" and self.dtype != np.float16:  # (complex too, as PyTorch)
        if exponent == 2:
            return self * self
        if exponent == 0.5:
            return np.sqrt(self)
        if exponent == -0.5:
            return np.reciprocal(np.sqrt(self))
        if exponent == -1:
            return np.reciprocal(self)
        if exponent == 3:
            return self * self * self
        if exponent == -2:
            return np.reciprocal(self * self)
        if self.dtype == _BFLOAT16 and not isinstance(exponent, complex):
            rounded = np.asarray(exponent).astype(self.dtype).astype(_SINGLE)
            return np.power(self.astype(_SINGLE), rounded).astype(self.dtype)
    return np.power(self, exponent)


def _log_of_number(value):
    """``log`` of a number as PyTorch's ``Scalar::log`` gives it: -inf at 0, NaN below."""
    value = float(value)
    if value > 0:
        return math.log(value)
    return -math.inf if value == 0 else math.nan


@op(
    "PowBackward0",
    inputs=("self",),
    promote=ARITH,
    promote_with=("exponent",),
    half_native=True,
    complex_ok=True,
)  # bfloat16 as float16 (_pow_array)
def _pow_scalar(self, exponent):
    _check_int_pow(self, exponent)
    return _pow_array(self, exponent)


@_pow_scalar.derivative("self")
def _(ops, grad, self, exponent):
    # PyTorch's pow_backward: the derivative is exactly 0 for a zero exponent (not grad * 0,
    # which is NaN for an infinite or NaN gradient), and otherwise uses the same pow kernel,
    # fast paths and all (so x ** 0.5 at -0. has gradient -inf, as 0.5 * rsqrt(-0.)).
    # The exponent scales in float32 for the half types (PyTorch's mul by a Scalar), rounded
    # once, not rounded to the half type first.
    if exponent == 0:
        return ops.zeros_like(self)
    return grad * ops.conj(ops.mul(ops.pow(self, exponent - 1), exponent))


# PowBackward1 saves self, exponent and the result whichever input needs a gradient, and
# PowBackward2 the exponent and the result: each derivative names all three so that the same
# tensors are saved (and packed by saved_tensors_hooks) as in PyTorch.


@op("PowBackward1", inputs=("self", "exponent"), promote=ARITH, complex_ok=True)
def _pow_tensor(self, exponent):
    out = _integer_power(self, exponent)
    if out.dtype.kind == "c":
        # PyTorch's complex kernel is exp(exponent * log(self)): at a zero base that is 0
        # for exponents with a positive real part but NaN for 0 (NumPy: 1) and inf + NaN j
        # for negative ones (NumPy: NaN); infinite bases differ too. Elsewhere NumPy's power
        # is as close to PyTorch's (a few ulps).
        base = np.asarray(self)
        special = (base == 0) | ~np.isfinite(base)
        if special.any():
            with np.errstate(all="ignore"):
                by_logarithm = np.exp(exponent * np.log(base.astype(out.dtype)))
            out = np.where(special, by_logarithm, out)
    return out


@_pow_tensor.derivative("self")
def _(ops, grad, self, exponent, result):
    # Where the exponent is 0 the derivative is 0, even at a zero or infinite base. (Complex
    # values: the conjugate of the local derivative, as everywhere.) A bool exponent: PyTorch's
    # formula computes ``exponent - 1``, which refuses a bool tensor.
    _check_bool_sub(exponent._data if isinstance(exponent, Tensor) else exponent, 1)
    power = (
        self ** (exponent - 1)
        if isinstance(self, Tensor)
        else _pow_tensor.op.forward(self, exponent - 1)
    )  # (complex: PyTorch's at 0)
    return ops.where(exponent == 0, 0, grad * ops.conj(exponent * power))


def _nonnegative_real(ops, exponent):
    """``exponent >= 0``; for complex exponents, real and >= 0 (PyTorch's condition)."""
    if _is_complex(exponent):
        return (ops.imag(exponent) == 0) & (ops.real(exponent) >= 0)
    return exponent >= 0


@_pow_tensor.derivative("exponent")
def _(ops, grad, self, exponent, result):
    # d/de self**e = self**e * log(self); at self == 0 and e >= 0 its limit, 0. The base is
    # promoted to the result's dtype first, as PyTorch: a real base of a complex power takes
    # the complex logarithm, a half base its logarithm in float32.
    if self.dtype != result.dtype:  # PyTorch promotes the base before its logarithm
        self = self.to(result.dtype) if isinstance(self, Tensor) else self.astype(result.dtype)
    return grad * ops.where(
        (self == 0) & _nonnegative_real(ops, exponent), 0, ops.conj(result * ops.log(self))
    )


@op("PowBackward2", inputs=("exponent",), promote=ARITH, promote_with=("self",), complex_ok=True)
def _pow_scalar_base(self, exponent):
    # PyTorch's pow(Scalar, Tensor) allocates its result contiguous, whatever the exponent's
    # layout (not TensorIterator's rule).
    return _integer_power(self, exponent, order="C")


@_pow_scalar_base.derivative("exponent")
def _(ops, grad, self, exponent, result):
    if isinstance(self, complex) or _is_complex(result):
        # PyTorch's: grad * (result * log(base)).conj(), the base's complex logarithm; for
        # base 0 the limit 0 where the exponent is real and >= 0.
        base = complex(self)
        log_base = cmath.log(base) if base != 0 else complex(-math.inf, 0)
        out = ops.conj(result * log_base)
        if base == 0:
            out = ops.where(_nonnegative_real(ops, exponent), 0, out)
        return grad * out
    log_base = _log_of_number(self)
    if log_base == -math.inf:  # base 0: the limit 0 for exponents >= 0
        return grad * ops.where(exponent >= 0, 0, result * log_base)
    return grad * (result * log_base)


@tensor_method(inplace=True)
def pow(input, exponent):  # noqa: A001 - torch-style name
    """``input ** exponent``; either may be a number."""
    if isinstance(exponent, Tensor):
        if isinstance(input, Tensor):
            return _pow_tensor(input, exponent)
        return _pow_scalar_base(input, exponent)
    if (
        isinstance(exponent, int)
        and exponent < 0
        and isinstance(input, Tensor)
        and input._data.dtype.kind in "iu"
    ):  # (checked before promotion, which wraps -2 to 254 for uint8)
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(input, Tensor) and (
        input._data.dtype.kind in "iub" or input._data.dtype.itemsize == 2
    ):
        _check_exponent(input._data.dtype, exponent)
    return _pow_scalar(input, exponent)


def _check_exponent(dtype: np.dtype, exponent: Any) -> None:
    """PyTorch's kernels read a number exponent as a Scalar of an integer or half-precision
    result's type (``uint8 ** 1000``, ``float16 ** 1e6`` raise; float32 takes it as a
    double); an integer tensor's int exponent is first read as an int64 (its sign checked)."""
    target = number_operand_dtype(dtype, exponent)
    if target.kind in "iu" and type(exponent) is int:
        check_number_argument(exponent, _INT64)
    if target.kind in "iub" or target in _REDUCED:
        check_number_argument(exponent, target)


@tensor_method(inplace=True)
def square(input):
    """``input ** 2``."""
    return _pow_scalar(input, 2)


def _float64(value):
    """A tensor or number as PyTorch's float_power sees it: float64 (complex128 if complex)."""
    if isinstance(value, Tensor):
        kind = value._data.dtype.kind
        from .copying import to

        return to(value, _dtype.complex128 if kind == "c" else _dtype.float64)
    return complex(value) if isinstance(value, complex) else float(value)


@tensor_method
def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (complex128 for complex operands), as
    PyTorch's ``float_power``: both operands are converted, then raised with ``pow``."""
    return pow(_float64(input), _float64(exponent))


@tensor_method(name="float_power_")
def _float_power_(self, exponent):
    """In-place ``float_power``: ``self`` must already be float64 (or complex128)."""
    wanted = (
        np.complex128
        if self._data.dtype.kind == "c"
        or isinstance(exponent, complex)
        or (isinstance(exponent, Tensor) and exponent._data.dtype.kind == "c")
        else np.float64
    )
    if self._data.dtype != wanted:
        have = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(self._data.dtype)]
        need = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(np.dtype(wanted))]
        raise RuntimeError(
            f"the base given to float_power_ has dtype {have} but the operation's result "
            f"requires dtype {need}"
        )
    return self.pow_(_float64(exponent))


# ------------------------------------------------------------------------------------------------
# sign-like


@op("NegBackward0", promote=KEEP, method=True, inplace=True, aliases=("negative",), complex_ok=True)
def neg(self):
    """``-self``."""
    if self.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return np.negative(self)


@neg.derivative("self")
def _(ops, grad):
    return -grad


negative = neg


def _abs_in_place(self: Tensor) -> Tensor:
    """What ``abs_`` writes: ``abs(self)``; PyTorch's error for a complex ``self``."""
    if self._data.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return abs(self)


@op(
    "AbsBackward0",
    promote=KEEP,
    method=True,
    inplace=_abs_in_place,
    aliases=("absolute",),
    complex_ok=True,
)
def abs(self):  # noqa: A001 - torch-style name
    """Absolute value."""
    if getattr(self, "dtype", None) == np.bool_:  # (derivatives may pass a number)
        raise _dtype.no_kernel("abs_cpu", self.dtype)
    return np.abs(self)


@abs.derivative("self")
def _(ops, grad, self):
    return grad * ops.sgn(self)  # PyTorch: grad * self.sgn() (SgnBackward0 when recorded)


absolute = abs


def _sign_array(self):
    """-1, 0 or 1 by the sign of each element (bool stays bool; NaN gives 0, as PyTorch)."""
    if self.dtype == np.bool_:
        return self.copy()
    if self.dtype.kind == "c":
        # PyTorch's sgn: z / |z|, 0 at 0 (so inf components give NaN, where NumPy's sign
        # gives a unit number)
        magnitude = np.abs(self)
        zero = magnitude == 0
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(zero, 0, self / np.where(zero, 1, magnitude))
        return np.asarray(out, dtype=self.dtype)
    out = np.sign(self)
    if out.dtype.kind in "fV" and np.isnan(out).any():
        out = np.where(np.isnan(out), 0, out).astype(out.dtype)  # PyTorch: sign(nan) is 0
    return out


@op("SignBackward0", promote=KEEP, method=True, inplace=True)
@refuses_complex(message=_SIGN_COMPLEX)
def sign(self):
    """-1, 0 or 1 by the sign of each element (bool stays bool)."""
    return _sign_array(self)


sign.derivative("self")(zero_derivative)


@op("SgnBackward0", promote=KEEP, method=True, inplace=True, complex_ok=True)
def sgn(self):
    """``sign`` extended to complex numbers (``x / |x|``); for real tensors the same values."""
    return _sign_array(self)


@sgn.derivative("self")
def _(ops, grad, self, result):
    # PyTorch's sgn_backward reads self and the result (for complex inputs); for real ones the
    # gradient is zero. Both are still saved, as PyTorch saves them (saved_tensors_hooks see
    # self, then result). For complex ones: (grad - sgn^2 * conj(grad)) / (2 |self|), 0 at 0.
    data = self._data if isinstance(self, Tensor) else self
    if np.asarray(data).dtype.kind != "c":
        return ops.zeros_like(grad)
    magnitude = ops.abs(self)
    step = (grad - result * result * ops.conj(grad)) / (magnitude * 2)
    return ops.where(magnitude == 0, ops.zeros_like(step), step)


@op("ReciprocalBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def reciprocal(self):
    """``1 / self``."""
    return np.reciprocal(self)


@reciprocal.derivative("self")
def _(ops, grad, result):
    return -grad * ops.conj(result * result)  # PyTorch: -grad * (result * result).conj()


# ------------------------------------------------------------------------------------------------
# exponentials and logarithms


@op("ExpBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def exp(self):
    """``e ** self``."""
    return _single_in_double(np.exp, self)


@exp.derivative("self")
def _(ops, grad, result):
    return grad * ops.conj(result)  # PyTorch: grad * result.conj()


@op("Exp2Backward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def exp2(self):
    """``2 ** self``."""
    return _single_in_double(np.exp2, self)


# A Python-number factor scales in float32 for the half types, rounded once (PyTorch's mul by
# a Scalar): ``ops.mul``, not ``*``, which NumPy runs in float16 with the number rounded first.
@exp2.derivative("self")
def _(ops, grad, result):
    return ops.mul(grad * ops.conj(result), _LN2)


@op("Expm1Backward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def expm1(self):
    """``exp(self) - 1``, accurate near 0."""
    return _single_in_double(np.expm1, self)


@expm1.derivative("self")
def _(ops, grad, result):
    return grad * ops.conj(result + 1)


@op("LogBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def log(self):
    """Natural logarithm."""
    return _single_in_double(np.log, self)


@log.derivative("self")
def _(ops, grad, self):
    return grad / ops.conj(self)


@op("Log1PBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def log1p(self):
    """``log(1 + self)``, accurate near 0 (complex values too)."""
    if self.dtype.kind == "c":
        return _complex_log1p(self)
    return _single_in_double(np.log1p, self)


def _complex_log1p(z: np.ndarray) -> np.ndarray:
    """``log(1 + z)`` with the real part ``log|1 + z| = log1p(2x + x**2 + y**2) / 2`` near 0
    (NumPy's complex log1p is ``log(1 + z)``, which loses the digits of small ``z``)."""
    x, y = z.real, z.imag
    with np.errstate(all="ignore"):
        small = 0.5 * np.log1p(x * (2 + x) + y * y)
        large = np.log(np.abs(z + 1))
        real = np.where((y == 0) & (x >= -1), np.log1p(x), np.where(np.abs(z) < 0.5, small, large))
    out = np.empty_like(z)
    out.real = real
    out.imag = np.arctan2(y, x + 1)
    return out


@log1p.derivative("self")
def _(ops, grad, self):
    return grad / ops.conj(self + 1)


@op("Log2Backward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def log2(self):
    """Base-2 logarithm."""
    return _single_in_double(np.log2, self)


@log2.derivative("self")
def _(ops, grad, self):
    return grad / ops.mul(ops.conj(self), _LN2)


@op("Log10Backward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def log10(self):
    """Base-10 logarithm."""
    return _single_in_double(np.log10, self)


@log10.derivative("self")
def _(ops, grad, self):
    return grad / ops.mul(ops.conj(self), _LN10)


@op("SqrtBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def sqrt(self):
    """Square root."""
    return np.sqrt(self)


@sqrt.derivative("self")
def _(ops, grad, result):
    return grad / (2 * ops.conj(result))


@op("RsqrtBackward0", promote=FLOAT, method=True, inplace=True, half_native=True, complex_ok=True)
def rsqrt(self):
    """``1 / sqrt(self)`` (in a half type the root rounded first, as PyTorch's element loop)."""
    return 1 / np.sqrt(self)


@rsqrt.derivative("self")
def _(ops, grad, result):
    return -0.5 * grad * ops.conj(ops.pow(result, 3))


# ------------------------------------------------------------------------------------------------
# trigonometric and hyperbolic


@op("SinBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def sin(self):
    """Sine."""
    return _single_in_double(np.sin, self)


@sin.derivative("self")
def _(ops, grad, self):
    return grad * ops.conj(ops.cos(self))


@op("CosBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def cos(self):
    """Cosine."""
    return _single_in_double(np.cos, self)


@cos.derivative("self")
def _(ops, grad, self):
    return grad * -ops.conj(ops.sin(self))


@op("TanBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def tan(self):
    """Tangent."""
    return _single_in_double(np.tan, self)


@tan.derivative("self")
def _(ops, grad, result):
    return grad * ops.conj(1 + ops.pow(result, 2))


@op("AsinBackward0", promote=FLOAT, method=True, inplace=True, aliases=("arcsin",), complex_ok=True)
def asin(self):
    """Inverse sine."""
    return np.arcsin(self)


# The inverse functions' derivatives are PyTorch's formulas step for step: the same
# intermediate overflows (x**2 at 3e38 in float32) give the same infinities and NaNs, in the
# first derivatives and in the second.


@asin.derivative("self")
def _(ops, grad, self):
    return grad * ops.conj(ops.rsqrt(-self * self + 1))


@op("AcosBackward0", promote=FLOAT, method=True, inplace=True, aliases=("arccos",), complex_ok=True)
def acos(self):
    """Inverse cosine."""
    return _single_in_double(np.arccos, self)


@acos.derivative("self")
def _(ops, grad, self):
    return grad * -ops.conj(ops.rsqrt(-self * self + 1))


@op("AtanBackward0", promote=FLOAT, method=True, inplace=True, aliases=("arctan",), complex_ok=True)
def atan(self):
    """Inverse tangent."""
    return _single_in_double(np.arctan, self)


@atan.derivative("self")
def _(ops, grad, self):
    return grad / ops.conj(self * self + 1)


arcsin, arccos, arctan = asin, acos, atan


@op(
    "Atan2Backward0",
    inputs=("self", "other"),
    promote=FLOAT,
    tensor_only=("self", "other"),
    method=True,
    inplace=True,
    aliases=("arctan2",),
)
@refuses_complex("atan2_cpu", operands=2)
def atan2(self, other):
    """Angle of the point ``(other, self)``: ``atan(self / other)`` in the right quadrant."""
    return np.arctan2(self, other)


def _atan2_reciprocal(ops, self, other):
    """``1 / (self**2 + other**2)``, 0 where the sum is 0: PyTorch's atan2 gradient is 0 at the
    origin (and wherever the squares underflow to 0), not NaN."""
    denominator = self * self + other * other
    return ops.where(denominator == 0, 0, ops.reciprocal(denominator))


@atan2.derivative("self")
def _(ops, grad, self, other):
    return grad * other * _atan2_reciprocal(ops, self, other)


@atan2.derivative("other")
def _(ops, grad, self, other):
    return grad * -self * _atan2_reciprocal(ops, self, other)


arctan2 = atan2


@op("SinhBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def sinh(self):
    """Hyperbolic sine."""
    return _single_in_double(np.sinh, self)


@sinh.derivative("self")
def _(ops, grad, self):
    return grad * ops.conj(ops.cosh(self))


@op("CoshBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def cosh(self):
    """Hyperbolic cosine."""
    return _single_in_double(np.cosh, self)


@cosh.derivative("self")
def _(ops, grad, self):
    return grad * ops.conj(ops.sinh(self))


@op("TanhBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def tanh(self):
    """Hyperbolic tangent."""
    return _single_in_double(np.tanh, self)


@tanh.derivative("self")
def _(ops, grad, result):
    return ops.tanh_backward(grad, result)


@op("AsinhBackward0", promote=FLOAT, method=True, complex_ok=True, aliases=("arcsinh",))
def asinh(self):
    """Inverse hyperbolic sine."""
    return np.arcsinh(self)


@asinh.derivative("self")
def _(ops, grad, self):
    return grad * ops.conj(ops.rsqrt(ops.pow(self, 2) + 1))


@op("AcoshBackward0", promote=FLOAT, method=True, complex_ok=True, aliases=("arccosh",))
def acosh(self):
    """Inverse hyperbolic cosine."""
    return np.arccosh(self)


@acosh.derivative("self")
def _(ops, grad, self):
    if _is_complex(self):  # PyTorch's complex formula (the other branch of the root)
        return grad / ops.conj(ops.sqrt(self - 1) * ops.sqrt(self + 1))
    return grad * ops.rsqrt(self * self - 1)


@op("AtanhBackward0", promote=FLOAT, method=True, complex_ok=True, aliases=("arctanh",))
def atanh(self):
    """Inverse hyperbolic tangent."""
    return _single_in_double(np.arctanh, self)


@atanh.derivative("self")
def _(ops, grad, self):
    return grad * 1 / ops.conj(1 - ops.pow(self, 2))


def _is_complex(value: Any) -> bool:
    """Whether a derivative's argument (an array, or a Tensor under ``create_graph``) is
    complex."""
    return value.is_complex() if isinstance(value, Tensor) else value.dtype.kind == "c"


def _not_differentiable_in_place(out_of_place: Any, node_name: str) -> Any:
    """The op ``<name>_`` writes in place: ``<name>``'s forward, recorded as ``node_name`` whose
    backward raises, as PyTorch's ``AcoshBackward1``: its derivatives.yaml entry for the
    in-place overload is ``not_implemented("inplace version of acosh")`` (the out-of-place op
    keeps its derivative)."""
    name = out_of_place.__name__
    forward = out_of_place.op.forward
    message = f"the derivative for 'inplace version of {name}' is not implemented."

    def inplace_forward(self):  # (an op-table forward, on arrays)
        return forward(self)

    inplace_forward.__name__ = f"{name}_"
    declared: Any = table_op(node_name, promote=out_of_place.op.promote)(inplace_forward)

    @declared.derivative("self")
    def _(ops, grad):
        raise NotImplementedError(message)

    # (its errors name ``<name>_``; the in-place method's doc names ``<name>``)
    declared.__name__ = declared.__qualname__ = name
    return declared


for _inverse, _node in (
    (asinh, "AsinhBackward1"),
    (acosh, "AcoshBackward1"),
    (atanh, "AtanhBackward1"),
):
    _in_place = _not_differentiable_in_place(_inverse, _node)
    for _name in (_inverse.__name__, "arc" + _inverse.__name__[1:]):  # (asinh_, arcsinh_)
        declare_methods(_name, inplace=_in_place)
arcsinh, arccosh, arctanh = asinh, acosh, atanh


# ------------------------------------------------------------------------------------------------
# activations and special functions


@op("SigmoidBackward0", promote=FLOAT, method=True, inplace=True, complex_ok=True)
def sigmoid(self):
    """The logistic function ``1 / (1 + exp(-self))`` (for complex values computed so, as
    PyTorch's: NaN where ``exp(-self)`` overflows)."""
    if self.dtype.kind == "c":
        with np.errstate(all="ignore"):
            return 1 / (1 + np.exp(-self))
    return special.expit(self)


@sigmoid.derivative("self")
def _(ops, grad, result):
    return ops.sigmoid_backward(grad, result)


@op("ReluBackward0", promote=KEEP, method=True, inplace=True)
@refuses_complex(message=_CLAMP_COMPLEX)
def relu(self):
    """``max(self, 0)``."""
    if self.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    # relu(-0.) is -0., as PyTorch's: the input wins ties (see _max_first).
    return np.maximum(0, self) if self.dtype in _MAX_SWAPS else np.maximum(self, 0)


@relu.derivative("self")
def _(ops, grad, result):
    return ops.threshold_backward(grad, result, 0)


@op("ErfBackward0", promote=FLOAT, method=True, inplace=True)
def erf(self):
    """The Gauss error function."""
    if self.dtype.kind == "c":
        raise _no_kernel("erf_vml_cpu", self.dtype)
    return special.erf(self)


@erf.derivative("self")
def _(ops, grad, self):
    return ops.mul(ops.exp(-ops.pow(self, 2)), _TWO_OVER_SQRT_PI) * grad


@op("ErfcBackward0", promote=FLOAT, method=True, inplace=True)
def erfc(self):
    """``1 - erf(self)``."""
    if self.dtype.kind == "c":
        raise _no_kernel("erfc_vml_cpu", self.dtype)
    return special.erfc(self)


@erfc.derivative("self")
def _(ops, grad, self):
    return ops.mul(ops.exp(-ops.pow(self, 2)), -_TWO_OVER_SQRT_PI) * grad


@op("SoftplusBackward0", promote=FLOAT)
def softplus_(self, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (nn.functional.softplus)."""
    z = self * beta
    out = np.where(z > threshold, self, np.logaddexp(0, z) / beta)
    return out.astype(self.dtype, copy=False)


@softplus_.derivative("self")
def _(ops, grad, self, beta, threshold):
    z = self * beta
    return grad * ops.where(z > threshold, 1, ops.sigmoid(z))


def _check_hypot(self: Any, other: Any) -> None:
    """PyTorch's hypot has no integer or bool kernel (it does not promote integers to float):
    two such tensors raise, naming their common dtype (a 0-d tensor defers to the other)."""
    kinds = (self.dtype.kind, other.dtype.kind)
    if kinds[0] in "iub" and kinds[1] in "iub":
        if self.ndim == 0 and other.ndim and kinds[0] != "b" and kinds[1] != "b":
            dtype = other.dtype
        elif other.ndim == 0 and self.ndim and kinds[0] != "b" and kinds[1] != "b":
            dtype = self.dtype
        else:
            dtype = np.result_type(self, other)
        raise _no_kernel("hypot_cpu", dtype)


@op(
    "HypotBackward0",
    inputs=("self", "other"),
    promote=FLOAT,
    tensor_only=("self", "other"),
    method=True,
    inplace=True,
    check=_check_hypot,
)
@refuses_complex("hypot_cpu", operands=2)
def hypot(self, other):
    """``sqrt(self**2 + other**2)``."""
    return np.hypot(self, other)


@hypot.derivative("self")
def _(ops, grad, self, result):
    return grad * self / result


@hypot.derivative("other")
def _(ops, grad, other, result):
    return grad * other / result


# float16 and bfloat16 are computed in their type (log rounded, then the product rounded), as
# PyTorch's kernel does: computing in float32 and rounding once differs from it by an ulp. A
# number (or 0-d) operand is rounded to the half type first, as PyTorch wraps it.
def _xlogy_values(self, other):
    # (Two arrays of different dtypes come only from a derivative, xlogy(grad, other): they
    # compute in their common dtype, as PyTorch promotes them, not in the narrower one.)
    dtypes = {v.dtype for v in (self, other) if isinstance(v, _ndarray | np.generic)}
    if len(dtypes) == 2:
        common = _SINGLE if dtypes == {_HALF, _BFLOAT16} else np.result_type(*dtypes)
        self, other = np.asarray(self, common), np.asarray(other, common)
    elif dtypes and (half := next(iter(dtypes))) in _REDUCED:
        self, other = np.asarray(self, half), np.asarray(other, half)
    out = np.where(self == 0, 0, self * np.log(other))
    return np.where(np.isnan(other), np.nan, out).astype(np.result_type(self, other))


def _xlogy_self_derivative(ops, grad, self, other):
    # PyTorch's formula: xlogy(grad, other), 0 where self == 0 and other <= 0.
    return ops.where((self == 0) & (other <= 0), 0, ops.xlogy(grad, other))


def _xlogy_other_derivative(ops, grad, self, other):
    return _scaled(ops, grad, self) / other


_XLOGY_SIGNATURES = (
    "(Tensor input, Tensor other, *, Tensor out = None)",
    "(Number self, Tensor other, *, Tensor out = None)",
    "(Tensor input, Number other, *, Tensor out = None)",
)


@op(
    "XlogyBackward0",
    inputs=("self", "other"),
    promote=FLOAT,
    signatures=_XLOGY_SIGNATURES,
    name="xlogy",
    half_native=True,
)  # bfloat16 in steps as float16 (_xlogy_values)
@refuses_complex("xlogy_cpu", operands=2)
def _xlogy(self, other):
    """``self * log(other)``, 0 where ``self == 0`` (NaN where ``other`` is NaN)."""
    return _xlogy_values(self, other)


_xlogy.derivative("self")(_xlogy_self_derivative)
_xlogy.derivative("other")(_xlogy_other_derivative)


# A number operand: PyTorch's Scalar overloads, whose nodes have one edge and save the number.
@op(
    "XlogyBackward1",
    inputs=("other",),
    promote=FLOAT,
    promote_with=("self",),
    name="xlogy",
    half_native=True,
)
@refuses_complex("xlogy_cpu", operands=2)
def _xlogy_number_self(self, other):
    return _xlogy_values(self, other)


_xlogy_number_self.derivative("other")(_xlogy_other_derivative)


@op(
    "XlogyBackward2",
    inputs=("self",),
    promote=FLOAT,
    promote_with=("other",),
    name="xlogy",
    half_native=True,
)
@refuses_complex("xlogy_cpu", operands=2)
def _xlogy_number_other(self, other):
    return _xlogy_values(self, other)


_xlogy_number_other.derivative("self")(_xlogy_self_derivative)


_NUMBER = (int, float, complex, np.generic)  # (bool is an int)


@tensor_method(inplace=True)
def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0`` (NaN where ``other`` is NaN); either may
    be a number."""
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return _xlogy(input, other)
    if isinstance(input, Tensor) and isinstance(other, _NUMBER):
        return _xlogy_number_other(input, other)
    if isinstance(input, _NUMBER) and isinstance(other, Tensor):
        return _xlogy_number_self(input, other)
    raise TypeError(_xlogy.op.invalid_arguments_message((input, other), {}))


# ------------------------------------------------------------------------------------------------
# clamping, min/max, selection


def _ties_give_second(ufunc: Any, dtype: Any) -> bool:
    """Whether NumPy's ``ufunc(a, b)`` returns ``b`` where ``a == b`` for this dtype (its SIMD
    loops do for float32/float64, its float16 loop returns ``a``): only the sign of a zero
    shows which."""
    a, b = np.full(64, -0.0, dtype), np.zeros(64, dtype)
    return not bool(np.signbit(ufunc(a, b)).all())


_FLOATS = tuple(map(np.dtype, ("float16", "float32", "float64")))
_MAX_SWAPS = frozenset(d for d in _FLOATS if _ties_give_second(np.maximum, d))
_MIN_SWAPS = frozenset(d for d in _FLOATS if _ties_give_second(np.minimum, d))


def _max_first(a: Any, b: Any) -> Any:
    """``np.maximum(a, b)`` that keeps ``a`` where ``a == b``, as PyTorch's ``max(a, b)``
    (``a < b ? b : a``) does: ``clamp(-0., min=0.)`` and ``relu(-0.)`` are -0. NaN propagates
    from either operand."""
    if type(a) is _ndarray and a.dtype in _MAX_SWAPS:
        return np.maximum(b, a)
    return np.maximum(a, b)


def _min_first(a: Any, b: Any) -> Any:
    """``np.minimum(a, b)`` that keeps ``a`` where ``a == b`` (see :func:`_max_first`)."""
    if type(a) is _ndarray and a.dtype in _MIN_SWAPS:
        return np.minimum(b, a)
    return np.minimum(a, b)


@op("ClampBackward1", promote=ARITH, promote_with=("min", "max"))
@refuses_complex(message=_CLAMP_COMPLEX)
def _clamp_scalar(self, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    out = self
    if min is not None:
        out = _max_first(out, min)
    if max is not None:
        out = _min_first(out, max)
    if out is self:
        out = self.copy()
    # NaN stays NaN (np.maximum propagates it, as PyTorch does).
    return out.astype(self.dtype, copy=False)


# Clamp-like derivatives select the gradient with ``where`` (a mask times the gradient would
# turn an infinite gradient into NaN where it is masked out); NaN inputs get no gradient.


@_clamp_scalar.derivative("self")
def _(ops, grad, self, min, max):  # noqa: A002
    if min is not None and max is not None:
        return ops.where((self >= min) & (self <= max), grad, 0)
    if min is not None:
        return ops.where(self >= min, grad, 0)
    return ops.where(self <= max, grad, 0)


def _check_clamp_tensor(self: Any, min: Any = None, max: Any = None) -> None:  # noqa: A002
    """PyTorch's refusals of complex values with tensor bounds (before promotion): a complex
    input is clamp's own message; a complex bound reaches the kernel of the bounds given
    (``maximum_cpu`` for ``min`` alone, ``minimum_cpu`` for ``max``, else ``clamp_cpu``)."""
    if self.dtype.kind == "c":
        raise NotImplementedError(_CLAMP_COMPLEX)
    bounds = [b for b in (min, max) if b is not None]
    if any(b.dtype.kind == "c" for b in bounds):
        kernel = (
            "clamp_cpu"
            if len(bounds) == 2
            else ("maximum_cpu" if min is not None else "minimum_cpu")
        )
        raise _no_kernel(kernel, np.result_type(self, *bounds))


@op("ClampBackward0", inputs=("self", "min", "max"), promote=ARITH, check=_check_clamp_tensor)
@refuses_complex(message=_CLAMP_COMPLEX)
def _clamp_tensor(self, min=None, max=None):  # noqa: A002
    out = self
    if min is not None:
        out = _max_first(out, min)
    if max is not None:
        out = _min_first(out, max)
    return out if out is not self else self.copy()


@_clamp_tensor.derivative("self")
def _(ops, grad, self, min, max):  # noqa: A002
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        upper = self <= max
        mask = upper if mask is None else mask & upper
    return ops.where(mask, grad, 0)


@_clamp_tensor.derivative("min")
def _(ops, grad, self, min, max):  # noqa: A002
    # min wins where self < min, unless the bounds cross (then max wins everywhere).
    if max is None:
        return ops.where(self < min, grad, 0)
    return ops.where((self < min) & (min < max), grad, 0)


@_clamp_tensor.derivative("max")
def _(ops, grad, self, min, max):  # noqa: A002
    if min is None:
        return ops.where(self > max, grad, 0)
    return ops.where((self > max) | (max < min), grad, 0)


def _type_label(value: Any) -> str:
    """A value's type as PyTorch's argument errors name it (``Tensor``, ``float``,
    ``numpy.float64``)."""
    if isinstance(value, Tensor):
        return "Tensor"
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _no_overload(name: str, args: tuple, kwargs: dict[str, Any], signatures: tuple) -> TypeError:
    """PyTorch's TypeError for a call that matches none of a function's overloads: it quotes
    the call's argument types, positional ones first, then the keywords (in reverse order, as
    PyTorch's parser walks them)."""
    got = [_type_label(a) for a in args]
    keywords = [f"{key}={_type_label(value)}" for key, value in reversed(kwargs.items())]
    described = ", ".join(got + keywords) if got else "".join(k + ", " for k in keywords)
    lines = [
        f"{name}() received an invalid combination of arguments - got ({described}), but "
        "expected one of:"
    ]
    lines.extend(f" * {signature}" for signature in signatures)
    return TypeError("\n".join(lines) + "\n")


_BOUND_NUMBERS = (int, float, bool)


def _bound_kind(value: Any) -> int:
    """0 for a missing bound (None), 1 for a tensor, 2 for a number, 3 for anything else."""
    if value is None:
        return 0
    if isinstance(value, Tensor):
        return 1
    if type(value) in _BOUND_NUMBERS or isinstance(value, np.generic):
        return 2
    return 3


def _bounds_signatures(names: tuple[str, ...], optional: bool) -> tuple[str, ...]:
    default = " = None" if optional else ""
    return tuple(
        "(Tensor input, "
        + ", ".join(f"{kind} {n}{default}" for n in names)
        + ", *, Tensor out = None)"
        for kind in ("Tensor", "Number")
    )


_CLAMP_SIGNATURES = _bounds_signatures(("min", "max"), True)
_CLAMP_MIN_SIGNATURES = _bounds_signatures(("min",), False)
_CLAMP_MAX_SIGNATURES = _bounds_signatures(("max",), False)


def _bind_bounds(
    name: str,
    args: tuple,
    kwargs: dict[str, Any],
    names: tuple[str, ...],
    signatures: tuple[str, ...],
) -> list[Any]:
    """``[input, *bounds]`` of a clamp-like call given with keywords or too few or many
    arguments (missing bounds None); PyTorch's TypeError if it matches no overload."""
    params = ("input", *names)
    values: list[Any] = [_MISSING_ARG] * len(params)
    values[: len(args)] = args
    bad = len(args) > len(params)
    for key, value in kwargs.items():
        i = params.index(key) if key in params else -1
        if i < 0 or i < len(args):
            bad = True
        else:
            values[i] = value
    if bad or values[0] is _MISSING_ARG or (len(names) == 1 and values[1] is _MISSING_ARG):
        raise _no_overload(name, args, kwargs, signatures)
    return [None if v is _MISSING_ARG else v for v in values]


_MISSING_ARG: Any = object()

# The C++ names PyTorch's clamp_ gives an integer tensor it cannot write a promoted result into.
_CPP_INTEGER_NAMES = {
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "bool": "bool",
}


def _in_place_of(name: str) -> Callable[..., Tensor]:
    """``Tensor.<name>_``'s source: the clamp-like function ``name`` (defined below), after
    PyTorch's checks of number bounds an integer tensor cannot take in place: an int of 2**63
    or more (promotion error), then a bound of a higher category ("result type Float can't be
    cast to the desired output type unsigned char"), before any overflow check."""

    def in_place(*args: Any, **kwargs: Any) -> Tensor:
        input = args[0] if args else None
        if isinstance(input, Tensor) and input._data.dtype.kind in "biu":
            _check_in_place_bounds(input, [*args[1:], kwargs.get("min"), kwargs.get("max")])
        return _CLAMP_LIKE[name](*args, **kwargs)

    in_place.__name__ = in_place.__qualname__ = name
    return in_place


def _check_in_place_bounds(input: Tensor, given: list[Any]) -> None:
    bounds = [b for b in given if b is not None]
    if not bounds or not all(type(b) in _NUMBER_OR_NONE for b in bounds):
        return
    if any(type(b) is int and b >= _UINT64_START and _dtype.is_uint64_number(b) for b in bounds):
        _refuse_uint64_promotion(input, *(bounds + [None])[:2])
    dtype = input._data.dtype
    target = number_operand_dtype(dtype, *(b for b in bounds if type(b) is not bool))
    if target != dtype:
        have = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(target)]
        raise RuntimeError(
            f"result type {have} can't be cast to the desired output type "
            f"{_CPP_INTEGER_NAMES[dtype.name]}"
        )


@tensor_method(inplace=_in_place_of("clamp"))
def clamp(*args: Any, **kwargs: Any) -> Tensor:
    """Limit every element to ``[min, max]``: ``clamp(input, min=None, max=None)``.

    The bounds are numbers (ClampBackward1) or tensors (ClampBackward0, broadcasting; either
    may be None), not one of each, as in PyTorch.
    """
    return _clamp_public("clamp", args, kwargs)


@tensor_method(inplace=_in_place_of("clip"))
def clip(*args: Any, **kwargs: Any) -> Tensor:
    """Alias of :func:`clamp`."""
    return _clamp_public("clip", args, kwargs)


_CLAMP_KEYWORDS = frozenset(("min", "max"))


def _clamp_public(name: str, args: tuple, kwargs: dict[str, Any]) -> Tensor:
    n = len(args)
    if not kwargs and (n == 3 or n == 2):
        input, low = args[0], args[1]
        high = args[2] if n == 3 else None
    elif n == 1 and kwargs.keys() <= _CLAMP_KEYWORDS:  # x.clamp(min=0), the common keywords
        input, low, high = args[0], kwargs.get("min"), kwargs.get("max")
    else:
        input, low, high = _bind_bounds(name, args, kwargs, ("min", "max"), _CLAMP_SIGNATURES)
    if not isinstance(input, Tensor):
        raise _no_overload(name, args, kwargs, _CLAMP_SIGNATURES)
    if type(low) in _NUMBER_OR_NONE and type(high) in _NUMBER_OR_NONE:  # the common case
        _check_number_bounds(input, low, high)
        return _clamp_scalar(input, low, high)
    kinds = (_bound_kind(low), _bound_kind(high))
    if 1 in kinds:
        if 2 not in kinds and 3 not in kinds:
            return _clamp_tensor(input, low, high)
    elif 3 not in kinds:
        _check_number_bounds(input, low, high)
        return _clamp_scalar(input, low, high)
    raise _no_overload(name, args, kwargs, _CLAMP_SIGNATURES)


_NUMBER_OR_NONE = frozenset((int, float, bool, type(None)))
_UINT64_START = 1 << 63


def _check_number_bounds(input: Tensor, low: Any, high: Any = None) -> None:
    """PyTorch's checks of clamp's number bounds, read as Scalars of the result's dtype:
    ``clamp(uint8, max=1000)`` and ``clamp(float16, max=1e6)`` raise "value cannot be
    converted to type ... without overflow" (no check when a bound is NaN: the result is all
    NaN); two bounds, one an int from 2**63 (a uint64), raise PyTorch's promotion error."""
    dtype = input._data.dtype
    if (dtype is _SINGLE or dtype is _DOUBLE) and _fits_single(low) and _fits_single(high):
        return  # (the common case: float32 and float64 take these at once)
    if (type(low) is float and low != low) or (type(high) is float and high != high):
        return  # (a NaN bound: the result is all NaN)
    if dtype.kind in "biu":
        for b in (low, high):
            if type(b) is int and b >= _UINT64_START and _dtype.is_uint64_number(b):
                _refuse_uint64_promotion(input, low, high)
    target = number_operand_dtype(dtype, low, high)
    if low is not None and type(low) is not bool:
        check_number_argument(low, target)
    if high is not None and type(high) is not bool:
        check_number_argument(high, target)


def _fits_single(bound: Any) -> bool:
    """Whether a bound is None or a number float32 holds (an int of 64 bits, a finite float
    within float32's range)."""
    kind = type(bound)
    if kind is float:
        return -_SINGLE_MAX <= bound <= _SINGLE_MAX
    if kind is int:
        return -_INT64_WRAP <= bound < _INT64_WRAP
    return bound is None or kind is bool


_SINGLE_MAX = float(np.finfo(np.float32).max)


def _refuse_uint64_promotion(input: Tensor, low: Any, high: Any) -> None:
    """PyTorch's error for an int of 2**63 or more (a uint64 number) promoted with another
    integer: the other bound, or a bool tensor."""
    ints = [b for b in (low, high) if type(b) is int]
    pair = None
    if len(ints) == 2 and (ints[0] >= _UINT64_START) != (ints[1] >= _UINT64_START):
        pair = ["UInt64" if b >= _UINT64_START else "Long" for b in ints]
    elif input._data.dtype == np.bool_:
        pair = ["Bool", "UInt64"]
    if pair is not None:
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{pair[0]} and {pair[1]}"
        )


@op("ClampMinBackward0", promote=ARITH, promote_with=("min",))
@refuses_complex(message=_CLAMP_COMPLEX)
def _clamp_min_scalar(self, min):  # noqa: A002
    return _max_first(self, min).astype(self.dtype, copy=False)


@_clamp_min_scalar.derivative("self")
def _(ops, grad, self, min):  # noqa: A002
    return ops.where(self >= min, grad, 0)


@op("ClampMinBackward1", inputs=("self", "min"), promote=ARITH)
@refuses_complex(message=_CLAMP_COMPLEX)
def _clamp_min_tensor(self, min):  # noqa: A002
    return _max_first(self, min)


@_clamp_min_tensor.derivative("self")
def _(ops, grad, self, min):  # noqa: A002
    return ops.where(self >= min, grad, 0)


@_clamp_min_tensor.derivative("min")
def _(ops, grad, self, min):  # noqa: A002
    return ops.where(self < min, grad, 0)


@op("ClampMaxBackward0", promote=ARITH, promote_with=("max",))
@refuses_complex(message=_CLAMP_COMPLEX)
def _clamp_max_scalar(self, max):  # noqa: A002
    return _min_first(self, max).astype(self.dtype, copy=False)


@_clamp_max_scalar.derivative("self")
def _(ops, grad, self, max):  # noqa: A002
    return ops.where(self <= max, grad, 0)


@op("ClampMaxBackward1", inputs=("self", "max"), promote=ARITH)
@refuses_complex(message=_CLAMP_COMPLEX)
def _clamp_max_tensor(self, max):  # noqa: A002
    return _min_first(self, max)


@_clamp_max_tensor.derivative("self")
def _(ops, grad, self, max):  # noqa: A002
    return ops.where(self <= max, grad, 0)


@_clamp_max_tensor.derivative("max")
def _(ops, grad, self, max):  # noqa: A002
    return ops.where(self > max, grad, 0)


@tensor_method(inplace=_in_place_of("clamp_min"))
def clamp_min(*args: Any, **kwargs: Any) -> Tensor:
    """``max(input, min)`` element-wise: ``clamp_min(input, min)``, ``min`` a number
    (ClampMinBackward0) or a tensor (ClampMinBackward1)."""
    if kwargs or len(args) != 2:
        input, low = _bind_bounds("clamp_min", args, kwargs, ("min",), _CLAMP_MIN_SIGNATURES)
    else:
        input, low = args
    kind = _bound_kind(low) if isinstance(input, Tensor) else 0
    if kind == 1:
        return _clamp_min_tensor(input, low)
    if kind == 2:
        _check_number_bounds(input, low)
        return _clamp_min_scalar(input, low)
    raise _no_overload("clamp_min", args, kwargs, _CLAMP_MIN_SIGNATURES)


@tensor_method(inplace=_in_place_of("clamp_max"))
def clamp_max(*args: Any, **kwargs: Any) -> Tensor:
    """``min(input, max)`` element-wise: ``clamp_max(input, max)``, ``max`` a number
    (ClampMaxBackward0) or a tensor (ClampMaxBackward1)."""
    if kwargs or len(args) != 2:
        input, high = _bind_bounds("clamp_max", args, kwargs, ("max",), _CLAMP_MAX_SIGNATURES)
    else:
        input, high = args
    kind = _bound_kind(high) if isinstance(input, Tensor) else 0
    if kind == 1:
        return _clamp_max_tensor(input, high)
    if kind == 2:
        _check_number_bounds(input, high)
        return _clamp_max_scalar(input, high)
    raise _no_overload("clamp_max", args, kwargs, _CLAMP_MAX_SIGNATURES)


_CLAMP_LIKE = {"clamp": clamp, "clip": clip, "clamp_min": clamp_min, "clamp_max": clamp_max}


@op(
    "MaximumBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    method=True,
)
@refuses_complex(
    message="maximum not implemented for complex tensors.", error=RuntimeError, operands=2
)
def maximum(self, other):
    """Element-wise maximum (NaN propagates; ``self`` where they are equal)."""
    return _max_first(self, other)


def _split_ties(ops, grad, self, other, loses):
    """PyTorch's maximum/minimum gradient: half each at ties, none where ``loses``, the full
    gradient elsewhere (so both inputs get it all where either is NaN)."""
    return ops.where(loses, 0, ops.where(self == other, grad / 2, grad))


@maximum.derivative("self")
def _(ops, grad, self, other):
    return _split_ties(ops, grad, self, other, self < other)


@maximum.derivative("other")
def _(ops, grad, self, other):
    return _split_ties(ops, grad, self, other, self > other)


@op(
    "MinimumBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    method=True,
)
@refuses_complex(
    message="minimum not implemented for complex tensors.", error=RuntimeError, operands=2
)
def minimum(self, other):
    """Element-wise minimum (NaN propagates; ``self`` where they are equal)."""
    return _min_first(self, other)


@minimum.derivative("self")
def _(ops, grad, self, other):
    return _split_ties(ops, grad, self, other, self > other)


@minimum.derivative("other")
def _(ops, grad, self, other):
    return _split_ties(ops, grad, self, other, self < other)


def _zero_ties_keep_self(out: Any, self: Any) -> np.ndarray:
    """``np.fmax``/``np.fmin``'s result with ``self`` where both operands are zeros: NumPy's
    loops pick either operand there (varying with the position in the array), PyTorch keeps
    ``self``, whose sign shows. (A zero result where ``self`` is zero is a tie or ``self``.)"""
    out = np.asarray(out)
    if out.dtype.kind in "fV":
        np.copyto(out, self, where=(out == 0) & (self == 0))
    return out


@op(
    "FmaxBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    method=True,
)
@refuses_complex(
    message="fmax not implemented for complex tensors.", error=RuntimeError, operands=2
)
def fmax(self, other):
    """Element-wise maximum ignoring NaN."""
    return _zero_ties_keep_self(np.fmax(self, other), self)


@fmax.derivative("self")
def _(ops, grad, self, other):
    return ops.where((self >= other) | ops.isnan(other), grad, 0)


@fmax.derivative("other")
def _(ops, grad, self, other):
    return ops.where((self >= other) | ops.isnan(other), 0, grad)


@op(
    "FminBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    method=True,
)
@refuses_complex(
    message="fmin not implemented for complex tensors.", error=RuntimeError, operands=2
)
def fmin(self, other):
    """Element-wise minimum ignoring NaN."""
    return _zero_ties_keep_self(np.fmin(self, other), self)


@fmin.derivative("self")
def _(ops, grad, self, other):
    return ops.where((self <= other) | ops.isnan(other), grad, 0)


@fmin.derivative("other")
def _(ops, grad, self, other):
    return ops.where((self <= other) | ops.isnan(other), 0, grad)


@op(
    "WhereBackward0",
    inputs=("input", "other"),
    tensor_params=("condition",),
    promote=ARITH,
    complex_ok=True,
)
def _where(condition, input, other):
    return np.where(condition, input, other)


@_where.derivative("input")
def _(ops, grad, condition):
    return ops.where(condition, grad, 0)


@_where.derivative("other")
def _(ops, grad, condition):
    return ops.where(condition, 0, grad)


def _where_method(self: Tensor, condition: Any, other: Any) -> Tensor:
    """``x.where(condition, y)``: ``torch.where(condition, x, y)`` (the method's self is input)."""
    return where(condition, self, other)


@tensor_method(method=_where_method)
def where(condition, input=None, other=None):
    """``input`` where ``condition`` holds, else ``other``; with one argument, ``nonzero``."""
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    _check_condition(condition)
    if not isinstance(other, Tensor) or not isinstance(input, Tensor):
        _check_where_numbers(input, other)
    return _where(condition, input, other)


def _check_where_numbers(input: Any, other: Any) -> None:
    """PyTorch fills a one-element tensor of the result's type with a number ``input`` or
    ``other`` (``where(c, uint8, 1000)`` raises, ``where(c, float16, 1e6)`` is inf there)."""
    for value, tensor in ((input, other), (other, input)):
        if type(value) in _CHECKED_NUMBERS or isinstance(value, np.number):
            if isinstance(tensor, Tensor) and _fits_single(value):
                if tensor._data.dtype.kind == "f":
                    continue  # (float32 and float64 hold it; float16's fill rounds to inf)
                target = number_operand_dtype(tensor._data.dtype, value)
            else:  # (two numbers, or one beyond float32: PyTorch's promotion and its errors)
                target = _dtype.result_type(input, other).np
            check_number_argument(value, target, numel=1)


_CHECKED_NUMBERS = frozenset((int, float, complex))


def _check_condition(condition):
    if isinstance(condition, Tensor) and condition._data.dtype != np.bool_:
        if condition._data.dtype == np.uint8:
            return
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{condition.dtype.name.capitalize() if condition.dtype.name != 'float32' else 'Float'}"
        )


def lerp_values(self: Any, end: Any, weight: Any) -> Any:
    """PyTorch's lerp on arrays: ``self + weight * (end - self)`` for small weights, ``end -
    (end - self) * (1 - weight)`` for the others (each exact at its own end), each a fused
    multiply-add rounded once, as its kernels compute it (exactly, through float64, for float32
    and so for float16, which the op computes in float32; float64 rounds the product too, an ulp
    from PyTorch's at most). The optimizers' ``lerp_`` uses it too."""
    small = np.abs(weight) < 0.5
    if np.result_type(self, end) == _SINGLE:
        w = np.asarray(weight, _SINGLE)
        diff = np.subtract(end, self, dtype=_SINGLE).astype(np.float64)
        low = (w.astype(np.float64) * diff + self).astype(_SINGLE)
        high = (end - diff * (1 - w).astype(np.float64)).astype(_SINGLE)
        return np.where(small, low, high)
    return np.where(small, self + weight * (end - self), end - (end - self) * (1 - weight))


@op(
    "LerpBackward0",
    inputs=("self", "end"),
    promote=FLOAT,
    promote_with=("weight",),
    complex_ok=True,
)
@half_in_float32
def _lerp_scalar(self, end, weight):
    return lerp_values(self, end, weight).astype(np.result_type(self, end), copy=False)


# A number weight scales a float16 gradient in float32, rounded once (PyTorch's mul by a
# Scalar), not by the weight rounded to float16 first.
@_lerp_scalar.derivative("self")
def _(ops, grad, weight):
    return ops.mul(grad, ops.conj(1 - weight))  # (conjugates: PyTorch's, for complex)


@_lerp_scalar.derivative("end")
def _(ops, grad, weight):
    return ops.mul(grad, ops.conj(weight))


@op("LerpBackward1", inputs=("self", "end", "weight"), promote=FLOAT, complex_ok=True)
@half_in_float32
def _lerp_tensor(self, end, weight):
    return lerp_values(self, end, weight)


@_lerp_tensor.derivative("self")
def _(ops, grad, weight):
    return grad * ops.conj(1 - weight)


@_lerp_tensor.derivative("end")
def _(ops, grad, weight):
    return grad * ops.conj(weight)


@_lerp_tensor.derivative("weight")
def _(ops, grad, self, end):
    return grad * ops.conj(end - self)


# The type a number weight is converted to (PyTorch's opmath type), as its errors name it.
_LERP_WEIGHT_TYPES = {
    np.dtype(np.float64): "double",
    np.dtype(np.complex64): "c10::complex<float>",
    np.dtype(np.complex128): "c10::complex<double>",
}


def _check_lerp(input: Any, end: Any, weight: Any) -> None:
    """PyTorch's lerp checks, in its order: ``end`` and a weight tensor (not 0-d: that one is
    taken as a number) of ``input``'s dtype; a floating or complex dtype (no integer or bool
    kernel); a number weight that fits the computation type (no complex weight for a real
    input, nothing beyond float32's range unless float64)."""
    if not (isinstance(input, Tensor) and isinstance(end, Tensor)):
        return
    dtype = input.dtype
    names = _dtype.CPP_TYPE_NAMES
    if end.dtype is not dtype:
        raise RuntimeError(
            f"expected dtype {names[dtype]} for `end` but got dtype {names[end.dtype]}"
        )
    tensor_weight = isinstance(weight, Tensor) and weight._data.ndim > 0
    if tensor_weight and weight.dtype is not dtype:
        raise RuntimeError(
            f"expected dtype {names[dtype]} for `weight` but got dtype {names[weight.dtype]}"
        )
    np_dtype = input._data.dtype
    if isinstance(weight, Tensor) and not tensor_weight:
        # A 0-d weight: computed in the promoted type (its dtype only if of a higher category).
        def rank(d: np.dtype) -> int:  # (bool, integer, floating (bfloat16: V), complex)
            return "biufc".index(d.kind.replace("V", "f").replace("u", "i"))

        w = weight._data.dtype
        if rank(w) > rank(np_dtype):
            np_dtype = w
        if np_dtype.kind in "iub":
            raise _no_kernel("lerp_kernel_tensor", np_dtype)
    if np_dtype.kind in "iub":
        kernel = "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar"
        raise _no_kernel(kernel, np_dtype)
    if isinstance(weight, bool | int | float | complex):
        name = _LERP_WEIGHT_TYPES.get(np_dtype, "float")
        value = weight
        bad = False
        if isinstance(value, complex):
            bad = value.imag != 0 and np_dtype.kind != "c"
            value = value.real
        if not bad and name in ("float", "c10::complex<float>"):
            bad = math.isfinite(value) and abs(value) > float(np.finfo(np.float32).max)
        if bad:
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")


@tensor_method(inplace=True)
def lerp(input, end, weight):
    """``input + weight * (end - input)``."""
    _check_lerp(input, end, weight)
    if isinstance(weight, Tensor):
        return _lerp_tensor(input, end, weight)
    return _lerp_scalar(input, end, weight)


# ------------------------------------------------------------------------------------------------
# addcmul, addcdiv: ``self + value * tensor1 (* or /) tensor2``, the optimizers' update steps


def _check_addcmul(self, tensor1, tensor2, *_options):
    """PyTorch's kernel has no bool version (the op's ``check``, before promotion)."""
    if all(np.asarray(t).dtype.kind == "b" for t in (self, tensor1, tensor2)):
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")


@op(
    "AddcmulBackward0",
    inputs=("self", "tensor1", "tensor2"),
    promote=ARITH,
    tensor_only=("self", "tensor1", "tensor2"),
    name="addcmul",
    check=_check_addcmul,
    complex_ok=True,
)
def _addcmul(self, tensor1, tensor2, value):
    """PyTorch's kernel: ``fma(value * tensor1, tensor2, self)``, in float32 for float16 (and
    bfloat16), each rounded once. The fused multiply-add is exact through float64 for float32
    and narrower; float64 rounds the product, then the sum (an ulp from PyTorch's at most)."""
    dtype = self.dtype
    _check_value(value, dtype)
    if dtype.kind in "iu":  # the value cast to the type: 2.5 is 2
        return self + np.array(value).astype(dtype) * tensor1 * tensor2
    if dtype is _SINGLE or dtype is _HALF:
        scaled = np.multiply(tensor1, _SINGLE.type(value), dtype=_SINGLE)
        exact = np.multiply(scaled, tensor2, dtype=np.float64) + np.asarray(self, np.float64)
        return exact.astype(_SINGLE).astype(dtype, copy=False)
    return self + value * tensor1 * tensor2


@_addcmul.derivative("self")
def _(ops, grad):
    return grad


@_addcmul.derivative("tensor1")
def _(ops, grad, tensor2, value):
    return grad * ops.conj(ops.mul(tensor2, value))  # (the conjugate: PyTorch's, for complex)


@_addcmul.derivative("tensor2")
def _(ops, grad, tensor1, value):
    return grad * ops.conj(ops.mul(tensor1, value))


def _check_addcdiv(self, tensor1, tensor2, *_options):
    """PyTorch's refusal of integer division (the op's ``check``, before promotion)."""
    if all(np.asarray(t).dtype.kind in "iub" for t in (tensor1, tensor2)):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )


@op(
    "AddcdivBackward0",
    inputs=("self", "tensor1", "tensor2"),
    promote=ARITH,
    tensor_only=("self", "tensor1", "tensor2"),
    name="addcdiv",
    check=_check_addcdiv,
    complex_ok=True,
)
@half_in_float32
def _addcdiv(self, tensor1, tensor2, value):
    _check_value(value, self.dtype)
    return self + value * tensor1 / tensor2


def _check_value(value: Any, dtype: np.dtype) -> None:
    """addcmul's and addcdiv's ``value`` read as a Scalar of the result's type (of float32 for
    float16 and bfloat16, which the kernels compute in: no overflow at 1e6 there)."""
    check_number_argument(value, _SINGLE if dtype in _REDUCED else dtype)


@_addcdiv.derivative("self")
def _(ops, grad):
    return grad


# PyTorch's formulas: ``value / tensor2`` fills a tensor with ``value`` (rounded to its type)
# and divides; ``value * tensor1`` multiplies by the number (in float32 for the half types).
@_addcdiv.derivative("tensor1")
def _(ops, grad, tensor2, value):
    return grad * ops.conj(ops.div(_filled(value, tensor2), tensor2))


@_addcdiv.derivative("tensor2")
def _(ops, grad, tensor1, tensor2, value):
    return -grad * ops.conj(ops.mul(tensor1, value) / (tensor2 * tensor2))


def _filled(value: Any, like: Any) -> Any:
    """``value`` as an element of ``like``'s floating type holds it (a real number only): a
    Scalar PyTorch's kernel converts to the tensor's type (``value.to<scalar_t>()``) or fills a
    tensor with."""
    dtype = like._data.dtype if isinstance(like, Tensor) else np.asarray(like).dtype
    if isinstance(value, complex) or dtype.kind not in "fV":
        return value
    return float(np.asarray(value).astype(dtype))


@tensor_method(inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, broadcasting.

    Example:
        >>> import chainrule as torch
        >>> x, a, b = torch.tensor([1., 2.]), torch.tensor([3., 4.]), torch.tensor(2.)
        >>> torch.addcmul(x, a, b, value=0.5)
        tensor([4., 6.])
    """
    return _addcmul(input, tensor1, tensor2, value)


@tensor_method(inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``, broadcasting (integer ``tensor1`` and ``tensor2``
    are refused, as PyTorch refuses them).

    Example:
        >>> import chainrule as torch
        >>> x, a, b = torch.tensor([1., 2.]), torch.tensor([3., 4.]), torch.tensor(2.)
        >>> torch.addcdiv(x, a, b, value=0.5)
        tensor([1.7500, 3.0000])
    """
    return _addcdiv(input, tensor1, tensor2, value)


# ------------------------------------------------------------------------------------------------
# rounding (zero gradient, except frac)


def _rounding(name: str, node_name: str, fn, doc: str, aliases: tuple[str, ...] = ()):
    @op(node_name, promote=KEEP)
    def rounding(self):
        if self.dtype.kind == "c":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        if self.dtype == np.bool_:
            raise _dtype.no_kernel(f"{name}_vml_cpu", self.dtype)
        if self.dtype.kind in "iu":
            return self.copy()
        return fn(self)

    @rounding.derivative("self")
    def _(ops, grad):
        return ops.zeros_like(grad)

    rounding.__doc__ = doc
    # (declared as ``name``: the op keeps its forward's name, which its argument errors show)
    return tensor_method(name=name, inplace=True, aliases=aliases)(rounding)


floor = _rounding(
    "floor", "FloorBackward0", np.floor, "Largest integer not greater than each element."
)
ceil = _rounding("ceil", "CeilBackward0", np.ceil, "Smallest integer not less than each element.")
trunc = _rounding("trunc", "TruncBackward0", np.trunc, "Round toward zero.", aliases=("fix",))
fix = trunc


_no_kernel = _dtype.no_kernel


@op("RoundBackward0", promote=KEEP)
def _round(self):
    if self.dtype == np.bool_ or self.dtype.kind == "c":
        raise _no_kernel("round_vml_cpu", self.dtype)
    return np.round(self) if self.dtype.kind not in "iu" else self.copy()


_round.derivative("self")(zero_derivative)


@op("RoundBackward1", promote=KEEP)
def _round_decimals(self, decimals):
    if self.dtype.kind in "iubc":  # integers round only without ``decimals``, as in PyTorch
        raise _no_kernel("round_vml_cpu" if decimals == 0 else "round_cpu", self.dtype)
    # np.round with decimals allocates C order; PyTorch's TensorIterator keeps the layout.
    return np.round(self, decimals, out=empty_preserving_layout(self))


_round_decimals.derivative("self")(zero_derivative)


_NO_DECIMALS: Any = object()


@tensor_method(inplace=True)
def round(input, *, decimals=_NO_DECIMALS):  # noqa: A001 - torch-style name
    """Round half to even, optionally to ``decimals`` places (RoundBackward1 whenever
    ``decimals`` is given, even 0, as PyTorch's round.decimals overload)."""
    if decimals is _NO_DECIMALS:
        return _round(input)
    return _round_decimals(input, decimals)


@op("FracBackward0", promote=KEEP, method=True, inplace=True)
@refuses_complex("frac_cpu")
def frac(self):
    """``self - trunc(self)``."""
    if self.dtype.kind in "biu":
        raise _dtype.no_kernel("frac_cpu", self.dtype)
    return self - np.trunc(self)


@frac.derivative("self")
def _(ops, grad):
    return grad


def _check_heaviside(input, values):
    if np.asarray(input).dtype != np.asarray(values).dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


@op("NotImplemented", inputs=("input", "values"), promote=KEEP, check=_check_heaviside)
@refuses_complex(
    message="heaviside is not yet implemented for complex tensors.", error=RuntimeError, operands=2
)
def _heaviside(input, values):
    if input.dtype.kind not in "fV":
        return np.where(input == 0, values, input > 0).astype(input.dtype)
    out = np.asarray(np.heaviside(input, values))
    if np.isnan(input).any():
        # PyTorch's kernel is ``x == 0 ? values : x > 0``: 0 at NaN (NumPy's gives NaN).
        np.copyto(out, 0, where=np.isnan(input))
    return out


_not_implemented_node(_heaviside, "heaviside")


# The in-place form records its own op, whose backward names it (aten::heaviside_).
@op("NotImplemented", inputs=("input", "values"), promote=KEEP, check=_check_heaviside)
def _heaviside_inplace(input, values):
    return _heaviside.op.forward(input, values)


_not_implemented_node(_heaviside_inplace, "heaviside_")


@tensor_method
def heaviside(input, values):
    """Step function: 0 below zero, ``values`` at zero (also at -0.), 1 above, 0 at NaN.

    Not differentiable, as in PyTorch: the result of inputs that require grad has a
    ``NotImplemented`` node, whose backward raises. Both arguments are tensors of one dtype.
    """
    for position, (name, value) in enumerate((("input", input), ("values", values)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(
                f"heaviside(): argument '{name}' (position {position}) must be Tensor, not "
                f"{_type_label(value)}"
            )
    return _edges_of_inputs_needing_grad(_heaviside(input, values))


@tensor_method(name="heaviside_")
def _heaviside_(self, values):
    """In-place :func:`heaviside` (``values`` broadcasts to ``self``)."""
    from .inplace import apply_inplace, check_inplace

    if not isinstance(values, Tensor):
        raise TypeError(
            f"heaviside_(): argument 'values' (position 1) must be Tensor, not "
            f"{_type_label(values)}"
        )
    check_inplace(self, values)
    return apply_inplace(self, _heaviside_inplace_edges, values)


def _heaviside_inplace_edges(input, values):
    return _edges_of_inputs_needing_grad(_heaviside_inplace(input, values))


@op("NanToNumBackward0", promote=KEEP, method=True, inplace=True, half_native=True)
def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    """Replace NaN and infinities by finite numbers."""
    # In a copy laid out as PyTorch lays out an element-wise result (np.nan_to_num's own copy
    # would put an expanded dimension innermost).
    out = copy_preserving_layout(self) if type(self) is _ndarray else np.array(self)
    nan = 0.0 if nan is None else nan  # (None is 0, as PyTorch's)
    if out.dtype == _BFLOAT16:
        # In float32 (NumPy's nan_to_num does not know bfloat16), infinities becoming
        # bfloat16's largest numbers (float32's would round to infinity), rounded once.
        big = float(_dtype.finfo(_BFLOAT16).max)
        work = out.astype(np.float32)
        posinf = big if posinf is None else posinf
        neginf = -big if neginf is None else neginf
        np.nan_to_num(work, copy=False, nan=nan, posinf=posinf, neginf=neginf)
        return work.astype(_BFLOAT16)
    return np.nan_to_num(out, copy=False, nan=nan, posinf=posinf, neginf=neginf)


@nan_to_num.derivative("self")
def _(ops, grad, self):
    return grad * ops.isfinite(self)


# ------------------------------------------------------------------------------------------------
# comparisons and logic (never differentiable)


def _is_complex_operand(value: Any) -> bool:
    return (
        type(value) is complex
        or isinstance(value, np.complexfloating)
        or (type(value) is np.ndarray and value.dtype.kind == "c")
    )


def _ordering(name: str, fn):
    """``fn`` (``np.less`` ...) refusing complex operands as PyTorch's ``lt_cpu`` ... kernels
    do: complex numbers have no order (NumPy's is lexicographic)."""
    kernel = f"{name}_cpu"

    def compare(self, other):
        if _is_complex_operand(self) or _is_complex_operand(other):
            raise _no_kernel(kernel, np.result_type(self, other))
        return fn(self, other)

    compare.__name__ = fn.__name__
    return compare


def _comparison_in_place(name: str, fn, out_of_place):
    """``self.<name>_(other)``'s op: the comparison as 0/1 in the operands' common dtype,
    recorded as PyTorch's ``GtBackward0`` (a number ``other``) or ``GtBackward1`` (a tensor),
    whose derivatives are zero. (Out of place a comparison has no history: its result is bool.)
    """
    node = name.capitalize()

    @op(f"{node}Backward0", promote=COMPARE, promote_with=("other",))
    def with_number(self, other):
        return fn(self, other).astype(self.dtype)

    @op(f"{node}Backward1", inputs=("self", "other"), promote=COMPARE)
    def with_tensor(self, other):
        return fn(self, other).astype(self.dtype)

    with_number.derivative("self")(zero_derivative)
    with_tensor.derivative("self")(zero_derivative)
    with_tensor.derivative("other")(zero_derivative)

    def compare_in_place(self: Tensor, other: Any) -> Tensor:
        if self._data.dtype.kind not in "fcV":
            return out_of_place(self, other)  # (no history to record: the bool result is cast)
        return (with_tensor if isinstance(other, Tensor) else with_number)(self, other)

    compare_in_place.__name__ = f"{name}_op"
    return compare_in_place


def _comparison(
    name: str, fn, doc: str, in_place_node: bool = False, aliases: tuple[str, ...] = ()
):
    """The comparison ``name`` and its Tensor methods; ``in_place_node``: in place it records
    a node of its own (:func:`_comparison_in_place`)."""

    @op(
        name,
        inputs=("self", "other"),
        promote=COMPARE,
        differentiable=False,
        tensor_only=("self",),
        signatures=_TENSOR_OR_NUMBER_OTHER,
        name=name,
    )
    def compare(self, other):
        return fn(self, other)

    compare.__doc__ = doc
    compare.__name__ = name
    inplace = _comparison_in_place(name, fn, compare) if in_place_node else True
    return tensor_method(inplace=inplace, aliases=aliases)(compare)


eq = _comparison("eq", np.equal, "Element-wise ``==`` (a bool tensor).", in_place_node=True)
ne = _comparison(
    "ne",
    np.not_equal,
    "Element-wise ``!=`` (a bool tensor).",
    in_place_node=True,
    aliases=("not_equal",),
)
lt = _comparison(
    "lt",
    _ordering("lt", np.less),
    "Element-wise ``<`` (a bool tensor).",
    in_place_node=True,
    aliases=("less",),
)
le = _comparison(
    "le",
    _ordering("le", np.less_equal),
    "Element-wise ``<=`` (a bool tensor).",
    in_place_node=True,
    aliases=("less_equal",),
)
gt = _comparison(
    "gt",
    _ordering("gt", np.greater),
    "Element-wise ``>`` (a bool tensor).",
    in_place_node=True,
    aliases=("greater",),
)
ge = _comparison(
    "ge",
    _ordering("ge", np.greater_equal),
    "Element-wise ``>=`` (a bool tensor).",
    in_place_node=True,
    aliases=("greater_equal",),
)
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne

logical_and = _comparison("logical_and", np.logical_and, "Element-wise logical and.")
logical_or = _comparison("logical_or", np.logical_or, "Element-wise logical or.")
logical_xor = _comparison("logical_xor", np.logical_xor, "Element-wise logical xor.")


@op("logical_not", promote=KEEP, differentiable=False, method=True, inplace=True)
def logical_not(self):
    """Element-wise logical not (a bool tensor)."""
    return np.logical_not(self)


def _refuse_non_integral(kernel: str, dtype: np.dtype) -> None:
    """PyTorch's error for a bitwise kernel run on a floating or complex type."""
    if dtype.kind in "fcV":
        raise _no_kernel(kernel, dtype)


def _bitwise(name: str, fn, doc: str):
    # (half_native: a bfloat16 operand reaches the refusal as 'BFloat16', not its float32 copy)
    @op(name, inputs=("self", "other"), promote=ARITH, differentiable=False, half_native=True)
    def bitwise(self, other):
        # (promoted: the tensors share a dtype; a number that did not decide it remains)
        _refuse_non_integral(f"{name}_cpu", (self if type(self) is np.ndarray else other).dtype)
        return fn(self, other)

    bitwise.__doc__ = doc
    bitwise.__name__ = name
    return tensor_method(inplace=True)(bitwise)


bitwise_and = _bitwise("bitwise_and", np.bitwise_and, "Bitwise (logical, for bool) and.")
bitwise_or = _bitwise("bitwise_or", np.bitwise_or, "Bitwise (logical, for bool) or.")
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor, "Bitwise (logical, for bool) xor.")


@op(
    "bitwise_not", promote=KEEP, differentiable=False, method=True, inplace=True, half_native=True
)  # (bfloat16 refused as 'BFloat16')
def bitwise_not(self):
    """Bitwise not (logical not for bool)."""
    _refuse_non_integral("bitwise_not_cpu", self.dtype)
    return np.invert(self)


# ------------------------------------------------------------------------------------------------
# shifts: integers only, no gradient

# The types PyTorch's shift kernels take (AT_DISPATCH_INTEGRAL_TYPES): not bool, and not the
# shell types uint16/32/64.
_SHIFT_TYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.int32, np.int64))


def _shift_op(name: str, kernel: str, ufunc: Any, left: bool) -> Any:
    """The op of a shift: on operands promoted to one dtype (a number may remain), ``ufunc``
    in range, which is C's shift. A shift by a negative amount or by the bit width or more is
    PyTorch's: 0 to the left; to the right, 0 for unsigned types and ``self >> (bits - 1)``
    (0 or -1, the sign) for signed ones.
    """

    def forward(self, other):
        dtype = (self if type(self) is np.ndarray else other).dtype
        if dtype not in _SHIFT_TYPES:
            if type(self) is np.ndarray and type(other) is np.ndarray:
                error = broadcast_error(self, other)  # (PyTorch checks shapes first)
                if error is not None:
                    raise error
            raise _no_kernel(kernel, dtype)
        out = np.asarray(ufunc(self, other))
        bits = dtype.itemsize * 8
        beyond = np.less(other, 0) | np.greater_equal(other, bits)
        if np.any(beyond):
            if left or dtype.kind == "u":
                np.copyto(out, 0, where=beyond)
            else:
                np.copyto(out, np.right_shift(self, bits - 1), where=beyond, casting="unsafe")
        return out

    forward.__name__ = forward.__qualname__ = name
    return op(
        name,
        inputs=("self", "other"),
        promote=ARITH,
        differentiable=False,
        check=_check_broadcast,
        half_native=True,
    )(forward)  # (bfloat16: 'BFloat16')


def _check_broadcast(self: Any, other: Any) -> None:
    """PyTorch's error for shapes that do not broadcast, which comes before its refusal to
    promote uint16, uint32 or uint64 with another type (checked before promotion)."""
    if (
        type(self) is np.ndarray
        and type(other) is np.ndarray
        and self.dtype != other.dtype
        and (self.shape != other.shape)
    ):
        error = broadcast_error(self, other)
        if error is not None:
            raise error


_left_shift = _shift_op("bitwise_left_shift", "lshift_cpu", np.left_shift, left=True)
_right_shift = _shift_op("bitwise_right_shift", "rshift_cpu", np.right_shift, left=False)

# PyTorch's overloads, as its errors print them, with their parameters and the type each takes
# (T a tensor, N a number).
_SHIFT_FUNCTION_OVERLOADS = (
    ("(Tensor input, Tensor other, *, Tensor out = None)", ("input", "other"), "TT"),
    ("(Number self, Tensor other)", ("self", "other"), "NT"),
    ("(Tensor input, Number other, *, Tensor out = None)", ("input", "other"), "TN"),
)
_SHIFT_METHOD_OVERLOADS = (
    ("(Tensor other)", ("other",), "T"),
    ("(Number other)", ("other",), "N"),
)
_NUMBERS = (int, float, complex, np.integer, np.floating, np.complexfloating, np.bool_)


def _takes(kind: str, value: Any) -> bool:
    if kind == "T":
        return isinstance(value, Tensor)
    return isinstance(value, _NUMBERS)


def _bind_overload(
    names: tuple[str, ...], kinds: str, args: tuple, kwargs: dict[str, Any]
) -> tuple | None:
    """The arguments in ``names``' order if the call matches this overload, else None."""
    if len(args) + len(kwargs) != len(names):
        return None
    values = list(args)
    for name in names[len(args) :]:
        if name not in kwargs:
            return None
        values.append(kwargs[name])
    if all(_takes(kind, v) for kind, v in zip(kinds, values, strict=True)):
        return tuple(values)
    return None


def _described(value: Any) -> str:
    """An argument as PyTorch's overload errors describe it (``list of [int, int]``)."""
    if type(value) is list:
        return f"list of [{', '.join(type_name(v) for v in value)}]"
    if type(value) is tuple:
        inner = ", ".join(type_name(v) for v in value)
        return f"tuple of ({inner}{',' if len(value) == 1 else ''})"
    return type_name(value)


def _listed(items: list[str], positional: bool) -> str:
    """PyTorch's argument list: each item followed by ", ", the last one's dropped only when
    there are positional arguments (``(other=str, )`` otherwise)."""
    text = "".join(f"{item}, " for item in items)
    return f"({text[:-2] if positional else text})"


def _overload_error(name: str, overloads: tuple, args: tuple, kwargs: dict[str, Any]) -> TypeError:
    """PyTorch's TypeError for a call that matches none of ``overloads``.

    Keyword arguments are listed in the reverse of the order given (as PyTorch's map of them
    iterates). An overload without ``out`` whose number of parameters is the number of
    arguments says why it did not match; the Scalar ``self`` of a function is always marked.
    """
    keywords = list(reversed(kwargs.items()))
    got = [type_name(a) for a in args] + [f"{k}={type_name(v)}" for k, v in keywords]
    lines = [
        f"{name}() received an invalid combination of arguments - got "
        f"{_listed(got, bool(args))}, but expected one of:"
    ]
    count = len(args) + len(kwargs)
    for signature, names, kinds in overloads:
        lines.append(f" * {signature}")
        if "out" in signature or count != len(names):
            continue
        wrong = [k for k, _ in keywords if k not in names[len(names) - len(kwargs) :]]
        if wrong:
            lines.append(
                "      didn't match because some of the keywords were incorrect: "
                + ", ".join(wrong)
            )
            continue
        items = []
        for i, (param, kind) in enumerate(zip(names, kinds, strict=True)):
            value = args[i] if i < len(args) else kwargs[param]
            item = _described(value) if i < len(args) else f"{param}={_described(value)}"
            marked = not _takes(kind, value) or param == "self"
            items.append(f"!{item}!" if marked else item)
        lines.append(
            "      didn't match because some of the arguments have invalid types: "
            + _listed(items, bool(args))
        )
    return TypeError("\n".join(lines) + "\n")


def _plain(value: Any) -> Any:
    """A number of a subclass of int, float or complex as that type (what the op table
    takes); anything else as it is."""
    kind = type(value)
    if kind in (int, float, complex, bool) or not isinstance(value, int | float | complex):
        return value
    if isinstance(value, int):
        return int(value)
    return float(value) if isinstance(value, float) else complex(value)


def shift_function(name: str, shift: Any, args: tuple, kwargs: dict[str, Any]) -> Tensor:
    """``torch.<name>(*args, **kwargs)``: ``shift`` of the arguments of PyTorch's overload
    they match (a tensor and a tensor or a number, or a number and a tensor)."""
    if (
        len(args) == 2
        and not kwargs
        and isinstance(args[0], Tensor)
        and isinstance(args[1], Tensor)
    ):
        return shift(*args)
    if "out" in kwargs:  # (no op here writes into an ``out`` tensor)
        raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
    for _, names, kinds in _SHIFT_FUNCTION_OVERLOADS:
        bound = _bind_overload(names, kinds, args, kwargs)
        if bound is not None:
            return shift(_plain(bound[0]), _plain(bound[1]))
    raise _overload_error(name, _SHIFT_FUNCTION_OVERLOADS, args, kwargs)


def shift_argument(name: str, args: tuple, kwargs: dict[str, Any]) -> Any:
    """The ``other`` of ``x.<name>(*args, **kwargs)`` (a tensor or a number), or PyTorch's
    TypeError for a call that matches none of the method's overloads."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor):
        return args[0]
    for _, names, kinds in _SHIFT_METHOD_OVERLOADS:
        bound = _bind_overload(names, kinds, args, kwargs)
        if bound is not None:
            return _plain(bound[0])
    raise _overload_error(name, _SHIFT_METHOD_OVERLOADS, args, kwargs)


def _signature(*names: str) -> inspect.Signature:
    """``(names) -> Tensor``, the signature ``help()`` and the Tensor stub show."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature(
        [inspect.Parameter(n, kind, annotation=Any) for n in names], return_annotation=Tensor
    )


def _shift_method(name: str, shift: Any) -> Any:
    """``Tensor.<name>``: its errors list the method's overloads."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return shift(self, shift_argument(name, args, kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``torch.{name}(self, other)``."
    method.__signature__ = _signature("self", "other")  # type: ignore[attr-defined]
    return method


@tensor_method(method=_shift_method("bitwise_left_shift", _left_shift))
def bitwise_left_shift(*args: Any, **kwargs: Any) -> Tensor:
    """``input << other`` on integers: 0 for a shift by a negative amount or by the bit width
    or more. ``input`` and ``other`` are tensors, or one of them a number."""
    return shift_function("bitwise_left_shift", _left_shift, args, kwargs)


@tensor_method(method=_shift_method("bitwise_right_shift", _right_shift))
def bitwise_right_shift(*args: Any, **kwargs: Any) -> Tensor:
    """``input >> other`` on integers (arithmetic for signed types): a shift by a negative
    amount or by the bit width or more gives the sign (0 or -1). ``input`` and ``other`` are
    tensors, or one of them a number."""
    return shift_function("bitwise_right_shift", _right_shift, args, kwargs)


bitwise_left_shift.__signature__ = _signature("input", "other")  # type: ignore[attr-defined]
bitwise_right_shift.__signature__ = _signature("input", "other")  # type: ignore[attr-defined]


#: The shifts' ops (on a tensor and a tensor or a number, either first), by name.
SHIFT_OPS = {"bitwise_left_shift": _left_shift, "bitwise_right_shift": _right_shift}


@op("isnan", promote=KEEP, differentiable=False, method=True)
def isnan(self):
    """Where elements are NaN."""
    return np.isnan(self)


@op("isinf", promote=KEEP, differentiable=False, method=True)
def isinf(self):
    """Where elements are infinite."""
    return np.isinf(self)


@op("isfinite", promote=KEEP, differentiable=False, method=True)
def isfinite(self):
    """Where elements are finite."""
    return np.isfinite(self)


_DEGREES_TO_RADIANS = math.pi / 180
_RADIANS_TO_DEGREES = 180 / math.pi


def _refuse_complex(name: str, value: Any) -> None:
    if np.asarray(value).dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")


@op("Deg2RadBackward0", promote=FLOAT, method=True, inplace=True)
@half_in_float32
def deg2rad(self):
    """Degrees to radians: ``self * pi / 180``."""
    _refuse_complex("deg2rad", self)
    return np.asarray(self * _DEGREES_TO_RADIANS)  # (an array also for a 0-d input)


@deg2rad.derivative("self")
@derivative_in_float32
def _(ops, grad):
    return grad * _DEGREES_TO_RADIANS


@op("Rad2DegBackward0", promote=FLOAT, method=True, inplace=True)
@half_in_float32
def rad2deg(self):
    """Radians to degrees: ``self * 180 / pi``."""
    _refuse_complex("rad2deg", self)
    return np.asarray(self * _RADIANS_TO_DEGREES)  # (an array also for a 0-d input)


@rad2deg.derivative("self")
@derivative_in_float32
def _(ops, grad):
    return grad * _RADIANS_TO_DEGREES


@op("signbit", promote=KEEP, differentiable=False, method=True)
def signbit(self):
    """Where the sign bit is set (-0.0 and negative NaNs included)."""
    if self.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if self.dtype.kind == "b":
        return _all_false(self)
    return np.signbit(self)


def _all_false(self: np.ndarray) -> np.ndarray:
    """A bool result of ``self``'s shape, all False, laid out as PyTorch lays it out."""
    return laid_out_like(np.zeros(self.shape, bool), self)


def _infinity_test(name: str, sign: float):
    @op(name, promote=KEEP, differentiable=False, method=True, name=name)
    def test(self):
        if self.dtype.kind == "c":
            raise RuntimeError(f"{name} does not support complex inputs.")
        return self == sign if self.dtype.kind in "fV" else _all_false(self)

    test.__doc__ = f"Where elements are {'+' if sign > 0 else '-'}inf."
    return test


isposinf = _infinity_test("isposinf", math.inf)
isneginf = _infinity_test("isneginf", -math.inf)


@op("isreal", promote=KEEP, differentiable=False, method=True)
def isreal(self):
    """Where elements are real (the imaginary part is 0; every element of a real tensor)."""
    if self.dtype.kind == "c":
        return self.imag == 0
    return laid_out_like(np.ones(self.shape, bool), self)


@tensor_method
def positive(input: Tensor) -> Tensor:
    """``input`` itself (PyTorch's unary ``+``); refused for bool tensors."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# Ops the derivatives of other ops call through ``ops`` (see ops/__init__.py).
PRIMITIVES = {
    "mul": mul,
    "div": _div,
    "pow": _pow_scalar,
    "div_rounding": _div_rounding,
    "reciprocal": reciprocal,
    "rsqrt": rsqrt,
    "sgn": sgn,
    "xlogy": _xlogy,
}


# ----------------------------------------------------------------------------------------------
# Closeness: isclose, allclose, equal (no gradients: their results are booleans)


def _tensor_operand(name: str, position: int, value: Any, offset: int = 0) -> Tensor:
    """``value``, or PyTorch's TypeError for an argument that is no tensor (``offset`` 1 for
    the method, which does not count ``self``)."""
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{name}(): argument '{'input' if position == 1 else 'other'}' (position "
            f"{position - offset}) must be Tensor, not {type_name(value)}"
        )
    return value


def _closeness_method(fn: Any) -> Any:
    """``Tensor.<fn>``: ``fn(self, other, ...)``, its error counting ``other`` as position 1."""

    def method(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self, _tensor_operand(fn.__name__, 2, other, offset=1), *args, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    method.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return method


def isclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Where ``|input - other| <= atol + rtol * |other|`` (equal infinities and, with
    ``equal_nan``, NaNs count as close), broadcasting, as PyTorch's."""
    a = _tensor_operand("isclose", 1, input)._data
    b = _tensor_operand("isclose", 2, other)._data
    if a.dtype != b.dtype:
        names = _dtype.SCALAR_TYPE_NAMES
        raise RuntimeError(
            f"{names[_dtype.from_numpy_dtype(a.dtype)]} did not match "
            f"{names[_dtype.from_numpy_dtype(b.dtype)]}"
        )
    if rtol < 0:  # (numbers as C++ prints a double: -1, 0.5)
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    error = broadcast_error(a, b)
    if error is not None:
        raise error
    if a.dtype == np.bool_:
        return wrap(np.asarray(np.equal(a, b)))
    if a.dtype.kind in "iu":  # (exactly, as PyTorch's integer comparison)
        close = np.abs(a.astype(np.float64) - b) <= atol + rtol * np.abs(b.astype(np.float64))
        return wrap(np.asarray(close))
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.equal(a, b)
        if equal_nan:
            close = close | (np.isnan(a) & np.isnan(b))
        finite = np.isfinite(a) & np.isfinite(b)
        wide = np.float64 if a.dtype.kind in "fV" else np.complex128
        diff = np.abs(a.astype(wide) - b.astype(wide))
        close = close | (finite & (diff <= atol + rtol * np.abs(b.astype(wide))))
    return wrap(np.asarray(close))


def allclose(
    input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element of ``input`` is close to ``other``'s (see :func:`isclose`)."""
    _tensor_operand("allclose", 1, input)
    _tensor_operand("allclose", 2, other)
    if type(input._data) is MetaArray or type(other._data) is MetaArray:
        raise RuntimeError(ITEM_MESSAGE)  # (PyTorch's reads its result with item())
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether both tensors have the same size and elements (NaN is not equal to itself)."""
    a = _tensor_operand("equal", 1, input)._data
    b = _tensor_operand("equal", 2, other)._data
    refuse_data_dependent("equal", input, other)
    return a.shape == b.shape and bool(np.all(a == b))


for _closeness in (isclose, allclose, equal):
    tensor_method(method=_closeness_method(_closeness))(_closeness)
del _closeness


# ----------------------------------------------------------------------------------------------
# logaddexp, logaddexp2, copysign


def _refuse_integral(kernel: str, *values: Any) -> None:
    """PyTorch's error for a floating-only kernel given integer or bool tensors."""
    dtype = np.result_type(*values)
    if dtype.kind in "iub":
        raise _no_kernel(kernel, dtype)


@op(
    "LogaddexpBackward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    method=True,
    complex_ok=True,
)
@half_in_float32
def logaddexp(self, other):
    """``log(exp(self) + exp(other))``, without overflow (complex values too)."""
    _refuse_integral("logaddexp_cpu", self, other)
    if np.result_type(self, other).kind == "c":
        return _complex_logaddexp(*np.broadcast_arrays(self, other))
    return np.logaddexp(self, other)


def _complex_logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """PyTorch's complex ``logaddexp``: ``max + log1p(exp(min - max))`` with ``min``/``max``
    ordered by real part (``x`` the larger on ties); a NaN in either part of either operand
    gives NaN + NaN j; both real parts -inf gives the smaller operand, both +inf
    ``log(exp(min) + exp(max))``."""
    dtype = np.result_type(x, y)
    x, y = x.astype(dtype, copy=False), y.astype(dtype, copy=False)
    x_smaller = x.real < y.real
    low, high = np.where(x_smaller, x, y), np.where(x_smaller, y, x)
    with np.errstate(all="ignore"):
        out = np.log1p(np.exp(low - high)) + high
        both_infinite = ~np.isfinite(low.real) & (low.real == high.real)
        if both_infinite.any():
            plus = np.log(np.exp(low) + np.exp(high))
            out = np.where(both_infinite, np.where(low.real < 0, low, plus), out)
    nan = np.isnan(x) | np.isnan(y)  # (either part of either operand)
    if nan.any():
        out = np.where(nan, np.array(complex(np.nan, np.nan), dtype), out)
    return out.astype(dtype, copy=False)


@logaddexp.derivative("self")
def _(ops, grad, self, other):
    return grad / ops.conj(1 + ops.exp(other - self))  # (conj: a real value as it is)


@logaddexp.derivative("other")
def _(ops, grad, self, other):
    return grad / ops.conj(1 + ops.exp(self - other))


@op(
    "Logaddexp2Backward0",
    inputs=("self", "other"),
    promote=ARITH,
    tensor_only=("self", "other"),
    method=True,
)
@half_in_float32
def logaddexp2(self, other):
    """``log2(2**self + 2**other)``, without overflow."""
    _refuse_integral("logaddexp2_cpu", self, other)
    return np.logaddexp2(self, other)


@logaddexp2.derivative("self")
def _(ops, grad, self, other):
    return grad / (1 + 2 ** (other - self))


@logaddexp2.derivative("other")
def _(ops, grad, self, other):
    return grad / (1 + 2 ** (self - other))


def _copysign_self_grad(ops: Any, grad: Any, self: Any, result: Any) -> Any:
    """``grad * result / self``, 0 where ``self`` is 0 (PyTorch's ratio, masked after the
    division: its second derivative is NaN there, as PyTorch's)."""
    return grad * ops.where(self == 0, 0, result / self)


@op("CopysignBackward0", inputs=("self", "other"), promote=FLOAT, name="copysign")
@refuses_complex("copysign_cpu", operands=2)
def _copysign(self, other):
    return np.copysign(self, other)


@_copysign.derivative("self")
def _(ops, grad, self, result):
    return _copysign_self_grad(ops, grad, self, result)


@_copysign.derivative("other")
def _(ops, grad):
    return ops.zeros_like(grad)


@op("CopysignBackward1", promote=FLOAT, promote_with=("other",), name="copysign")
@refuses_complex("copysign_cpu", operands=2)
def _copysign_number(self, other):
    return np.copysign(self, other)


@_copysign_number.derivative("self")
def _(ops, grad, self, result):
    return _copysign_self_grad(ops, grad, self, result)


@tensor_method(inplace=True)
def copysign(input: Tensor, other: Any) -> Tensor:
    """``input``'s magnitudes with ``other``'s signs (``-0.0`` counts as negative)."""
    if isinstance(other, Tensor):
        return _copysign(input, other)
    return _copysign_number(input, other)


# Element-wise functions whose ``out=`` PyTorch takes (TensorIterator: any dtype the result casts
# to); their Tensor methods refuse it.
out_arguments.allow_out(
    out_arguments.CAST,
    sin,
    cos,
    tan,
    asin,
    acos,
    atan,
    sinh,
    cosh,
    tanh,
    exp,
    expm1,
    exp2,
    log,
    log1p,
    log2,
    log10,
    sqrt,
    rsqrt,
    sigmoid,
    reciprocal,
    erf,
)
