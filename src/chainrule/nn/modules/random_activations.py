"""``RReLU`` (random leaky slopes while training) and ``FeatureAlphaDropout``."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops.nn_ops.random_activations import feature_alpha_dropout, rrelu
from .dropout import _DropoutNd
from .module import Module

__all__ = ["RReLU", "FeatureAlphaDropout"]


class RReLU(Module):
    """Leaky ReLU with slopes drawn from ``U(lower, upper)`` in training, their mean in eval."""

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels (:func:`~nn.functional.feature_alpha_dropout`)."""

    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training)
