"""``torch.fill``: a tensor of ``input``'s shape, dtype and layout holding one value (a number
or a 0-d tensor), recorded as PyTorch records it (``FillBackward0`` for a number,
``FillBackward1`` for a tensor, whose gradient is the sum of the output's; ``input`` gets
zeros). The in-place ``Tensor.fill_`` is in ops/inplace.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._strides import empty_like_preserving
from .._tensor import Tensor
from ._registry import KEEP, op, zero_derivative
from .scalar_conversion import fill_value_for

__all__ = ["fill"]


def _filled(self: np.ndarray, value: Any) -> np.ndarray:
    out = empty_like_preserving(self)  # (PyTorch's empty_like: a dense input's layout)
    out[...] = value
    return out


@op("FillBackward0", promote=KEEP, complex_ok=True, name="fill")
def _fill_number(self, value):
    return _filled(self, fill_value_for(value, self.dtype, self.size))


_fill_number.derivative("self")(zero_derivative)


@op("FillBackward1", inputs=("self", "value"), promote=KEEP, complex_ok=True, name="fill")
def _fill_with_tensor(self, value):
    return _filled(self, value.astype(self.dtype))


_fill_with_tensor.derivative("self")(zero_derivative)


@_fill_with_tensor.derivative("value")
def _(ops, grad):
    return ops.sum(grad, tuple(range(len(grad.shape))), False)


def fill(input: Tensor, value: Any) -> Tensor:
    """A new tensor like ``input`` (shape, dtype, memory layout) filled with ``value``.

    Example:
        >>> import chainrule as torch
        >>> torch.fill(torch.zeros(2, dtype=torch.long), 2.7)
        tensor([2, 2])
    """
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        return _fill_with_tensor(input, value)
    if not isinstance(value, bool | int | float | complex):
        kind = type(value).__name__
        raise TypeError(
            f"fill() received an invalid combination of arguments - got (Tensor, {kind}), but "
            "expected one of:\n"
            " * (Tensor input, Tensor value)\n"
            f"      didn't match because some of the arguments have invalid types: (Tensor, "
            f"!{kind}!)\n"
            " * (Tensor input, Number value)\n"
            f"      didn't match because some of the arguments have invalid types: (Tensor, "
            f"!{kind}!)\n"
        )
    return _fill_number(input, value)
