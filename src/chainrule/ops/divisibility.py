"""``gcd`` and ``lcm`` of integer tensors, element-wise with broadcasting (no gradients: the
results are integers), with their in-place forms."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._dispatch import ARITH
from ._registry import declare_methods, op
from .inplace import check_cast, check_shape

__all__ = ["gcd", "lcm"]


def _refuse_non_integers(kernel: str, *values: np.ndarray) -> None:
    dtype = np.result_type(*values)
    if dtype.kind not in "iu":
        raise _dtype.no_kernel(kernel, dtype)


@op(
    "gcd",
    inputs=("self", "other"),
    promote=ARITH,
    differentiable=False,
    tensor_only=("self", "other"),
    elementwise=True,
    method=True,
)
def gcd(self, other):
    """The greatest common divisor of ``self`` and ``other`` (non-negative; ``gcd(0, 0)`` is
    0).

    Example:
        >>> import chainrule as torch
        >>> torch.gcd(torch.tensor([12, -18]), torch.tensor([8, 12]))
        tensor([4, 6])
    """
    _refuse_non_integers("gcd_cpu", self, other)
    return np.asarray(np.gcd(self, other))


@op(
    "lcm",
    inputs=("self", "other"),
    promote=ARITH,
    differentiable=False,
    tensor_only=("self", "other"),
    elementwise=True,
    method=True,
)
def lcm(self, other):
    """The least common multiple of ``self`` and ``other`` (non-negative; 0 if either is 0),
    wrapping around on overflow as PyTorch's integer arithmetic does.

    Example:
        >>> import chainrule as torch
        >>> torch.lcm(torch.tensor([4, 6]), torch.tensor([6, 10]))
        tensor([12, 30])
    """
    _refuse_non_integers("lcm_cpu", self, other)
    a, b = np.broadcast_arrays(*np.asarray(np.broadcast_arrays(self, other)))
    divisor = np.gcd(a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = np.where(divisor == 0, 0, a // np.where(divisor == 0, 1, divisor))
        return np.asarray(np.abs(quotient * b)).astype(np.result_type(a, b), copy=False)


def _in_place(name: str, public: Any) -> Any:
    """``self.<name>_(other)``'s result, after PyTorch's checks of the in-place form: ``other``
    a tensor, then the result's shape and dtype against ``self`` (an integer tensor refuses a
    float ``other`` with the cast error, before the kernel's error for floats)."""

    def in_place(self: Tensor, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            raise TypeError(
                f"{name}_(): argument 'other' (position 1) must be Tensor, not "
                f"{type(other).__name__}"
            )
        data = self._data
        try:
            shape = np.broadcast_shapes(data.shape, other._data.shape)
        except ValueError:
            pass  # the op raises PyTorch's error for shapes that do not broadcast
        else:
            check_shape(data, shape)
            check_cast(data, _dtype.result_type(self, other).np)
        return public(self, other)

    in_place.__name__ = name
    return in_place


declare_methods("gcd", inplace=_in_place("gcd", gcd))
declare_methods("lcm", inplace=_in_place("lcm", lcm))
