"""``autograd.Function``'s vmap defaults as PyTorch's: ``generate_vmap_rule`` is False and the
``vmap`` staticmethod exists and refuses with PyTorch's message until overridden."""

from __future__ import annotations

import pytest
import torch

import chainrule


def _square(lib):
    class MySquare(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

    return MySquare


@pytest.mark.parametrize("lib", [torch, chainrule], ids=["torch", "chainrule"])
def test_defaults(lib) -> None:
    cls = _square(lib)
    assert cls.generate_vmap_rule is False
    assert lib.autograd.Function.generate_vmap_rule is False
    assert hasattr(cls, "vmap")


def test_default_vmap_refuses_as_pytorch() -> None:
    with pytest.raises(NotImplementedError) as ref:
        _square(torch).vmap(None, (0,), torch.ones(2))
    with pytest.raises(NotImplementedError) as mine:
        _square(chainrule).vmap(None, (0,), chainrule.ones(2))
    assert str(mine.value) == str(ref.value)


def test_subclass_settings_kept() -> None:
    class Generated(chainrule.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

    assert Generated.generate_vmap_rule is True
    x = chainrule.ones(2, requires_grad=True)
    Generated.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
