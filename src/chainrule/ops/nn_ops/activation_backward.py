"""First derivatives of the piecewise-linear activations, as ops of their own.

The derivative of ``relu``, ``leaky_relu``, ``hardtanh``, ``threshold`` and ``hardshrink`` is the
incoming gradient masked (or scaled) by where the input lies. PyTorch records that as a node
(``ThresholdBackwardBackward0`` ...) whose inputs are the gradient *and* the saved input, with a
zero derivative for the latter. So with ``create_graph=True`` the first derivative is connected
to the graph even when the incoming gradient is a constant, and differentiating it again gives
zeros rather than "does not require grad". These ops reproduce that: the forward derivatives
call them through ``F`` (``F.threshold_backward(grad, result, 0)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._registry import KEEP, op

__all__: list[str] = []


@op("ThresholdBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def threshold_backward(grad_output, self, threshold):
    """``grad_output`` where ``self > threshold``, else 0."""
    return grad_output * (self > threshold)


@threshold_backward.derivative("grad_output")
def _(F, grad, self, threshold):
    return F.threshold_backward(grad, self, threshold)


@threshold_backward.derivative("self")
def _(F, grad):
    return grad * 0


@op("LeakyReluBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def leaky_relu_backward(grad_output, self, negative_slope):
    """``grad_output`` where ``self > 0``, else ``negative_slope * grad_output``."""
    return np.where(self > 0, grad_output, grad_output * np.asarray(negative_slope,
                                                                     grad_output.dtype))


@leaky_relu_backward.derivative("grad_output")
def _(F, grad, self, negative_slope):
    return F.leaky_relu_backward(grad, self, negative_slope)


@leaky_relu_backward.derivative("self")
def _(F, grad):
    return grad * 0


@op("HardtanhBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def hardtanh_backward(grad_output, self, min_val, max_val):
    """``grad_output`` where ``min_val < self < max_val``, else 0."""
    return grad_output * ((self > min_val) & (self < max_val))


@hardtanh_backward.derivative("grad_output")
def _(F, grad, self, min_val, max_val):
    return F.hardtanh_backward(grad, self, min_val, max_val)


@hardtanh_backward.derivative("self")
def _(F, grad):
    return grad * 0


@op("HardshrinkBackwardBackward0", inputs=("grad_output", "self"), promote=KEEP)
def hardshrink_backward(grad_output, self, lambd):
    """``grad_output`` where ``|self| > lambd``, else 0."""
    return grad_output * ((self < -lambd) | (self > lambd))


@hardshrink_backward.derivative("grad_output")
def _(F, grad, self, lambd):
    return F.hardshrink_backward(grad, self, lambd)


@hardshrink_backward.derivative("self")
def _(F, grad):
    return grad * 0


PRIMITIVES: dict[str, Any] = {
    "threshold_backward": threshold_backward,
    "leaky_relu_backward": leaky_relu_backward,
    "hardtanh_backward": hardtanh_backward,
    "hardshrink_backward": hardshrink_backward,
}
