"""Element-wise functions and activations at special values and in half precision, against
PyTorch: values, first derivatives (fast path and recorded) and second derivatives.

PyTorch's element-wise CPU kernels have a scalar and a vectorised version, and for a few
activations the two disagree at NaN: on contiguous tensors of more than a vector's worth of
elements, the vectorised ``hardtanh``/``relu6``/``hardshrink``/``softshrink`` derivatives give 0
at NaN and the ``elu``/``selu``/``celu``/``hardswish`` ones NaN, where the scalar code (used for
small and for non-contiguous tensors) passes the gradient through. An element's gradient then
depends on its position in the tensor; chainrule follows the scalar code everywhere. So does
the reference here: PyTorch gets non-contiguous inputs (``scalar_kernels=True``). For the same
reason float32 ``gelu`` is compared with PyTorch's native kernel, not with the oneDNN one its
contiguous float32 tensors take (which overflows to inf at +-3e38 and gives NaN at +inf).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .test_numerics_harness import FLOATS, assert_agrees, mismatches, specials, ulp_tolerance


def _f(lib):
    return lib.nn.functional


_UNARY = [
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square",
    "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "sigmoid", "relu", "erf", "erfc", "erfinv", "lgamma", "digamma", "abs",
    "sign", "neg", "floor", "ceil", "round", "trunc", "frac", "nan_to_num",
]

_ACTIVATIONS = {
    "softplus": lambda lib, x: _f(lib).softplus(x),
    "softplus_beta": lambda lib, x: _f(lib).softplus(x, beta=2, threshold=5),
    "logsigmoid": lambda lib, x: _f(lib).logsigmoid(x),
    "gelu": lambda lib, x: _f(lib).gelu(x),
    "gelu_tanh": lambda lib, x: _f(lib).gelu(x, approximate="tanh"),
    "silu": lambda lib, x: _f(lib).silu(x),
    "mish": lambda lib, x: _f(lib).mish(x),
    "elu": lambda lib, x: _f(lib).elu(x),
    "elu_alpha": lambda lib, x: _f(lib).elu(x, alpha=0.5),
    "selu": lambda lib, x: _f(lib).selu(x),
    "celu": lambda lib, x: _f(lib).celu(x, alpha=2.0),
    "leaky_relu": lambda lib, x: _f(lib).leaky_relu(x),
    "hardtanh": lambda lib, x: _f(lib).hardtanh(x),
    "relu6": lambda lib, x: _f(lib).relu6(x),
    "hardsigmoid": lambda lib, x: _f(lib).hardsigmoid(x),
    "hardswish": lambda lib, x: _f(lib).hardswish(x),
    "softshrink": lambda lib, x: _f(lib).softshrink(x),
    "hardshrink": lambda lib, x: _f(lib).hardshrink(x),
    "threshold": lambda lib, x: _f(lib).threshold(x, 0.5, -3.0),
    "softsign": lambda lib, x: _f(lib).softsign(x),
    "tanhshrink": lambda lib, x: _f(lib).tanhshrink(x),
    "clamp": lambda lib, x: lib.clamp(x, -1, 1),
    "clamp_min": lambda lib, x: lib.clamp_min(x, 0.5),
    "clamp_max": lambda lib, x: lib.clamp_max(x, 0.5),
    "polygamma1": lambda lib, x: lib.polygamma(1, x),
    "polygamma2": lambda lib, x: lib.polygamma(2, x),
    "pow_half": lambda lib, x: x ** 0.5,
}

# Second derivatives through composite formulas in float16 round at every step in both
# libraries, in a different order where gradients are summed: a few more ulps there.
_LOOSER = {
    ("mish", "float16"): 16,
    # tanh's float32 kernel differs between SLEEF and NumPy near gelu's cancellation at -2.5.
    ("gelu_tanh", "float32"): 512,
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", _UNARY)
def test_unary_ops_at_special_values(dtype, name):
    assert_agrees(lambda lib, x: getattr(lib, name)(x), [specials(dtype)], dtype, name,
                  scalar_kernels=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(_ACTIVATIONS))
def test_activations_at_special_values(dtype, name):
    fn = _ACTIVATIONS[name]
    if name == "hardsigmoid":
        # PyTorch has no derivative of hardsigmoid's derivative: it raises, so does chainrule.
        assert_agrees(fn, [specials(dtype)], dtype, name, scalar_kernels=True,
                      second_order=False)
        return
    assert_agrees(fn, [specials(dtype)], dtype, name, scalar_kernels=True,
                  ulps=_LOOSER.get((name, dtype)))


# The gradients at NaN PyTorch's (scalar) kernels give, seeded with ones.
_AT_NAN = {
    "relu": 1.0, "hardtanh": 1.0, "relu6": 1.0, "elu": 1.0, "selu": 1.0507009873554805,
    "celu": 1.0, "leaky_relu": 0.01, "softshrink": 1.0, "hardshrink": 1.0, "hardsigmoid": 0.0,
    "hardswish": 1.0, "threshold": 1.0, "silu": math.nan, "mish": math.nan, "gelu": math.nan,
    "softplus": math.nan, "logsigmoid": math.nan,
}


@pytest.mark.parametrize("name", sorted(_AT_NAN))
def test_activation_gradients_at_nan(name):
    fn = _ACTIVATIONS.get(name) or (lambda lib, x: getattr(_f(lib), name)(x))
    for lib in (chainrule, torch):
        x = lib.tensor([math.nan, math.nan], dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(fn(lib, x).sum(), x)
        np.testing.assert_allclose(grad.tolist(), [_AT_NAN[name]] * 2, rtol=1e-6,
                                   err_msg=f"{lib.__name__} {name}")


def test_softshrink_propagates_nan():
    for lib in (chainrule, torch):
        out = _f(lib).softshrink(lib.tensor([math.nan, 0.2, -3.0]))
        assert math.isnan(out[0].item()) and out[1:].tolist() == [0.0, -2.5]


def test_hardsigmoid_second_derivative_is_not_implemented():
    for lib in (chainrule, torch):
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        (g,) = lib.autograd.grad(_f(lib).hardsigmoid(x).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError,
                           match="derivative for aten::hardsigmoid_backward is not implemented"):
            lib.autograd.grad(g.sum(), x)


def test_threshold_keeps_nan():
    for lib in (chainrule, torch):
        out = _f(lib).threshold(lib.tensor([math.nan, 0.2, 3.0]), 0.5, -3.0)
        assert math.isnan(out[0].item()) and out[1:].tolist() == [-3.0, 3.0]


def test_elu_family_second_derivative_vanishes_at_zero():
    # PyTorch's elu_double_backward masks with x < 0: nothing at the kink.
    for lib in (chainrule, torch):
        for fn in (_f(lib).elu, _f(lib).selu, _f(lib).celu):
            x = lib.tensor([0.0, -1.0], dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(fn(x).sum(), x, create_graph=True)
            (g2,) = lib.autograd.grad(g.sum(), x)
            assert g2[0].item() == 0.0 and g2[1].item() > 0


# ----------------------------------------------------------------------------------------------
# Half precision on ordinary values: computed in float32, rounded once, as PyTorch's kernels


def _half_values():
    rng = np.random.default_rng(7)
    return np.concatenate([rng.uniform(-6, 6, 500), rng.normal(0, 1, 500)]).astype(np.float16)


_HALF_FUNCTIONS = {
    **{name: _ACTIVATIONS[name] for name in (
        "softplus", "softplus_beta", "logsigmoid", "gelu", "gelu_tanh", "silu", "mish", "elu",
        "selu", "celu", "leaky_relu", "hardsigmoid", "hardswish", "softshrink", "tanhshrink",
        "softsign", "pow_half")},
    "sigmoid": lambda lib, x: lib.sigmoid(x),
    "tanh": lambda lib, x: lib.tanh(x),
    "xlogy": lambda lib, x: lib.xlogy(x, x.abs() + 0.5),
    "lerp": lambda lib, x: lib.lerp(x, x * 0.5 + 1, 0.7),
    "glu": lambda lib, x: _f(lib).glu(x.reshape(10, 100), 1),
    "glu_dim0": lambda lib, x: _f(lib).glu(x.reshape(10, 100), 0),
}


@pytest.mark.parametrize("name", sorted(_HALF_FUNCTIONS))
def test_half_precision_values_and_gradients(name):
    fn = _HALF_FUNCTIONS[name]
    x = _half_values()
    results = []
    for lib in (chainrule, torch):
        t = lib.from_numpy(x.copy()).requires_grad_(True)
        y = fn(lib, t)
        assert y.dtype == lib.float16, f"{name}: {y.dtype}"
        (g,) = lib.autograd.grad(y, t, lib.ones_like(y))
        assert g.dtype == lib.float16
        results.append((y.detach().numpy().astype(np.float64), g.numpy().astype(np.float64)))
    # Two ulps; below float16's normal range an eighth of its smallest normal, where both
    # libraries' float32 results are rounding noise of 1 + erf(x) or 1 - tanh(x)**2 (NumPy's
    # float32 tanh(-9.5) is 1 ulp off -1, PyTorch's is -1).
    rtol, _ = ulp_tolerance("float16", 2)
    atol = float(np.finfo(np.float16).tiny) / 8
    for stage, ours, theirs in zip(("value", "gradient"), results[0], results[1], strict=True):
        bad = mismatches(ours, theirs, rtol, atol)
        assert not bad.any(), (
            f"{name} {stage} at {x.reshape(-1)[:bad.size][bad.reshape(-1)][:5]}: "
            f"ours {ours[bad][:5]}, PyTorch {theirs[bad][:5]}"
        )


def test_gelu_tanh_gradient_in_float16_is_rounded_once():
    # The reported case: each step rounded to float16 drifted from PyTorch's gradient.
    x = np.array([-2.5, -1.7, 0.3, 1.1, 2.9], np.float16)
    assert_agrees(lambda lib, t: _f(lib).gelu(t, approximate="tanh"), [x], "float16", "gelu",
                  second_order=False, ulps=1)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["relu", "threshold"])
def test_masked_gradients_keep_infinite_nan_and_signed_zero_cotangents(dtype: str,
                                                                      name: str) -> None:
    """relu/threshold backward drops the gradient by a bit mask: an infinite or NaN cotangent
    where the input is dropped gives +0 (not NaN), a kept one passes untouched, -0 included."""
    x = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 2.0, 0.5], dtype=dtype)
    g = np.array([np.inf, np.nan, -np.inf, 3.0, 2.0, np.nan, 5.0, -0.0, -0.0], dtype=dtype)
    grads = []
    for lib in (chainrule, torch):
        leaf = lib.from_numpy(x.copy()).requires_grad_(True)
        out = lib.relu(leaf) if name == "relu" else lib.nn.functional.threshold(leaf, 0.25, 7.0)
        out.backward(lib.from_numpy(g.copy()))
        grads.append(leaf.grad.numpy())
    ours, theirs = grads
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize(("value", "cotangent"), [(2.0, 3.0), (-1.0, np.inf), (0.0, np.nan),
                                                  (1.0, -0.0)])
def test_masked_gradients_of_zero_dim_tensors(dtype: str, value: float, cotangent: float) -> None:
    """0-d operands: NumPy's ufuncs give scalars there, so the bit mask must still be an array
    (a relu on a 0-d tensor crashed in backward)."""
    grads = []
    for lib in (chainrule, torch):
        leaf = lib.tensor(value, dtype=getattr(lib, dtype), requires_grad=True)
        lib.relu(leaf).backward(lib.tensor(cotangent, dtype=getattr(lib, dtype)))
        grads.append(leaf.grad.numpy())
    ours, theirs = grads
    assert ours.shape == () and ours.dtype == theirs.dtype
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert np.signbit(ours) == np.signbit(theirs)
