"""The continuous uniform distribution on ``[low, high)``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .._size import Size
from .._tensor import Tensor
from ..ops.creation import rand
from . import constraints
from .distribution import Distribution, _expand_parameters
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform on the half-open interval ``[low, high)``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Uniform(0.0, 2.0).entropy()
        tensor(0.6931)
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(
        self, low: Tensor | float, high: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.low, self.high = broadcast_all(low, high)
        both_numbers = isinstance(low, Number) and isinstance(high, Number)
        batch_shape = Size() if both_numbers else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        return _expand_parameters(self, Uniform, batch_shape, _instance, ("low", "high"))

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return float("nan") * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lower = self.low.le(value).type_as(self.low)
        upper = self.high.gt(value).type_as(self.low)
        return lower.mul(upper).log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
