"""Views that see one element of their base more than once (``expand``, overlapping
``as_strided``) after their base was modified in place: their regenerated history
(``AsStridedBackward0``) must add up the gradients of every copy, first and second order, as
PyTorch does. Found by random programs of views and in-place ops: the gradient of each copy
overwrote the others' (``x.grad`` 5 instead of 8 in the first case below).

Also: the error for a saved view whose base changed names the view's regenerated history
(``AsStrided``), and a node checks its saved tensors in PyTorch's order (by argument name),
so the tensor a "modified by an inplace operation" error names is PyTorch's.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

VIEWS = {
    "expand_rows": (lambda t: t.expand(2, 4), (4,)),
    "expand_column": (lambda t: t.reshape(4, 1).expand(4, 3), (4,)),
    "unsqueeze_expand": (lambda t: t.unsqueeze(0).expand(3, 4), (4,)),
    "expand_middle": (lambda t: t.reshape(2, 1, 2).expand(2, 3, 2), (4,)),
    "overlapping_as_strided": (lambda t: t.as_strided((3, 2), (1, 1)), (4,)),
    "as_strided_zero_stride": (lambda t: t.as_strided((2, 3), (0, 1), 1), (4,)),
    "slice_no_overlap": (lambda t: t[1:3], (4,)),
    "transpose_no_overlap": (lambda t: t.t(), (2, 3)),
}
MODIFY = {
    "mul_": lambda b: b.mul_(2.0),
    "clamp_": lambda b: b.clamp_(-0.3, 0.4),
    "exp_": lambda b: b.exp_(),
    "add_tensor": lambda b: b.add_(b.detach() * 0 + 1.5),
}
VALUES = [0.2, -0.6, 0.4, 0.9, -0.1, 0.3]


def _program(lib, view_name, modify_name, create_graph):
    make_view, shape = VIEWS[view_name]
    n = int(np.prod(shape))
    x = lib.tensor(VALUES[:n], dtype=lib.float64).reshape(shape).requires_grad_()
    base = x * 1.0
    view = make_view(base)
    MODIFY[modify_name](base)
    weights = lib.arange(1, view.numel() + 1, dtype=lib.float64).reshape(view.shape)
    loss = (view * weights * view).sum() + (base * base).sum()
    (grad,) = lib.autograd.grad(loss, x, create_graph=create_graph)
    if not create_graph:
        return type(view.grad_fn).__name__, grad.numpy(), None
    (second,) = lib.autograd.grad((grad * grad).sum(), x)
    return type(view.grad_fn).__name__, grad.detach().numpy(), second.numpy()


@pytest.mark.parametrize("modify_name", sorted(MODIFY))
@pytest.mark.parametrize("view_name", sorted(VIEWS))
@pytest.mark.parametrize("create_graph", [False, True], ids=["first", "second"])
def test_gradients_through_regenerated_views(view_name, modify_name, create_graph) -> None:
    node_t, grad_t, second_t = _program(torch, view_name, modify_name, create_graph)
    node_c, grad_c, second_c = _program(chainrule, view_name, modify_name, create_graph)
    assert node_c == node_t == "AsStridedBackward0"
    np.testing.assert_allclose(grad_c, grad_t, rtol=1e-12, atol=1e-12)
    if create_graph:
        np.testing.assert_allclose(second_c, second_t, rtol=1e-12, atol=1e-12)


def test_the_case_the_random_programs_found() -> None:
    grads = []
    for lib in (torch, chainrule):
        y = lib.tensor([-0.136, -0.652, -0.658, 0.655], dtype=lib.float64, requires_grad=True)
        v1 = y * 1.0
        v2 = v1.expand(2, 4)
        v1.clamp_(-0.3, 0.4)
        ((v1 * 2).sum() + (v2 * 3).sum()).backward()
        grads.append(y.grad.numpy())
    np.testing.assert_array_equal(grads[1], [8.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(grads[1], grads[0])


def _modified_error(lib, program) -> str:
    with pytest.raises(RuntimeError) as info:
        program(lib)
    # (chainrule adds where the tensor was last modified: beyond PyTorch's message)
    message = str(info.value).split(" The tensor was last modified in place at ")[0]
    return message.replace("chainrule.", "torch.")


def test_saved_expanded_view_names_its_regenerated_history() -> None:
    def program(lib):
        x = lib.ones(4, dtype=lib.float64, requires_grad=True)
        base = x * 1.0
        seen = base.expand(2, 4)
        y = seen * seen  # saves the expanded view
        base.div_(3.0)
        y.sum().backward()

    message = _modified_error(chainrule, program)
    assert message == _modified_error(torch, program)
    assert "which is output 0 of AsStrided, is at version 1; expected version 0" in message


@pytest.mark.parametrize("name", ["mul", "atan2", "hypot", "lerp", "addcmul", "div", "pow"])
def test_saved_tensors_checked_in_pytorchs_order(name: str) -> None:
    def program(lib):
        f = {
            "mul": lambda a, b: a * b,
            "atan2": lib.atan2,
            "hypot": lib.hypot,
            "lerp": lambda a, b: lib.lerp(a, b, b),
            "addcmul": lambda a, b: lib.addcmul(a, b, a),
            "div": lambda a, b: a / b,
            "pow": lambda a, b: a**b,
        }[name]
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        a, b = x * 1.5, x * 2.5
        y = f(a, b)
        a.mul_(2)
        b.exp_()
        y.sum().backward()

    assert _modified_error(chainrule, program) == _modified_error(torch, program)
