"""The Dirichlet distribution over the probability simplex."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from ..autograd.function import Function, once_differentiable
from ..ops.creation import eye
from ..ops.distribution_sampling import _dirichlet_grad, _sample_dirichlet
from ..ops.pointwise import xlogy
from . import constraints
from .distribution import _expand_parameters
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class _Dirichlet(Function):
    """A Dirichlet sample whose backward is the implicit reparameterisation gradient
    (``_dirichlet_grad``), as PyTorch's ``_Dirichlet`` function."""

    @staticmethod
    def forward(ctx: Any, concentration: Tensor) -> Tensor:
        x = _sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_output: Tensor) -> Tensor:
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = _dirichlet_grad(x, concentration, total)
        # the sample is normalised: project out the direction that changes its sum
        return grad * (grad_output - (x * grad_output).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """Density ``prod(x_i^(a_i - 1)) / B(a)`` on the simplex, ``a = concentration``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.Dirichlet(torch.tensor([1.0, 3.0])).mean
        tensor([0.2500, 0.7500])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return _expand_parameters(self, Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        # every concentration below 1: the mode is a corner (the largest one)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = eye(shifted.shape[-1], dtype=mode.dtype)[mode[mask].argmax(dim=-1)]
        return mode

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (
            c.lgamma().sum(-1)
            - a0.lgamma()
            - (k - a0) * a0.digamma()
            - ((c - 1.0) * c.digamma()).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
