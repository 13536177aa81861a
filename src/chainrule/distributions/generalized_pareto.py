"""The generalised Pareto distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from .._size import Size
from .._tensor import Tensor
from ..ops.creation import ones_like, rand, tensor, zeros_like
from ..ops.pointwise import isclose, where
from . import constraints
from .distribution import Distribution, _expand_parameters
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalised Pareto distribution of location ``loc``, scale ``scale`` and shape
    ``concentration`` (an exponential at concentration 0).

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.GeneralizedPareto(0.0, 1.0, 0.0).mean
        tensor(1.)
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(
        self,
        loc: Tensor | float,
        scale: Tensor | float,
        concentration: Tensor | float,
        validate_args: bool | None = None,
    ) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        all_numbers = all(isinstance(v, Number) for v in (loc, scale, concentration))
        batch_shape = Size() if all_numbers else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return _expand_parameters(
            self, GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration")
        )

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def _zero_and_safe_concentration(self) -> tuple[Tensor, Tensor]:
        eq_zero = isclose(self.concentration, tensor(0.0))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._zero_and_safe_concentration()
        y = 1 / safe_conc + ones_like(z)
        where_nonzero = where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._zero_and_safe_concentration()
        where_nonzero = -(safe_conc * z).log1p() / safe_conc
        return where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value: Tensor) -> Tensor:
        """``log(cdf(value))``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        concentration = self.concentration
        eq_zero = isclose(concentration, zeros_like(concentration))
        safe_conc = where(eq_zero, ones_like(concentration), concentration)
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        where_zero = self.loc - self.scale * logu
        return where(eq_zero, where_zero, where_nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return where(valid, result, math.nan)

    def entropy(self) -> Tensor:
        ans = self.scale.log() + self.concentration + 1
        return ans.broadcast_to(tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
