"""Normalisations composed of other ops, as PyTorch composes them: ``rms_norm`` (root mean
square over the trailing dimensions), ``local_response_norm`` (across neighbouring channels)
and the power-average pools ``lp_pool1d/2d/3d``. Their graphs are PyTorch's (``PowBackward0``,
``MeanBackward1``, ``RsqrtBackward0``, ``AvgPool2DBackward0`` ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._dtype import REDUCED_FLOATS
from ..._tensor import Tensor
from ..pointwise import abs, relu, rsqrt, sign
from ..reduction import mean
from ..special_ops import _add_scalar
from ._common import ntuple, size_list
from .padding import pad
from .pooling import avg_pool1d, avg_pool2d, avg_pool3d

__all__ = ["rms_norm", "local_response_norm", "lp_pool1d", "lp_pool2d", "lp_pool3d"]


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int] | int,
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last ``len(normalized_shape)``
    dimensions (``eps`` defaults to the machine epsilon of the computing dtype; half types are
    computed in float32).

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.rms_norm(torch.tensor([[3., 4.]]), (2,))
        tensor([[0.8485, 1.1314]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(shape)
    if tuple(input.shape[input.dim() - n :]) != shape or input.dim() < n:
        raise RuntimeError(
            f"Given normalized_shape={size_list(shape)}, expected input with shape "
            f"[*{size_list(shape)[1:]}, but got input of size{size_list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{size_list(weight.shape)} and normalized_shape = {size_list(shape)}"
        )
    half = input._data.dtype in REDUCED_FLOATS
    original = input.dtype
    x = input.float() if half else input
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    dims = list(range(input.dim() - n, input.dim()))
    scale = rsqrt(_add_scalar(mean(x.pow(2), dims, keepdim=True), eps))
    out = x * scale
    if weight is not None:
        out = out * weight
    out = out.contiguous()  # (PyTorch's result is contiguous: a CloneBackward0 if it was not)
    return out.to(original) if half else out


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta``.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.local_response_norm(torch.ones(1, 3, 2), 2).shape
        chainrule.Size([1, 3, 2])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} "
            "dimensions)"
        )
    if input.numel() == 0:
        return input
    squares = input.mul(input)
    before, after = size // 2, (size - 1) // 2
    if dim == 3:
        padded = pad(squares.unsqueeze(1), (0, 0, before, after))
        window = avg_pool2d(padded, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        flat = squares.view(sizes[0], 1, sizes[1], sizes[2], -1)
        padded = pad(flat, (0, 0, 0, 0, before, after))
        window = avg_pool3d(padded, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / window.mul(alpha).add(k).pow(beta)


def _lp_finish(pooled: Tensor, norm_type: float, window: int) -> Tensor:
    # sign(x) * relu(|x|) keeps the sign where rounding made an average of powers negative.
    return (sign(pooled) * relu(abs(pooled))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """``(sum over each window of x^p) ^ (1/p)`` along the last dimension."""
    powered = input.pow(norm_type)
    if stride is not None:
        pooled = avg_pool1d(powered, kernel_size, stride, 0, ceil_mode)
    else:
        pooled = avg_pool1d(powered, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(pooled, norm_type, int(kernel_size))


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """``(sum over each window of x^p) ^ (1/p)`` over the last two dimensions."""
    kh, kw = ntuple(kernel_size, 2, "kernel_size")
    powered = input.pow(norm_type)
    if stride is not None:
        pooled = avg_pool2d(powered, kernel_size, stride, 0, ceil_mode)
    else:
        pooled = avg_pool2d(powered, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(pooled, norm_type, kh * kw)


def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """``(sum over each window of x^p) ^ (1/p)`` over the last three dimensions."""
    kd, kh, kw = ntuple(kernel_size, 3, "kernel_size")
    powered = input.pow(norm_type)
    if stride is not None:
        pooled = avg_pool3d(powered, kernel_size, stride, 0, ceil_mode)
    else:
        pooled = avg_pool3d(powered, kernel_size, padding=0, ceil_mode=ceil_mode)
    return _lp_finish(pooled, norm_type, kd * kh * kw)
