"""Max unpooling layers: ``MaxUnpool1d/2d/3d`` (the partial inverses of max pooling)."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.nn_ops import unpooling as ops
from ...ops.nn_ops._common import ntuple
from .module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


class _MaxUnpoolNd(Module):
    """Kernel size, stride (the kernel size by default) and padding, as tuples."""

    _dims = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        d = self._dims
        self.kernel_size = ntuple(kernel_size, d, "kernel_size")
        self.stride = ntuple(stride if stride is not None else kernel_size, d, "stride")
        self.padding = ntuple(padding, d, "padding")

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        unpool = (ops.max_unpool1d, ops.max_unpool2d, ops.max_unpool3d)[self._dims - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Puts ``MaxPool1d``'s values back at its indices, zeros elsewhere."""

    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Puts ``MaxPool2d``'s values back at its indices, zeros elsewhere.

    Example:
        >>> import chainrule as torch
        >>> pool = torch.nn.MaxPool2d(2, return_indices=True)
        >>> out, idx = pool(torch.arange(16.0).reshape(1, 1, 4, 4))
        >>> torch.nn.MaxUnpool2d(2)(out, idx).shape
        chainrule.Size([1, 1, 4, 4])
    """

    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Puts ``MaxPool3d``'s values back at its indices, zeros elsewhere."""

    _dims = 3
