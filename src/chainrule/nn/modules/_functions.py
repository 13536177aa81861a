"""Custom autograd Functions the modules use (PyTorch's ``torch.nn.modules._functions``)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...autograd.function import Function

__all__ = ["BackwardHookFunction"]


class BackwardHookFunction(Function):
    """The identity on tensors, recorded as one node (``BackwardHookFunctionBackward``).

    A module with full backward hooks passes its tensor inputs, and then its tensor outputs,
    through it (:class:`chainrule.utils.hooks.BackwardHook`): a hook on the node sees the
    gradients of all of them at once. The results are views of the arguments, which PyTorch
    forbids modifying in place; arguments that do not require grad give non-differentiable
    results.
    """

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple[Tensor, ...]:
        """Return the arguments as they are (the Function makes each a view of its argument)."""
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *args: Tensor) -> tuple[Tensor, ...]:
        """Return the gradients as they are."""
        return args
