"""float16 and bfloat16 kernels whose rounding steps PyTorch fixes, bit for bit against it
on short tensors (PyTorch's element loop; its vectorised loop over long tensors may fuse a
step): ``pow`` with a number exponent (the exponent rounded to the half type; bfloat16's fast
paths ``x * x * x`` and ``1 / (x * x)`` rounding each step; the gradient scaling by the
exponent in float32, once), ``log_softmax`` over the last dimension in bfloat16 (the row's
sum and its log kept in bfloat16, as float16's), and the element-wise functions with their
gradients: a constant factor (``ln 2``, ``2 / sqrt(pi)``) scales in float32, rounded once;
``rsqrt`` rounds the root first; float16's ``sigmoid_backward`` rounds each step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .sweep_tools import torch_to_numpy

LIBS = [chainrule, torch]
_RNG = np.random.default_rng(5)
#: Values of both half types (bfloat16's 8-bit mantissa is the coarser), including 0 and
#: infinity; short rows, so PyTorch runs its element loop.
BASES = np.concatenate([[0.0, np.inf, 1.0, 3.0], _RNG.uniform(0.05, 3, 8)]).astype(np.float16)
EXPONENTS = [1.7, 0.3, -1.3, 1e-3, 2.5, 2, 3, -2, -1, 0.5, -0.5, 4, 7]


def _values(t: Any) -> np.ndarray:
    """Any tensor's values as float64 (a half type is exactly representable)."""
    if isinstance(t, chainrule.Tensor):
        return t.detach()._data.astype(np.float64)
    return torch_to_numpy(t.detach()).astype(np.float64)


def _same(ours: Any, theirs: Any) -> None:
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(_values(ours), _values(theirs))


@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pow_with_a_number_matches_pytorch(dtype: str, exponent: float) -> None:
    results = []
    for lib in LIBS:
        x = lib.from_numpy(BASES.copy()) if lib is chainrule else torch.from_numpy(BASES.copy())
        x = x.to(getattr(lib, dtype)).requires_grad_()
        y = x.pow(exponent)
        y.backward(lib.linspace(-1, 1, len(BASES), dtype=x.dtype))
        results.append((y, x.grad))
    for ours, theirs in zip(*results, strict=True):
        _same(ours, theirs)


@pytest.mark.parametrize("dim", [-1, 0])
def test_bfloat16_log_softmax_matches_pytorch(dim: int) -> None:
    data = _RNG.uniform(-4, 4, (6, 9)).astype(np.float32)
    cotangent = _RNG.uniform(-1, 1, data.shape).astype(np.float32)
    results = []
    for lib in LIBS:
        x = (chainrule.from_numpy(data.copy()) if lib is chainrule
             else torch.from_numpy(data.copy())).bfloat16().requires_grad_()
        y = x.log_softmax(dim)
        y.backward((chainrule.from_numpy(cotangent.copy()) if lib is chainrule
                    else torch.from_numpy(cotangent.copy())).bfloat16())
        results.append((y, x.grad))
    for ours, theirs in zip(*results, strict=True):
        _same(ours, theirs)


UNARY = ["exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
         "sigmoid", "erf", "erfc", "erfinv", "reciprocal", "lgamma", "digamma"]
#: Where each function is defined: (low, high) of its sample.
_DOMAINS = {"log": (0.01, 3), "log1p": (0.01, 3), "log2": (0.01, 3), "log10": (0.01, 3),
            "sqrt": (0.01, 3), "rsqrt": (0.01, 3), "lgamma": (0.01, 3), "digamma": (0.01, 3),
            "acosh": (1.01, 4), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99),
            "atanh": (-0.99, 0.99), "erfinv": (-0.99, 0.99)}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_unary_values_and_gradients_match_pytorch(dtype: str, name: str) -> None:
    low, high = _DOMAINS.get(name, (-3, 3))
    data = np.random.default_rng(len(name)).uniform(low, high, 9).astype(np.float32)
    results = []
    for lib in LIBS:
        x = (chainrule.from_numpy(data.copy()) if lib is chainrule
             else torch.from_numpy(data.copy())).to(getattr(lib, dtype)).requires_grad_()
        y = getattr(lib, name)(x)
        y.backward(lib.linspace(-1, 1, len(data), dtype=x.dtype))
        results.append((y, x.grad))
    for ours, theirs in zip(*results, strict=True):
        _same(ours, theirs)
