"""``affine_grid``: the sampling grid of a batch of affine transforms, ``base @ theta^T`` with
``base`` the normalised pixel coordinates of the output (``AffineGridGeneratorBackward0``, whose
gradient PyTorch does not differentiate again: it has no graph)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ._common import size_list

__all__ = ["affine_grid"]  # (affine_grid_generator: the top-level torch name only)


def _linspace(steps: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """PyTorch's ``linspace(-1, 1, steps)`` (from both ends, as its kernel), scaled by
    ``(steps - 1) / steps`` without ``align_corners``; 0 for one step."""
    if steps <= 1:
        return np.zeros(max(steps, 0), dtype)
    step = dtype.type(2) / dtype.type(steps - 1)
    i = np.arange(steps)
    half = steps // 2
    values = np.where(
        i < half,
        dtype.type(-1) + step * i.astype(dtype),
        dtype.type(1) - step * (steps - i - 1).astype(dtype),
    ).astype(dtype)
    if not align_corners:
        values = (values * dtype.type(steps - 1) / dtype.type(steps)).astype(dtype)
    return values


def _base_grid(spatial: Sequence[int], align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """``(*spatial, nd + 1)`` coordinates: x along the last dimension, then y (then z), then 1."""
    nd = len(spatial)
    base = np.ones(tuple(spatial) + (nd + 1,), dtype)
    for k in range(nd):
        axis = nd - 1 - k  # x varies along the last spatial dimension
        shape = [1] * nd
        shape[axis] = spatial[axis]
        base[..., k] = _linspace(spatial[axis], align_corners, dtype).reshape(shape)
    return base


@op("AffineGridGeneratorBackward0", inputs=("theta",), name="affine_grid_generator")
def _affine_grid(theta, size, align_corners):
    """``base @ theta^T`` for each transform of the batch."""
    spatial = tuple(size[2:])
    base = _base_grid(spatial, align_corners, theta.dtype).reshape(1, -1, len(spatial) + 1)
    grid = np.matmul(base, np.swapaxes(theta, 1, 2))
    return grid.reshape((size[0],) + spatial + (len(spatial),)).astype(theta.dtype, copy=False)


@_affine_grid.derivative("theta")
def _(ops, grad, size, align_corners):
    return ops.affine_grid_backward(grad, size, align_corners)


@op("AffineGridGeneratorBackwardBackward0", inputs=("grad",), differentiable=False)
def _affine_grid_backward(grad, size, align_corners):
    """``(base^T @ grad)^T``: the gradient in ``theta`` (not differentiable again)."""
    spatial = tuple(size[2:])
    nd = len(spatial)
    base = _base_grid(spatial, align_corners, grad.dtype).reshape(-1, nd + 1)
    g = grad.reshape(size[0], -1, nd)
    return np.swapaxes(np.matmul(base.T[None], g), 1, 2).astype(grad.dtype, copy=False)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    """The grid of :func:`affine_grid`, without its argument checks (``torch.`` name)."""
    size = [int(s) for s in size]
    if size[0] != theta.shape[0]:
        n_theta = theta.shape[0]
        k = len(size) - 1
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"{size_list([size[0], k])} but got: {size_list([n_theta, k])}."
        )
    return _affine_grid(theta, tuple(size), bool(align_corners))


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid (``(N, H, W, 2)`` or ``(N, D, H, W, 3)``, coordinates in [-1, 1]) of
    the affine transforms ``theta`` (``(N, 2, 3)`` or ``(N, 3, 4)``) for an output of ``size``;
    ``grid_sample`` reads an input at it.

    Example:
        >>> import chainrule as torch
        >>> theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> torch.nn.functional.affine_grid(theta, [1, 1, 2, 2], align_corners=True)[0, :, :, 0]
        tensor([[-1.,  1.],
                [-1.,  1.]])
    """
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False "
            "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
            "See the documentation of grid_sample for details.",
            stacklevel=2,
        )
        align_corners = False
    if theta._data.dtype.kind not in "fV":  # (not floating point)
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    shape = tuple(theta.shape)
    if len(size) == 4:
        if theta.dim() != 3 or shape[-2] != 2 or shape[-1] != 3:
            raise ValueError(
                "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                f"{_as_given(size)}. Got {theta.shape}."
            )
        spatial = list(size[-2:])
    elif len(size) == 5:
        if theta.dim() != 3 or shape[-2] != 3 or shape[-1] != 4:
            raise ValueError(
                "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                f"{_as_given(size)}. Got {theta.shape}."
            )
        spatial = list(size[-3:])
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {_as_given(size)}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {_as_given(size)}")
    return affine_grid_generator(theta, size, align_corners)


def _as_given(size: Any) -> str:
    return str(tuple(size) if isinstance(size, tuple) else size)


PRIMITIVES: dict[str, Any] = {"affine_grid_backward": _affine_grid_backward}
