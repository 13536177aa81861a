"""Student's t distribution."""

from __future__ import annotations

import math
from typing import Any

from .._size import Size
from .._strides import contiguous_format
from .._tensor import Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.StudentT(torch.tensor(3.0)).variance
        tensor(3.)
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(
        self,
        df: Tensor | float,
        loc: Tensor | float = 0.0,
        scale: Tensor | float = 1.0,
        validate_args: bool | None = None,
    ) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone(memory_format=contiguous_format)
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        m = df.clone(memory_format=contiguous_format)
        finite = df > 2  # (computed on those entries only: no 0 / 0 in the others' gradient)
        m[finite] = self.scale[finite].pow(2) * df[finite] / (df[finite] - 2)
        m[(df <= 2) & (df > 1)] = math.inf
        m[df <= 1] = math.nan
        return m

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        # X / sqrt(Z / df), X standard normal and Z chi-squared with df degrees of freedom
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        y = x * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        normalizer = (
            self.scale.log()
            + 0.5 * df.log()
            + 0.5 * math.log(math.pi)
            + (0.5 * df).lgamma()
            - (0.5 * (df + 1.0)).lgamma()
        )
        return -0.5 * (df + 1.0) * (y**2.0 / df).log1p() - normalizer

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (
            self.scale.log()
            + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma() - (0.5 * df).digamma())
            + 0.5 * df.log()
            + lbeta
        )
