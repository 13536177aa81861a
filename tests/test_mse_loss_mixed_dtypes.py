"""F.mse_loss / nn.MSELoss with a target of another dtype, as PyTorch: the inputs promote
(float32 input, int64 target: a float32 loss, as the "Neural Networks" tutorial prints it) and
the gradient is computed in the promoted dtype."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

CASES = {
    "float32-int64": (
        lambda L: L.randn(3, 4, requires_grad=True),
        lambda L: L.arange(12).view(3, 4),
    ),
    "float32-float64": (
        lambda L: L.randn(3, 4, requires_grad=True),
        lambda L: L.linspace(0, 1, 12, dtype=L.float64).view(3, 4),
    ),
    "float32-bool": (lambda L: L.randn(5, requires_grad=True), lambda L: L.arange(5) % 2 == 0),
    "float64-float32": (
        lambda L: L.randn(4, dtype=L.float64, requires_grad=True),
        lambda L: L.arange(4.0),
    ),
    "float16-int64": (
        lambda L: L.randn(6, dtype=L.float16, requires_grad=True),
        lambda L: L.arange(6),
    ),
    "float32-int64-broadcast": (
        lambda L: L.randn(1, 10, requires_grad=True),
        lambda L: L.arange(1, 11).view(1, -1),
    ),
}


def _run(lib, case, reduction):
    make_input, make_target = CASES[case]
    lib.manual_seed(0)
    x = make_input(lib)
    loss = lib.nn.functional.mse_loss(x, make_target(lib), reduction=reduction)
    loss.sum().backward()
    return loss, x.grad


def _numpy(t):
    return t.detach().float().numpy()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", list(CASES))
def test_mixed_dtype_target_as_pytorch(case, reduction):
    expected, expected_grad = _run(torch, case, reduction)
    got, got_grad = _run(chainrule, case, reduction)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert got.grad_fn.name() == expected.grad_fn.name()
    assert str(got_grad.dtype).split(".")[-1] == str(expected_grad.dtype).split(".")[-1]
    np.testing.assert_allclose(_numpy(got), _numpy(expected), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(_numpy(got_grad), _numpy(expected_grad))


def test_module_repr_of_the_tutorial_loss():
    chainrule.manual_seed(0)
    torch.manual_seed(0)
    for lib in (torch, chainrule):
        out = lib.randn(1, 10, requires_grad=True)
        loss = lib.nn.MSELoss()(out, lib.arange(1, 11).view(1, -1))
        text = repr(loss).replace("chainrule", "torch")
        if lib is torch:
            expected = text
    assert text == expected and "dtype" not in text


def test_gradcheck_with_an_integer_target():
    x = chainrule.randn(3, 4, dtype=chainrule.float64, requires_grad=True)
    target = chainrule.arange(12).view(3, 4)
    for reduction in ("mean", "sum", "none"):
        assert chainrule.autograd.gradcheck(
            lambda t, r=reduction: chainrule.nn.functional.mse_loss(t, target, reduction=r), (x,)
        )
        assert chainrule.autograd.gradgradcheck(
            lambda t, r=reduction: chainrule.nn.functional.mse_loss(t, target, reduction=r), (x,)
        )
