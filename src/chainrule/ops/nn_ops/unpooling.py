"""Max unpooling: the values of a max pooling put back at the positions its indices name,
zeros elsewhere (``max_unpool1d/2d/3d``).

The 2-D and 3-D ops are PyTorch's ``MaxUnpool2DBackward0`` / ``MaxUnpool3DBackward0`` (they
save the indices); the 1-D function runs the 2-D op on inputs unsqueezed at the end, as
PyTorch's does. The gradient reads the output's gradient at the indices (a gather), composed of
recorded ops, so it can be differentiated again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._tensor import Tensor
from .._registry import op
from ..shape import squeeze, unsqueeze
from ._common import ntuple, scalar_name, size_list

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]

_KINDS_OK = "fV"  # floating point (ml_dtypes' bfloat16 is kind "V"); complex and integers not


def _unpool_forward(
    self: np.ndarray, indices: np.ndarray, output_size: Sequence[int], nd: int
) -> np.ndarray:
    """Zeros of ``(*self.shape[:-nd], *output_size)`` with each plane's values written at its
    flat spatial indices (the last write wins where indices repeat, as PyTorch's loop)."""
    lead = self.shape[:-nd]
    planes = math.prod(lead)
    plane = math.prod(output_size)
    out = np.zeros((planes, plane), self.dtype)
    if planes and plane and self.size:
        idx = np.ascontiguousarray(indices).reshape(planes, -1)
        bad = (idx < 0) | (idx >= plane)
        if bad.any():
            sizes = "x".join(str(s) for s in output_size)
            raise RuntimeError(
                f"Found an invalid max index: {int(idx[bad][0])} "
                f"(output volumes are of size {sizes})"
            )
        np.put_along_axis(out, idx, np.ascontiguousarray(self).reshape(planes, -1), axis=1)
    return out.reshape(tuple(lead) + tuple(output_size))


def _unpool_backward(ops: Any, grad: Any, indices: Any, nd: int) -> Any:
    """The output gradient at the indices: ``grad.flatten(-nd).gather(-1, indices.flatten(-nd))``
    viewed as the indices (PyTorch's ``max_pool_double_backward``)."""
    lead = tuple(indices.shape[:-nd])
    flat_grad = ops.reshape(grad, lead + (math.prod(grad.shape[-nd:]),))
    flat_indices = ops.reshape(indices, lead + (math.prod(indices.shape[-nd:]),))
    picked = ops.gather_along(flat_grad, -1, flat_indices)
    return ops.reshape(picked, tuple(indices.shape))


@op("MaxUnpool2DBackward0", tensor_params=("indices",))
def _max_unpool2d(self, indices, output_size):
    """``self``'s values at the flat indices of ``output_size`` planes, zeros elsewhere."""
    return _unpool_forward(self, indices, output_size, 2)


@_max_unpool2d.derivative("self")
def _(ops, grad, indices):
    return _unpool_backward(ops, grad, indices, 2)


@op("MaxUnpool3DBackward0", tensor_params=("indices",))
def _max_unpool3d(self, indices, output_size):
    """``self``'s values at the flat indices of ``output_size`` volumes, zeros elsewhere."""
    return _unpool_forward(self, indices, output_size, 3)


@_max_unpool3d.derivative("self")
def _(ops, grad, indices):
    return _unpool_backward(ops, grad, indices, 3)


def _output_size(
    input: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_size: Any,
) -> list[int]:
    """PyTorch's ``_unpool_output_size``: ``(in - 1) * stride + kernel - 2 * padding`` per
    dimension, or the given size (its last ``nd`` of ``nd + 2``) checked against that."""
    nd = len(kernel)
    shape = input.shape
    default = [(shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        size = default
    else:
        size = [int(s) for s in output_size]
        if len(size) == nd + 2:
            size = size[2:]
        if len(size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
                f"has a length of '{len(size)}'"
            )
        for d in range(nd):
            low = default[d] - stride[d]
            high = default[d] + stride[d]
            if not low < size[d] < high:
                raise ValueError(
                    f'invalid output_size "{_as_given(output_size)}" (dim {d} must be between '
                    f"{low} and {high})"
                )
    for d in range(nd):
        if size[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, "
                f"but got output_size[{d}]={size[d]}"
            )
    return size


def _as_given(output_size: Any) -> str:
    # PyTorch formats the user's object: a tuple prints as "(9, 9)", a list as "[9, 9]".
    if isinstance(output_size, tuple | list):
        return str(type(output_size)(int(s) for s in output_size))
    return str(output_size)


def _check(input: Tensor, indices: Tensor, nd: int, stride: Sequence[int]) -> None:
    """The checks of PyTorch's ``max_unpooling{nd}d_forward_out_cpu``, in its order."""
    x = input._data
    idx = indices._data
    if idx.dtype != np.int64:
        got = "" if nd == 3 else f" but got: {scalar_name(idx.dtype)}"
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {x.ndim} dimensions."
        )
    if idx.shape != x.shape:
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({size_list(x.shape)}) but got indices tensor with shape: {size_list(idx.shape)}"
        )
    for d in range(x.ndim - nd - 1, x.ndim):
        if x.shape[d] == 0:
            raise RuntimeError(
                f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size for "
                f"non-batch dimensions, but got {size_list(x.shape)} with dimension {d} being "
                "empty."
            )
    if nd == 3 and any(s <= 0 for s in stride):
        raise RuntimeError(
            f"strides should be greater than zero, but got stride: {size_list(stride)}"
        )
    if x.dtype.kind not in _KINDS_OK:
        raise NotImplementedError(
            f"\"max_unpool{nd}d\" not implemented for '{scalar_name(x.dtype)}'"
        )


def _geometry(
    nd: int, kernel_size: Any, stride: Any, padding: Any
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    kernel = ntuple(kernel_size, nd, "kernel_size")
    stride_t = kernel if stride is None else ntuple(stride, nd, "stride")
    return kernel, stride_t, ntuple(padding, nd, "padding")


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of ``max_pool2d``: ``input``'s values at ``indices`` (as
    ``max_pool2d(..., return_indices=True)`` gives them), zeros elsewhere.

    Example:
        >>> import chainrule as torch
        >>> import chainrule.nn.functional as F
        >>> out, idx = F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> F.max_unpool2d(out, idx, 2).shape
        chainrule.Size([1, 1, 4, 4])
    """
    kernel, stride_t, pad = _geometry(2, kernel_size, stride, padding)
    size = _output_size(input, kernel, stride_t, pad, output_size)
    _check(input, indices, 2, stride_t)
    return _max_unpool2d(input, indices, tuple(size))


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of ``max_pool3d`` (see :func:`max_unpool2d`)."""
    kernel, stride_t, pad = _geometry(3, kernel_size, stride, padding)
    size = _output_size(input, kernel, stride_t, pad, output_size)
    _check(input, indices, 3, stride_t)
    return _max_unpool3d(input, indices, tuple(size))


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """The partial inverse of ``max_pool1d``: the 2-D op on ``(..., L, 1)``, squeezed back
    (``SqueezeBackward1`` over ``MaxUnpool2DBackward0``, as PyTorch)."""
    kernel, stride_t, pad = _geometry(1, kernel_size, stride, padding)
    size = _output_size(input, kernel, stride_t, pad, output_size)
    x = unsqueeze(input, -1)
    idx = unsqueeze(indices, -1)
    _check(x, idx, 2, stride_t + (1,))
    return squeeze(_max_unpool2d(x, idx, tuple(size) + (1,)), -1)


PRIMITIVES: dict[str, Any] = {}
