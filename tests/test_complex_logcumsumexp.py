"""``logcumsumexp`` of complex tensors as PyTorch's (a TypeError from NumPy before): its kernel
accumulates ``logaddexp(x_i, cum)`` from ``-inf`` in complex128 (complex64 results bit for bit),
with the complex logaddexp's infinite and NaN cases; the gradient is PyTorch's complex formula
``conj(exp(reversed_logcumsumexp(log(conj(grad)) - result) + self))``, checked against PyTorch
and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _tied_and_special(rng: np.random.Generator, shape: tuple[int, ...], trial: int) -> np.ndarray:
    real = rng.integers(-3, 3, size=shape).astype(float) * (1 if trial % 2 else 0.7)
    values = real + 1j * rng.standard_normal(shape)
    if trial % 5 == 0:
        values.real[rng.random(shape) < 0.2] = np.inf
    if trial % 7 == 0:
        values.real[rng.random(shape) < 0.2] = -np.inf
    if trial % 11 == 0:
        values[rng.random(shape) < 0.2] = complex(np.nan, 0)
    return values


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_values_as_pytorch(dtype: str) -> None:
    rng = np.random.default_rng(3)
    for trial in range(120):
        shape = (int(rng.integers(1, 7)), int(rng.integers(1, 4)))
        values = _tied_and_special(rng, shape, trial)
        dim = trial % 2
        ours = chainrule.logcumsumexp(chainrule.tensor(values).to(getattr(chainrule, dtype)), dim)
        theirs = torch.logcumsumexp(torch.tensor(values).to(getattr(torch, dtype)), dim)
        assert str(ours.dtype).split(".")[-1] == dtype
        assert ours.stride() == theirs.stride()
        if dtype == "complex64":
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        else:
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-14, atol=1e-14)


def test_edge_shapes() -> None:
    for make in (
        lambda lib: lib.tensor(1 + 1j),
        lambda lib: lib.zeros(0, dtype=lib.complex64),
        lambda lib: lib.tensor([[1 + 1j, 2 - 1j], [0.5j, -1.0 + 0j]]).t(),
    ):
        ours, theirs = (
            chainrule.logcumsumexp(make(chainrule), 0),
            torch.logcumsumexp(make(torch), 0),
        )
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
        assert ours.stride() == theirs.stride()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("dim", [0, 1])
def test_gradients_as_pytorch(dtype: str, dim: int) -> None:
    rng = np.random.default_rng(4)
    values = rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))
    weights = rng.standard_normal((5, 3))
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_()
        out = lib.logcumsumexp(x, dim)
        assert type(out.grad_fn).__name__ == "LogcumsumexpBackward0"
        (out.abs() * lib.tensor(weights)).sum().backward()
        grads.append(x.grad.resolve_conj().numpy())
    rtol = 1e-12 if dtype == "complex128" else 1e-5
    np.testing.assert_allclose(grads[0], grads[1], rtol=rtol, atol=rtol)


def test_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(5)
    values = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    x = chainrule.tensor(values, dtype=chainrule.complex128, requires_grad=True)
    assert chainrule.autograd.gradcheck(lambda t: chainrule.logcumsumexp(t, 0), (x,))
