"""``Tensor.new_*``: new tensors that take their dtype (and device) from an existing one.

``x.new_zeros(2, 3)`` is ``zeros(2, 3, dtype=x.dtype)``; ``x.new_tensor(data)`` copies
``data`` into ``x``'s dtype; ``x.new(...)`` is the legacy constructor in ``x``'s dtype. None of
them records history: the result is a new leaf.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._frames import user_stacklevel
from .._meta import MetaArray
from .._strides import check_layout
from .._tensor import Tensor, make_tensor, wrap
from . import creation
from ._registry import tensor_method

__all__: list[str] = []  # Tensor methods only


def _dtype_of(self: Tensor, dtype: Any) -> Any:
    return creation._resolve_dtype(dtype) or self.dtype


class _Missing:
    """A required argument's default, so that leaving it out gets PyTorch's message."""


_MISSING: Any = _Missing()


def _require(name: str, argument: str, value: Any) -> None:
    if value is _MISSING:
        raise TypeError(f'{name}() missing 1 required positional arguments: "{argument}"')


def _sizes(name: str, size: tuple, kwargs: dict[str, Any]) -> tuple:
    """``size`` given by position or as ``size=``; any other keyword is PyTorch's error."""
    for key in kwargs:
        if key != "size":
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    return creation._size_keyword(size, kwargs)


def _makes_meta(self: Tensor, device: Any) -> bool:
    """Whether a ``new_*`` result is a meta tensor: on ``device`` when given, else on
    ``self``'s device (not the default device), as PyTorch's."""
    if device is not None:
        return creation._check_device(device)
    return type(self._data) is MetaArray


@tensor_method
def new_zeros(
    self: Tensor,
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """Zeros of ``size``, in ``self``'s dtype unless ``dtype`` is given.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1, 2]).new_zeros(3)
        tensor([0, 0, 0])
    """
    check_layout("new_zeros", layout)
    creation._check_pin_memory(pin_memory)
    meta = _makes_meta(self, device)
    size = _sizes("new_zeros", size, kwargs)
    return creation._filled("new_zeros", 0, size, _dtype_of(self, dtype), requires_grad, meta)


@tensor_method
def new_ones(
    self: Tensor,
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """Ones of ``size``, in ``self``'s dtype unless ``dtype`` is given."""
    check_layout("new_ones", layout)
    creation._check_pin_memory(pin_memory)
    meta = _makes_meta(self, device)
    size = _sizes("new_ones", size, kwargs)
    return creation._filled("new_ones", 1, size, _dtype_of(self, dtype), requires_grad, meta)


@tensor_method
def new_empty(
    self: Tensor,
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
    **kwargs: Any,
) -> Tensor:
    """An uninitialised tensor of ``size``, in ``self``'s dtype unless ``dtype`` is given."""
    check_layout("new_empty", layout)
    creation._check_pin_memory(pin_memory)
    meta = _makes_meta(self, device)
    size = _sizes("new_empty", size, kwargs)
    return creation._filled("new_empty", None, size, _dtype_of(self, dtype), requires_grad, meta)


@tensor_method
def new_full(
    self: Tensor,
    size: Sequence[int] = _MISSING,
    fill_value: Any = _MISSING,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """``fill_value`` everywhere, in ``self``'s dtype unless ``dtype`` is given (the value does
    not choose the dtype, as it does for ``torch.full``)."""
    check_layout("new_full", layout)
    creation._check_pin_memory(pin_memory)
    _require("new_full", "size", size)
    _require("new_full", "fill_value", fill_value)
    meta = _makes_meta(self, device)
    if not isinstance(size, list | tuple):
        raise TypeError(
            f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
            f"{creation._type_name(size)}"
        )
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return creation._filled(
        "new_full", fill_value, (tuple(size),), _dtype_of(self, dtype), requires_grad, meta
    )


@tensor_method
def new_empty_strided(
    self: Tensor,
    size: Sequence[int] = _MISSING,
    stride: Sequence[int] = _MISSING,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """An uninitialised tensor of ``size`` laid out with ``stride`` (in elements)."""
    check_layout("new_empty_strided", layout)
    creation._check_pin_memory(pin_memory)
    _require("new_empty_strided", "size", size)
    _require("new_empty_strided", "stride", stride)
    creation._check_device(device)
    shape = creation._size_args("new_empty_strided", (tuple(size),))
    strides = tuple(int(s) for s in stride)
    if len(strides) != len(shape):
        raise RuntimeError(
            f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
            f"({len(strides)})"
        )
    requires_grad = creation._check_requires_grad("new_empty_strided", requires_grad)
    np_dtype = _dtype_of(self, dtype).np
    # The storage spans the furthest element the strides reach (none for an empty tensor).
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
    storage = np.empty(max(extent, 1), dtype=np_dtype)
    array = np.lib.stride_tricks.as_strided(
        storage, shape, tuple(s * storage.itemsize for s in strides), writeable=True
    )
    return make_tensor(array, requires_grad)


_NEW_TENSOR_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than "
    "tensor.new_tensor(sourceTensor)."
)


@tensor_method
def new_tensor(
    self: Tensor,
    data: Any = _MISSING,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    layout: Any = None,
) -> Tensor:
    """A new leaf holding a copy of ``data``, in ``self``'s dtype unless ``dtype`` is given
    (no ``pin_memory`` argument, as PyTorch's).

    Example:
        >>> import chainrule as torch
        >>> torch.zeros(1).new_tensor([1, 2])
        tensor([1., 2.])
    """
    _require("new_tensor", "data", data)
    creation._check_device(device)
    requires_grad = creation._check_requires_grad("new_tensor", requires_grad, none_ok=False)
    target = _dtype_of(self, dtype)
    if isinstance(data, Tensor):
        warnings.warn(_NEW_TENSOR_WARNING, UserWarning, stacklevel=user_stacklevel())
        array = data._data.astype(target.np, copy=True)
    else:
        array = creation._array_from_data(data, target)
    return make_tensor(array, requires_grad)


@tensor_method
def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The legacy constructor in ``self``'s dtype: ``x.new(2, 3)`` is uninitialised,
    ``x.new([1, 2])`` copies the data, ``x.new()`` is empty, ``x.new(t)`` shares ``t``'s
    memory (``t`` of ``self``'s dtype)."""
    return wrap(creation.legacy_new(self.dtype, args, kwargs, strict=True))
