"""``F.celu`` with alpha != 1: PyTorch's derivative formula passes ``1.0 / alpha.toFloat()``
(alpha rounded to float32) where the forward divides in double; float64 gradients are equal to
PyTorch's bit for bit, first and second order, out of place and in place."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

X = np.array([-5.0, -2.0, -0.3, -1e-3, -0.0, 0.0, 0.5, 3.0])


def _grads(lib, alpha: float, inplace: bool, dtype: str) -> list[list[float]]:
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    source = x.clone() if inplace else x
    y = lib.nn.functional.celu(source, alpha, inplace=inplace)
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return [y.tolist(), g.tolist(), gg.tolist()]


@pytest.mark.parametrize("alpha", [0.3, 1.7, 2.1, 1e-3, 7.0])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", ["float64"])
def test_celu_gradients_equal_pytorch(alpha: float, inplace: bool, dtype: str) -> None:
    assert _grads(chainrule, alpha, inplace, dtype) == _grads(torch, alpha, inplace, dtype)


def test_celu_negative_alpha_gradient() -> None:
    assert _grads(chainrule, -0.7, False, "float64") == _grads(torch, -0.7, False, "float64")
