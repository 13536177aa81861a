"""The gamma distribution (shape ``concentration``, inverse scale ``rate``)."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .._finfo import finfo
from .._size import Size
from .._tensor import Tensor
from ..ops.creation import as_tensor
from ..ops.distribution_sampling import _standard_gamma
from ..ops.pointwise import xlogy
from ..ops.special_ops import igamma
from . import constraints
from .distribution import _expand_parameters
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Density ``rate^c x^(c - 1) exp(-rate x) / Gamma(c)`` with ``c = concentration``.

    ``rsample`` is reparameterised with implicit gradients (``StandardGammaBackward0``).

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Gamma(2.0, 4.0).mean
        tensor(0.5000)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(
        self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        batch_shape = Size() if both_numbers else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return _expand_parameters(self, Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # at least the smallest normal number, unrecorded (as PyTorch's in-place clamp)
        value.detach().clamp_(min=finfo(value.dtype).tiny)
        return value

    def log_prob(self, value: Tensor) -> Tensor:
        value = as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (
            xlogy(self.concentration, self.rate)
            + xlogy(self.concentration - 1, value)
            - self.rate * value
            - self.concentration.lgamma()
        )

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)
