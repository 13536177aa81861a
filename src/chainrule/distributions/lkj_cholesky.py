"""The LKJ distribution over Cholesky factors of correlation matrices (Lewandowski, Kurowicka
and Joe, 2009), sampled by the onion method."""

from __future__ import annotations

import math
from typing import Any

from .._finfo import finfo
from .._size import Size
from .._tensor import Tensor
from ..ops.creation import arange, zeros
from ..ops.shape import cat
from ..ops.special_ops import mvlgamma
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The lower Cholesky factor ``L`` of a ``dim x dim`` correlation matrix ``L L^T`` drawn
    with density proportional to ``det(L L^T) ** (concentration - 1)``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.LKJCholesky(3, 0.5).sample().shape
        chainrule.Size([3, 3])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(
        self, dim: int, concentration: Tensor | float = 1.0, validate_args: bool | None = None
    ) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # the onion method: the off-diagonal squared norm of row i is
        # Beta(i / 2, c + (d - 1 - i) / 2)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([zeros((1,), dtype=offset.dtype), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(Size(tuple(batch_shape) + (self.dim,)))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = _standard_normal(self._extended_shape(sample_shape), y.dtype).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # the first row is (1, 0, ..., 0): its off-diagonal part is 0 (not 0 / 0)
        first_row = (arange(self.dim) > 0).to(y.dtype).unsqueeze(-1)
        u_hypersphere = u_hypersphere.nan_to_num(0.0) * first_row
        w = y.sqrt() * u_hypersphere
        eps = finfo(w.dtype).tiny
        diag_elems = (1 - (w**2).sum(dim=-1)).clamp(min=eps).sqrt()
        return w + diag_elems.diag_embed()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
