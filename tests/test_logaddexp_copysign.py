"""logaddexp, logaddexp2 and copysign against PyTorch: infinities, NaN and signed zeros (values
and gradients), integer inputs, number operands, the in-place copysign_ and its node."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

nan, inf = float("nan"), float("inf")
A = [inf, -inf, inf, nan, 0.0, -0.0, 1.0, 40.0, -2.0]
B = [inf, -inf, -inf, 1.0, -0.0, 0.0, -1.0, -40.0, nan]


def _grads(lib: Any, name: str) -> tuple:
    a = lib.tensor(A, dtype=lib.float64, requires_grad=True)
    b = lib.tensor(B, dtype=lib.float64, requires_grad=True)
    out = getattr(lib, name)(a, b)
    ga, gb = lib.autograd.grad(out.sum(), [a, b])
    return out.detach().numpy(), ga.numpy(), gb.numpy(), out.grad_fn.name()


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "copysign"])
def test_special_values_and_gradients_match_torch(name: str) -> None:
    ours, theirs = _grads(chainrule, name), _grads(torch, name)
    assert ours[3] == theirs[3]
    for a, b in zip(ours[:3], theirs[:3], strict=True):
        np.testing.assert_array_equal(a, b)


CASES = {
    "logaddexp_ints": lambda lib: lib.logaddexp(lib.tensor([1, 2]), lib.tensor([1, 2])),
    "logaddexp_bool": lambda lib: lib.logaddexp(lib.tensor([True]), lib.tensor([False])),
    "logaddexp_number": lambda lib: lib.logaddexp(lib.tensor([1.0]), 1.0),
    "logaddexp_mixed": lambda lib: lib.logaddexp(
        lib.tensor([1.0]), lib.tensor([2.0], dtype=lib.float64)
    ),
    "logaddexp_int_float": lambda lib: lib.logaddexp(lib.tensor([1]), lib.tensor([2.0])),
    "logaddexp2_ints": lambda lib: lib.logaddexp2(lib.tensor([1, 2]), lib.tensor([1, 2])),
    "logaddexp_half": lambda lib: lib.logaddexp(
        lib.tensor([1.5, -3.0], dtype=lib.float16), lib.tensor([0.25, 7.0], dtype=lib.float16)
    ),
    "logaddexp_broadcast_error": lambda lib: lib.logaddexp(lib.ones(2), lib.ones(3)),
    "copysign_ints": lambda lib: lib.copysign(lib.tensor([1, 2]), lib.tensor([-1, 1])),
    "copysign_int_number": lambda lib: lib.copysign(lib.tensor([1, 2]), -1),
    "copysign_negative_zero": lambda lib: lib.copysign(lib.tensor([1.0, 2.0]), -0.0),
    "copysign_bool": lambda lib: lib.copysign(lib.tensor([True]), lib.tensor([False])),
    "copysign_double_number": lambda lib: lib.copysign(lib.tensor([1.0], dtype=lib.float64), -2),
    "copysign_in_place": lambda lib: lib.tensor([1.0, -2.0, 0.0]).copysign_(
        lib.tensor([-1.0, 1.0, -0.0])
    ),
    "copysign_in_place_int": lambda lib: lib.tensor([1, 2]).copysign_(lib.tensor([-1, 1])),
    "copysign_noncontiguous": lambda lib: lib.copysign(
        lib.tensor([[1.0, 2.0], [3.0, 4.0]]).t(), lib.tensor([-1.0, 1.0])
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    same_outcome(CASES[name])


def test_copysign_in_place_records_torchs_node_and_gradient() -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor([0.5, -2.0, 0.0, 3.0], requires_grad=True)
        y = x * 1
        y.copysign_(lib.tensor([-1.0, -1.0, -1.0, 1.0]))
        (g,) = lib.autograd.grad((y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum(), [x])
        seen.append((y.grad_fn.name(), y.tolist(), g.tolist()))
    assert seen[0] == seen[1]


def test_copysign_number_second_order_matches_torch() -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor([0.5, -2.0, 0.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad((lib.copysign(x, -1.0) * x).sum(), [x], create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), [x])
        seen.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(seen[0], seen[1], strict=True):
        np.testing.assert_array_equal(ours, theirs)  # (NaN at 0, as PyTorch's)
    assert np.isnan(seen[1][1][2])


def _complex_logaddexp_run(lib: Any) -> list[Any]:
    """Values (special values too), gradients, a JVP and a double backward of complex
    logaddexp (PyTorch's kernel orders by real part and conjugates the derivative)."""
    nan, inf = float("nan"), float("inf")
    a = lib.tensor(
        [
            1 + 2j,
            -3 + 0.5j,
            1000 + 1j,
            2 + 1j,
            complex(inf, 0),
            complex(-inf, 1),
            complex(nan, 0),
            1 + 0j,
        ],
        requires_grad=True,
    )
    b = lib.tensor(
        [
            0.5 - 1j,
            2 + 0j,
            999 - 2j,
            2 + 1j,
            complex(inf, 1),
            complex(-inf, 2),
            1 + 0j,
            complex(0, nan),
        ],
        requires_grad=True,
    )
    y = lib.logaddexp(a, b)
    weights = lib.tensor([1 + 0.5j, 2, -1j, 0.5, 0, 0, 0, 0])
    grads = lib.autograd.grad(y, (a, b), weights)
    out = [y.detach().tolist(), [g.tolist()[:4] for g in grads]]
    fa = lib.autograd.forward_ad
    with fa.dual_level():
        dual = lib.logaddexp(
            fa.make_dual(a.detach()[:2], lib.tensor([0.3 - 1j, 1 + 1j])),
            fa.make_dual(b.detach()[:2], lib.tensor([2 + 0j, -1j])),
        )
        out.append(fa.unpack_dual(dual).tangent.tolist())
    a2, b2 = a.detach()[:2].requires_grad_(), b.detach()[:2].requires_grad_()
    (g,) = lib.autograd.grad(lib.logaddexp(a2, b2).abs().sum(), a2, create_graph=True)
    out.append(lib.autograd.grad(g.abs().sum(), b2)[0].tolist())
    mixed = lib.logaddexp(lib.tensor([1 + 2j], dtype=lib.complex64), lib.tensor([0.5]))
    out.append((str(mixed.dtype).split(".")[-1], mixed.tolist()))
    return out


def test_complex_logaddexp_matches_torch() -> None:
    """Complex logaddexp once leaked NumPy's TypeError (its ufunc has no complex loop)."""
    expected, got = _complex_logaddexp_run(torch), _complex_logaddexp_run(chainrule)
    # (complex64: PyTorch's log1p/exp and NumPy's may differ in the last bit)
    np.testing.assert_allclose(np.array(got[0]), np.array(expected[0]), rtol=1e-6)
    for e, g in zip(expected[1:4], got[1:4], strict=True):
        np.testing.assert_allclose(np.array(g), np.array(e), rtol=1e-5, atol=1e-6)
    assert got[4][0] == expected[4][0]
    np.testing.assert_allclose(np.array(got[4][1]), np.array(expected[4][1]), rtol=1e-6)
