"""The von Mises distribution: a circular normal on angles."""

from __future__ import annotations

import math
from typing import Any

from .._dtype import bool as bool_dtype
from .._dtype import float64
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.creation import rand, zeros
from ..ops.pointwise import where
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz and Stegun's polynomial approximations of I0 and I1 (9.8.1 to 9.8.4)
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [
    0.39894228,
    0.1328592e-1,
    0.225319e-2,
    -0.157565e-2,
    0.916281e-2,
    -0.2057706e-1,
    0.2635537e-1,
    -0.1647633e-1,
    0.392377e-2,
]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3]
_I1_COEF_LARGE = [
    0.39894228,
    -0.3988024e-1,
    -0.362018e-2,
    0.163801e-2,
    -0.1031555e-1,
    0.2282967e-1,
    -0.2895312e-1,
    0.1787654e-1,
    -0.420059e-2,
]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Tensor, coef: list[float]) -> Tensor:
    """``coef[0] + y coef[1] + y^2 coef[2] + ...`` by Horner's rule."""
    result: Any = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """``log I_order(x)`` for ``x > 0`` (order 0 or 1)."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    small = _eval_poly(y * y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor, x: Tensor) -> Tensor:
    """Best and Fisher's (1979) rejection sampler, until every entry is accepted."""
    done = zeros(tuple(x.shape), dtype=bool_dtype)
    while not bool(done.all()):
        u = rand((3,) + tuple(x.shape), dtype=loc.dtype)
        u1, u2, u3 = u.unbind()
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Density ``exp(concentration cos(x - loc)) / (2 pi I0(concentration))`` on angles;
    sampled by rejection, in float64 (no ``rsample``).

    Example:
        >>> import chainrule as torch
        >>> torch.distributions.VonMises(torch.tensor(0.0), torch.tensor(1.0)).mean
        tensor(0.)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(
        self, loc: Tensor, concentration: Tensor, validate_args: bool | None = None
    ) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * (value - self.loc).cos()
        return (
            log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)
        )

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        proposal_r_taylor = 1 / kappa + kappa
        return where(kappa < 1e-5, proposal_r_taylor, proposal_r)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            x = zeros(tuple(shape), dtype=float64)
            draws = _rejection_sample(self._loc, self._concentration, self._proposal_r, x)
            return draws.to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        try:
            return super().expand(batch_shape)  # type: ignore[return-value]
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(tuple(batch_shape))
            concentration = self.concentration.expand(tuple(batch_shape))
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        ratio = (
            _log_modified_bessel_fn(self.concentration, order=1)
            - _log_modified_bessel_fn(self.concentration, order=0)
        ).exp()
        return 1 - ratio
