"""Dropout as PyTorch computes it: the input times a random mask scaled by ``1 / (1 - p)``
(one ``MulBackward0`` node; the mask is a constant of the graph)."""

from __future__ import annotations

import numpy as np

from ..._strides import empty_preserving_layout, layout_order
from ..._tensor import Tensor, wrap
from .. import random_streams
from ..creation import PER_EXAMPLE_DRAWS, default_generator
from ..inplace import inplace_call
from ..pointwise import mul

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"]


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask(shape: tuple[int, ...], p: float, dtype: np.dtype) -> np.ndarray:
    if p == 1:
        return np.zeros(shape, dtype)
    # As PyTorch: a Bernoulli(1 - p) mask of the input's dtype, divided by 1 - p.
    keep = random_streams.bernoulli(default_generator.rng, 1 - p, shape).astype(dtype)
    return keep / np.asarray(1 - p, dtype)


def _keep_in_layout(x: np.ndarray, p: float) -> np.ndarray:
    """A Bernoulli(1 - p) boolean mask shaped like ``x``, drawn as PyTorch's ``bernoulli_`` fills
    ``empty_like(x)``: in the memory order of the layout it gives a copy of ``x`` (a transposed
    input draws along its columns)."""
    if x.ndim < 2 or x.flags.c_contiguous or any(s < 0 for s in x.strides):
        return random_streams.bernoulli(default_generator.rng, 1 - p, x.shape)
    outer_to_inner = layout_order(x.shape, x.strides)[::-1]
    keep = random_streams.bernoulli(
        default_generator.rng, 1 - p, tuple(x.shape[d] for d in outer_to_inner)
    )
    return keep.transpose(np.argsort(outer_to_inner))


def _laid_out_like(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (shaped like ``x``) in the layout PyTorch gives a result computed from ``x``,
    so the product with ``x`` has PyTorch's strides."""
    out = empty_preserving_layout(x, values.dtype)
    out[...] = values
    return out


def _apply(input: Tensor, mask: np.ndarray, inplace: bool) -> Tensor:
    if not inplace:
        return input * wrap(mask)
    return inplace_call(input, mul, wrap(mask))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Returns ``input`` itself when not training or ``p == 0`` (as PyTorch); ``inplace`` writes
    the result into ``input``.
    """
    _check_p(p)
    if not training or p == 0:
        return input
    if PER_EXAMPLE_DRAWS and not inplace:  # (vmap with "different" randomness: per example)
        return PER_EXAMPLE_DRAWS[-1](dropout, (input, p, training), {})
    x = input._data
    if p == 1:
        return _apply(input, _laid_out_like(x, np.zeros(x.shape, x.dtype)), inplace)
    mask = _keep_in_layout(x, p).astype(x.dtype) / np.asarray(1 - p, x.dtype)
    return _apply(input, _laid_out_like(x, mask), inplace)


def _feature_dropout(
    name: str, dims: int, input: Tensor, p: float, training: bool, inplace: bool
) -> Tensor:
    _check_p(p)
    shape = input._data.shape
    if len(shape) not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{name}: Expected {dims + 1}D or {dims + 2}D input, but received a {len(shape)}D "
            f"input. Note that {name} exists to provide channel-wise dropout on inputs with "
            f"{dims} spatial dimension{'s' if dims > 1 else ''}, a channel dimension, and an "
            f"optional batch dimension (i.e. {dims + 1}D or {dims + 2}D inputs)."
        )
    if not training or p == 0:
        return input
    if PER_EXAMPLE_DRAWS and not inplace:  # (vmap with "different" randomness: per example)
        return PER_EXAMPLE_DRAWS[-1](_feature_dropout, (name, dims, input, p, training, False), {})
    mask_shape = shape[:-dims] + (1,) * dims
    return _apply(input, _mask(mask_shape, p, input._data.dtype), inplace)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` input."""
    return _feature_dropout("dropout1d", 1, input, p, training, inplace)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)`` input."""
    return _feature_dropout("dropout2d", 2, input, p, training, inplace)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of ``(N, C, D, H, W)`` input."""
    return _feature_dropout("dropout3d", 3, input, p, training, inplace)


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Dropout that keeps SELU activations' mean and variance (``a * (x * mask + b)``)."""
    _check_p(p)
    if not training or p == 0:
        return input
    if PER_EXAMPLE_DRAWS and not inplace:  # (vmap with "different" randomness: per example)
        return PER_EXAMPLE_DRAWS[-1](alpha_dropout, (input, p, training), {})
    alpha = 1.7580993408473766
    x = input._data
    if p == 1:
        return input * wrap(_laid_out_like(x, np.zeros(x.shape, x.dtype)))
    keep = _keep_in_layout(x, p)
    a = 1.0 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = (keep - 1.0) * (alpha * a) + alpha * a * p
    noise = keep * a
    return input * wrap(_laid_out_like(x, noise.astype(x.dtype))) + wrap(
        _laid_out_like(x, b.astype(x.dtype))
    )
