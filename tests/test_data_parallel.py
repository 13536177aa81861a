"""``nn.DataParallel`` as a CPU-only PyTorch builds it: no devices to scatter over, so it holds
the module (``device_ids`` empty) and its forward calls the module on the caller's thread
(saved-tensor hooks and grad mode apply), compared with PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule


def _pair() -> tuple[object, object]:
    torch.manual_seed(0)
    ref = torch.nn.Linear(3, 2)
    mine = chainrule.nn.Linear(3, 2)
    with chainrule.no_grad():
        mine.weight.copy_(chainrule.tensor(ref.weight.detach().numpy()))
        mine.bias.copy_(chainrule.tensor(ref.bias.detach().numpy()))
    return torch.nn.DataParallel(ref), chainrule.nn.DataParallel(mine)


def test_attributes_repr_and_state_dict_as_pytorch() -> None:
    ref, mine = _pair()
    assert mine.device_ids == ref.device_ids == []
    assert repr(mine) == repr(ref)
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    for name in ("dim", "output_device", "src_device_obj"):
        assert hasattr(mine, name) == hasattr(ref, name)
    assert chainrule.nn.parallel.DataParallel is chainrule.nn.DataParallel


@pytest.mark.parametrize("keyword", [False, True])
def test_forward_values_and_gradients(keyword: bool) -> None:
    ref, mine = _pair()
    x = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    cx = chainrule.tensor(x, requires_grad=True)
    tout = ref(input=tx) if keyword else ref(tx)
    cout = mine(input=cx) if keyword else mine(cx)
    assert type(cout.grad_fn).__name__ == type(tout.grad_fn).__name__
    np.testing.assert_allclose(cout.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
    (tout**2).sum().backward()
    (cout**2).sum().backward()
    np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(
        mine.module.weight.grad.numpy(), ref.module.weight.grad.numpy(), rtol=1e-5
    )


def test_constructor_arguments_accepted_and_ignored() -> None:
    m = torch.nn.Linear(2, 2)
    assert torch.nn.DataParallel(m, device_ids=[0], output_device=0, dim=1).device_ids == []
    c = chainrule.nn.DataParallel(chainrule.nn.Linear(2, 2), device_ids=[0], output_device=0, dim=1)
    assert c.device_ids == []


def test_saved_tensor_hooks_run_inside_forward() -> None:
    for lib in (torch, chainrule):
        calls: list[str] = []

        class Square(lib.nn.Module):
            def forward(self, x):
                return x * x

        def pack(t, calls=calls):
            calls.append("pack")
            return t

        x = lib.ones(2, 2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            lib.nn.DataParallel(Square())(x)
        assert calls == ["pack", "pack"], lib.__name__


def test_no_grad_and_warnings_pass_through() -> None:
    for lib in (torch, chainrule):

        class Warn(lib.nn.Module):
            def forward(self, x):
                warnings.warn("inside", stacklevel=2)
                return x + 1

        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w, lib.no_grad():
            warnings.simplefilter("always")
            out = lib.nn.DataParallel(Warn())(x)
        assert [str(m.message) for m in w] == ["inside"]
        assert not out.requires_grad
