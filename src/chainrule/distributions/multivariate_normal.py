"""The multivariate normal distribution, parameterised by a covariance matrix, a precision
matrix or a lower-triangular scale (Cholesky factor)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import linalg
from .._size import Size
from .._tensor import Tensor
from ..ops.creation import eye
from ..ops.linalg_decomp import cholesky_inverse
from ..ops.shape import flip
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    """Batched matrix-vector products (broadcasting the batch dimensions)."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Tensor, bx: Tensor) -> Tensor:
    """``x^T (L L^T)^-1 x`` for lower-triangular ``L``: the squared norm of ``L^-1 x``
    (``L``'s batch dimensions broadcast against ``x``'s)."""
    batch_shape = _broadcast_shapes(bL.shape[:-2], bx.shape[:-1])
    n = bx.size(-1)
    L = bL.expand(tuple(batch_shape) + (n, n))
    x = bx.expand(tuple(batch_shape) + (n,))
    solved = linalg.solve_triangular(L, x.unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _broadcast_shapes(*shapes: Any) -> Size:
    return Size(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    """The lower Cholesky factor of ``P^-1``, from the Cholesky factor of ``P`` flipped."""
    Lf = linalg.cholesky(flip(P, (-2, -1)))
    L_inv = flip(Lf, (-2, -1)).transpose(-2, -1)
    identity = eye(P.shape[-1], dtype=P.dtype)
    return linalg.solve_triangular(L_inv, identity, upper=False)


class MultivariateNormal(Distribution):
    """A normal vector of mean ``loc`` and covariance given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``.

    Example:
        >>> import chainrule as torch
        >>> d = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
        >>> d.log_prob(torch.zeros(2))
        tensor(-1.8379)
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError(
                "Exactly one of covariance_matrix or precision_matrix or "
                "scale_tril may be specified."
            )
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError(
                    "scale_tril matrix must be at least two-dimensional, "
                    "with optional leading batch dimensions"
                )
            batch_shape = _broadcast_shapes(scale_tril.shape[:-2], loc.shape[:-1])
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError(
                    "covariance_matrix must be at least two-dimensional, "
                    "with optional leading batch dimensions"
                )
            batch_shape = _broadcast_shapes(covariance_matrix.shape[:-2], loc.shape[:-1])
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            if precision_matrix.dim() < 2:  # type: ignore[union-attr]
                raise ValueError(
                    "precision_matrix must be at least two-dimensional, "
                    "with optional leading batch dimensions"
                )
            batch_shape = _broadcast_shapes(
                precision_matrix.shape[:-2],  # type: ignore[union-attr]
                loc.shape[:-1],
            )
            self.precision_matrix = precision_matrix.expand(  # type: ignore[union-attr]
                tuple(batch_shape) + (-1, -1)
            )
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        cov_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self) -> tuple[int, ...]:
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return h
        return h.expand(tuple(self._batch_shape))
