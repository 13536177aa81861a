"""``torch.fill``: a tensor of ``input``'s shape, dtype and layout holding one value (a number
or a 0-d tensor), recorded as PyTorch records it (``FillBackward0`` for a number,
``FillBackward1`` for a tensor, whose gradient is the sum of the output's; ``input`` gets
zeros). The in-place ``Tensor.fill_`` is in ops/inplace.py; ``Tensor.fill_diagonal_`` fills
the diagonal view it makes with it, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._strides import empty_like_preserving
from .._tensor import Tensor
from ._registry import KEEP, declare_methods, op, zero_derivative
from .scalar_conversion import fill_value_for

__all__ = ["fill"]  # (fill_diagonal_ is a Tensor method only, as in PyTorch)


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


_MISSING: Any = object()


def fill_diagonal_(self: Tensor, fill_value: Any = _MISSING, wrap: bool = False) -> Tensor:
    """Fill the main diagonal of ``self`` (at least 2-D; every dimension of one length past
    2-D) with ``fill_value``, in place; with ``wrap``, a 2-D tensor taller than wide starts
    its diagonal again every ``width + 1`` rows. Recorded as PyTorch's: ``fill_`` of an
    ``as_strided`` view of the diagonal (the base's ``CopySlices``).

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(2, 2).fill_diagonal_(5.0)
        tensor([[5., 0.],
                [0., 5.]])
    """
    from .shape import as_strided

    if fill_value is _MISSING:
        raise TypeError('fill_diagonal_() missing 1 required positional arguments: "fill_value"')
    if not isinstance(fill_value, bool | int | float | complex | Tensor | np.number) or (
        isinstance(fill_value, Tensor) and fill_value.dim()
    ):
        raise TypeError(
            "fill_diagonal_(): argument 'fill_value' (position 1) must be Number, not "
            f"{type(fill_value).__name__}"
        )
    shape = self.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = shape[0], shape[1]
    if len(shape) > 2 and any(size != height for size in shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride = sum(self.stride())
    offset = self.storage_offset()
    size = min(height, width)
    as_strided(self, (size,), (stride,), offset).fill_(fill_value)
    if wrap and len(shape) == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        wrap_offset = offset + self.stride(0) * (width + 1)
        as_strided(self, (wrap_size,), (stride,), wrap_offset).fill_(fill_value)
    return self


declare_methods("fill_diagonal_", method=fill_diagonal_)
