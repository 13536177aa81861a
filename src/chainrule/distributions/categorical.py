"""The categorical distribution over ``{0, ..., K - 1}``."""

from __future__ import annotations

from typing import Any

from .._dtype import int64
from .._finfo import finfo
from .._size import Size
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.combining import broadcast_tensors
from ..ops.creation import arange, full
from ..ops.distribution_sampling import multinomial
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]

_ONE_OF_THEM = "Either `probs` or `logits` must be specified, but not both."


class Categorical(Distribution):
    """Index ``k`` with probability ``probs[..., k]`` (normalised over the last dimension), or
    ``softmax(logits)[..., k]``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Categorical(probs=torch.tensor([0.25, 0.75])).entropy()
        tensor(0.5623)
    """

    arg_constraints = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1),
    }
    has_enumerate_support = True

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError(_ONE_OF_THEM)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            # normalised: logsumexp over the last dimension is 0
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, dtype=int64)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
