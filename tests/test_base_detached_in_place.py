"""A view's history when its base is detached in place (``base.detach_()``), against PyTorch.

PyTorch regenerates a view's history only when the shared version changes: after
``base.detach_()`` the view keeps its own history (``ViewBackward0`` ... back to the leaves),
so its gradient still reaches them; an in-place write to the base afterwards does change the
version, and then the view's history is ``AsStridedBackward0`` of the base's (none: the
gradient stops). Both used to regenerate at once here, which lost the gradient.
"""

from __future__ import annotations

import pytest
import torch

import chainrule


def _program(lib, view_kind, write_after):
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    base = a * 2
    view = {"view": lambda: base.view(2, 2), "slice": lambda: base[1:],
            "transpose": lambda: base.view(2, 2).t()}[view_kind]()
    base.detach_()
    if write_after:
        base.mul_(3)
    name = view.grad_fn.name() if view.grad_fn is not None else None
    weights = lib.arange(1.0, view.numel() + 1).reshape(view.shape)
    try:
        (view * weights).sum().backward()
        grad = None if a.grad is None else a.grad.tolist()
    except RuntimeError as error:
        grad = str(error)
    return name, view.requires_grad, view.tolist(), grad, base.requires_grad, base.is_leaf


@pytest.mark.parametrize("write_after", [False, True], ids=["detached", "then written"])
@pytest.mark.parametrize("view_kind", ["view", "slice", "transpose"])
def test_view_of_a_base_detached_in_place(view_kind, write_after):
    assert _program(chainrule, view_kind, write_after) == _program(torch, view_kind, write_after)
