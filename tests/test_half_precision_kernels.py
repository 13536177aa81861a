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


#: Ops whose half-precision results hang on where PyTorch rounds: a number scaling a gradient
#: (in float32, once), a Scalar converted to the tensor's type (``mse``/``huber``'s norm,
#: ``addcdiv``'s ``value / tensor2``), kernels in the half type's own steps (``xlogy``, ``bce``),
#: the order of a backward formula (``bce_with_logits``) and of gradients adding up (``kl_div``).
BINARY: dict[str, Any] = {
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=0.3),
    "mul_number": lambda lib, a, b: a * 0.3 + b,
    "mul_large_int": lambda lib, a, b: a * 1e-4 * 100000,  # 100000 is inf in float16
    "div_large_int": lambda lib, a, b: a / 100000 * 1000,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=0.3),
    "rsub_alpha": lambda lib, a, b: lib.rsub(a, b, alpha=0.3),
    "div_number": lambda lib, a, b: a / 0.3 - b / 7,
    "addcdiv": lambda lib, a, b: lib.addcdiv(a, a, b, value=0.3),
    "xlogy": lambda lib, a, b: lib.xlogy(a, b.abs()),
    "xlogy_number_self": lambda lib, a, b: lib.xlogy(2.7, b.abs()),
    "xlogy_number_other": lambda lib, a, b: lib.xlogy(a, 2.7),
    "lerp": lambda lib, a, b: lib.lerp(a, b, 0.3),
    "lerp_high": lambda lib, a, b: lib.lerp(a, b, 0.7),
    "lerp_tensor": lambda lib, a, b: lib.lerp(a, b, b.sigmoid()),
    "mse": lambda lib, a, b: lib.nn.functional.mse_loss(a, b),
    "huber": lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.5),
    "bce_with_logits": lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()),
    "bce_with_logits_sum": lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid(), reduction="sum"),
    "bce_with_logits_weight": lambda lib, a, b: (
        lib.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid(), weight=b.detach().abs(),
                                                           reduction="none")),
    "bce": lambda lib, a, b: lib.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid()),
    "kl_div": lambda lib, a, b: lib.nn.functional.kl_div(a.log_softmax(-1), b.softmax(-1),
                                                         reduction="batchmean"),
    "kl_div_log_target": lambda lib, a, b: lib.nn.functional.kl_div(a, b, reduction="sum",
                                                                    log_target=True),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_binary_values_and_gradients_match_pytorch(dtype: str, name: str) -> None:
    rng = np.random.default_rng(len(name))
    first = rng.uniform(-3, 3, (3, 9)).astype(np.float32)
    second = rng.uniform(-3, 3, (3, 9)).astype(np.float32)
    second[np.abs(second) < 0.2] = 0.5
    results = []
    for lib in LIBS:
        make = chainrule.from_numpy if lib is chainrule else torch.from_numpy
        a, b = (make(v.copy()).to(getattr(lib, dtype)).requires_grad_() for v in (first, second))
        y = BINARY[name](lib, a, b)
        y.backward(lib.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape))
        results.append((y, a.grad, b.grad))
    for ours, theirs in zip(*results, strict=True):
        if theirs is None:
            assert ours is None
        else:
            _same(ours, theirs)


@pytest.mark.parametrize("weight", [0.3, 0.7, "tensor"])
@pytest.mark.parametrize("size", [5, 100])
def test_float32_lerp_is_one_fused_rounding(size: int, weight: Any) -> None:
    """PyTorch's lerp is a fused multiply-add in float32; rounding the product first (NumPy's
    ``a + w * (b - a)``) differed on about a quarter of the elements."""
    rng = np.random.default_rng(size)
    start, end, weights = (rng.uniform(-3, 3, size).astype(np.float32) for _ in range(3))
    results = []
    for lib in LIBS:
        make = chainrule.from_numpy if lib is chainrule else torch.from_numpy
        w = make(weights.copy()) if weight == "tensor" else weight
        results.append(lib.lerp(make(start.copy()), make(end.copy()), w))
    _same(*results)


_SCALAR_TENSOR_CASES = {
    "t * s": lambda lib, t, s: t * s, "s * t": lambda lib, t, s: s * t,
    "t / s": lambda lib, t, s: t / s, "s / t": lambda lib, t, s: s / t,
    "mul(t, s)": lambda lib, t, s: lib.mul(t, s), "div(t, s)": lambda lib, t, s: lib.div(t, s),
    "t.mul_(s)": lambda lib, t, s: t.clone().mul_(s),
    "t.div_(s)": lambda lib, t, s: t.clone().div_(s),
    "t + s": lambda lib, t, s: t + s, "t - s": lambda lib, t, s: t - s,
}


@pytest.mark.parametrize("scalar_dtype", ["float32", "float64"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", list(_SCALAR_TENSOR_CASES))
def test_half_tensor_with_a_0d_float_tensor(case: str, dtype: str, scalar_dtype: str) -> None:
    """A 0-d float32/float64 tensor as ``other`` of mul/div scales a half tensor as a number
    does (in float32, not rounded to the half type first: bfloat16(0.3) * tensor(0.1) was an
    ulp off, float16 0.3 / tensor(0.1) gave 3.002 for PyTorch's 3.0); as ``self``, and for
    add/sub, it is rounded first, as PyTorch's kernels do."""
    values = [0.3, 0.1, 1 / 3, -2.7, 100.3, 1e-3, 6e4, -0.0]

    def run(lib: Any) -> Any:
        t = lib.tensor(values, dtype=getattr(lib, dtype))
        out = []
        for number in (0.1, 3.3, -7.77, 1e-4, 1 / 3):
            r = _SCALAR_TENSOR_CASES[case](lib, t, lib.tensor(number,
                                                               dtype=getattr(lib, scalar_dtype)))
            out.append((str(r.dtype).split(".")[-1], r.float().tolist()))
        return out

    assert run(chainrule) == run(torch)
