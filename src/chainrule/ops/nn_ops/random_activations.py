"""Activations and dropouts with random parts: ``rrelu`` (random leaky slopes while training,
``RreluWithNoiseBackward0``), ``feature_alpha_dropout`` (alpha dropout of whole channels) and
``gumbel_softmax`` (softmax of logits plus Gumbel noise, optionally one-hot with the soft
gradient). The random draws replay PyTorch's kernels on chainrule's generator (``random_streams``),
so a seed gives PyTorch's noise; nodes, formulas and errors are PyTorch's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._frames import user_stacklevel
from ..._tensor import Tensor, wrap
from .. import random_streams
from .._registry import op
from ..activation import softmax
from ..creation import PER_EXAMPLE_DRAWS, default_generator
from ..inplace import check_inplace_draw
from .activations import _NEGATIVE_SLOPE_LEAKY_RELU, _maybe_inplace
from .dropout import _check_p, alpha_noise

__all__ = ["rrelu", "rrelu_", "feature_alpha_dropout", "gumbel_softmax"]


@op("RreluWithNoiseBackward0", tensor_params=("noise",))
def _rrelu_with_noise(self, noise, lower, upper, training):
    # (contiguous whatever the input's layout, as PyTorch's kernel)
    if training:
        return np.ascontiguousarray(self * noise)
    slope = np.asarray((lower + upper) / 2, dtype=self.dtype)
    return np.ascontiguousarray(np.where(self > 0, self, self * slope))


@_rrelu_with_noise.derivative("self")
def _(ops, grad, self, noise, lower, upper, training):
    if training and upper - lower > 1e-6:
        return grad * noise
    slope = (lower + upper) / 2
    return ops.where(self > 0, grad, ops.mul(grad, slope))


@op("RreluWithNoiseBackward1", tensor_params=("noise",), name="rrelu_with_noise")
def _rrelu_with_noise_inplace(self, noise, lower, upper, training):
    return _rrelu_with_noise.op.forward(self, noise, lower, upper, training)


@_rrelu_with_noise_inplace.derivative("self")
def _(ops, grad, result, noise, lower, upper, training):
    # PyTorch's in-place node keeps the output: where it is positive the input was (a slope
    # of at least 0), and a negative mean slope is refused, as for leaky_relu_.
    if training and upper - lower > 1e-6:
        return grad * noise
    slope = (lower + upper) / 2
    if slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE_LEAKY_RELU)
    return ops.where(result > 0, grad, ops.mul(grad, slope))


#: Non-empty while ``chainrule.func.vmap`` (or a transform built on it) runs a function
#: (installed by func/_randomness.py, a higher layer).
UNDER_VMAP: list[Any] = []


def _noise(input: Tensor, lower: float, upper: float, training: bool) -> Tensor:
    x = input._data
    if not training:
        return wrap(np.ones(x.shape, x.dtype))
    # As PyTorch's kernel: one double uniform draw per element that is not positive, in
    # memory order (``x * (upper - lower) + lower``), a slope of 1 elsewhere.
    order = np.ascontiguousarray(x) if x.flags.c_contiguous else x.copy()
    flat = order.reshape(-1)
    negative = ~(flat > 0)
    unit = random_streams.uniform_unit64(default_generator.rng, int(negative.sum()))
    slopes = np.ones(flat.shape, np.float64)
    # (the bounds as the kernel's float type holds them: float32 for float32 input)
    low, high = (np.asarray(v, x.dtype).item() for v in (lower, upper))
    slopes[negative] = unit * (high - low) + low
    return wrap(slopes.reshape(x.shape).astype(x.dtype))


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Leaky ReLU whose negative slope is drawn from ``U(lower, upper)`` per element while
    training, and is ``(lower + upper) / 2`` otherwise.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.rrelu(torch.tensor([-2.0, 3.0]))
        tensor([-0.4583,  3.0000])
    """
    if UNDER_VMAP:  # (PyTorch's vmap has no rule for it: refused for any input, any mode)
        name = "rrelu_" if inplace else "rrelu"
        raise RuntimeError(f"vmap: we do not yet support aten::{name}. Please file an issue")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    noise = _noise(input, lower, upper, training)
    rrelu_op = _rrelu_with_noise_inplace if inplace else _rrelu_with_noise
    return _maybe_inplace(
        input, inplace, rrelu_op, noise, float(lower), float(upper), bool(training)
    )


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """``rrelu`` written into ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels: every element of a dropped channel (dimension 1, for
    ``(N, C, *)`` input) is set to SELU's negative saturation value, and the result rescaled to
    keep the mean and variance."""
    _check_p(p)
    if not training or p == 0:
        return input
    if PER_EXAMPLE_DRAWS and not inplace:  # (vmap with "different" randomness: per example)
        return PER_EXAMPLE_DRAWS[-1](feature_alpha_dropout, (input, p, training), {})
    x = input._data
    if p == 1:
        return input * wrap(np.zeros(x.shape, x.dtype))
    noise, b = alpha_noise(x.shape[:2] + (1,) * (x.ndim - 2), p, x.dtype)
    if inplace:
        return _maybe_inplace(input, True, _mul_add, wrap(noise), wrap(b))
    return input * wrap(noise) + wrap(b)


def _mul_add(input: Tensor, noise: Tensor, shift: Tensor) -> Tensor:
    return input * noise + shift


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """``softmax((logits + g) / tau)`` with ``g`` Gumbel noise; with ``hard``, the one-hot of
    its argmax, with the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn(
            "`eps` parameter is deprecated and has no effect.", stacklevel=user_stacklevel()
        )
    if PER_EXAMPLE_DRAWS:  # (vmap, "different": PyTorch fills the noise in place, refused
        check_inplace_draw()  # on logits that are not batched)
    x = logits._data
    # (PyTorch: -empty_like(logits, contiguous).exponential_().log(), in logits' dtype)
    noise = random_streams.exponential(default_generator.rng, x.shape, x.dtype)
    gumbels = -wrap(noise).log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = np.argmax(y_soft._data, axis=dim)
    one_hot = np.zeros(x.shape, x.dtype)
    np.put_along_axis(one_hot, np.expand_dims(index, dim), 1.0, axis=dim)
    return wrap(one_hot) - y_soft.detach() + y_soft


PRIMITIVES: dict[str, Any] = {}
