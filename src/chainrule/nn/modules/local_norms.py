"""``RMSNorm``, ``LocalResponseNorm`` and the power-average pools ``LPPool1d/2d/3d``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._tensor import Tensor
from ...ops.creation import empty
from ...ops.nn_ops.local_norms import (
    local_response_norm,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    rms_norm,
)
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RMSNorm", "LocalResponseNorm", "LPPool1d", "LPPool2d", "LPPool3d"]


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dimensions, with
    a learnable ``weight`` (ones) when ``elementwise_affine``.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.RMSNorm(4)
        RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight back to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Normalisation across ``size`` neighbouring channels
    (:func:`~nn.functional.local_response_norm`)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _LPPoolNd(Module):
    def __init__(
        self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling over the last dimension (:func:`~nn.functional.lp_pool1d`)."""

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool1d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool2d(_LPPoolNd):
    """Power-average pooling over the last two dimensions."""

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool2d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )


class LPPool3d(_LPPoolNd):
    """Power-average pooling over the last three dimensions."""

    def forward(self, input: Tensor) -> Tensor:
        return lp_pool3d(
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode
        )
