"""Rearranging channels: ``pixel_shuffle`` (channels to space), ``pixel_unshuffle`` (space to
channels) and ``channel_shuffle``. Each moves elements only, so each one's gradient is the
inverse rearrangement of the gradient (one node each, as PyTorch)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ..pointwise import _not_implemented_node
from ._common import size_list

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]


@op("PixelShuffleBackward0")
def _pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    *batch, channels, height, width = self.shape
    out_channels = channels // (r * r)
    split = self.reshape(tuple(batch) + (out_channels, r, r, height, width))
    n = len(batch)
    # (..., C, r, r, H, W) -> (..., C, H, r, W, r)
    order = tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)
    moved = np.transpose(split, order)
    return np.ascontiguousarray(moved).reshape(tuple(batch) + (out_channels, height * r, width * r))


@op("PixelUnshuffleBackward0")
def _pixel_unshuffle(self, downscale_factor):
    r = downscale_factor
    *batch, channels, height, width = self.shape
    split = self.reshape(tuple(batch) + (channels, height // r, r, width // r, r))
    n = len(batch)
    # (..., C, H, r, W, r) -> (..., C, r, r, H, W)
    order = tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)
    moved = np.transpose(split, order)
    return np.ascontiguousarray(moved).reshape(
        tuple(batch) + (channels * r * r, height // r, width // r)
    )


@_pixel_shuffle.derivative("self")
def _(ops, grad, upscale_factor):
    return ops.pixel_unshuffle(grad, upscale_factor)


@_pixel_unshuffle.derivative("self")
def _(ops, grad, downscale_factor):
    return ops.pixel_shuffle(grad, downscale_factor)


@op("ChannelShuffleBackward0")
def _channel_shuffle(self, groups):
    n, channels = self.shape[0], self.shape[1]
    rest = self.shape[2:]
    split = self.reshape((n, groups, channels // groups) + rest)
    return np.ascontiguousarray(np.swapaxes(split, 1, 2)).reshape(self.shape)


@_channel_shuffle.derivative("self")
def _(ops, grad, groups):
    # Shuffling C channels in ``groups`` groups is undone by shuffling in C / groups groups.
    return ops.channel_shuffle(grad, grad.shape[1] // groups)


def _check_rank(name: str, input: Tensor) -> None:
    if input.dim() < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``(*, C r^2, H, W)`` to ``(*, C, H r, W r)``: each group of ``r^2`` channels becomes an
    ``r x r`` block of pixels.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.pixel_shuffle(torch.ones(1, 4, 2, 3), 2).shape
        chainrule.Size([1, 1, 4, 6])
    """
    _check_rank("pixel_shuffle", input)
    if upscale_factor <= 0:
        raise RuntimeError(
            f"pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}"
        )
    channels = input.shape[-3]
    if channels % (upscale_factor * upscale_factor):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={channels} is not divisible by "
            f"{upscale_factor * upscale_factor}"
        )
    return _pixel_shuffle(input, int(upscale_factor))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``(*, C, H r, W r)`` to ``(*, C r^2, H, W)``: the inverse of :func:`pixel_shuffle`.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.pixel_unshuffle(torch.ones(1, 1, 4, 6), 2).shape
        chainrule.Size([1, 4, 2, 3])
    """
    _check_rank("pixel_unshuffle", input)
    if downscale_factor <= 0:
        raise RuntimeError(
            f"pixel_unshuffle expects a positive downscale_factor, but got {downscale_factor}"
        )
    for what, dim in (("height", -2), ("width", -1)):
        if input.shape[dim] % downscale_factor:
            raise RuntimeError(
                f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                f"input.size({dim})={input.shape[dim]} is not divisible by {downscale_factor}"
            )
    return _pixel_unshuffle(input, int(downscale_factor))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the ``C`` channels into ``groups`` groups and interleave them (channel ``g * k +
    i`` moves to ``i * groups + g``).

    Example:
        >>> import chainrule as torch
        >>> x = torch.arange(4.).reshape(1, 4, 1)
        >>> torch.nn.functional.channel_shuffle(x, 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    if input.dim() <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{size_list(input.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    channels = input.shape[1]
    if channels % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {channels} channels and "
            f"{groups} groups."
        )
    return _channel_shuffle(input, int(groups))


@op("NotImplemented")
def _native_channel_shuffle(self, groups):
    return _channel_shuffle.op.forward(self, groups)


_not_implemented_node(_native_channel_shuffle, "native_channel_shuffle")


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """:func:`channel_shuffle` without a derivative (PyTorch records ``NotImplemented``)."""
    channel_shuffle(input[:0] if input.dim() > 2 else input, groups)  # (the same checks)
    return _native_channel_shuffle(input, int(groups))


PRIMITIVES: dict[str, Any] = {
    "pixel_shuffle": _pixel_shuffle,
    "pixel_unshuffle": _pixel_unshuffle,
    "channel_shuffle": _channel_shuffle,
}
