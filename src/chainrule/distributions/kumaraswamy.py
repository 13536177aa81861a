"""The Kumaraswamy distribution on [0, 1]."""

from __future__ import annotations

import math
from typing import Any

from .._size import Size
from .._tensor import Tensor
from ..ops.creation import full_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    """The ``n``-th moment: ``b B(1 + n / a, b)``."""
    arg1 = 1 + n / a
    log_value = arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """Density ``a b x^(a - 1) (1 - x^a)^(b - 1)`` with ``a = concentration1`` and
    ``b = concentration0``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Kumaraswamy(1.0, 1.0).mean
        tensor(0.5000)
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(
        self,
        concentration1: Tensor | float,
        concentration0: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(
            full_like(self.concentration0, 0),
            full_like(self.concentration0, 1),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=self.concentration0.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(Size(batch_shape))
        new.concentration0 = self.concentration0.expand(Size(batch_shape))
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode[(b < 1) | (a < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = (self.concentration0 + 1).digamma() + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
