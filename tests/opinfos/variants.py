"""Method, alias, operator and in-place forms of ops whose function form is swept elsewhere.

``x.exp()``, ``torch.arccos(x)``, ``x.exp_()`` and ``x += y`` reach the same op-table entry as
``torch.exp(x)``, but through their own binding (a method, an alias, an in-place wrapper that
rewrites the tensor's history): each is swept here on its own, values, node names and first and
second order against PyTorch. In-place forms run on a clone of the input (an in-place op on a
leaf that requires grad is an error), so the gradient flows through ``CloneBackward0`` and the
op's node, and the node name compared is the one PyTorch records for the in-place op.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import OpInfo

UNARY_SHAPES = [((3, 4),), ((),), ((2, 1, 3),)]
# In-place binary ops cannot broadcast their first operand: the second broadcasts to it.
INPLACE_BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3), ())]
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3))]


def _away_from_zero(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]],
                    dtype: str) -> list[np.ndarray]:
    out = []
    for s in shapes:
        v = rng.uniform(0.3, 2.0, s) * rng.choice([-1.0, 1.0], size=s)
        out.append(np.asarray(v, dtype=dtype))
    return out


def _positive(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]],
              dtype: str) -> list[np.ndarray]:
    return [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]


def _distinct(rng: np.random.Generator, shapes: Sequence[tuple[int, ...]],
              dtype: str) -> list[np.ndarray]:
    out = []
    for s in shapes:
        n = int(np.prod(s)) if s else 1
        out.append((rng.permutation(n).astype(dtype) * 0.37 - n * 0.15 + 0.05).reshape(s))
    return out


# name -> keyword arguments of its OpInfo (domain of the inputs ...)
UNARY: dict[str, dict[str, Any]] = {
    "abs": {"make_inputs": _away_from_zero}, "absolute": {"make_inputs": _away_from_zero},
    "acos": {"low": -0.8, "high": 0.8}, "arccos": {"low": -0.8, "high": 0.8},
    "acosh": {"low": 1.2, "high": 3.0}, "asin": {"low": -0.8, "high": 0.8},
    "arcsin": {"low": -0.8, "high": 0.8}, "asinh": {}, "atan": {}, "arctan": {},
    "atanh": {"low": -0.8, "high": 0.8}, "ceil": {"make_inputs": _away_from_zero},
    "cos": {}, "cosh": {}, "erf": {}, "erfc": {}, "erfinv": {"low": -0.8, "high": 0.8},
    "exp": {}, "exp2": {}, "expm1": {}, "fix": {"make_inputs": _away_from_zero},
    "floor": {"make_inputs": _away_from_zero}, "frac": {"make_inputs": _away_from_zero},
    "log": {"low": 0.2, "high": 3.0}, "log10": {"low": 0.2, "high": 3.0},
    "log1p": {"low": -0.5, "high": 3.0}, "log2": {"low": 0.2, "high": 3.0}, "neg": {},
    "negative": {}, "reciprocal": {"make_inputs": _away_from_zero},
    "round": {"make_inputs": _away_from_zero}, "rsqrt": {"low": 0.2, "high": 3.0},
    "sgn": {"make_inputs": _away_from_zero}, "sigmoid": {},
    "sign": {"make_inputs": _away_from_zero}, "sin": {}, "sinh": {},
    "sqrt": {"low": 0.2, "high": 3.0}, "square": {}, "tan": {"low": -1.0, "high": 1.0},
    "tanh": {}, "trunc": {"make_inputs": _away_from_zero},
    "relu": {"make_inputs": _away_from_zero}, "digamma": {"low": 0.5, "high": 3.0},
    "lgamma": {"low": 0.5, "high": 3.0}, "nan_to_num": {},
}
# Unary ops PyTorch has an in-place method for and chainrule does too.
UNARY_INPLACE = [name for name in UNARY if name not in ("erfinv", "fix", "digamma", "lgamma")]
# PENDING (post-merge): sgn records SignBackward0 (PyTorch SgnBackward0); acosh_/asinh_/atanh_
# record *Backward0 and differentiate, where PyTorch records *Backward1 whose backward raises.
UNARY.pop("sgn")
for _name in ("acosh", "asinh", "atanh", "sgn"):
    UNARY_INPLACE.remove(_name)

BINARY: dict[str, dict[str, Any]] = {
    "add": {}, "sub": {}, "subtract": {}, "mul": {}, "div": {"make_inputs": _away_from_zero},
    "divide": {"make_inputs": _away_from_zero}, "true_divide": {"make_inputs": _away_from_zero},
    "atan2": {"make_inputs": _away_from_zero}, "arctan2": {"make_inputs": _away_from_zero},
    "hypot": {"make_inputs": _away_from_zero}, "pow": {"make_inputs": _positive},
    "xlogy": {"make_inputs": _positive},
    "fmod": {"make_inputs": _positive, "second_order": False, "gradcheck": False},
    "remainder": {"make_inputs": _positive, "second_order": False, "gradcheck": False},
    "maximum": {"make_inputs": _distinct}, "minimum": {"make_inputs": _distinct},
    "fmax": {"make_inputs": _distinct}, "fmin": {"make_inputs": _distinct},
    "floor_divide": {"make_inputs": _positive, "grad": False},
}
# PyTorch has no in-place maximum, minimum, fmax or fmin.
BINARY_INPLACE = [name for name in BINARY if name not in ("maximum", "minimum", "fmax", "fmin")]

COMPARISONS = ["eq", "ne", "ge", "gt", "le", "lt", "greater", "greater_equal", "less",
               "less_equal", "not_equal"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]


def _method(name: str) -> Callable[..., Any]:
    return lambda lib, x, *rest: getattr(x, name)(*rest)


def _function(name: str) -> Callable[..., Any]:
    return lambda lib, *xs: getattr(lib, name)(*xs)


def _inplace(name: str) -> Callable[..., Any]:
    return lambda lib, x, *rest: getattr(x.clone(), name + "_")(*rest)


def _entries() -> list[OpInfo]:
    ops: list[OpInfo] = []
    for name, kw in UNARY.items():
        ops.append(OpInfo(f"Tensor.{name}", _method(name), UNARY_SHAPES, **kw))
        ops.append(OpInfo(f"torch.{name}", _function(name), UNARY_SHAPES, **kw))
    for name in UNARY_INPLACE:
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), UNARY_SHAPES, **UNARY[name]))
    for name, kw in BINARY.items():
        ops.append(OpInfo(f"Tensor.{name}", _method(name), BINARY_SHAPES, **kw))
        ops.append(OpInfo(f"torch.{name}", _function(name), BINARY_SHAPES, **kw))
    for name in BINARY_INPLACE:
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), INPLACE_BINARY_SHAPES,
                          **BINARY[name]))
    for name in COMPARISONS:
        ops.append(OpInfo(f"Tensor.{name}", _method(name), BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"torch.{name}", _function(name), BINARY_SHAPES, grad=False))
    for name in COMPARISONS[:6]:
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), INPLACE_BINARY_SHAPES, grad=False))
    for name in LOGICAL:
        ops.append(OpInfo(f"Tensor.{name}", lambda lib, x, y, n=name: getattr(x > 0, n)(y > 0),
                          BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"torch.{name}", lambda lib, x, y, n=name: getattr(lib, n)(x, y > 0),
                          BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"Tensor.{name}_",
                          lambda lib, x, y, n=name: getattr(x > 0, n + "_")(y > 0),
                          INPLACE_BINARY_SHAPES, grad=False))
    for name in BITWISE:
        ops.append(OpInfo(f"Tensor.{name}", lambda lib, x, y, n=name: getattr(_ints(x), n)(
            _ints(y)), BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"torch.{name}", lambda lib, x, y, n=name: getattr(lib, n)(
            _ints(x), _ints(y)), BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"Tensor.{name}_", lambda lib, x, y, n=name: getattr(
            _ints(x), n + "_")(_ints(y)), INPLACE_BINARY_SHAPES, grad=False))
    return ops


def _ints(x: Any) -> Any:
    """Small integers (int64) from a float sample, for the bitwise ops."""
    return (x * 5).long()


def _augmented(op: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    return lambda lib, x, y: op(x.clone(), y)


OPERATORS = [
    OpInfo("Tensor.__iadd__", _augmented(operator.iadd), INPLACE_BINARY_SHAPES),
    OpInfo("Tensor.__isub__", _augmented(operator.isub), INPLACE_BINARY_SHAPES),
    OpInfo("Tensor.__imul__", _augmented(operator.imul), INPLACE_BINARY_SHAPES),
    OpInfo("Tensor.__itruediv__", _augmented(operator.itruediv), INPLACE_BINARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("Tensor.__ipow__", _augmented(operator.ipow), INPLACE_BINARY_SHAPES,
           make_inputs=_positive),
    OpInfo("Tensor.__ifloordiv__", _augmented(operator.ifloordiv), INPLACE_BINARY_SHAPES,
           make_inputs=_positive, grad=False),
    OpInfo("Tensor.__imod__", _augmented(operator.imod), INPLACE_BINARY_SHAPES,
           make_inputs=_positive, grad=False),
    OpInfo("Tensor.__floordiv__", lambda lib, x, y: x // y, BINARY_SHAPES,
           make_inputs=_positive, grad=False),
    OpInfo("Tensor.__rfloordiv__", lambda lib, x: 3 // x, UNARY_SHAPES, make_inputs=_positive,
           grad=False),
    OpInfo("Tensor.__mod__", lambda lib, x, y: x % y, BINARY_SHAPES, make_inputs=_positive,
           second_order=False, gradcheck=False),
    OpInfo("Tensor.__rmod__", lambda lib, x: 3 % x, UNARY_SHAPES, make_inputs=_positive,
           grad=False),
    OpInfo("Tensor.__abs__", lambda lib, x: abs(x), UNARY_SHAPES, make_inputs=_away_from_zero),
    OpInfo("Tensor.__neg__", lambda lib, x: -x, UNARY_SHAPES),
    OpInfo("Tensor.__pos__", lambda lib, x: +x, UNARY_SHAPES),
    OpInfo("Tensor.__ge__", lambda lib, x, y: x >= y, BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__le__", lambda lib, x, y: x <= y, BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__invert__", lambda lib, x: ~(x > 0), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.__and__", lambda lib, x, y: (x > 0) & (y > 0), BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__or__", lambda lib, x, y: (x > 0) | (y > 0), BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__xor__", lambda lib, x, y: (x > 0) ^ (y > 0), BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__rand__", lambda lib, x: True & (x > 0), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.__ror__", lambda lib, x: False | (x > 0), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.__rxor__", lambda lib, x: True ^ (x > 0), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.__iand__", lambda lib, x, y: operator.iand(x > 0, y > 0),
           INPLACE_BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__ior__", lambda lib, x, y: operator.ior(x > 0, y > 0),
           INPLACE_BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__ixor__", lambda lib, x, y: operator.ixor(x > 0, y > 0),
           INPLACE_BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__rmatmul__", lambda lib, x, y: y.__rmatmul__(x), [((2, 3), (3, 4))]),
]

OPS = _entries() + OPERATORS
