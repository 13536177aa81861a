"""Element-wise binary ops and powers at special values, against PyTorch.

Values, first derivatives (fast path and recorded) and second derivatives over every pair of
:data:`~tests.test_numerics_harness.SPECIALS` in float16, float32 and float64; what pow saves for
backward; integer division by zero. Where PyTorch's own answer is a bug of its kernels, the input
is left out and the reason given next to it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .test_numerics_harness import FLOATS, assert_agrees, special_pairs, specials


def _pairs_without(dtype: str, extreme: bool = True, sleef_fmod: bool = False):
    """All pairs of special values; with ``extreme=False`` without +-3e38 (whose products
    overflow float32 inside derivatives); with ``sleef_fmod`` without the float32 pairs where
    PyTorch's vectorised fmod (SLEEF) gives NaN although C's fmod (and PyTorch's own scalar
    path, used for a one-element tensor) gives the exact remainder: a subnormal divisor, or a
    quotient beyond float32's range."""
    a, b = special_pairs(dtype)
    keep = np.ones(a.shape, bool)
    if sleef_fmod and dtype == "float32":
        tiny = np.finfo(np.float32).tiny
        with np.errstate(all="ignore"):
            quotient = np.abs(a.astype(np.float64) / b.astype(np.float64))
        keep &= ~((np.abs(b) < tiny) & (b != 0))
        keep &= ~(np.isfinite(a) & np.isfinite(b) & (quotient > np.finfo(np.float32).max))
    if not extreme:
        keep &= (np.abs(a) != np.float32(3e38)) & (np.abs(b) != np.float32(3e38))
    return a[keep], b[keep]


# ----------------------------------------------------------------------------------------------
# pow and friends


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_tensor_tensor_at_special_values(dtype):
    a, b = special_pairs(dtype)
    assert_agrees(lambda lib, x, y: lib.pow(x, y), [a, b], dtype, "pow(tensor, tensor)")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("exponent", [0, 0.0, 1, 2, 3, 0.5, -0.5, -1, -2, 1.5, 2.5, -1.5, 4,
                                      math.nan, math.inf, -math.inf])
def test_pow_tensor_scalar_at_special_values(dtype, exponent):
    assert_agrees(lambda lib, x: lib.pow(x, exponent), [specials(dtype)], dtype,
                  f"pow(tensor, {exponent})")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("base", [0, 0.0, 1.0, 2, -2.0, 0.5, -0.5, math.inf, math.nan])
def test_pow_scalar_tensor_at_special_values(dtype, base):
    assert_agrees(lambda lib, x: lib.pow(base, x), [specials(dtype)], dtype, f"pow({base}, tensor)")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["sqrt", "rsqrt", "square", "reciprocal"])
def test_power_like_unary_ops_at_special_values(dtype, name):
    assert_agrees(lambda lib, x: getattr(lib, name)(x), [specials(dtype)], dtype, name)


@pytest.mark.parametrize("dtype", FLOATS)
def test_xlogy_at_special_values(dtype):
    a, b = special_pairs(dtype)
    assert_agrees(lambda lib, x, y: lib.xlogy(x, y), [a, b], dtype, "xlogy")


def test_pow_gradient_at_zero_exponent_is_zero_not_nan():
    # The reported case: 0 ** 0 has derivative 0 in its base (PyTorch masks it), not NaN.
    for lib in (chainrule, torch):
        x = lib.zeros(3, requires_grad=True)
        y = lib.zeros(3, requires_grad=True)
        x.pow(y).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
        assert y.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_power_at_special_values(dtype):
    a, b = special_pairs(dtype)
    assert_agrees(lambda lib, x, y: lib.float_power(x, y), [a, b], dtype, "float_power")
    assert_agrees(lambda lib, x: lib.float_power(x, 2.5), [specials(dtype)], dtype,
                  "float_power(x, 2.5)")
    assert_agrees(lambda lib, x: lib.float_power(-2, x), [specials(dtype)], dtype,
                  "float_power(-2, x)")


def test_float_power_computes_in_float64_with_pytorchs_graph():
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.float_power(x, 2)
        assert y.dtype == lib.float64
        assert type(y.grad_fn).__name__ == "PowBackward0"
        assert type(y.grad_fn.next_functions[0][0]).__name__ == "ToCopyBackward0"
        assert y.grad_fn._saved_exponent == 2.0
        assert x.float_power(lib.tensor([2.0, 3.0])).grad_fn.name() == "PowBackward1"
        assert lib.float_power(lib.tensor([1, 2]), -2).tolist() == [1.0, 0.25]
        y.sum().backward()
        assert x.grad.dtype == lib.float32 and x.grad.tolist() == [2.0, 4.0]
        with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float "
                                               "but the operation's result requires dtype Double"):
            x.detach().float_power_(2)
        z = lib.tensor([1.0, 3.0], dtype=lib.float64)
        assert z.float_power_(2) is z and z.tolist() == [1.0, 9.0]


def _packs_and_second_derivative(lib, form):
    """How many tensors pow's node packs, and the second derivative when every packed tensor
    is doubled by a ``saved_tensors_hooks`` pack hook."""
    x = lib.tensor([0.5, 2.0], requires_grad=True)
    e = lib.tensor([3.0, 1.5], requires_grad=form != "tensor_scalar")
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t * 2

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if form == "tensor_scalar":
            y = x.pow(3)
        elif form == "tensor_tensor":
            y = x.pow(e)
        elif form == "tensor_tensor_self_only":
            e.requires_grad_(False)
            y = x.pow(e)
        else:
            y = lib.pow(2.0, e)
    wrt = [e] if form == "scalar_tensor" else [x, e] if form == "tensor_tensor" else [x]
    firsts = lib.autograd.grad(y.sum(), wrt, create_graph=True)
    seconds = lib.autograd.grad(sum(g.sum() for g in firsts), wrt, allow_unused=True)
    return len(packed), [g.tolist() for g in firsts], [g.tolist() for g in seconds]


@pytest.mark.parametrize(
    "form", ["tensor_scalar", "tensor_tensor", "tensor_tensor_self_only", "scalar_tensor"])
def test_pow_saves_what_pytorch_saves(form):
    ours = _packs_and_second_derivative(chainrule, form)
    theirs = _packs_and_second_derivative(torch, form)
    assert ours[0] == theirs[0], "number of packed tensors"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


def test_pow_saved_attributes_match_pytorch():
    for lib in (chainrule, torch):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        e = lib.tensor([3.0, 1.5], requires_grad=True)
        fn = x.pow(e).grad_fn
        assert fn._saved_self.tolist() == [0.5, 2.0]
        assert fn._saved_exponent.tolist() == [3.0, 1.5]
        assert fn._saved_result.tolist() == pytest.approx([0.125, 2.0 ** 1.5])
        fn = lib.pow(2.0, e).grad_fn
        assert fn._saved_self == 2.0
        assert fn._saved_exponent.tolist() == [3.0, 1.5]


# ----------------------------------------------------------------------------------------------
# Other binary ops


_BINARY = {
    "add": lambda lib, x, y: lib.add(x, y),
    "add_alpha": lambda lib, x, y: lib.add(x, y, alpha=0.5),
    "sub_alpha": lambda lib, x, y: lib.sub(x, y, alpha=2),
    "rsub_alpha": lambda lib, x, y: lib.rsub(x, y, alpha=2),
    "mul": lambda lib, x, y: lib.mul(x, y),
    "div": lambda lib, x, y: lib.div(x, y),
    "hypot": lambda lib, x, y: lib.hypot(x, y),
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "minimum": lambda lib, x, y: lib.minimum(x, y),
    "max_binary": lambda lib, x, y: lib.max(x, y),
    "min_binary": lambda lib, x, y: lib.min(x, y),
    "fmax": lambda lib, x, y: lib.fmax(x, y),
    "fmin": lambda lib, x, y: lib.fmin(x, y),
    "clamp_min_tensor": lambda lib, x, y: lib.clamp(x, min=y),
    "clamp_max_tensor": lambda lib, x, y: lib.clamp(x, max=y),
    "clamp_both_tensors": lambda lib, x, y: lib.clamp(x, y, y + 1),
    "clamp_crossed_tensors": lambda lib, x, y: lib.clamp(x, y, y - 1),
    "clamp_min_method": lambda lib, x, y: x.clamp_min(y),
    "clamp_max_method": lambda lib, x, y: x.clamp_max(y),
    "lerp": lambda lib, x, y: lib.lerp(x, y, 0.3),
    "lerp_large_weight": lambda lib, x, y: lib.lerp(x, y, 0.75),
    "lerp_tensor_weight": lambda lib, x, y: lib.lerp(x, y, y * 0 + 0.6),
    "where": lambda lib, x, y: lib.where(x > y, x, y),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(_BINARY))
def test_binary_ops_at_special_values(dtype, name):
    a, b = special_pairs(dtype)
    assert_agrees(_BINARY[name], [a, b], dtype, name)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_modulus_at_special_values(dtype, name):
    a, b = _pairs_without(dtype, sleef_fmod=True)
    assert_agrees(lambda lib, x, y: getattr(lib, name)(x, y), [a, b], dtype, name)


@pytest.mark.parametrize("dtype", FLOATS)
def test_atan2_at_special_values(dtype):
    a, b = special_pairs(dtype)
    assert_agrees(lambda lib, x, y: lib.atan2(x, y), [a, b], dtype, "atan2",
                  second_order=False)
    # Second order: PyTorch computes 1 / (x**2 + y**2) once for both inputs, so the two
    # gradients flowing into it are summed first, which overflows at +-3e38 in float32 (NaN)
    # and rounds differently in float16 (and in float32 where the two terms cancel, hence
    # the looser tolerance); chainrule's two derivatives each recompute it.
    if dtype != "float16":
        a, b = _pairs_without(dtype, extreme=False)
        assert_agrees(lambda lib, x, y: lib.atan2(x, y), [a, b], dtype, "atan2", ulps=256)


def test_atan2_gradient_at_the_origin_is_zero():
    for lib in (chainrule, torch):
        y = lib.tensor([0.0, -0.0], requires_grad=True)
        x = lib.tensor([0.0, 0.0], requires_grad=True)
        lib.atan2(y, x).sum().backward()
        assert y.grad.tolist() == [0.0, 0.0] and x.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("lib", [chainrule, torch], ids=["chainrule", "torch"])
def test_maximum_gradient_at_nan_and_ties(lib):
    a = lib.tensor([1.0, math.nan, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([1.0, 0.0, math.nan, 1.0], requires_grad=True)
    lib.maximum(a, b).sum().backward()
    # Ties split the gradient; where either is NaN both get all of it.
    assert a.grad.tolist() == [0.5, 1.0, 1.0, 1.0]
    assert b.grad.tolist() == [0.5, 1.0, 1.0, 0.0]


def test_where_gradient_ignores_nan_in_the_unselected_branch():
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
        y = lib.tensor([math.nan, 3.0, math.inf], requires_grad=True)
        out = lib.where(x > 0, x * 2, y * 3)
        out.sum().backward()
        assert x.grad.tolist() == [2.0, 0.0, 2.0]
        assert y.grad.tolist() == [0.0, 3.0, 0.0]
    # Through a function whose derivative is NaN in the unselected branch, PyTorch gives NaN
    # (0 times NaN): so does chainrule.
    assert_agrees(lambda lib, x: lib.where(x > 0, x.sqrt(), x), [np.array([-1.0, 4.0])],
                  "float64", "where over sqrt")


# ----------------------------------------------------------------------------------------------
# Integer division


_INTEGER_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]

_QUOTIENTS = {
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "floordiv_operator": lambda lib, a, b: a // b,
    "rfloordiv_operator": lambda lib, a, b: 5 // b,
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "mod_operator": lambda lib, a, b: a % b,
    "rmod_operator": lambda lib, a, b: 5 % b,
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "floor_divide_scalar": lambda lib, a, b: a // 0,
    "remainder_scalar": lambda lib, a, b: a % 0,
    "fmod_scalar": lambda lib, a, b: lib.fmod(a, 0),
    "div_trunc_scalar": lambda lib, a, b: lib.div(a, 0, rounding_mode="trunc"),
    "zero_dim_divisor": lambda lib, a, b: a // lib.tensor(0, dtype=a.dtype),
}


def _int_operands(lib, dtype):
    d = getattr(lib, dtype)
    first = [7, 200, 0, 5] if dtype == "uint8" else [7, -7, 0, 5]
    return lib.tensor(first, dtype=d), lib.tensor([2, 0, 3, 0], dtype=d)


@pytest.mark.parametrize("dtype", _INTEGER_DTYPES)
@pytest.mark.parametrize("name", sorted(_QUOTIENTS))
def test_integer_division_by_zero_raises(dtype, name):
    for lib in (chainrule, torch):
        a, b = _int_operands(lib, dtype)
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            _QUOTIENTS[name](lib, a, b)


@pytest.mark.parametrize("dtype", _INTEGER_DTYPES)
@pytest.mark.parametrize("method", ["__ifloordiv__", "remainder_", "fmod_", "floor_divide_",
                                    "__imod__"])
def test_in_place_integer_division_by_zero_raises_and_changes_nothing(dtype, method):
    a, b = _int_operands(chainrule, dtype)
    before = a.tolist()
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        getattr(a, method)(b)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        getattr(*_int_operands(torch, dtype)[:1], method)(_int_operands(torch, dtype)[1])
    # PyTorch raises after writing the elements before the zero; chainrule writes nothing.
    assert a.tolist() == before
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        a.div_(b, rounding_mode="floor")
    assert a.tolist() == before


@pytest.mark.parametrize("dtype", _INTEGER_DTYPES)
def test_integer_division_without_zero_matches_pytorch(dtype):
    results = []
    for lib in (chainrule, torch):
        d = getattr(lib, dtype)
        first = [7, 200, 0, 5, 255] if dtype == "uint8" else [7, -7, 0, 5, -128]
        a = lib.tensor(first, dtype=d)
        b = lib.tensor([2, 3, 3, 1, 3], dtype=d)
        results.append([t.tolist() for t in (
            a // b, a % b, lib.fmod(a, b), lib.div(a, b, rounding_mode="trunc"),
            lib.div(a, b, rounding_mode="floor"), a // 2, a % 3, 9 // b, 9 % b,
        )])
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_overflow_of_min_by_minus_one(dtype):
    # floor_divide and remainder wrap around as PyTorch's do (int_min // -1 == int_min). Its
    # trunc division of int32/int64 min by -1 kills the process (SIGFPE), so it is compared
    # for int8/int16 only; chainrule wraps around there too.
    results = []
    for lib in (chainrule, torch):
        d = getattr(lib, dtype)
        low = lib.tensor([np.iinfo(dtype).min] * 2, dtype=d)
        minus_one = lib.tensor([-1, -1], dtype=d)
        row = [low // minus_one, low % minus_one, lib.fmod(low, minus_one), low // -1, low % -1]
        if dtype in ("int8", "int16") or lib is chainrule:
            row.append(lib.div(low, minus_one, rounding_mode="trunc"))
        results.append([t.tolist() for t in row])
    assert results[0][:5] == results[1][:5]
    assert results[0][5] == [np.iinfo(dtype).min] * 2


@pytest.mark.parametrize("name,kernel", [
    ("floor_divide", "div_floor_cpu"), ("remainder", "remainder_cpu"), ("fmod", "fmod_cpu"),
])
def test_bool_quotients_are_not_implemented(name, kernel):
    for lib in (chainrule, torch):
        b = lib.tensor([True, True])
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Bool\''):
            getattr(lib, name)(b, b)
    for lib in (chainrule, torch):
        b = lib.tensor([True, True])
        with pytest.raises(NotImplementedError, match="div_trunc_cpu"):
            lib.div(b, b, rounding_mode="trunc")
        assert (b // 1).tolist() == [1, 1]


def test_float_division_by_zero_keeps_ieee_results():
    for lib in (chainrule, torch):
        x = lib.tensor([1.0, -1.0, 0.0])
        assert str((x // 0).tolist()) == "[inf, -inf, nan]"
        assert all(math.isnan(v) for v in (x % 0).tolist() + lib.fmod(x, 0).tolist())
        assert (lib.tensor([1, 2]) // 0.0).tolist() == [math.inf, math.inf]
