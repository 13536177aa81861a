"""Sliding blocks: ``unfold`` (im2col: every ``kernel_size`` block of a padded image as one
column, ``Im2ColBackward0``) and ``fold`` (col2im: the columns summed back into an image,
``Col2ImBackward0``). Each is the other's adjoint, so each one's derivative is the other."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ._common import ntuple, size_list

__all__ = ["unfold", "fold"]


def _blocks(
    size: tuple[int, int],
    kernel: tuple[int, int],
    dilation: tuple[int, int],
    padding: tuple[int, int],
    stride: tuple[int, int],
) -> tuple[int, int]:
    return tuple(  # type: ignore[return-value]
        (size[d] + 2 * padding[d] - dilation[d] * (kernel[d] - 1) - 1) // stride[d] + 1
        for d in range(2)
    )


def _window(offset: int, dilation: int, stride: int, count: int) -> slice:
    start = offset * dilation
    return slice(start, start + stride * (count - 1) + 1, stride)


@op("Im2ColBackward0", half_native=True)
def _im2col(self, kernel_size, dilation, padding, stride):
    batched = self.ndim == 4
    x = self if batched else self[None]
    n, c, h, w = x.shape
    (kh, kw), (ph, pw) = kernel_size, padding
    oh, ow = _blocks((h, w), kernel_size, dilation, padding, stride)
    padded = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    columns = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        rows = _window(i, dilation[0], stride[0], oh)
        for j in range(kw):
            cols = _window(j, dilation[1], stride[1], ow)
            columns[:, :, i, j] = padded[:, :, rows, cols]
    out = columns.reshape(n, c * kh * kw, oh * ow)
    return out if batched else out[0]


@op("Col2ImBackward0", half_native=True)  # sums in the half type, as PyTorch
def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    batched = self.ndim == 3
    x = self if batched else self[None]
    (kh, kw), (ph, pw) = kernel_size, padding
    h, w = output_size
    n = x.shape[0]
    c = x.shape[1] // (kh * kw)
    oh, ow = _blocks((h, w), kernel_size, dilation, padding, stride)
    columns = x.reshape(n, c, kh, kw, oh, ow)
    padded = np.zeros((n, c, h + 2 * ph, w + 2 * pw), x.dtype)
    for i in range(kh):
        rows = _window(i, dilation[0], stride[0], oh)
        for j in range(kw):
            cols = _window(j, dilation[1], stride[1], ow)
            padded[:, :, rows, cols] += columns[:, :, i, j]
    out = np.ascontiguousarray(padded[:, :, ph : ph + h, pw : pw + w])
    return out if batched else out[0]


@_im2col.derivative("self")
def _(ops, grad, kernel_size, dilation, padding, stride, self_shape):
    return ops.col2im(grad, tuple(self_shape[-2:]), kernel_size, dilation, padding, stride)


@_col2im.derivative("self")
def _(ops, grad, kernel_size, dilation, padding, stride):
    return ops.im2col(grad, kernel_size, dilation, padding, stride)


def _check_params(
    kernel: tuple[int, int],
    dilation: tuple[int, int],
    padding: tuple[int, int],
    stride: tuple[int, int],
) -> None:
    checks = (
        ("kernel size", kernel, "kernel", True),
        ("stride", stride, "stride", True),
        ("dilation", dilation, "dilation", True),
    )
    for what, values, prefix, positive in checks:
        if positive and min(values) <= 0:
            raise RuntimeError(
                f"{what} should be greater than zero, but got {prefix}_height: "
                f"{values[0]} {prefix}_width: {values[1]}"
            )
    if min(padding) < 0:
        raise RuntimeError(
            f"padding should be non-negative, but got pad_height: {padding[0]} "
            f"pad_width: {padding[1]}"
        )


def _pairs(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple[tuple, ...]:
    return tuple(
        ntuple(v, 2, name)
        for v, name in (
            (kernel_size, "kernel_size"),
            (dilation, "dilation"),
            (padding, "padding"),
            (stride, "stride"),
        )
    )


def unfold(
    input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
) -> Tensor:
    """Every ``kernel_size`` block of the (padded) ``(N, C, H, W)`` input as a column:
    ``(N, C * kh * kw, L)`` with ``L`` the number of blocks (``(C, H, W)``: no batch).

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.unfold(torch.ones(1, 2, 3, 4), 2).shape
        chainrule.Size([1, 8, 6])
    """
    kernel, dil, pad, step = _pairs(kernel_size, dilation, padding, stride)
    _check_params(kernel, dil, pad, step)
    shape = tuple(input.shape)
    if len(shape) not in (3, 4) or 0 in shape[-3:]:
        if len(shape) == 2:
            raise IndexError(
                "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
            )
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {size_list(shape)}"
        )
    blocks = _blocks(shape[-2:], kernel, dil, pad, step)  # type: ignore[arg-type]
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size ({shape[-2]}, {shape[-1]}), kernel_size="
            f"({kernel[0]}, {kernel[1]}), dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, "
            f"{pad[1]}), calculated shape of the array of sliding blocks as ({blocks[0]}, "
            f"{blocks[1]}), but its components must be at least one."
        )
    return _im2col(input, kernel, dil, pad, step)


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Sum columns ``(N, C * kh * kw, L)`` back into an image ``(N, C, *output_size)`` (the
    adjoint of :func:`unfold`; overlapping blocks add up).

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.fold(torch.ones(1, 4, 4), (3, 3), 2)
        tensor([[[[1., 2., 1.],
                  [2., 4., 2.],
                  [1., 2., 1.]]]])
    """
    size = ntuple(output_size, 2, "output_size")
    kernel, dil, pad, step = _pairs(kernel_size, dilation, padding, stride)
    _check_params(kernel, dil, pad, step)
    shape = tuple(input.shape)
    if len(shape) not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
            f"size and non-zero dimensions for input, but got: {size_list(shape)}"
        )
    per_block = kernel[0] * kernel[1]
    if shape[-2] % per_block:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={shape[-2]} and kernel_size=({kernel[0]}, "
            f"{kernel[1]})."
        )
    blocks = _blocks(size, kernel, dil, pad, step)  # type: ignore[arg-type]
    if min(blocks) < 1 or blocks[0] * blocks[1] != shape[-1]:
        raise RuntimeError(
            f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, "
            f"{kernel[1]}), dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), "
            f"stride=({step[0]}, {step[1]}), expected size of input's dimension 2 to match the "
            f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
            f"{blocks[0] * blocks[1]}, but got input.size(2)={shape[-1]}."
        )
    return _col2im(input, size, kernel, dil, pad, step)


PRIMITIVES: dict[str, Any] = {"im2col": _im2col, "col2im": _col2im}
