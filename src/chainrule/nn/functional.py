"""``nn.functional``: activations, losses and layers as functions."""

from __future__ import annotations

from ..ops.activation import binary_cross_entropy_with_logits, log_softmax, softmax
from ..ops.linalg import linear
from ..ops.pointwise import relu, sigmoid, tanh

__all__ = [
    "binary_cross_entropy_with_logits", "linear", "log_softmax", "relu", "sigmoid", "softmax",
    "tanh",
]
