"""A warning raised inside a backward pass reaches Python's warnings, checked as PyTorch's own
test does with its test op ``torch._C._nn._test_warn_in_autograd`` (a copy whose node,
``TestWarnInAutogradBackward0``, warns and passes the gradient on)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_warns_and_passes_gradient_as_pytorch(shape: tuple[int, ...]) -> None:
    results = []
    for lib in (torch, chainrule):
        a = lib.zeros(shape, requires_grad=True)
        b = lib._C._nn._test_warn_in_autograd(a)
        name = type(b.grad_fn).__name__
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            (b * 2).sum().backward()
        messages = [(m.category, str(m.message).split(" (Triggered")[0]) for m in w]
        results.append((name, messages, a.grad.numpy().copy(), b.requires_grad, b.shape))
    (tname, tmsg, tgrad, treq, tshape), (cname, cmsg, cgrad, creq, cshape) = results
    assert cname == tname == "TestWarnInAutogradBackward0"
    assert cmsg == tmsg == [(UserWarning, "Warn from backward")]
    np.testing.assert_array_equal(cgrad, tgrad)
    assert creq == treq and tuple(cshape) == tuple(tshape)


def test_output_is_a_copy_and_no_history_without_grad() -> None:
    for lib in (torch, chainrule):
        a = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            b = lib._C._nn._test_warn_in_autograd(a)
        assert b.grad_fn is None and not b.requires_grad
        c = lib.ones(2)
        d = lib._C._nn._test_warn_in_autograd(c)
        d.add_(1)
        assert c.tolist() == [1.0, 1.0]
        assert d.grad_fn is None


def test_assert_warns_regex_form() -> None:
    a = chainrule.zeros((), requires_grad=True)
    b = chainrule._C._nn._test_warn_in_autograd(a)
    with pytest.warns(UserWarning, match="Warn from backward"):
        b.backward()
