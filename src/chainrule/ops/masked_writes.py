"""``masked_scatter``: the elements of a source, in order, written where a mask is True (the
inverse of ``masked_select``), with its in-place form.

Gradients (PyTorch's formulas): ``self`` gets the output's gradient zeroed where the mask is
True; ``source`` the gradient's masked elements in order, followed by zeros for the source
elements that were not used, in the source's shape.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._tensor import Tensor
from ._registry import declare_methods, op, tensor_method
from .indexing import _broadcast_shape, _scalar_name, _tensor_arg

__all__ = ["masked_scatter"]


@op("MaskedScatterBackward0", inputs=("self", "source"), tensor_params=("mask",))
def _masked_scatter(self, mask, source):
    shape = np.broadcast_shapes(self.shape, mask.shape)
    out = np.array(np.broadcast_to(self, shape), order="C", copy=True)
    where = np.broadcast_to(mask, shape)
    count = int(np.count_nonzero(where))
    out[where] = source.reshape(-1)[:count]
    return out


@_masked_scatter.derivative("self")
def _(ops, grad, mask):
    return ops.masked_fill(grad, mask, 0)


@_masked_scatter.derivative("source")
def _(ops, grad, mask, source_shape):
    picked = ops.masked_select(grad, mask)
    missing = math.prod(source_shape) - picked.shape[0]
    if missing > 0:
        picked = ops.constant_pad_nd(picked, (0, missing), 0)
    return ops.reshape(picked, tuple(source_shape))


def _check(input: Tensor, mask: Tensor, source: Tensor) -> None:
    m = mask._data
    if m.dtype == np.uint8:
        warnings.warn(
            "masked_scatter_ received a mask with dtype torch.uint8, this behavior is now "
            "deprecated,please use a mask with dtype torch.bool instead.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if m.dtype != np.bool_:
        raise RuntimeError(
            "masked_scatter_ only supports boolean masks, but got mask with dtype "
            f"{_scalar_name(m.dtype)}"
        )
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_scalar_name(input._data.dtype)} and {_scalar_name(source._data.dtype)}"
        )


def _check_count(shape: tuple[int, ...], mask: np.ndarray, source: np.ndarray) -> None:
    if int(np.count_nonzero(np.broadcast_to(mask, shape))) > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")


@tensor_method
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` (broadcast with ``mask``) whose elements where ``mask`` is True are
    the first elements of ``source``, in row-major order.

    Example:
        >>> import chainrule as torch
        >>> mask = torch.tensor([True, False, True])
        >>> torch.zeros(3).masked_scatter(mask, torch.tensor([1., 2., 3.]))
        tensor([1., 0., 2.])
    """
    mask = _tensor_arg("masked_scatter", "mask", 2, mask)
    source = _tensor_arg("masked_scatter", "source", 3, source)
    _check(input, mask, source)
    shape = _broadcast_shape(mask._data.shape, input._data.shape)
    _check_count(shape, mask._data, source._data)
    return _masked_scatter(input, mask, source)


def _check_expand(mask_shape: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """PyTorch's errors of expanding the mask to ``self``'s shape."""
    sizes = f"[{', '.join(map(str, shape))}]"
    have = f"[{', '.join(map(str, mask_shape))}]"
    if len(mask_shape) > len(shape):
        raise RuntimeError(
            f"expand(CPUBoolType{{{have}}}, size={sizes}): the number of sizes provided "
            f"({len(shape)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(mask_shape)})"
        )
    offset = len(shape) - len(mask_shape)
    for k, size in enumerate(mask_shape):
        if size != 1 and size != shape[offset + k]:
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[offset + k]}) must match the existing "
                f"size ({size}) at non-singleton dimension {offset + k}.  Target sizes: {sizes}.  "
                f"Tensor sizes: {have}"
            )


def _masked_scatter_in_place(self: Tensor, mask: Any, source: Any) -> Tensor:
    """``self.masked_scatter_(mask, source)``'s result: the mask broadcasts to ``self``'s shape
    (never the other way), checked as PyTorch's expand."""
    mask = _tensor_arg("masked_scatter_", "mask", 1, mask)
    source = _tensor_arg("masked_scatter_", "source", 2, source)
    _check(self, mask, source)
    shape = self._data.shape
    m = mask._data.shape
    _check_expand(m, shape)
    _check_count(shape, mask._data, source._data)
    return _masked_scatter(self, mask, source)


declare_methods("masked_scatter", inplace=_masked_scatter_in_place)
