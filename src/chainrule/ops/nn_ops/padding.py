"""``nn.functional.pad``: constant padding, and reflect/replicate/circular padding as gathers.

Constant padding is its own adjoint with the widths negated (a negative width crops), so its
derivative is the same op. Reflection and replication gather along each padded dimension with
an index vector; their adjoint scatters (adds) back with the same vectors, and the adjoint of that
is the gather again. Circular padding is concatenation of slices, as in PyTorch's decomposition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._strides import copy_preserving_layout, empty_in_memory_format, suggest_memory_format
from ..._tensor import Tensor
from .._registry import op, zero_derivative
from ..scalar_conversion import check_scalar_fits
from ..shape import cat, narrow
from ._common import size_list

__all__ = ["pad", "constant_pad_nd"]


def _pairs(pad: Sequence[int], ndim: int) -> list[tuple[int, int]]:
    """PyTorch's last-dimension-first ``(left, right, top, bottom ...)`` as per-dim pairs."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return pairs


@op("ConstantPadNdBackward0")
def constant_pad_nd(self, pad, value=0):
    """Pad (or, with negative widths, crop) the last ``len(pad) // 2`` dimensions."""
    pairs = _pairs(pad, self.ndim)
    shape = tuple(s + lo + hi for s, (lo, hi) in zip(self.shape, pairs, strict=True))
    if any(s < 0 for s in shape):
        raise RuntimeError(
            f"The input size {self.shape[-1]}, plus negative padding {pairs[-1][0]} and "
            f"{pairs[-1][1]} resulted in a negative output size, which is invalid. Check "
            f"dimension {self.ndim - 1} of your input."
        )
    if isinstance(value, int | float):  # (PyTorch's value is a double: -1 into uint8 refused)
        check_scalar_fits(float(value), self.dtype)
    src = []
    dst = []
    for s, (lo, hi) in zip(self.shape, pairs, strict=True):
        src.append(slice(max(-lo, 0), s - max(-hi, 0)))
        dst.append(slice(max(lo, 0), max(lo, 0) + max(s - max(-lo, 0) - max(-hi, 0), 0)))
    # PyTorch's layouts: a crop (no positive width) is a clone of the narrowed input, keeping
    # its memory order; a real pad is filled in the input's suggested memory format
    # (channels-last stays channels-last, anything else is row-major).
    if all(p <= 0 for p in pad):
        return copy_preserving_layout(self[tuple(src)])
    out = empty_in_memory_format(shape, self.dtype, suggest_memory_format(self))
    out.fill(value)
    out[tuple(dst)] = self[tuple(src)]
    return out


@constant_pad_nd.derivative("self")
def _(ops, grad, pad):
    return ops.constant_pad_nd(grad, tuple(-p for p in pad), 0)


def _gather_index(size: int, lo: int, hi: int, mode: str) -> np.ndarray:
    positions = np.arange(-lo, size + hi)
    if mode == "reflect":
        positions = np.abs(positions)
        positions = np.where(positions >= size, 2 * (size - 1) - positions, positions)
        return positions
    return np.clip(positions, 0, size - 1)


def _index_pad_forward(self, index):
    out = self
    ndim = self.ndim
    for k, idx in enumerate(index):
        out = np.take(out, idx, axis=ndim - len(index) + k)
    return out


def _index_pad_adjoint(grad, input_size, index):
    """Zeros of ``input_size`` with each element of ``grad`` added at its source, output
    element after output element in the gradient's dtype (PyTorch's padding backward
    kernels: ``grad_input[source] += grad_output`` in order)."""
    d = len(index)
    sizes = tuple(input_size[-d:])
    source = np.zeros((1,) * d, np.int64)
    for k, idx in enumerate(index):
        shape = [1] * d
        shape[k] = -1
        source = source * sizes[k] + idx.reshape(shape)
    planes = int(np.prod(input_size[:-d], dtype=np.int64))
    plane = int(np.prod(sizes, dtype=np.int64))
    out = np.zeros((planes, plane), grad.dtype)
    targets = np.arange(planes).reshape((planes,) + (1,) * d) * plane + source
    np.add.at(out.reshape(-1), targets.ravel(), np.ascontiguousarray(grad).ravel())
    return out.reshape(tuple(input_size))


def _declare_index_pad(node: str) -> tuple[Any, Any]:
    """The gather op named ``node`` and its scatter adjoint (each the other's derivative)."""

    def forward(self, index):
        """Pad by gathering ``self`` along its last dims at the index vectors ``index``."""
        return _index_pad_forward(self, index)

    name = node.replace("Backward0", "").lower()  # reflectionpad2d
    forward.__name__ = name
    # (gathering and scattering move elements: the formulas hold for complex values too)
    gather = op(node, half_native=True, complex_ok=True)(forward)

    def backward(grad, self, index):
        """The gather's adjoint: ``grad`` added back at the same index vectors. It takes
        ``self`` (reading only its shape), as PyTorch's ``reflection_pad2d_backward``: under
        ``create_graph`` the gradient is connected to it."""
        return _index_pad_adjoint(grad, self.shape, index)

    backward.__name__ = name + "_backward"
    scatter = op(node.replace("Backward0", "BackwardBackward0"), inputs=("grad", "self"),
                 half_native=True, complex_ok=True)(backward)
    scatter.derivative("self")(zero_derivative)

    # Both are in the derivative namespaces (PRIMITIVES below) under these names.
    # As PyTorch's node, it saves ``self`` (its backward reads only the shape).
    @gather.derivative("self")
    def _(ops, grad, self, index):
        return getattr(ops, name + "_backward")(grad, self, index)

    @scatter.derivative("grad")
    def _(ops, grad, index):
        return getattr(ops, name)(grad, index)

    return gather, scatter


_INDEX_PADS = {
    (mode, d): _declare_index_pad(f"{name}Pad{d}DBackward0")
    for mode, name in (("reflect", "Reflection"), ("replicate", "Replication"))
    for d in (1, 2, 3)
}


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad the last dimensions: ``pad = (left, right[, top, bottom[, front, back]])``.

    Example:
        >>> import chainrule as torch
        >>> torch.nn.functional.pad(torch.ones(2), (1, 2))
        tensor([0., 1., 1., 0., 0.])
    """
    pad = tuple(int(p) for p in pad)
    ndim = input._data.ndim
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {ndim}"
        )
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    d = len(pad) // 2
    if d not in (1, 2, 3) or ndim not in (d + 1, d + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    pairs = _pairs(pad, ndim)[ndim - d:]
    sizes = input._data.shape[ndim - d:]
    if mode == "circular":
        return _circular(input, pairs)
    for axis, ((lo, hi), size) in enumerate(zip(pairs, sizes, strict=True)):
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {ndim - d + axis} of "
                f"input {size_list(input._data.shape)}"
            )
    index = tuple(_gather_index(size, lo, hi, mode)
                  for (lo, hi), size in zip(pairs, sizes, strict=True))
    gather, _ = _INDEX_PADS[(mode, d)]
    return gather(input, index)


def _circular(input: Tensor, pairs: list[tuple[int, int]]) -> Tensor:
    ndim = input._data.ndim
    out = input
    for k, (lo, hi) in enumerate(pairs):
        dim = ndim - len(pairs) + k
        size = out._data.shape[dim]
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        parts = []
        if lo > 0:
            parts.append(narrow(out, dim, size - lo, lo))
        parts.append(out)
        if hi > 0:
            parts.append(narrow(out, dim, 0, hi))
        if len(parts) > 1:
            out = cat(parts, dim)
    return out


PRIMITIVES: dict[str, Any] = {"constant_pad_nd": constant_pad_nd}
for _gather, _scatter in _INDEX_PADS.values():
    PRIMITIVES[_gather.__name__] = _gather
    PRIMITIVES[_scatter.__name__] = _scatter
