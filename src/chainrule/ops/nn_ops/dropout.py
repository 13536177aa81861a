"""Dropout as PyTorch computes it: the input times a random mask scaled by ``1 / (1 - p)``
(one ``MulBackward0`` node; the mask is a constant of the graph)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._dtype import SCALAR_TYPE_NAMES, from_numpy_dtype
from ..._frames import user_stacklevel
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
    return _scaled(random_streams.bernoulli(default_generator.rng, 1 - p, shape), p, dtype)


def _scaled(keep: np.ndarray, p: float, dtype: np.dtype) -> np.ndarray:
    """The mask ``keep`` in ``dtype`` divided by ``1 - p`` as PyTorch's ``div_`` by a number
    does it: in float32 for the half types (and float32), rounded once."""
    _refuse_integer_noise(dtype)
    work = _work_dtype(dtype)
    return (keep.astype(dtype).astype(work) / work.type(1 - p)).astype(dtype)


def _refuse_integer_noise(dtype: np.dtype) -> None:
    """PyTorch's error for dropout of an integer or bool input (0 < p < 1, training): its noise
    has the input's dtype, and dividing it in place by ``1 - p`` (multiplying, for alpha
    dropout) cannot keep it. The mask is drawn first, as PyTorch's ``bernoulli_`` is."""
    if np.dtype(dtype).kind in "iub":
        name = SCALAR_TYPE_NAMES[from_numpy_dtype(np.dtype(dtype))]
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")


def _work_dtype(dtype: np.dtype) -> np.dtype:
    """The type PyTorch's kernels compute an op of ``dtype`` with a number in: float32 for
    float16/bfloat16 (and float32), float64 for float64."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


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
    mask = _scaled(_keep_in_layout(x, p), p, x.dtype)
    return _apply(input, _laid_out_like(x, mask), inplace)


def _feature_dropout(
    name: str, dims: int, input: Tensor, p: float, training: bool, inplace: bool
) -> Tensor:
    _check_p(p)
    shape = input._data.shape
    ndim = len(shape)
    batched = ndim == dims + 2
    if ndim not in (dims + 1, dims + 2):
        if dims == 1:
            raise RuntimeError(
                f"{name}: Expected {dims + 1}D or {dims + 2}D input, but received a {ndim}D "
                f"input. Note that {name} exists to provide channel-wise dropout on inputs with "
                f"{dims} spatial dimension, a channel dimension, and an optional batch dimension "
                f"(i.e. {dims + 1}D or {dims + 2}D inputs)."
            )
        warnings.warn(
            f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result "
            "in an error in a future release. To retain the behavior and silence this warning, "
            f"please use dropout instead. Note that {name} exists to provide channel-wise "
            f"dropout on inputs with {dims} spatial dimensions, a channel dimension, and an "
            f"optional batch dimension (i.e. {dims + 1}D or {dims + 2}D inputs).",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if dims == 2 and ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if not training or p == 0:
        return input
    if PER_EXAMPLE_DRAWS and not inplace:  # (vmap with "different" randomness: per example)
        return PER_EXAMPLE_DRAWS[-1](_feature_dropout, (name, dims, input, p, training, False), {})
    # PyTorch's feature noise: one value per (batch, channel) of the input as its
    # feature_dropout sees it, which dropout1d/dropout3d give a batch dimension when it has
    # none; dropout2d takes any input as it is (a 3-D one as (N, C, L)).
    seen = shape if dims == 2 or batched else (1, *shape)
    if len(seen) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    noise = seen[:2] + (1,) * (len(seen) - 2)
    mask_shape = noise if len(seen) == ndim else noise[1:]
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
    x = input._data
    if p == 1:
        return input * wrap(_laid_out_like(x, np.zeros(x.shape, x.dtype)))
    noise, b = alpha_noise(x.shape, p, x.dtype, like=x)
    return input * wrap(_laid_out_like(x, noise)) + wrap(_laid_out_like(x, b))


def alpha_noise(
    shape: tuple[int, ...], p: float, dtype: np.dtype, like: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Alpha dropout's factor and shift, drawn and computed as PyTorch's steps: noise =
    bernoulli(1 - p) (drawn in ``like``'s memory order when given); b = (noise - 1) *
    (alpha * a) + alpha * a * p; noise *= a (each op rounded to ``dtype``); the result is then
    ``input * noise + b``."""
    alpha = 1.7580993408473766
    work = _work_dtype(dtype)
    if like is None:
        noise = random_streams.bernoulli(default_generator.rng, 1 - p, shape).astype(dtype)
    else:
        noise = _keep_in_layout(like, p).astype(dtype)
    _refuse_integer_noise(dtype)
    a = 1.0 / np.sqrt((alpha * alpha * p + 1) * (1 - p))

    def step(values: np.ndarray, fn: Any) -> np.ndarray:
        return fn(values.astype(work)).astype(dtype)

    b = step(noise, lambda v: v + work.type(-1))
    b = step(b, lambda v: v * work.type(alpha * a))
    # (add_ rounds its number to the tensor's dtype first; mul_ keeps it in the work type)
    b = step(b, lambda v: v + work.type(np.asarray(alpha * a * p).astype(dtype)))
    return step(noise, lambda v: v * work.type(a)), b
