"""torch.autograd.enforce_grad_layout_policy as PyTorch's: relaxed, a gradient the engine owns
becomes a leaf's first .grad with its own strides, and the layout-contract warning is not
given; a context manager, a decorator and an immediate switch, thread-local."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch

import chainrule

CASES = {
    "mul_by_number": lambda lib, p: (p * 2).sum().backward(),
    "mul_by_contiguous": lambda lib, p: (p * lib.ones(4, 2, 3)).sum().backward(),
    "user_contiguous_grad": lambda lib, p: p.backward(lib.ones(4, 2, 3)),
    "user_permuted_grad": lambda lib, p: p.backward(lib.ones(3, 4, 2).permute(1, 2, 0)),
    "through_clone": lambda lib, p: p.clone().backward(lib.arange(24.0).view(4, 2, 3)),
}


def _grad(lib, enable, case):
    p = lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
    if enable is None:
        CASES[case](lib, p)
    else:
        with lib.autograd.enforce_grad_layout_policy(enable):
            CASES[case](lib, p)
    return p.grad


@pytest.mark.parametrize("enable", [None, True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_first_grad_layout_as_pytorch(case, enable):
    expected = _grad(torch, enable, case)
    got = _grad(chainrule, enable, case)
    assert got.stride() == expected.stride()
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _layout_warnings(lib, enable):
    p = lib.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
    p.grad = lib.zeros(4, 2, 3)  # (a row-major .grad on a permuted leaf)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.enforce_grad_layout_policy(enable):
            (p * 2).sum().backward()
    messages = [str(w.message).splitlines()[0] for w in caught]
    return messages, p.grad.stride(), p.grad.numpy().copy()


def test_relaxed_policy_gives_no_layout_warning():
    # (relaxed first: the enforced warning is given once per process)
    for enable in (False, True):
        expected = _layout_warnings(torch, enable)
        got = _layout_warnings(chainrule, enable)
        assert got[0] == expected[0] or (enable and not expected[0])
        assert got[1] == expected[1]
        np.testing.assert_array_equal(got[2], expected[2])
    assert _layout_warnings(chainrule, False)[0] == []


def test_switch_context_decorator_and_clone():
    for lib in (torch, chainrule):
        is_enabled = lib._C._is_grad_layout_enforcement_enabled
        assert is_enabled() is True
        guard = lib.autograd.enforce_grad_layout_policy(False)  # (takes effect at once)
        assert is_enabled() is False
        with guard:
            assert is_enabled() is False
        assert is_enabled() is True
        assert guard.clone().mode is False
        lib.autograd.enforce_grad_layout_policy(True)

        @lib.autograd.enforce_grad_layout_policy(False)
        def inside(is_enabled=is_enabled):
            return is_enabled()

        assert is_enabled() is True
        assert inside() is False
        assert is_enabled() is True
        lib._C._set_grad_layout_enforcement_enabled(False)
        assert is_enabled() is False
        lib._C._set_grad_layout_enforcement_enabled(True)


def test_thread_local():
    for lib in (torch, chainrule):
        seen = []
        with lib.autograd.enforce_grad_layout_policy(False):
            worker = threading.Thread(
                target=lambda seen=seen, lib=lib: seen.append(
                    lib._C._is_grad_layout_enforcement_enabled()
                )
            )
            worker.start()
            worker.join()
        assert seen == [True]


def test_bad_argument_as_pytorch():
    for call in (
        lambda lib: lib.autograd.enforce_grad_layout_policy("x"),
        lambda lib: lib._C._set_grad_layout_enforcement_enabled(1),
    ):
        messages = []
        for lib in (torch, chainrule):
            with pytest.raises(TypeError) as info:
                call(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
        assert chainrule._C._is_grad_layout_enforcement_enabled() is True
