"""The copy variants of view ops (``t_copy``, ``transpose_copy``, ``permute_copy`` ...): the
view's values in new, contiguous memory, recorded as PyTorch records them (the view's node name
with ``_copy``: ``TBackward0_copy`` ...) with the view's derivatives. Each copy op is made from
the view op by :func:`_copy_of`, so forward and gradient formulas are the view's own.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .._dtype import dtype
from .._tensor import Tensor, wrap_dim
from ..autograd.grad_mode import is_grad_enabled
from ._opnode import make_node_class
from ._registry import KEEP, make_public, op, tensor_method
from .complex_ops import _view_as_real, view_as_complex
from .conjugate import is_conj_tensor
from .copying import clone, view_dtype
from .indexing import _alias
from .pointwise import _not_implemented_node
from .rearranging import _unfold
from .shape import (
    _as_strided,
    _as_strided_arguments,
    _expand,
    _index_arg,
    _permute,
    _select,
    _slice,
    _split_many,
    _split_one,
    _split_with_sizes_many,
    _split_with_sizes_one,
    _squeeze_all,
    _squeeze_dim,
    _squeeze_dims,
    _unbind_many,
    _unbind_one,
    _unsafe_view,
    diagonal,
    narrow,
    size_args,
    split,
    split_with_sizes,
    squeeze_with,
    t,
    transpose,
    unbind,
    unsqueeze,
)

__all__ = [
    "alias_copy",
    "t_copy",
    "transpose_copy",
    "permute_copy",
    "unsqueeze_copy",
    "select_copy",
    "diagonal_copy",
    "expand_copy",
    "view_copy",
    "squeeze_copy",
    "slice_copy",
    "narrow_copy",
    "unfold_copy",
    "split_copy",
    "split_with_sizes_copy",
    "unbind_copy",
    "view_as_real_copy",
    "view_as_complex_copy",
    "as_strided_copy",
    "detach_copy",
]


def _copy_of(view_public: Any, node_name: str, name: str) -> Any:
    """A public op computing ``view_public``'s op into new contiguous memory, recorded as
    ``node_name`` with the same derivatives (what the view's node saves, this one saves)."""
    source = view_public.op
    opdef = copy.copy(source)
    view_forward = source.forward

    def forward(*args: Any) -> Any:
        out = view_forward(*args)
        if isinstance(out, list | tuple):  # (split, unbind: several pieces)
            return [np.array(piece, order="C", copy=True) for piece in out]
        return np.array(out, order="C", copy=True)

    opdef.forward = forward
    opdef.name = name
    opdef.node_name = node_name
    opdef.view = False
    opdef.multi_view = False
    opdef.derivatives = list(source.derivatives)
    opdef.publics = {}
    opdef._plans = {}
    opdef.recorders = {}
    opdef.node_cls = make_node_class(node_name, opdef, source.multi_output_node)
    public = make_public(opdef)
    public.__name__ = public.__qualname__ = name
    return public


_alias_copy = _copy_of(_alias, "AliasBackward0_copy", "alias_copy")
_t_copy = _copy_of(t, "TBackward0_copy", "t_copy")
_transpose_copy = _copy_of(transpose, "TransposeBackward0_copy", "transpose_copy")
_permute_copy = _copy_of(_permute, "PermuteBackward0_copy", "permute_copy")
_unsqueeze_copy = _copy_of(unsqueeze, "UnsqueezeBackward0_copy", "unsqueeze_copy")
_select_copy = _copy_of(_select, "SelectBackward0_copy", "select_copy")
_diagonal_copy = _copy_of(diagonal, "DiagonalBackward0_copy", "diagonal_copy")

_expand_copy = _copy_of(_expand, "ExpandBackward0_copy", "expand_copy")
# (view_copy copies whatever the layout, as PyTorch's: a reshape into new memory)
_view_copy = _copy_of(_unsafe_view, "ViewBackward0_copy", "view_copy")
_squeeze_copies = (
    _copy_of(_squeeze_all, "SqueezeBackward0_copy", "squeeze_copy"),
    _copy_of(_squeeze_dim, "SqueezeBackward1_copy", "squeeze_copy"),
    _copy_of(_squeeze_dims, "SqueezeBackward2_copy", "squeeze_copy"),
)
_slice_copy = _copy_of(_slice, "SliceBackward0_copy", "slice_copy")
_narrow_copy = _copy_of(_slice, "NarrowCopyBackward0", "narrow_copy")
_unfold_copy = _copy_of(_unfold, "UnfoldBackward0_copy", "unfold_copy")

_split_copies = (
    _copy_of(_split_one, "SplitBackward0_copy", "split_copy"),
    _copy_of(_split_many, "SplitBackward0_copy", "split_copy"),
)
_split_with_sizes_copies = (
    _copy_of(_split_with_sizes_one, "SplitWithSizesBackward0_copy", "split_with_sizes_copy"),
    _copy_of(_split_with_sizes_many, "SplitWithSizesBackward0_copy", "split_with_sizes_copy"),
)
_unbind_copies = (
    _copy_of(_unbind_one, "UnbindBackward0_copy", "unbind_copy"),
    _copy_of(_unbind_many, "UnbindBackward0_copy", "unbind_copy"),
)

_view_as_real_copy = _copy_of(_view_as_real, "ViewAsRealBackward0_copy", "view_as_real_copy")
_as_strided_copy = _copy_of(_as_strided, "AsStridedBackward0_copy", "as_strided_copy")


@op("NotImplemented", promote=KEEP)
def _detach_copy(self):
    # (PyTorch has no derivative for detach_copy: its result requires grad, and backward
    # through it raises "derivative for aten::detach_copy is not implemented")
    return np.array(self, order="C", copy=True)


_not_implemented_node(_detach_copy, "detach_copy")

#: The copy ops' nodes (a JVP rule each: the op applied to the tangent, as the view's).
COPY_NODES = (
    "AliasBackward0_copy",
    "TBackward0_copy",
    "TransposeBackward0_copy",
    "PermuteBackward0_copy",
    "UnsqueezeBackward0_copy",
    "SelectBackward0_copy",
    "ExpandBackward0_copy",
    "ViewBackward0_copy",
    "SqueezeBackward0_copy",
    "SqueezeBackward1_copy",
    "SqueezeBackward2_copy",
    "SliceBackward0_copy",
    "NarrowCopyBackward0",
    "UnfoldBackward0_copy",
    "SplitBackward0_copy",
    "SplitWithSizesBackward0_copy",
    "UnbindBackward0_copy",
    "ViewAsRealBackward0_copy",
    "AsStridedBackward0_copy",
)


def alias_copy(input: Tensor) -> Tensor:
    """A contiguous copy of ``input`` (``AliasBackward0_copy``)."""
    return _alias_copy(input)


def t_copy(input: Tensor) -> Tensor:
    """``input.t()`` in new, contiguous memory."""
    return _t_copy(input)


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``input.transpose(dim0, dim1)`` in new, contiguous memory."""
    return _transpose_copy(input, dim0, dim1)


def permute_copy(input: Tensor, dims: Any) -> Tensor:
    """``input.permute(dims)`` in new, contiguous memory."""
    return _permute_copy(input, size_args((dims,)))


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """``input.unsqueeze(dim)`` in new, contiguous memory."""
    return _unsqueeze_copy(input, dim)


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:
    """``input.select(dim, index)`` in new, contiguous memory."""
    ndim = input._data.ndim
    if ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return _select_copy(input, wrap_dim(dim, ndim), _index_arg(index))


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input.diagonal(offset, dim1, dim2)`` in new, contiguous memory."""
    return _diagonal_copy(input, offset, dim1, dim2)


def expand_copy(input: Tensor, size: Any, *, implicit: bool = False) -> Tensor:
    """``input.expand(size)`` in new, contiguous memory."""
    return _expand_copy(input, size_args((size,)))


def view_copy(input: Tensor, size: Any) -> Tensor:
    """``input`` with the shape ``size`` (``-1`` inferred) in new, contiguous memory; with a
    dtype, its bytes read as that dtype (without history: the dtype views PyTorch's sweep
    meets change the dtype's kind)."""
    if isinstance(size, dtype):
        return clone(view_dtype(input.detach(), size))
    return _view_copy(input, size_args((size,)))


def squeeze_copy(input: Tensor, dim: Any = None) -> Tensor:
    """``input.squeeze(dim)`` in new, contiguous memory."""
    return squeeze_with(_squeeze_copies, input, dim)


def slice_copy(
    input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1
) -> Tensor:
    """``input``'s elements ``start:end:step`` along ``dim`` in new, contiguous memory."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, input._data.ndim)
    return _slice_copy(input, d, start, end, step)


@tensor_method
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``input.narrow(dim, start, length)`` in new, contiguous memory
    (``NarrowCopyBackward0``)."""
    narrow(input.detach(), dim, start, length)  # (narrow's checks and errors)
    d = wrap_dim(dim, input._data.ndim)
    begin = _index_arg(start)
    if begin < 0:
        begin += input._data.shape[d]
    return _narrow_copy(input, d, begin, begin + _index_arg(length), 1)


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``input.unfold(dimension, size, step)`` in new, contiguous memory."""
    return _unfold_copy(input, dimension, size, step)


def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple:
    """``input.split(split_size, dim)``, each piece in new, contiguous memory."""
    pieces = split(input.detach(), split_size, dim)  # (split's checks and errors)
    if len(pieces) == 1:  # (the one-piece twin: see ``_split_one`` in ops/shape.py)
        return (_split_copies[0](input),)
    d = wrap_dim(dim, input._data.ndim)
    return tuple(_split_copies[1](input, _index_arg(split_size), d))


def split_with_sizes_copy(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """``input.split_with_sizes(split_sizes, dim)``, each piece in new, contiguous memory."""
    pieces = split_with_sizes(input.detach(), split_sizes, dim)
    if len(pieces) == 1:
        return (_split_with_sizes_copies[0](input),)
    d = wrap_dim(dim, input._data.ndim)
    sizes = tuple(p._data.shape[d] for p in pieces)
    return tuple(_split_with_sizes_copies[1](input, sizes, d))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple:
    """``input.unbind(dim)``, each slice in new, contiguous memory."""
    pieces = unbind(input.detach(), dim)
    d = wrap_dim(dim, input._data.ndim)
    if len(pieces) == 1:
        return (_unbind_copies[0](input, d),)
    return tuple(_unbind_copies[1](input, d))


def view_as_real_copy(input: Tensor) -> Tensor:
    """``torch.view_as_real(input)`` in new, contiguous memory (``ViewAsRealBackward0_copy``)."""
    if is_conj_tensor(input):
        return _view_as_real_copy(clone(input))
    return _view_as_real_copy(input)


def view_as_complex_copy(input: Tensor) -> Tensor:
    """``torch.view_as_complex(input)`` in new memory; like PyTorch, it refuses to record a
    complex result for an input that requires grad."""
    if input.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "view_as_complex_copy does not support automatic differentiation for outputs with "
            "complex dtype."
        )
    return clone(view_as_complex(input))


def as_strided_copy(
    input: Tensor, size: Any, stride: Any, storage_offset: int | None = None
) -> Tensor:
    """``input.as_strided(size, stride, storage_offset)`` in new, contiguous memory
    (``AsStridedBackward0_copy``)."""
    return _as_strided_copy(input, *_as_strided_arguments(input, size, stride, storage_offset))


def detach_copy(input: Tensor) -> Tensor:
    """``input.detach()`` in new, contiguous memory. As PyTorch's, the result of an input that
    requires grad is recorded by a ``NotImplemented`` node: backward through it raises."""
    return _detach_copy(input)
