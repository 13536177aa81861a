"""The multinomial distribution: counts of ``total_count`` categorical draws."""

from __future__ import annotations

import math
from typing import Any

from .._size import Size
from .._strides import contiguous_format
from .._tensor import Tensor
from ..ops.creation import ones_like, tensor, zeros
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts of each of ``probs.size(-1)`` categories in ``total_count`` draws.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Multinomial(4, torch.tensor([0.25, 0.75])).mean
        tensor([1., 3.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(
        self,
        total_count: int = 1,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = ()) -> Tensor:
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,) + tuple(sample_shape)))
        # the draw index last, then count the categories
        order = list(range(1, samples.dim())) + [0]
        samples = samples.permute(*order)
        counts = zeros(tuple(self._extended_shape(sample_shape)), dtype=samples.dtype)
        counts = counts.scatter_add(-1, samples, ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self) -> Tensor:
        n = tensor(self.total_count)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        term2 = (binomial_probs * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        # 0 * log(0) is 0 here: a category of probability 0 that was never drawn
        logits = logits.clone(memory_format=contiguous_format)
        logits[(value == 0) & (logits == -math.inf)] = 0
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers
