"""Element-wise ops: unary, binary (with broadcasting), and ops taking numbers."""

from __future__ import annotations

import numpy as np

from . import OpInfo

UNARY_SHAPES = [((3, 4),), ((),), ((0, 2),), ((2, 1, 3),)]
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (2, 3)), ((5,), ())]
# In-place ops cannot broadcast their first operand: the second broadcasts to it.
_TERNARY_SHAPES = [((3, 4), (3, 4), (3, 4)), ((2, 1), (1, 3), (3,)), ((), (2, 3), ())]
INPLACE_BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3), ())]


def _unary(name: str, low: float = -2.0, high: float = 2.0, **kw) -> OpInfo:
    return OpInfo(name, lambda lib, x, n=name: getattr(lib, n)(x), UNARY_SHAPES, low, high, **kw)


def _binary(name: str, low: float = -2.0, high: float = 2.0, **kw) -> OpInfo:
    return OpInfo(
        name, lambda lib, x, y, n=name: getattr(lib, n)(x, y), BINARY_SHAPES, low, high, **kw
    )


def _positive_pair(rng, shapes, dtype):
    return [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]


def _distinct(rng, shapes, dtype):
    """Values far apart, so max/min/abs-like kinks are not hit by finite differences."""
    out = []
    for s in shapes:
        n = int(np.prod(s)) if s else 1
        values = rng.permutation(n).astype(dtype) * 0.37 - n * 0.15 + 0.05
        out.append(values.reshape(s))
    return out


def _away_from_zero(rng, shapes, dtype):
    out = []
    for s in shapes:
        v = rng.uniform(0.3, 2.0, s) * rng.choice([-1.0, 1.0], size=s)
        out.append(np.asarray(v, dtype=dtype))
    return out


OPS = [
    _unary("exp"),
    _unary("exp2"),
    _unary("expm1"),
    _unary("deg2rad", -400.0, 400.0),
    _unary("rad2deg"),
    _unary("log", 0.2, 3.0),
    _unary("log1p", -0.5, 3.0),
    _unary("log2", 0.2, 3.0),
    _unary("log10", 0.2, 3.0),
    _unary("sqrt", 0.2, 3.0),
    _unary("rsqrt", 0.2, 3.0),
    _unary("reciprocal", make_inputs=_away_from_zero),
    _unary("neg"),
    _unary("abs", make_inputs=_away_from_zero),
    _unary("sign", make_inputs=_away_from_zero),
    _unary("sin"),
    _unary("cos"),
    _unary("tan", -1.0, 1.0),
    _unary("asin", -0.8, 0.8),
    _unary("acos", -0.8, 0.8),
    _unary("atan"),
    _unary("sinh"),
    _unary("cosh"),
    _unary("tanh"),
    _unary("asinh"),
    _unary("acosh", 1.2, 3.0),
    _unary("atanh", -0.8, 0.8),
    _unary("sigmoid"),
    _unary("relu", make_inputs=_away_from_zero),
    _unary("erf"),
    _unary("erfc"),
    _unary("square"),
    _unary("floor", make_inputs=_away_from_zero),
    _unary("ceil", make_inputs=_away_from_zero),
    _unary("trunc", make_inputs=_away_from_zero),
    _unary("round", make_inputs=_away_from_zero),
    _unary("frac", make_inputs=_away_from_zero),
    _binary("add"),
    _binary("sub"),
    _binary("mul"),
    _binary("div", make_inputs=_away_from_zero),
    _binary("atan2", make_inputs=_away_from_zero),
    _binary("maximum", make_inputs=_distinct),
    _binary("minimum", make_inputs=_distinct),
    _binary("pow", make_inputs=_positive_pair),
    _binary("remainder", make_inputs=_positive_pair, second_order=False, gradcheck=False),
    _binary("fmod", make_inputs=_positive_pair, second_order=False, gradcheck=False),
    _binary("hypot", make_inputs=_away_from_zero),
    _binary("xlogy", make_inputs=_positive_pair),
    _binary("float_power", make_inputs=_positive_pair),
    OpInfo("float_power_scalar", lambda lib, x: lib.float_power(x, 2.5), UNARY_SHAPES, 0.3, 2.0),
    OpInfo("rfloat_power", lambda lib, x: lib.float_power(1.7, x), UNARY_SHAPES),
    OpInfo("add_alpha", lambda lib, x, y: lib.add(x, y, alpha=2.5), BINARY_SHAPES),
    OpInfo("sub_alpha", lambda lib, x, y: lib.sub(x, y, alpha=-1.5), BINARY_SHAPES),
    OpInfo("rsub_tensor", lambda lib, x, y: lib.rsub(x, y), BINARY_SHAPES),
    OpInfo("add_scalar", lambda lib, x: x + 3, UNARY_SHAPES),
    OpInfo("radd_scalar", lambda lib, x: 3 + x, UNARY_SHAPES),
    OpInfo("rsub_scalar", lambda lib, x: 1.5 - x, UNARY_SHAPES),
    OpInfo("mul_scalar", lambda lib, x: x * 2.5, UNARY_SHAPES),
    OpInfo("rmul_scalar", lambda lib, x: 2 * x, UNARY_SHAPES),
    OpInfo("div_scalar", lambda lib, x: x / 4, UNARY_SHAPES),
    OpInfo("rdiv_scalar", lambda lib, x: 2 / x, UNARY_SHAPES, make_inputs=_away_from_zero),
    OpInfo("pow_scalar", lambda lib, x: x ** 3, UNARY_SHAPES),
    OpInfo("pow_half", lambda lib, x: x ** 0.5, UNARY_SHAPES, 0.3, 2.0),
    OpInfo("pow_two", lambda lib, x: x ** 2, UNARY_SHAPES),
    OpInfo("pow_zero", lambda lib, x: x ** 0, UNARY_SHAPES),
    OpInfo("rpow_scalar", lambda lib, x: 2 ** x, UNARY_SHAPES),
    OpInfo("clamp", lambda lib, x: lib.clamp(x, -0.5, 0.7), UNARY_SHAPES, make_inputs=_distinct),
    OpInfo("clamp_min", lambda lib, x: x.clamp(min=0.13), UNARY_SHAPES, make_inputs=_distinct),
    OpInfo("clamp_max", lambda lib, x: x.clamp(max=0.13), UNARY_SHAPES, make_inputs=_distinct),
    OpInfo(
        "clamp_tensor",
        lambda lib, x, lo, hi: lib.clamp(x, lo, hi + 1.0),
        [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (1, 4))],
        make_inputs=_distinct,
    ),
    # The other forms with tensor bounds (ClampBackward0 for clamp, *Backward1 for clamp_min
    # and clamp_max): one bound, crossed bounds (max wins), methods and in place.
    OpInfo("clamp_tensor_min", lambda lib, x, lo: lib.clamp(x, min=lo), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("clamp_tensor_max", lambda lib, x, hi: lib.clamp(x, max=hi), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("clamp_tensor_none_max", lambda lib, x, hi: lib.clamp(x, None, hi), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("clamp_tensor_crossed", lambda lib, x, lo, hi: lib.clamp(x, lo + 5.0, hi),
           [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (1, 4))], make_inputs=_distinct),
    OpInfo("clip_tensor", lambda lib, x, lo, hi: lib.clip(x, lo, hi + 1.0),
           [((3, 4), (3, 4), (3, 4))], make_inputs=_distinct),
    OpInfo("Tensor.clamp_tensor", lambda lib, x, lo: x.clamp(min=lo), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clip_tensor", lambda lib, x, hi: x.clip(max=hi), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp__tensor", lambda lib, x, lo, hi: x.clone().clamp_(lo, hi + 1.0),
           [((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (1, 4))], make_inputs=_distinct),
    OpInfo("Tensor.clamp__tensor_min", lambda lib, x, lo: x.clone().clamp_(min=lo),
           INPLACE_BINARY_SHAPES, make_inputs=_distinct),
    OpInfo("Tensor.clip__tensor_max", lambda lib, x, hi: x.clone().clip_(max=hi),
           INPLACE_BINARY_SHAPES, make_inputs=_distinct),
    OpInfo("Tensor.clamp_min_tensor", lambda lib, x, lo: x.clamp_min(lo), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp_max_tensor", lambda lib, x, hi: x.clamp_max(hi), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp_min__tensor", lambda lib, x, lo: x.clone().clamp_min_(lo),
           INPLACE_BINARY_SHAPES, make_inputs=_distinct),
    OpInfo("Tensor.clamp_max__tensor", lambda lib, x, hi: x.clone().clamp_max_(hi),
           INPLACE_BINARY_SHAPES, make_inputs=_distinct),
    OpInfo(
        "where",
        lambda lib, x, y: lib.where(x > 0, x, y),
        BINARY_SHAPES,
        make_inputs=_away_from_zero,
    ),
    OpInfo("where_scalar", lambda lib, x: lib.where(x > 0, x, 0.5), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("lerp", lambda lib, x, y: lib.lerp(x, y, 0.3), BINARY_SHAPES),
    OpInfo(
        "lerp_tensor",
        lambda lib, x, y, w: lib.lerp(x, y, w),
        [((3, 4), (3, 4), (3, 4)), ((2, 1), (1, 3), (3,))],
    ),
    OpInfo("addcmul", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.3), _TERNARY_SHAPES),
    OpInfo("addcmul_default", lambda lib, x, a, b: lib.addcmul(x, a, b), _TERNARY_SHAPES[:1]),
    OpInfo("addcdiv", lambda lib, x, a, b: lib.addcdiv(x, a, b, value=-0.7), _TERNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("Tensor.addcmul_", lambda lib, x, a, b: x.clone().addcmul_(a, b, value=2),
           [((3, 4), (3, 4), (4,)), ((2, 3), (), (2, 3))]),
    OpInfo("Tensor.addcdiv_", lambda lib, x, a, b: x.clone().addcdiv_(a, b, value=0.5),
           [((3, 4), (3, 4), (4,))], make_inputs=_away_from_zero),
    OpInfo("Tensor.addcmul", lambda lib, x, a, b: x.addcmul(a, b, value=-1),
           [((3, 4), (4,), (3, 1))]),
    OpInfo("Tensor.addcdiv", lambda lib, x, a, b: x.addcdiv(a, b), [((3, 4), (4,), (3, 1))],
           make_inputs=_away_from_zero),
    OpInfo("softplus_like", lambda lib, x: lib.log1p(lib.exp(x)), UNARY_SHAPES),
    OpInfo("compare_gt", lambda lib, x, y: x > y, BINARY_SHAPES, grad=False),
    OpInfo("compare_eq", lambda lib, x, y: x == y, BINARY_SHAPES, grad=False),
    OpInfo("logical_and", lambda lib, x, y: lib.logical_and(x > 0, y > 0), BINARY_SHAPES,
           grad=False),
    OpInfo("floor_divide", lambda lib, x, y: lib.floor_divide(x, y), BINARY_SHAPES,
           make_inputs=_positive_pair, grad=False),
    # A rounding mode (even None) records DivBackward2: zero gradients for floor and trunc,
    # true division's for None; a number divisor is saved as PyTorch's wrapped 0-d tensor.
    OpInfo("div_floor", lambda lib, x, y: lib.div(x, y, rounding_mode="floor"), BINARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("div_trunc", lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"), BINARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("div_mode_none", lambda lib, x, y: lib.div(x, y, rounding_mode=None), BINARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("div_floor_scalar", lambda lib, x: lib.div(x, 0.3, rounding_mode="floor"),
           UNARY_SHAPES),
    OpInfo("Tensor.div_trunc_scalar", lambda lib, x: x.div(-2, rounding_mode="trunc"),
           UNARY_SHAPES),
    OpInfo("Tensor.div__floor", lambda lib, x, y: x.clone().div_(y, rounding_mode="floor"),
           INPLACE_BINARY_SHAPES, make_inputs=_away_from_zero),
    OpInfo("Tensor.divide__mode_none",
           lambda lib, x, y: x.clone().divide_(y, rounding_mode=None),
           INPLACE_BINARY_SHAPES, make_inputs=_away_from_zero),
    # heaviside has no derivative (a NotImplemented node: tests/test_pointwise_nodes.py).
    OpInfo("heaviside_at_zeros", lambda lib, x, y: lib.heaviside(lib.round(x), y),
           BINARY_SHAPES, grad=False),
    OpInfo("Tensor.heaviside_", lambda lib, x, y: x.clone().round().heaviside_(y),
           INPLACE_BINARY_SHAPES, grad=False),
    OpInfo("floor_divide_scalar", lambda lib, x: lib.floor_divide(x, 0.7), UNARY_SHAPES,
           grad=False),
    OpInfo("chain", lambda lib, x, y: (x * y + x.exp()).tanh() * y.sin(), BINARY_SHAPES),
]


def _logaddexp_inputs(rng, shapes, dtype):
    """Random operands, and some pairs far apart (the exp of the difference overflows)."""
    out = [rng.uniform(-3, 3, s).astype(dtype) for s in shapes]
    if out[0].size > 2:
        out[0].reshape(-1)[0] = 40.0
    return out


OPS += [
    OpInfo("logaddexp", lambda lib, a, b: lib.logaddexp(a, b), BINARY_SHAPES,
           make_inputs=_logaddexp_inputs),
    OpInfo("logaddexp_method", lambda lib, a, b: a.logaddexp(b), BINARY_SHAPES[:1]),
    OpInfo("logaddexp2", lambda lib, a, b: lib.logaddexp2(a, b), BINARY_SHAPES,
           make_inputs=_logaddexp_inputs),
    OpInfo("logaddexp2_method", lambda lib, a, b: a.logaddexp2(b), BINARY_SHAPES[:1]),
    OpInfo("copysign", lambda lib, a, b: lib.copysign(a, b), BINARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("copysign_number", lambda lib, a: lib.copysign(a, -1.5), [((3, 4),), ((),)],
           make_inputs=_away_from_zero),
    OpInfo("copysign_method", lambda lib, a, b: a.copysign(b), BINARY_SHAPES[:1],
           make_inputs=_away_from_zero),
    OpInfo("copysign_in_place", lambda lib, a, b: (a * 1).copysign_(b), BINARY_SHAPES[:1],
           make_inputs=_away_from_zero),
]
