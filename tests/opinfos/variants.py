"""Method, alias, operator, overload and in-place forms of ops swept elsewhere.

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
    "lgamma": {"low": 0.5, "high": 3.0}, "nan_to_num": {}, "deg2rad": {}, "rad2deg": {},
    "arcsinh": {}, "arccosh": {"low": 1.2, "high": 3.0}, "arctanh": {"low": -0.8, "high": 0.8},
}
# Unary ops with an in-place method (PyTorch has one for each).
UNARY_INPLACE = list(UNARY)
# In place, these record *Backward1, whose backward raises NotImplementedError in PyTorch (and
# here: tests/test_inplace_parity.py): values and node names only.
NOT_DIFFERENTIABLE_INPLACE = ("acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh")

BINARY: dict[str, dict[str, Any]] = {
    "add": {}, "sub": {}, "subtract": {}, "mul": {}, "multiply": {},
    "div": {"make_inputs": _away_from_zero},
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
SHIFTS = ["bitwise_left_shift", "bitwise_right_shift"]


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
        kw = dict(UNARY[name], grad=False) if name in NOT_DIFFERENTIABLE_INPLACE else UNARY[name]
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), UNARY_SHAPES, **kw))
    for name, kw in BINARY.items():
        ops.append(OpInfo(f"Tensor.{name}", _method(name), BINARY_SHAPES, **kw))
        ops.append(OpInfo(f"torch.{name}", _function(name), BINARY_SHAPES, **kw))
    for name in BINARY_INPLACE:
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), INPLACE_BINARY_SHAPES,
                          **BINARY[name]))
    for name in COMPARISONS:
        ops.append(OpInfo(f"Tensor.{name}", _method(name), BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"torch.{name}", _function(name), BINARY_SHAPES, grad=False))
    for name in COMPARISONS:
        # In place, a comparison records GtBackward0/1 ... with a zero derivative (out of place
        # it has no history); the number form is swept in SHAPE_AND_LINALG.
        ops.append(OpInfo(f"Tensor.{name}_", _inplace(name), INPLACE_BINARY_SHAPES))
    for name in COMPARISONS:
        # with a number (here one of the elements: a tie)
        ops.append(OpInfo(f"Tensor.{name}__number", lambda lib, x, n=name: getattr(
            x.clone(), n + "_")(x.reshape(-1)[0].item()), UNARY_SHAPES))
    for name in LOGICAL:
        ops.append(OpInfo(f"Tensor.{name}", lambda lib, x, y, n=name: getattr(x > 0, n)(y > 0),
                          BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"torch.{name}", lambda lib, x, y, n=name: getattr(lib, n)(x, y > 0),
                          BINARY_SHAPES, grad=False))
        ops.append(OpInfo(f"Tensor.{name}_",
                          lambda lib, x, y, n=name: getattr(x > 0, n + "_")(y > 0),
                          INPLACE_BINARY_SHAPES, grad=False))
    # (the second operand of a shift: small amounts, negative and too large ones included)
    for names, second in ((BITWISE, _ints), (SHIFTS, _shifts)):
        for name in names:
            ops.append(OpInfo(f"Tensor.{name}", lambda lib, x, y, n=name, s=second: getattr(
                _ints(x), n)(s(y)), BINARY_SHAPES, grad=False))
            ops.append(OpInfo(f"torch.{name}", lambda lib, x, y, n=name, s=second: getattr(
                lib, n)(_ints(x), s(y)), BINARY_SHAPES, grad=False))
            ops.append(OpInfo(f"Tensor.{name}_", lambda lib, x, y, n=name, s=second: getattr(
                _ints(x), n + "_")(s(y)), INPLACE_BINARY_SHAPES, grad=False))
    for name in SHIFTS:
        # with a number: shifted, and shifting (PyTorch's Scalar-Tensor overload)
        ops.append(OpInfo(f"torch.{name}_tensor_number", lambda lib, x, n=name: getattr(lib, n)(
            _ints(x), 3), UNARY_SHAPES, grad=False))
        ops.append(OpInfo(f"torch.{name}_number_tensor", lambda lib, x, n=name: getattr(lib, n)(
            -1000, _shifts(x)), UNARY_SHAPES, grad=False))
        ops.append(OpInfo(f"Tensor.{name}__number", lambda lib, x, n=name: getattr(
            _ints(x).to(lib.int8), n + "_")(5), UNARY_SHAPES, grad=False))
    return ops


def _ints(x: Any) -> Any:
    """Small integers (int64) from a float sample, for the bitwise ops."""
    return (x * 5).long()


def _shifts(x: Any) -> Any:
    """Shift amounts (int64) from a float sample: negative ones, and some of 64 bits or more
    (PyTorch's results, not C's undefined behaviour)."""
    return (x * 35).long()


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
    OpInfo("Tensor.__lshift__", lambda lib, x, y: _ints(x) << _shifts(y), BINARY_SHAPES,
           grad=False),
    OpInfo("Tensor.__rshift__", lambda lib, x, y: _ints(x) >> _shifts(y), BINARY_SHAPES,
           grad=False),
    OpInfo("Tensor.__rlshift__", lambda lib, x: 3 << _shifts(x), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.__rrshift__", lambda lib, x: -1000 >> _shifts(x), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.__ilshift__", lambda lib, x, y: operator.ilshift(_ints(x), _shifts(y)),
           INPLACE_BINARY_SHAPES, grad=False),
    OpInfo("Tensor.__irshift__", lambda lib, x, y: operator.irshift(_ints(x), _shifts(y)),
           INPLACE_BINARY_SHAPES, grad=False),
]

M = ((3, 4),)


def _f(lib: Any) -> Any:
    return lib.nn.functional


def _index(lib: Any) -> Any:
    return lib.tensor([2, 0, 2])


def _base_then_view(base: Any) -> Any:
    """A view taken before its base is reshaped in place: its history is regenerated
    (AsStridedBackward0 of the base's UnsqueezeBackward1)."""
    view = base[1]
    base.unsqueeze_(0)
    return view * 2


SHAPE_AND_LINALG = [
    OpInfo("Tensor.adjoint", lambda lib, x: x.adjoint(), [M]),
    OpInfo("torch.adjoint", lambda lib, x: lib.adjoint(x), [M]),
    OpInfo("Tensor.broadcast_to", lambda lib, x: x.broadcast_to((2, 3, 4)), [((3, 1),)]),
    OpInfo("torch.broadcast_to", lambda lib, x: lib.broadcast_to(x, (2, 4)), [((4,),)]),
    OpInfo("Tensor.expand_as", lambda lib, x, y: x.expand_as(y), [((3, 1), (3, 4))],
           grad_inputs=(0,)),
    OpInfo("Tensor.reshape_as", lambda lib, x, y: x.t().reshape_as(y), [((3, 4), (2, 6))],
           grad_inputs=(0,)),
    OpInfo("Tensor.view_as", lambda lib, x, y: x.view_as(y), [((3, 4), (2, 6))],
           grad_inputs=(0,)),
    OpInfo("Tensor.contiguous", lambda lib, x: x.t().contiguous() * 1, [M]),
    OpInfo("Tensor.ravel", lambda lib, x: x.ravel(), [M, ((2, 1, 3),)]),
    OpInfo("torch.ravel", lambda lib, x: lib.ravel(x), [M]),
    OpInfo("torch.reshape", lambda lib, x: lib.reshape(x, (2, -1)), [M]),
    OpInfo("torch.flatten", lambda lib, x: lib.flatten(x), [((2, 3, 4),)]),
    OpInfo("Tensor.unflatten", lambda lib, x: x.unflatten(1, (2, 2)), [M]),
    OpInfo("torch.unflatten", lambda lib, x: lib.unflatten(x, 0, (1, 3)), [M]),
    OpInfo("torch.squeeze", lambda lib, x: lib.squeeze(x, 1), [((3, 1, 4),)]),
    OpInfo("torch.unsqueeze", lambda lib, x: lib.unsqueeze(x, -1), [M]),
    OpInfo("torch.t", lambda lib, x: lib.t(x), [M, ((3,),)]),
    OpInfo("torch.transpose", lambda lib, x: lib.transpose(x, 0, 2), [((2, 3, 4),)]),
    OpInfo("torch.permute", lambda lib, x: lib.permute(x, (1, 2, 0)), [((2, 3, 4),)]),
    OpInfo("Tensor.moveaxis", lambda lib, x: x.moveaxis(0, 2), [((2, 3, 4),)]),
    OpInfo("torch.moveaxis", lambda lib, x: lib.moveaxis(x, -1, 0), [((2, 3, 4),)]),
    OpInfo("torch.movedim", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), [((2, 3, 4),)]),
    OpInfo("Tensor.swapaxes", lambda lib, x: x.swapaxes(0, 1), [M]),
    OpInfo("Tensor.swapdims", lambda lib, x: x.swapdims(2, 0), [((2, 3, 4),)]),
    OpInfo("torch.swapaxes", lambda lib, x: lib.swapaxes(x, 0, 1), [M]),
    OpInfo("torch.swapdims", lambda lib, x: lib.swapdims(x, 0, 1), [M]),
    OpInfo("Tensor.fliplr", lambda lib, x: x.fliplr(), [M]),
    OpInfo("Tensor.flipud", lambda lib, x: x.flipud(), [M]),
    OpInfo("Tensor.split_with_sizes", lambda lib, x: x.split_with_sizes([1, 3]), [((4, 2),)]),
    OpInfo("torch.split_with_sizes", lambda lib, x: lib.split_with_sizes(x, [2, 1], 1),
           [((2, 3),)]),
    OpInfo("torch.chunk", lambda lib, x: lib.chunk(x, 2, 0), [((5, 2),)]),
    OpInfo("torch.unbind", lambda lib, x: lib.unbind(x, 1), [M]),
    OpInfo("torch.select", lambda lib, x: lib.select(x, 1, -1), [M]),
    OpInfo("Tensor.sum_to_size", lambda lib, x: x.sum_to_size(1, 4), [M]),
    OpInfo("Tensor.diag_embed", lambda lib, x: x.diag_embed(), [((2, 3),)]),
    OpInfo("torch.atleast_1d", lambda lib, x: lib.atleast_1d(x), [((),), ((2,),)]),
    OpInfo("Tensor.where", lambda lib, x, y: x.where(x > 0, y), [((3, 4), (3, 4))],
           make_inputs=_away_from_zero),
    # Sampling from a degenerate distribution (probabilities 0 and 1): PyTorch's values and nodes.
    OpInfo("torch.bernoulli", lambda lib, x: lib.bernoulli(x * 0 + (x > 0).to(x.dtype)), [M],
           make_inputs=_away_from_zero),
    OpInfo("Tensor.bernoulli", lambda lib, x: (x * 0 + (x > 0).to(x.dtype)).bernoulli(), [M],
           make_inputs=_away_from_zero),
    OpInfo("Tensor.bernoulli_number", lambda lib, x: (x * 1).bernoulli(1.0), [M], grad=False),
    OpInfo("Tensor.bernoulli_", lambda lib, x, p: x.clone().bernoulli_(p * 0 + (p > 0).to(
        p.dtype)), [((3, 4), (3, 4)), ((3, 4), (4,))], make_inputs=_away_from_zero),
    OpInfo("Tensor.bernoulli__number", lambda lib, x: x.clone().bernoulli_(0.0), UNARY_SHAPES),
    OpInfo("Tensor.multinomial", lambda lib, x: (x == x.amax(-1, True)).to(x.dtype).multinomial(
        1), [M, ((4,),)], make_inputs=_distinct, grad=False),
    # xlogy with a number operand: PyTorch's Scalar overloads (XlogyBackward1/2, one edge).
    OpInfo("torch.xlogy_number_other", lambda lib, x: lib.xlogy(x, 2.5), UNARY_SHAPES),
    OpInfo("torch.xlogy_number_self", lambda lib, x: lib.xlogy(3.0, x), UNARY_SHAPES,
           make_inputs=_positive),
    OpInfo("Tensor.xlogy_number", lambda lib, x: x.xlogy(0.5), UNARY_SHAPES),
    OpInfo("Tensor.xlogy__number", lambda lib, x: x.clone().xlogy_(2), UNARY_SHAPES),
    OpInfo("Tensor.floor_divide__tensor", lambda lib, x, y: x.clone().floor_divide_(y),
           INPLACE_BINARY_SHAPES, make_inputs=_positive, grad=False),
    OpInfo("Tensor.polygamma_", lambda lib, x: x.clone().polygamma_(1), UNARY_SHAPES, low=0.5,
           high=3.0),
    OpInfo("Tensor.polygamma_2", lambda lib, x: x.clone().polygamma_(2), UNARY_SHAPES,
           low=0.5, high=3.0, second_order=False),
    OpInfo("Tensor.cumsum_", lambda lib, x: x.clone().cumsum_(-1), [M, ((),)]),
    OpInfo("Tensor.cumprod_", lambda lib, x: x.clone().cumprod_(0), [M],
           make_inputs=_away_from_zero),
    OpInfo("Tensor.tril_", lambda lib, x: x.clone().tril_(), [M]),
    OpInfo("Tensor.triu_", lambda lib, x: x.clone().triu_(-1), [M, ((2, 3, 4),)]),
    OpInfo("Tensor.addmm_", lambda lib, x, a, b: x.clone().addmm_(a, b, beta=0.5, alpha=2),
           [((2, 4), (2, 3), (3, 4))]),
    # View ops in place: ``self`` takes the view's shape (TBackward1 ...); on a clone, a view
    # of a clone, and twice in a row.
    # isclose: close, not close, infinities and NaN (equal_nan both ways)
    OpInfo("torch.isclose", lambda lib, x, y: lib.isclose(x, x + y * 1e-6), BINARY_SHAPES,
           grad=False),
    OpInfo("Tensor.isclose_equal_nan", lambda lib, x, y: (x / 0).isclose(y / 0, 0.1, 0.1, True),
           BINARY_SHAPES, grad=False),
    # as_strided: views of the storage (overlapping, with an offset, of a view; of an
    # expanded tensor in the layout sweep and in tests/test_as_strided.py)
    OpInfo("torch.as_strided", lambda lib, x: lib.as_strided(x, (2, 3), (4, 1)), [M]),
    OpInfo("Tensor.as_strided_overlapping", lambda lib, x: x.as_strided((3, 3), (1, 1), 2),
           [M]),
    OpInfo("Tensor.as_strided_of_view", lambda lib, x: x[1:].as_strided((2, 2), (1, 4)), [M]),
    OpInfo("Tensor.as_strided_", lambda lib, x: x.clone().as_strided_((2, 2), (3, 1), 1), [M]),
    OpInfo("Tensor.t_", lambda lib, x: x.clone().t_(), [M, ((3,),), ((),)]),
    OpInfo("Tensor.t_twice", lambda lib, x: x.clone().t_().t_() * 1, [M]),
    OpInfo("Tensor.t_of_view", lambda lib, x: x.clone()[1:].t_(), [M]),
    OpInfo("Tensor.transpose_", lambda lib, x: x.clone().transpose_(0, 2), [((2, 3, 4),)]),
    OpInfo("Tensor.swapaxes_", lambda lib, x: x.clone().swapaxes_(1, 0), [M]),
    OpInfo("Tensor.swapdims_", lambda lib, x: x.clone().swapdims_(-1, 0), [M]),
    OpInfo("Tensor.unsqueeze_", lambda lib, x: x.clone().unsqueeze_(-1), [M, ((),)]),
    OpInfo("Tensor.squeeze_", lambda lib, x: x.clone().squeeze_(), [((3, 1, 4),)]),
    OpInfo("Tensor.squeeze__dim", lambda lib, x: x.clone().squeeze_(-2), [((3, 1, 4),), M]),
    OpInfo("Tensor.squeeze__dims", lambda lib, x: x.clone().squeeze_((0, 1)), [((1, 1, 4),)]),
    OpInfo("Tensor.unsqueeze_of_base_then_view",
           lambda lib, x: _base_then_view(x.clone()), [M]),
    OpInfo("Tensor.lerp", lambda lib, x, y: x.lerp(y, 0.25), INPLACE_BINARY_SHAPES),
    OpInfo("Tensor.lerp_", lambda lib, x, y: x.clone().lerp_(y, 0.25), INPLACE_BINARY_SHAPES),
    OpInfo("Tensor.matmul", lambda lib, a, b: a.matmul(b), [((2, 3), (3, 4)), ((3,), (3, 2))]),
    OpInfo("Tensor.bmm", lambda lib, a, b: a.bmm(b), [((2, 3, 4), (2, 4, 2))]),
    OpInfo("Tensor.mv", lambda lib, a, v: a.mv(v), [((2, 3), (3,))]),
    OpInfo("Tensor.dot", lambda lib, a, b: a.dot(b), [((3,), (3,))]),
    OpInfo("Tensor.outer", lambda lib, a, b: a.outer(b), [((3,), (2,))]),
    OpInfo("Tensor.ger", lambda lib, a, b: a.ger(b), [((3,), (2,))]),
    OpInfo("torch.ger", lambda lib, a, b: lib.ger(a, b), [((3,), (2,))]),
    OpInfo("torch.take", lambda lib, x: lib.take(x, lib.tensor([0, 5, -1])), [M]),
    OpInfo("torch.masked_select", lambda lib, x: lib.masked_select(x, x > 0), [M],
           make_inputs=_away_from_zero),
    OpInfo("torch.scatter", lambda lib, x, s: lib.scatter(x, 0, lib.tensor([[0, 1, 2]]), s),
           [((3, 3), (1, 3))]),
    OpInfo("Tensor.index_add_", lambda lib, x, s: x.clone().index_add_(1, _index(lib), s),
           [((2, 4), (2, 3))]),
    OpInfo("Tensor.index_put_", lambda lib, x, v: x.clone().index_put_(
        (lib.tensor([0, 2]),), v), [((3, 4), (2, 4))]),
    OpInfo("Tensor.masked_fill_", lambda lib, x: x.clone().masked_fill_(x > 0, 0.5), [M],
           make_inputs=_away_from_zero),
    OpInfo("Tensor.put_", lambda lib, x, v: x.clone().put_(lib.tensor([1, 7]), v),
           [((3, 4), (2,))]),
    OpInfo("Tensor.scatter_", lambda lib, x, s: x.clone().scatter_(
        1, lib.tensor([[0], [3], [1]]), s), [((3, 4), (3, 1))]),
    OpInfo("Tensor.scatter_add_", lambda lib, x, s: x.clone().scatter_add_(
        1, lib.tensor([[0, 0], [3, 1], [1, 1]]), s), [((3, 4), (3, 2))]),
    OpInfo("Tensor.fill_", lambda lib, x: x.clone().fill_(1.5), UNARY_SHAPES),
    OpInfo("Tensor.fill_tensor", lambda lib, x, v: x.clone().fill_(v), [((3, 4), ())]),
    OpInfo("Tensor.zero_", lambda lib, x: x.clone().zero_(), UNARY_SHAPES),
    # Random fills with a degenerate distribution: deterministic values, PyTorch's nodes.
    OpInfo("Tensor.uniform_", lambda lib, x: x.clone().uniform_(0.5, 0.5) * x, UNARY_SHAPES),
    OpInfo("Tensor.normal_", lambda lib, x: x.clone().normal_(0.25, 0.0) * x, UNARY_SHAPES),
    # torch.normal of tensors (NormalBackward1/2/3, zero gradients): std 0, mean a constant of
    # the input (numerically constant too, so gradcheck agrees with PyTorch's zero formula).
    OpInfo("torch.normal", lambda lib, x: lib.normal(x * 0.0 + 0.25, 0.0) * x, UNARY_SHAPES),
    OpInfo("torch.normal_tensor_std", lambda lib, x: lib.normal(0.25, x * 0.0) * x,
           UNARY_SHAPES),
    OpInfo("torch.normal_tensors",
           lambda lib, x, y: lib.normal(x * 0.0 + 0.25, y * 0.0) * (x + y), BINARY_SHAPES),
    OpInfo("Tensor.clamp_", lambda lib, x: x.clone().clamp_(-0.5, 0.7), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clip", lambda lib, x: x.clip(-0.5, 0.7), UNARY_SHAPES, make_inputs=_distinct),
    OpInfo("Tensor.clip_", lambda lib, x: x.clone().clip_(max=0.7), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("torch.clip", lambda lib, x: lib.clip(x, min=-0.5), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp_min", lambda lib, x: x.clamp_min(0.13), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp_max", lambda lib, x: x.clamp_max(0.13), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp_min_", lambda lib, x: x.clone().clamp_min_(0.13), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("Tensor.clamp_max_", lambda lib, x: x.clone().clamp_max_(0.13), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("torch.clamp_min", lambda lib, x: lib.clamp_min(x, -0.2), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("torch.clamp_max", lambda lib, x: lib.clamp_max(x, -0.2), UNARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("torch.clamp_min_tensor", lambda lib, x, m: lib.clamp_min(x, m), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("torch.clamp_max_tensor", lambda lib, x, m: lib.clamp_max(x, m), BINARY_SHAPES,
           make_inputs=_distinct),
    OpInfo("torch.clone", lambda lib, x: lib.clone(x), UNARY_SHAPES),
    # Finite differences see through detach(); autograd must not.
    OpInfo("torch.detach", lambda lib, x: lib.detach(x) * x, UNARY_SHAPES, gradcheck=False),
    OpInfo("torch.mean", lambda lib, x: lib.mean(x, 1, True), [M]),
    OpInfo("torch.amin", lambda lib, x: lib.amin(x, 0), [M], make_inputs=_distinct),
    OpInfo("torch.argmax", lambda lib, x: lib.argmax(x, 1), [M], make_inputs=_distinct,
           grad=False),
    OpInfo("torch.all", lambda lib, x: lib.all(x > 0, 1), [M], make_inputs=_away_from_zero,
           grad=False),
    OpInfo("torch.argwhere", lambda lib, x: lib.argwhere(x > 0), [M],
           make_inputs=_away_from_zero, grad=False),
    OpInfo("Tensor.argwhere", lambda lib, x: (x > 0).argwhere(), [M],
           make_inputs=_away_from_zero, grad=False),
    OpInfo("Tensor.heaviside", lambda lib, x, y: x.heaviside(y), BINARY_SHAPES,
           make_inputs=_away_from_zero, grad=False),
    OpInfo("torch.heaviside", lambda lib, x, y: lib.heaviside(x, y), BINARY_SHAPES,
           make_inputs=_away_from_zero, grad=False),
    OpInfo("Tensor.isnan", lambda lib, x: (x / x.abs().min()).log().isnan(), [M], grad=False),
    OpInfo("Tensor.isinf", lambda lib, x: (1 / (x > 0).to(x.dtype)).isinf(), [M], grad=False),
    OpInfo("Tensor.isfinite", lambda lib, x: (1 / (x > 0).to(x.dtype)).isfinite(), [M],
           grad=False),
    OpInfo("torch.isnan", lambda lib, x: lib.isnan(x.log()), [M], grad=False),
    OpInfo("torch.isinf", lambda lib, x: lib.isinf(1 / (x > 0).to(x.dtype)), [M], grad=False),
    OpInfo("torch.isfinite", lambda lib, x: lib.isfinite(x.log()), [M], grad=False),
    OpInfo("torch.signbit", lambda lib, x: lib.signbit(x), [M], grad=False),
    OpInfo("Tensor.signbit", lambda lib, x: (x * (x > 0).to(x.dtype)).neg().signbit(), [M],
           make_inputs=_away_from_zero, grad=False),
    OpInfo("torch.isposinf", lambda lib, x: lib.isposinf(x / (x > 0).to(x.dtype)), [M],
           make_inputs=_away_from_zero, grad=False),
    OpInfo("Tensor.isposinf", lambda lib, x: (x.log() * 0 + 1 / x).isposinf(), [M],
           make_inputs=_away_from_zero, grad=False),
    OpInfo("torch.isneginf", lambda lib, x: lib.isneginf(-1 / (x > 0).to(x.dtype)), [M],
           make_inputs=_away_from_zero, grad=False),
    OpInfo("Tensor.isneginf", lambda lib, x: (x.log() - 1 / (x < 0).to(x.dtype)).isneginf(),
           [M], make_inputs=_away_from_zero, grad=False),
    OpInfo("torch.isreal", lambda lib, x: lib.isreal(x), [M], grad=False),
    OpInfo("Tensor.isreal", lambda lib, x: (x > 0).isreal(), [M], grad=False),
    OpInfo("torch.positive", lambda lib, x: lib.positive(x) * 2, [M]),
    OpInfo("Tensor.positive", lambda lib, x: x.positive().exp(), [M]),
    OpInfo("Tensor.logical_not", lambda lib, x: (x > 0).logical_not(), [M], grad=False),
    OpInfo("Tensor.logical_not_", lambda lib, x: (x > 0).logical_not_(), [M], grad=False),
    OpInfo("torch.logical_not", lambda lib, x: lib.logical_not(x), [M], grad=False),
    OpInfo("Tensor.bitwise_not", lambda lib, x: _ints(x).bitwise_not(), [M], grad=False),
    OpInfo("Tensor.bitwise_not_", lambda lib, x: _ints(x).bitwise_not_(), [M], grad=False),
    OpInfo("torch.bitwise_not", lambda lib, x: lib.bitwise_not(x > 0), [M], grad=False),
]

# Casts through a narrower dtype: compared with PyTorch, not with finite differences (which
# the rounding spoils).
CONVERSIONS = [
    OpInfo("Tensor.double", lambda lib, x: x.float().double(), UNARY_SHAPES, gradcheck=False),
    OpInfo("Tensor.to", lambda lib, x: x.to(lib.float16).to(lib.float64), UNARY_SHAPES,
           atol=1e-3, rtol=1e-3, gradcheck=False),
    OpInfo("Tensor.cpu", lambda lib, x: x.cpu(), UNARY_SHAPES),
    OpInfo("Tensor.int", lambda lib, x: (x * 3).int(), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.short", lambda lib, x: (x * 3).short(), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.char", lambda lib, x: (x * 3).char(), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.byte", lambda lib, x: (x * 3).abs().byte(), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.bool", lambda lib, x: (x * 3).int().bool(), UNARY_SHAPES, grad=False),
    OpInfo("Tensor.half", lambda lib, x: x.half(), UNARY_SHAPES, atol=1e-3, rtol=1e-3,
           gradcheck=False),
    # (back to float32: PyTorch's numpy() refuses bfloat16; the values are rounded to it)
    OpInfo("Tensor.bfloat16", lambda lib, x: x.bfloat16().float(), UNARY_SHAPES, atol=1e-2,
           rtol=1e-2, gradcheck=False),
    OpInfo("Tensor.cdouble", lambda lib, x: (x.cdouble() * (1 + 2j)).imag, UNARY_SHAPES),
    OpInfo("Tensor.cfloat", lambda lib, x: (x.cfloat() * (1 - 3j)).imag.double(), UNARY_SHAPES,
           atol=1e-5, rtol=1e-5, gradcheck=False),
    OpInfo("Tensor.type", lambda lib, x: x.type(lib.float32), UNARY_SHAPES, gradcheck=False),
    OpInfo("Tensor.type_as", lambda lib, x, y: x.type_as(y.float()), [((3, 4), (2,))],
           grad_inputs=(0,), gradcheck=False),
]

NN_FORMS = [
    OpInfo("F.relu", lambda lib, x: _f(lib).relu(x), UNARY_SHAPES, make_inputs=_away_from_zero),
    OpInfo("F.relu_", lambda lib, x: _f(lib).relu_(x.clone()), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("F.sigmoid", lambda lib, x: _f(lib).sigmoid(x), UNARY_SHAPES),
    OpInfo("F.tanh", lambda lib, x: _f(lib).tanh(x), UNARY_SHAPES),
    OpInfo("F.softmax", lambda lib, x: _f(lib).softmax(x, 1), [M]),
    OpInfo("F.log_softmax", lambda lib, x: _f(lib).log_softmax(x, 0), [M]),
    OpInfo("Tensor.softmax", lambda lib, x: x.softmax(-1), [M]),
    OpInfo("Tensor.log_softmax", lambda lib, x: x.log_softmax(0), [M]),
    OpInfo("torch.softmax", lambda lib, x: lib.softmax(x, 1), [M]),
    OpInfo("torch.log_softmax", lambda lib, x: lib.log_softmax(x, 1), [M]),
    OpInfo("F.elu_", lambda lib, x: _f(lib).elu_(x.clone()), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("F.celu_", lambda lib, x: _f(lib).celu_(x.clone(), 1.5), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("F.selu_", lambda lib, x: _f(lib).selu_(x.clone()), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("F.leaky_relu_", lambda lib, x: _f(lib).leaky_relu_(x.clone(), 0.2), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("F.hardtanh_", lambda lib, x: _f(lib).hardtanh_(x.clone(), -0.5, 0.7),
           UNARY_SHAPES, make_inputs=_distinct),
    OpInfo("F.threshold_", lambda lib, x: _f(lib).threshold_(x.clone(), 0.1, -2.0),
           UNARY_SHAPES, make_inputs=_away_from_zero),
    OpInfo("F.normalize", lambda lib, x: _f(lib).normalize(x, dim=0), [M]),
    OpInfo("F.cosine_similarity", lambda lib, x, y: _f(lib).cosine_similarity(x, y),
           [((3, 4), (3, 4)), ((2, 3), (1, 3))]),
    OpInfo("F.pairwise_distance", lambda lib, x, y: _f(lib).pairwise_distance(x, y),
           [((3, 4), (3, 4))]),
    OpInfo("F.binary_cross_entropy_with_logits",
           lambda lib, x, t: _f(lib).binary_cross_entropy_with_logits(x, t.sigmoid()),
           [((3, 4), (3, 4))], grad_inputs=(0,)),
    OpInfo("F.instance_norm", lambda lib, x: _f(lib).instance_norm(x), [((2, 3, 5),)]),
    OpInfo("F.adaptive_max_pool1d", lambda lib, x: _f(lib).adaptive_max_pool1d(x, 3),
           [((2, 3, 7),)], make_inputs=_distinct),
    OpInfo("F.adaptive_max_pool1d_with_indices",
           lambda lib, x: _f(lib).adaptive_max_pool1d_with_indices(x, 2), [((2, 3, 7),)],
           make_inputs=_distinct),
    OpInfo("F.adaptive_max_pool2d_with_indices",
           lambda lib, x: _f(lib).adaptive_max_pool2d_with_indices(x, (2, 3)),
           [((1, 2, 5, 6),)], make_inputs=_distinct),
    OpInfo("F.max_pool1d_with_indices",
           lambda lib, x: _f(lib).max_pool1d_with_indices(x, 2), [((2, 3, 6),)],
           make_inputs=_distinct),
    OpInfo("F.max_pool2d_with_indices",
           lambda lib, x: _f(lib).max_pool2d_with_indices(x, 2, 1), [((1, 2, 4, 5),)],
           make_inputs=_distinct),
    OpInfo("F.conv_transpose3d", lambda lib, x, w: _f(lib).conv_transpose3d(x, w, stride=2),
           [((1, 2, 3, 2, 2), (2, 3, 2, 2, 2))]),
    OpInfo("F.one_hot", lambda lib, x: _f(lib).one_hot((x.abs() * 2).long(), 5), [M],
           grad=False),
    OpInfo("torch.linear_via_F", lambda lib, x, w: _f(lib).linear(x, w), [((2, 3), (4, 3))]),
]



def _inplace_through_view(lib: Any, x: Any, y: Any) -> Any:
    """In place on a view: the base's history becomes CopySlices."""
    base = x.clone()
    base[1:, ::2].mul_(y)
    return base


def _view_after_base_write(lib: Any, x: Any) -> Any:
    """A view of a base written in place afterwards is regenerated as AsStridedBackward0."""
    base = x.clone()
    view = base[1]
    base.mul_(2)
    return view * 1


def _setitem_tensor(lib: Any, x: Any, v: Any) -> Any:
    y = x.clone()
    y[0] = v
    return y


OVERLOADS = [
    OpInfo("Tensor.inplace_through_view", _inplace_through_view, [((3, 4), (2, 2))]),
    OpInfo("Tensor.view_after_base_write", _view_after_base_write, [((3, 4),)]),
    OpInfo("Tensor.__setitem__tensor", _setitem_tensor, [((3, 4), (4,))]),
    OpInfo("Tensor.copy_", lambda lib, x, y: x.clone().copy_(y), INPLACE_BINARY_SHAPES),
    OpInfo("torch.remainder_scalar", lambda lib, x: lib.remainder(x, 1.5), UNARY_SHAPES,
           make_inputs=_away_from_zero, second_order=False, gradcheck=False),
    OpInfo("torch.fmod_scalar", lambda lib, x: lib.fmod(x, 1.5), UNARY_SHAPES,
           make_inputs=_away_from_zero, second_order=False, gradcheck=False),
    OpInfo("Tensor.float_power", lambda lib, x, y: x.float_power(y), BINARY_SHAPES,
           make_inputs=_positive),
    OpInfo("Tensor.float_power_", lambda lib, x: x.double().clone().float_power_(2.5), UNARY_SHAPES,
           make_inputs=_positive),
    OpInfo("torch.round_decimals", lambda lib, x: lib.round(x, decimals=1), UNARY_SHAPES,
           make_inputs=_away_from_zero),
    OpInfo("Tensor.squeeze_dims", lambda lib, x: x.squeeze((0, 2)), [((1, 3, 1, 2),)]),
    OpInfo("Tensor.reshape_alias", lambda lib, x: x.t().reshape(2, 2, 3), [M]),
    OpInfo("F.pad_reflect_1d", lambda lib, x: _f(lib).pad(x, (2, 1), mode="reflect"),
           [((2, 3, 5),)]),
    OpInfo("F.pad_reflect_3d", lambda lib, x: _f(lib).pad(x, (1, 0, 1, 1, 0, 1),
                                                           mode="reflect"),
           [((1, 2, 3, 3, 3),)]),
    OpInfo("F.pad_replicate_2d", lambda lib, x: _f(lib).pad(x, (1, 2, 2, 0), mode="replicate"),
           [((1, 2, 3, 4),)]),
    OpInfo("F.pad_replicate_3d", lambda lib, x: _f(lib).pad(x, (1, 1, 0, 2, 1, 0),
                                                             mode="replicate"),
           [((1, 2, 2, 3, 2),)]),
]

OPS = _entries() + OPERATORS + SHAPE_AND_LINALG + CONVERSIONS + NN_FORMS + OVERLOADS
