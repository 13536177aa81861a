"""PyTorch's ``torch.autograd._functions``: the deprecated non-in-place ``Tensor.resize`` and
``Tensor.resize_as``, built as PyTorch builds them, on the custom Function ``Resize``.

Unlike ``resize_``, they only change the shape: the result has the input's number of elements
(PyTorch's message otherwise), is a view of a contiguous input (a copy of another), and records
``ResizeBackward``, whose gradient is the incoming one viewed at the input's sizes. Each call
warns that it is deprecated. This module installs both methods on ``Tensor``.
"""

from __future__ import annotations

import operator
import warnings
from functools import reduce
from typing import Any

from .._tensor import Tensor
from .function import Function, FunctionCtx

__all__ = ["Resize"]


class Resize(Function):
    """``tensor`` with the shape ``sizes`` (same number of elements), as PyTorch's
    ``torch.autograd._functions.Resize``."""

    @staticmethod
    def forward(ctx: FunctionCtx, tensor: Tensor, sizes: tuple) -> Tensor:  # type: ignore[override]
        """The view (contiguous ``tensor``) or copy of ``tensor`` at ``sizes``."""
        ctx.sizes = sizes
        # PyTorch multiplies whatever it was given: ``resize((2, 3))`` "counts" (2, 3) elements
        # and is refused with that in the message.
        ctx.numel = reduce(operator.mul, sizes, 1)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({ctx.numel} elements in "
                f"total), but the given tensor has a size of "
                f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). autograd's "
                "resize can only change the shape of a given tensor, while preserving the number "
                "of elements. "
            )
        ctx.input_sizes = tensor.size()
        # (PyTorch's ``tensor.new(tensor)`` is an alias of ``tensor``: a view of it.)
        return tensor.view(*sizes) if tensor.is_contiguous() else tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_output: Tensor) -> tuple[Tensor, None]:  # type: ignore[override]
        """The gradient at the input's sizes."""
        if grad_output.numel() != ctx.numel:
            raise AssertionError(
                f"Expected grad_output to have {ctx.numel} elements, but got "
                f"{grad_output.numel()}"
            )
        return grad_output.contiguous().view(ctx.input_sizes), None


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated: ``self`` with the shape ``sizes`` (same number of elements), through the
    differentiable ``Resize``; warns, as PyTorch's."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return Resize.apply(self, sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: ``self`` with ``tensor``'s shape (same number of elements), through the
    differentiable ``Resize``; warns, as PyTorch's."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return Resize.apply(self, tensor.size())


resize.__qualname__ = "Tensor.resize"  # (Python's argument errors name it so)
resize_as.__qualname__ = "Tensor.resize_as"
Tensor.resize = resize  # type: ignore[attr-defined]
Tensor.resize_as = resize_as  # type: ignore[attr-defined]
