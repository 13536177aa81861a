"""Pooling layers: max, average and adaptive pooling."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...ops.nn_ops import fractional_pooling
from ...ops.nn_ops import pooling as ops
from ...ops.nn_ops._common import ntuple
from .. import functional as F
from .module import Module

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)``."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)``.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.MaxPool2d(2)(torch.zeros(1, 3, 8, 8)).shape
        chainrule.Size([1, 3, 4, 4])
    """

    def forward(self, input: Tensor) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)``."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool1d(Module):
    """1-D average pooling."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return ops.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad)


def _single(value: Any) -> tuple[int, ...]:
    return (value,) if isinstance(value, int) else tuple(value)


class AvgPool2d(Module):
    """2-D average pooling."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return ops.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    """3-D average pooling over ``(N, C, D, H, W)``."""

    def forward(self, input: Tensor) -> Tensor:
        return ops.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling to a fixed length."""

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        return ops.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling to a fixed ``(H, W)`` (``None`` keeps that input size)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        return ops.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling to a fixed ``(D, H, W)`` (``None`` keeps that input size)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        return ops.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    """Max pooling to a fixed length."""

    def forward(self, input: Tensor) -> Any:
        return ops.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptivePool):
    """Max pooling to a fixed ``(H, W)``."""

    def forward(self, input: Tensor) -> Any:
        return ops.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptivePool):
    """Max pooling to a fixed ``(D, H, W)``."""

    def forward(self, input: Tensor) -> Any:
        return ops.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _FractionalMaxPoolNd(Module):
    """Kernel size, output size or ratio, and the optional fixed samples (a buffer)."""

    _dims = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        d = self._dims
        name = type(self).__name__
        self.kernel_size = ntuple(kernel_size, d, "kernel_size")
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else ntuple(output_size, d, "output_size")
        self.output_ratio = _ratios(output_ratio, d) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        pool = (fractional_pooling.fractional_max_pool2d if self._dims == 2
                else fractional_pooling.fractional_max_pool3d)
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


def _ratios(value: Any, d: int) -> tuple[float, ...]:
    return (value,) * d if isinstance(value, float | int) else tuple(value)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (:func:`~nn.functional.fractional_max_pool2d`)."""

    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (:func:`~nn.functional.fractional_max_pool3d`)."""

    _dims = 3
