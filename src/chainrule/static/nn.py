"""``tf.nn``: activations and losses."""

from __future__ import annotations

from .math_ops import (
    log_softmax,
    relu,
    sigmoid,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    tanh,
)

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
]
