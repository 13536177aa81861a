"""The Laplace (double exponential) distribution."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .._finfo import finfo
from .._size import Size
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution, _expand_parameters
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Density ``exp(-|x - loc| / scale) / (2 scale)``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Laplace(0.0, 1.0).variance
        tensor(2.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(
        self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None
    ) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        both_numbers = isinstance(loc, Number) and isinstance(scale, Number)
        batch_shape = Size() if both_numbers else self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return _expand_parameters(self, Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        # u uniform on [eps - 1, 1): never -1, so log1p(-|u|) stays finite
        u = self.loc.new(shape).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        centred = value - self.loc
        return 0.5 - 0.5 * centred.sign() * (-centred.abs() / self.scale).expm1()

    def icdf(self, value: Tensor) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()
