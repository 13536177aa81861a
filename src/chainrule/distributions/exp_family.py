"""``ExponentialFamily``: distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))``; their entropy follows from the log normalizer ``F``
by Bregman divergence, as in PyTorch."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..autograd.engine import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions (``_natural_params``,
    ``_log_normalizer`` and ``_mean_carrier_measure`` define one)."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, from the log normalizer: ``F(theta) - <theta, grad F(theta)> - E[k]``."""
        result = -self._mean_carrier_measure
        natural_params = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*natural_params)
        gradients = grad(lg_normal.sum(), natural_params, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(natural_params, gradients, strict=False):
            result = result - (np_ * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
