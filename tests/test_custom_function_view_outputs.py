"""A custom Function whose output is a view made in ``forward`` and gets no history (grad
mode off, or marked non-differentiable), compared with PyTorch: the view is left as it is, so
it requires grad when its base does (as ``x[:]`` under no_grad), has no ``grad_fn``, and
modifying it in place is refused with PyTorch's message.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome


def _alias(lib: Any, mark: bool) -> Any:
    class Alias(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            view = x[:1]
            if mark:
                ctx.mark_non_differentiable(view)
            return x * 2, view

        @staticmethod
        def backward(ctx: Any, grad: Any, grad_view: Any) -> Any:
            return grad * 2

    return Alias


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("mark", [True, False])
@pytest.mark.parametrize("leaf", [True, False])
def test_view_output_without_history(grad_mode: bool, mark: bool, leaf: bool) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        if not leaf:
            x = x * 1
        with lib.set_grad_enabled(grad_mode):
            out, view = _alias(lib, mark).apply(x)
        described = [
            (t.requires_grad, t.is_leaf, None if t.grad_fn is None else t.grad_fn.name())
            for t in (out, view)
        ]
        try:
            view.mul_(2)
            described.append(("modified", view.tolist()))
        except RuntimeError as error:
            described.append(str(error))
        return described

    same_outcome(program)


@pytest.mark.parametrize("outputs", ["view and product", "two views", "view and marked"])
def test_views_of_a_function_with_several_differentiable_outputs(outputs: str) -> None:
    def program(lib: Any) -> Any:
        class Several(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                second = x * 2 if outputs != "two views" else x[1:]
                if outputs == "view and marked":
                    ctx.mark_non_differentiable(second)
                return x[:1], second

            @staticmethod
            def backward(ctx: Any, grad: Any, grad_second: Any) -> Any:
                return grad

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        view = Several.apply(x)[0]
        view.mul_(2)

    same_outcome(program)
