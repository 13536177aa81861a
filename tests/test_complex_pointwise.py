"""Complex gradients of the element-wise functions (exponentials, logarithms, roots, powers,
trigonometric and hyperbolic functions, their inverses, sigmoid), of addcmul/addcdiv/lerp,
products (prod, cumprod, addmm, linear) and moments (var, std), against PyTorch.

PyTorch's formula for a holomorphic ``f`` is ``grad * f'(z).conj()``; acosh takes the other
branch of its root for complex values (``1 / (sqrt(z - 1) * sqrt(z + 1))``); complex sigmoid is
``1 / (1 + exp(-z))``, NaN where ``exp(-z)`` overflows. Before, each of these refused complex
inputs that require grad (and complex sigmoid's values were those of the real part, with a
warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .test_complex_autograd import LIBS, SPECIAL, _c, _close, _compare, _leaf, _r, _real_loss

UNARY = ["sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
         "atanh", "log", "log2", "log10", "log1p", "expm1", "exp2", "sqrt", "rsqrt", "sigmoid",
         "square", "sinc"]

POWERS: dict[str, Callable[[Any, Any], Any]] = {
    "pow_2": lambda lib, z: z ** 2,
    "pow_3": lambda lib, z: z ** 3,
    "pow_half": lambda lib, z: z ** 0.5,
    "pow_minus_half": lambda lib, z: z ** -0.5,
    "pow_minus_1": lambda lib, z: z ** -1,
    "pow_1_7": lambda lib, z: z ** 1.7,
    "pow_complex": lambda lib, z: z ** (1 + 1j),
    "pow_0": lambda lib, z: z ** 0 * z,
    "pow_method": lambda lib, z: z.pow(2.5),
}


def _fn(name: str) -> Callable[[Any, Any], Any]:
    return lambda lib, z: getattr(lib, name)(z)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_pytorch(name: str, dtype: Any) -> None:
    tol = {"rtol": 1e-10, "atol": 1e-12} if dtype == np.complex128 else {"rtol": 2e-5,
                                                                           "atol": 1e-6}
    _compare(_fn(name), _c(2, 3, dtype=dtype), **tol)


@pytest.mark.parametrize("name", sorted(POWERS))
def test_powers_match_pytorch(name: str) -> None:
    _compare(POWERS[name], _c(4), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", UNARY + ["pow_half", "pow_3"])
def test_in_place_and_method_forms(name: str) -> None:
    """``z.f_()`` on a non-leaf and the method form give PyTorch's values and gradients."""
    if name.startswith("pow"):
        exponent = 0.5 if name == "pow_half" else 3

        def fn(lib: Any, z: Any) -> Any:
            return (z * 1).pow_(exponent)
    elif name in ("asinh", "acosh", "atanh"):  # PyTorch's in-place forms have no derivative
        def fn(lib: Any, z: Any) -> Any:
            return getattr(z, name)()
    else:
        def fn(lib: Any, z: Any) -> Any:
            return getattr(z * 1, name + "_")()
    _compare(fn, _c(3), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sin", "cos", "log", "sqrt", "acosh", "asin", "exp2",
                                  "pow_1_7", "pow_complex", "rsqrt", "atan", "atanh", "log1p"])
def test_second_order_matches_pytorch(name: str) -> None:
    fn = POWERS.get(name) or _fn(name)
    values = _c(3)
    results = []
    for lib in LIBS:
        z = _leaf(lib, values)
        g, = lib.autograd.grad(_real_loss(lib, fn(lib, z)), z, create_graph=True)
        results.append((g, *lib.autograd.grad(_real_loss(lib, g * z, 3), z)))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
def test_second_order_of_fused_backward_refuses_rather_than_guess(name: str) -> None:
    z = _leaf(chainrule, _c(3))
    out = getattr(chainrule, name)(z)
    with pytest.raises(RuntimeError, match="chainrule does not differentiate complex tensors"):
        chainrule.autograd.grad(_real_loss(chainrule, out), z, create_graph=True)
    assert z.grad is None
    # without create_graph the first derivative is PyTorch's
    _compare(_fn(name), _c(3), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sin", "cos", "tanh", "log", "log1p", "sqrt", "rsqrt", "exp2",
                                  "expm1", "atan", "asinh", "sigmoid", "reciprocal"])
def test_special_values(name: str) -> None:
    # the 0, -0, infinities, NaNs and branch-cut points of test_complex_autograd
    values = SPECIAL[[0, 1, 2, 7, 8]] if name in ("log", "log1p", "sqrt", "rsqrt",
                                                  "reciprocal") else SPECIAL
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _compare(_fn(name), values, rtol=1e-10, atol=1e-12)


def test_complex_sigmoid_values_as_pytorch_without_grad() -> None:
    z = np.array([1000 + 1j, -1000 + 2j, 0j, 20 + 700j, 0.5 - 0.25j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (the real part's cast warned before)
        ours = chainrule.sigmoid(chainrule.tensor(z))
    theirs = torch.sigmoid(torch.tensor(z))
    _close(ours, theirs, rtol=1e-12, atol=0)


def test_a_chain_of_functions_in_complex64() -> None:
    def fn(lib: Any, z: Any) -> Any:
        return (z.sin() * z.log() + z.sqrt().tanh()).sigmoid() ** 2

    _compare(fn, _c(5, dtype=np.complex64), rtol=5e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# addcmul, addcdiv, lerp, products, moments, addmm: PyTorch's formulas conjugate the other
# factors and the scalars; prod and cumprod conjugate the input and output (also with zeros).

_Z3 = _c(3)
_WITH_ZERO = _c(3, 4)
_WITH_ZERO[1, 2] = 0
_TWO_ZEROS = _WITH_ZERO.copy()
_TWO_ZEROS[1, 0] = 0

MORE: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), (_Z3, _c(3), _c(3))),
    "addcmul_complex_value": (lambda lib, a, b, c: lib.addcmul(a, b, c, value=2 - 1j),
                              (_Z3, _c(3), _c(3))),
    "addcmul_in_place": (lambda lib, a, b, c: (a * 1).addcmul_(b, c, value=0.5j),
                         (_Z3, _c(3), _c(3))),
    "addcdiv": (lambda lib, a, b, c: lib.addcdiv(a, b, c, value=1 + 1j), (_Z3, _c(3), _c(3))),
    "lerp": (lambda lib, a, b: lib.lerp(a, b, 0.3), (_Z3, _c(3))),
    "lerp_above_half": (lambda lib, a, b: lib.lerp(a, b, 0.8), (_Z3, _c(3))),
    "lerp_complex_weight": (lambda lib, a, b: lib.lerp(a, b, 0.3 + 0.6j), (_Z3, _c(3))),
    "lerp_tensor_weight": (lambda lib, a, b, w: lib.lerp(a, b, w), (_Z3, _c(3), _c(3))),
    "lerp_in_place": (lambda lib, a, b: (a * 1).lerp_(b, 0.4), (_Z3, _c(3))),
    "prod": (lambda lib, z: z.prod(), (_c(3, 4),)),
    "prod_with_a_zero": (lambda lib, z: z.prod(), (_WITH_ZERO,)),
    "prod_with_two_zeros": (lambda lib, z: z.prod(), (_TWO_ZEROS,)),
    "prod_dim": (lambda lib, z: z.prod(1), (_WITH_ZERO,)),
    "prod_dim_two_zeros": (lambda lib, z: z.prod(0, keepdim=True), (_TWO_ZEROS,)),
    "cumprod": (lambda lib, z: z.cumprod(1), (_c(3, 4),)),
    "cumprod_with_zeros": (lambda lib, z: z.cumprod(1), (_TWO_ZEROS,)),
    "var": (lambda lib, z: z.var(), (_c(3, 4),)),
    "var_dim": (lambda lib, z: z.var(1, correction=0), (_c(3, 4),)),
    "std": (lambda lib, z: z.std(0, keepdim=True), (_c(3, 4),)),
    "var_mean": (lambda lib, z: lib.var_mean(z, 1)[0] * lib.var_mean(z, 1)[1], (_c(3, 4),)),
    "std_mean": (lambda lib, z: lib.std_mean(z)[0] + lib.std_mean(z)[1], (_c(3, 4),)),
    "addmm": (lambda lib, a, b, c: lib.addmm(a, b, c), (_c(2, 4), _c(2, 3), _c(3, 4))),
    "addmm_scalars": (lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5 - 1j, alpha=2j),
                      (_c(4), _c(2, 3), _c(3, 4))),
    "addmm_transposed": (lambda lib, a, b, c: lib.addmm(a, b, c.t()),
                         (_c(2, 4), _c(2, 3), _c(4, 3))),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
               (_c(5, 3), _c(4, 3), _c(4))),
    "linear_real_weight": (lambda lib, x, w: lib.nn.functional.linear(x, w.to(x.dtype)),
                           (_c(5, 3), _c(4, 3).real.copy())),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_products_moments_and_lerp_match_pytorch(name: str) -> None:
    fn, arrays = MORE[name]
    _compare(fn, *arrays, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["prod_dim", "cumprod", "var", "lerp_complex_weight",
                                  "addcmul_complex_value", "addmm_scalars", "addcdiv"])
def test_second_order_of_products_moments_and_lerp(name: str) -> None:
    fn, arrays = MORE[name]
    results = []
    for lib in LIBS:
        leaves = [_leaf(lib, a) for a in arrays]
        grads = lib.autograd.grad(_real_loss(lib, fn(lib, *leaves)), leaves, create_graph=True)
        total = sum((g * leaf).sum() for g, leaf in zip(grads, leaves, strict=True))
        results.append((*grads, *lib.autograd.grad(_real_loss(lib, total, 3), leaves)))
    for ours, theirs in zip(*results, strict=True):
        _close(ours, theirs, rtol=1e-9, atol=1e-11)


# ----------------------------------------------------------------------------------------------
# Powers with a tensor exponent or a number base (PowBackward1, PowBackward2), and complex
# powers at a zero base: PyTorch's complex kernel is exp(exponent * log(base)), so 0 ** 0j is
# NaN and 0 ** -1 is inf + NaN j (NumPy: 1 and NaN); a number exponent takes the real fast
# paths (z ** -1 is 1 / z ...).

_ZERO_BASE = _c(4)
_ZERO_BASE[1] = 0
_EXPONENTS = np.array([0j, 1 + 0j, 2 + 0j, 0.5 + 0j, 1j, -1 + 0j, 1 + 1j, 3 + 0j, -2 + 0j])

TENSOR_POWERS: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "complex_tensors": (lambda lib, z, w: z ** w, (_c(4), _c(4))),
    "zero_base": (lambda lib, z, w: z ** w, (_ZERO_BASE, _c(4))),
    "real_exponent_tensor": (lambda lib, z, x: z ** x, (_c(4), _r(4))),
    "real_base_tensor": (lambda lib, x, w: x ** w, (_r(4), _c(4))),
    "real_base_with_zeros": (lambda lib, x, w: x ** w,
                             (np.array([0.0, -1.5, 2.0, 0.0]),
                              np.array([1 + 0j, 0.5 + 1j, -1j, -2 + 0j]))),
    "number_base": (lambda lib, z: 2 ** z, (_c(4),)),
    "negative_number_base": (lambda lib, z: (-2.5) ** z, (_c(4),)),
    "zero_number_base": (lambda lib, z: lib.pow(0, z),
                         (np.array([1 + 0j, 2j, -1 + 0j, 0.5 + 0.5j]),)),
    "complex_number_base_real_exponent": (lambda lib, x: (1 + 1j) ** x, (_r(4),)),
    "complex_number_base": (lambda lib, z: (1 + 1j) ** z, (_c(4),)),
    "in_place": (lambda lib, z, w: (z * 1).pow_(w), (_c(4), _c(4))),
}


@pytest.mark.parametrize("name", sorted(TENSOR_POWERS))
def test_tensor_powers_match_pytorch(name: str) -> None:
    fn, arrays = TENSOR_POWERS[name]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _compare(fn, *arrays, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("exponent", ["tensor", 2, 0.5, -0.5, -1, 3, -2, 1.7, 1j, 0, 1])
def test_complex_powers_at_zero_and_infinity_as_pytorch(exponent: Any) -> None:
    base = np.concatenate([np.zeros(len(_EXPONENTS), complex), [complex(np.inf, 1), -0.0 + 0j]])
    exponents = np.concatenate([_EXPONENTS, [2 + 0j, 0.5 + 0j]])
    results = []
    for lib in (chainrule, torch):
        z = lib.tensor(base)
        other = lib.tensor(exponents) if exponent == "tensor" else exponent
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            results.append(z ** other)
    _close(*results, rtol=1e-14, atol=0)
