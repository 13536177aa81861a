"""``biject_to`` and ``transform_to``: from a constraint to a transform that maps
unconstrained real values onto it (``biject_to`` bijectively), as PyTorch's registries.

Example:
    >>> import chainrule as torch
    >>> from chainrule.distributions import constraints, transform_to
    >>> transform_to(constraints.positive)(torch.tensor([0.0]))
    tensor([1.])
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from typing import Any

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]

_Factory = Callable[[Any], transforms.Transform]


class ConstraintRegistry:
    """A registry of transform factories, by constraint type."""

    def __init__(self) -> None:
        self._registry: dict[type, _Factory] = {}
        super().__init__()

    def register(self, constraint: Any, factory: _Factory | None = None) -> Any:
        """Register ``factory`` for ``constraint`` (a Constraint subclass or instance); without
        ``factory``, a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                "Expected constraint to be either a Constraint subclass or "
                f"instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> transforms.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints"
            ) from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(*kinds: Any, only: str | None = None) -> Callable[[_Factory], _Factory]:
    def decorate(factory: _Factory) -> _Factory:
        for kind in kinds:
            if only != "transform_to":
                biject_to.register(kind, factory)
            if only != "biject_to":
                transform_to.register(kind, factory)
        return factory

    return decorate


@_register_both(constraints.real)
def _transform_to_real(constraint: Any) -> transforms.Transform:
    return transforms.identity_transform


@_register_both(constraints.independent, only="biject_to")
def _biject_to_independent(constraint: Any) -> transforms.Transform:
    return transforms.IndependentTransform(
        biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims
    )


@_register_both(constraints.independent, only="transform_to")
def _transform_to_independent(constraint: Any) -> transforms.Transform:
    return transforms.IndependentTransform(
        transform_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims
    )


@_register_both(constraints.positive, constraints.nonnegative)
def _transform_to_positive(constraint: Any) -> transforms.Transform:
    return transforms.ExpTransform()


@_register_both(constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


@_register_both(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


@_register_both(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> transforms.Transform:
    lower_is_0 = isinstance(constraint.lower_bound, Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)]
    )


@_register_both(constraints.simplex, only="biject_to")
def _biject_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.StickBreakingTransform()


@_register_both(constraints.simplex, only="transform_to")
def _transform_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.SoftmaxTransform()


@_register_both(constraints.lower_cholesky, only="transform_to")
def _transform_to_lower_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.LowerCholeskyTransform()


@_register_both(
    constraints.positive_definite, constraints.positive_semidefinite, only="transform_to"
)
def _transform_to_positive_definite(constraint: Any) -> transforms.Transform:
    return transforms.PositiveDefiniteTransform()


@_register_both(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.CorrCholeskyTransform()


@_register_both(constraints.cat, only="biject_to")
def _biject_to_cat(constraint: Any) -> transforms.Transform:
    return transforms.CatTransform(
        [biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths
    )


@_register_both(constraints.cat, only="transform_to")
def _transform_to_cat(constraint: Any) -> transforms.Transform:
    return transforms.CatTransform(
        [transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths
    )


@_register_both(constraints.stack, only="biject_to")
def _biject_to_stack(constraint: Any) -> transforms.Transform:
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@_register_both(constraints.stack, only="transform_to")
def _transform_to_stack(constraint: Any) -> transforms.Transform:
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
