"""Copies and conversions: clone, contiguous, ``to``/``type`` casts, and the gradient copy."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._dtype import to_dtype
from .._meta import NO_DATA_MESSAGE, MetaArray, meta_like
from .._size import check_available, targets_meta
from .._size import device as Device
from .._strides import (
    argument_type_name,
    check_memory_format,
    contiguous_format,
    copy_in_memory_format,
    copy_preserving_layout,
    empty_with_strides_of,
    is_contiguous_as,
    is_non_overlapping_and_dense,
    preserve_format,
    suggest_memory_format,
)
from .._strides import memory_format as MemoryFormat
from .._tensor import _SCALAR_NAMES, Tensor, wrap
from ._registry import op, tensor_method

__all__ = [
    "clone", "contiguous", "to", "float_", "double", "half", "bfloat16", "long", "int_", "short",
    "char", "byte", "bool_", "cpu", "copy_for_grad", "type_as", "view_dtype",
]


@op("CloneBackward0", method=True, half_native=True)
def clone(self, *, memory_format=None):
    """A copy that stays in the graph (its gradient flows back to ``self``).

    As PyTorch's default ``preserve_format``, the copy keeps ``self``'s memory order (a
    transposed tensor clones to a transposed one); ``memory_format=torch.contiguous_format``
    gives a row-major copy, ``torch.channels_last`` (4-d) and ``channels_last_3d`` (5-d) one
    with the channels innermost.
    """
    check_memory_format("clone", memory_format)
    if memory_format is None or memory_format == preserve_format:
        return copy_preserving_layout(self)
    if memory_format == contiguous_format:
        return self.copy()
    return copy_in_memory_format(self, memory_format)


@clone.derivative("self")
def _(ops, grad):
    return grad


@tensor_method
def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` if its memory is laid out as ``memory_format`` asks (row-major and dense by
    default, channels innermost for ``torch.channels_last``), otherwise such a copy
    (``CloneBackward0``)."""
    check_memory_format("contiguous", memory_format)
    if memory_format is None or memory_format == contiguous_format:
        if self._data.flags.c_contiguous:
            return self
        return clone(self, memory_format=contiguous_format)
    if memory_format == preserve_format:
        if self._data.flags.c_contiguous:
            return self
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if is_contiguous_as(self._data, memory_format):
        return self
    return clone(self, memory_format=memory_format)


@op("ToCopyBackward0", half_native=True)
def _to_copy(self, dtype, memory_format=None):
    if memory_format is None or memory_format == preserve_format:
        return copy_preserving_layout(self, dtype.np)
    return copy_in_memory_format(self, memory_format, dtype.np)


@_to_copy.derivative("self")
def _(ops, grad, self_shape):
    # The engine casts the gradient back to the input's dtype.
    return grad


def copy_for_grad(grad: Tensor, variable: np.ndarray) -> Tensor:
    """The copy of a recorded gradient (``create_graph=True``) that becomes a leaf's first
    ``.grad``, made as PyTorch's AccumulateGrad makes it (``clone_obey_contract``): for a leaf
    ``variable`` that is non-overlapping and dense, an empty tensor with its strides written by
    ``copy_`` (``CopyBackwards``); for another (expanded, step-sliced), a row-major clone
    (``CloneBackward0``)."""
    if not is_non_overlapping_and_dense(variable):
        return clone(grad, memory_format=contiguous_format)
    from .inplace import copy_

    target = np.empty(variable.shape, variable.dtype)
    if target.strides != variable.strides:
        target = empty_with_strides_of(variable)
    return copy_(wrap(target), grad)


_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool "
    "copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format "
    "memory_format = None)\n"
)


def _to_arguments_error(args: tuple, kwargs: dict[str, Any]) -> str:
    """PyTorch's invalid-combination message of ``to()``."""
    positional = [argument_type_name(a) for a in args]
    # (PyTorch's parser lists the keywords last given first)
    named = [f"{k}={argument_type_name(v)}" for k, v in reversed(kwargs.items())]
    got = ", ".join(positional + named) if positional else ", ".join(named) + ", "
    return (
        f"to() received an invalid combination of arguments - got ({got}), but expected one "
        f"of:\n{_TO_SIGNATURES}"
    )


def _parse_to(args: tuple, kwargs: dict[str, Any]) -> tuple[Any, bool, Any, Any]:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)`` -> (dtype, copy,
    memory_format)."""
    given = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if memory_format is not None and not isinstance(memory_format, MemoryFormat):
        raise TypeError(_to_arguments_error(args, given))
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif isinstance(arg, _dtype.dtype) or arg in (float, int, bool):
            dtype = to_dtype(arg)
        elif isinstance(arg, bool):  # to(dtype, non_blocking, copy): the copy flag
            copy = copy or arg
        elif isinstance(arg, str | Device | int):
            device = arg
        elif arg is None:
            continue
        else:
            raise TypeError(
                f"to() received an invalid combination of arguments - got ({type(arg).__name__})"
            )
    check_available(device)
    return dtype, copy, memory_format, device


@tensor_method
def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Convert dtype, device (the CPU, or the meta device: shape and dtype only) or memory
    format; returns ``self`` if nothing changes. As PyTorch, a memory format changes nothing
    when it is the one ``self`` suggests (``suggest_memory_format``), even where ``self`` is
    not dense in it."""
    dtype, copy, memory_format, device = _parse_to(args, dict(kwargs))
    if device is not None:
        to_meta = targets_meta(device)
        if to_meta != (type(self._data) is MetaArray):
            if not to_meta:
                raise NotImplementedError(NO_DATA_MESSAGE)
            # (to the meta device: a copy, recorded as PyTorch's ToCopyBackward0, of no data)
            result = _to_copy(self, dtype or self.dtype, memory_format)
            result._data = meta_like(result._data)
            return result
    if dtype is None or self._data.dtype == dtype.np:
        keeps_format = memory_format is None or memory_format == preserve_format or (
            suggest_memory_format(self._data) == memory_format)
        if not copy and keeps_format:
            return self
        # A forced copy is a ToCopyBackward0 node in PyTorch too, not a clone.
        return _to_copy(self, self.dtype, memory_format)
    return _to_copy(self, dtype, memory_format)


def _cast(d: _dtype.dtype, name: str):
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, d, memory_format=memory_format)

    cast.__name__ = name
    cast.__doc__ = f"``self.to({d!r})``."
    return tensor_method(cast)  # (Tensor.float ...)


float_ = _cast(_dtype.float32, "float")
double = _cast(_dtype.float64, "double")
half = _cast(_dtype.float16, "half")
bfloat16 = _cast(_dtype.bfloat16, "bfloat16")
long = _cast(_dtype.int64, "long")
int_ = _cast(_dtype.int32, "int")
short = _cast(_dtype.int16, "short")
char = _cast(_dtype.int8, "char")
byte = _cast(_dtype.uint8, "byte")
bool_ = _cast(_dtype.bool, "bool")
# (Tensor.cfloat/cdouble; named apart from the package's dtypes chainrule.cfloat/cdouble)
cfloat_method = _cast(_dtype.complex64, "cfloat")
cdouble_method = _cast(_dtype.complex128, "cdouble")


@tensor_method
def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` (chainrule tensors live on the CPU; a meta tensor has no data to copy), or a
    copy laid out in ``memory_format`` when it asks for another layout (``to``'s rule)."""
    check_memory_format("cpu", memory_format)
    if type(self._data) is MetaArray:
        raise NotImplementedError(NO_DATA_MESSAGE)
    if memory_format is None or memory_format == preserve_format:
        return self
    return to(self, memory_format=memory_format)


@tensor_method
def cuda(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Not available: chainrule runs on the CPU only."""
    raise AssertionError("Torch not compiled with CUDA enabled")


@tensor_method
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``self.to(other.dtype)``."""
    return to(self, other.dtype)


def view_dtype(self: Tensor, dtype: Any) -> Tensor:
    """Reinterpret the bytes as another dtype (not differentiable)."""
    d = to_dtype(dtype)
    if d.np.itemsize != self._data.itemsize:
        _check_view_as_other_size(self, d)
    return wrap(self._data.view(d.np))


def _scalar_type_name(np_dtype: np.dtype) -> str:
    return "BFloat16" if np_dtype == _dtype.bfloat16.np else _SCALAR_NAMES.get(np_dtype.name, "")


def _check_view_as_other_size(self: Tensor, dtype: Any) -> None:
    """PyTorch's conditions for viewing ``self`` as a dtype of another element size: at least
    1-d, the last dimension dense and, to a larger element, sizes, offset and strides that
    divide into whole new elements."""
    data = self._data
    what = (f"to view {_scalar_type_name(data.dtype)} as {_scalar_type_name(dtype.np)} "
            "(different element sizes)")
    if data.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides = list(self.stride())
    ratio = dtype.np.itemsize // data.itemsize
    if ratio > 1 and data.shape[-1] % ratio:  # (checked first when the element grows)
        raise RuntimeError(
            f"self.size(-1) must be divisible by {ratio} {what}, but got {data.shape[-1]}"
        )
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    if ratio <= 1:  # (to a smaller element: always possible)
        return
    offset = self.storage_offset()
    if offset % ratio:
        raise RuntimeError(
            f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}"
        )
    for i, stride in enumerate(strides[:-1]):
        if stride % ratio:
            raise RuntimeError(
                f"self.stride({i}) must be divisible by {ratio} {what}, but got {stride}"
            )

