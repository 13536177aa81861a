"""``aminmax``: the minimum and the maximum in one pass, one node (``AminmaxBackward0``).

Each output's gradient is shared equally among the elements equal to it, as ``amin``'s and
``amax``'s are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .. import _return_types as return_types
from .._tensor import Tensor, wrap, wrap_dim
from ._registry import op, tensor_method
from .reduction import unsqueeze_reduced

__all__ = ["aminmax"]


def _dims(ndim: int, dim: int | None) -> tuple[int, ...]:
    return tuple(range(ndim)) if dim is None else ((wrap_dim(dim, ndim),) if ndim else ())


@op("AminmaxBackward0", num_outputs=2, name="aminmax")
def _aminmax(self, dim, keepdim):
    dims = _dims(self.ndim, dim)
    if not dims:
        return self.copy(), self.copy()
    # (np.array: a full reduction's NumPy scalar as a 0-d array, contiguous)
    low = np.array(np.min(self, axis=dims, keepdims=keepdim))
    high = np.array(np.max(self, axis=dims, keepdims=keepdim))
    return low, high


def _shared(
    ops: Any, grad: Any, self: Any, extreme: np.ndarray, dims: tuple[int, ...], keepdim: bool
) -> Any:
    """``grad`` shared equally among the elements of ``self`` equal to ``extreme``."""
    grad = unsqueeze_reduced(ops, grad, dims, keepdim)
    equal = getattr(self, "_data", self) == extreme
    count = equal.sum(axis=dims, keepdims=True).astype(getattr(grad, "_data", grad).dtype)
    if type(grad) is not np.ndarray:  # (a Tensor: the mask and count are constants)
        equal, count = wrap(equal), wrap(count)
    return (grad / count) * equal


@_aminmax.derivative("self")
def _(ops, grads, self, dim, keepdim):
    grad_min, grad_max = grads
    data = getattr(self, "_data", self)
    dims = _dims(data.ndim, dim)  # (() for a 0-d tensor: its NaN gets a NaN, as PyTorch's)
    low = np.min(data, axis=dims, keepdims=True)
    high = np.max(data, axis=dims, keepdims=True)
    return _shared(ops, grad_min, self, low, dims, keepdim) + _shared(
        ops, grad_max, self, high, dims, keepdim
    )


@tensor_method
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:
    """The minimum and maximum over ``dim`` (all elements by default), as ``(min, max)``.

    Example:
        >>> import chainrule as torch
        >>> torch.aminmax(torch.tensor([3., 1., 2.]))
        torch.return_types.aminmax(
        min=tensor(1.),
        max=tensor(3.))
    """
    a = input._data
    if dim is None:
        if a.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                "no identity."
            )
    else:
        d = wrap_dim(dim, a.ndim)
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        if a.ndim == 0 and a.dtype.kind == "c":  # (PyTorch's 0-d path has its own words)
            name = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(a.dtype)]
            raise RuntimeError(f"aminmax not implemented for {name}")
    if a.dtype.kind == "c":
        raise _dtype.no_kernel("aminmax_cpu", a.dtype)
    low, high = _aminmax(input, dim, keepdim)
    return return_types.aminmax((low, high))
