"""Complex gradients of the element-wise functions (exponentials, logarithms, roots, powers,
trigonometric and hyperbolic functions, their inverses, sigmoid), against PyTorch.

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
from .test_complex_autograd import LIBS, SPECIAL, _c, _close, _compare, _leaf, _real_loss

UNARY = ["sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh",
         "atanh", "log", "log2", "log10", "log1p", "expm1", "exp2", "sqrt", "rsqrt", "sigmoid",
         "square"]

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
