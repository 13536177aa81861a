"""The forward-mode allowlist: which ops carry tangents, and by which rule (ops/_forward.py).

Each entry was checked against PyTorch's forward derivative (derivatives.yaml) and is tested
in tests/test_forward_ad.py; every op not listed refuses a tangent with PyTorch's
NotImplementedError.

Derived rules (the derivative formula applied to the tangent) are used only where the formula is
linear in ``grad`` and is PyTorch's ``auto_element_wise`` (or its explicit formula, term for
term): add/sub (``self_t + alpha * other_t``), mul (``other_t * self_p + self_t * other_p``),
exp, log, sin, cos, tanh, sigmoid, relu (``threshold_backward(self_t, result, 0)``), sqrt,
tensor ** number (``pow_backward``: exactly zero for a zero exponent). Division has PyTorch's own
formula, ``(self_t - other_t * result) / other_p``, which differs from the derivatives at 0 and
infinities.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import copying, indexing, linalg, pointwise, reduction, shape
from ._forward import allow_jvp, bilinear_rule, derived_rule, linear_rule
from .nn_ops import losses, misc

if TYPE_CHECKING:
    from .._tensor import Tensor
    from ._registry import OpDef

__all__: list[str] = []


def _div_rule(op: OpDef, args: tuple, tangents: list[Any], result: Tensor) -> Any:
    """PyTorch's ``(self_t - other_t * result) / other_p``, a missing tangent an exact zero."""
    self_t, other_t = tangents
    other = args[1]
    if other_t is None:
        return self_t / other
    moved = other_t * result
    return (-moved if self_t is None else self_t - moved) / other


allow_jvp(
    derived_rule,
    pointwise._add, pointwise._add_alpha, misc._add_scalar, pointwise._sub, pointwise._sub_alpha,
    pointwise.mul, pointwise.exp, pointwise.log, pointwise.sin, pointwise.cos, pointwise.tanh,
    pointwise.sigmoid, pointwise.relu, pointwise.sqrt, pointwise._pow_scalar,
)
allow_jvp(_div_rule, pointwise._div)
allow_jvp(bilinear_rule, linalg.mm, linalg.bmm, linalg.mv, linalg.dot)
allow_jvp(
    linear_rule,
    # (linear in their one differentiable input: the op applied to the tangent; for views, the
    # view of the tangent, as PyTorch's)
    pointwise.neg, pointwise.negative, losses._mul_scalar, losses._div_scalar,
    reduction._sum_all, reduction._sum_dim, reduction._mean_all, reduction._mean_dim,
    copying.clone, indexing._alias,
    shape._view, shape._reshape_alias, shape._unsafe_view, shape.transpose, shape.t,
    shape._permute, shape.unsqueeze, shape._squeeze_all, shape._squeeze_dim, shape._squeeze_dims,
    shape._expand, shape._select, shape._slice,
)
