"""Legacy ``Variable`` and typed tensor classes (``FloatTensor`` ...), kept so old code runs."""

from __future__ import annotations

from typing import Any

from .. import _dtype
from .._tensor import Tensor, wrap

__all__ = ["Variable", "legacy_tensor_type"]


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a tensor sharing ``tensor``'s data.

    Variables and Tensors were merged in PyTorch 0.4; ``isinstance(t, Variable)`` is true for
    every tensor.
    """

    def __new__(cls, data: Tensor, requires_grad: bool = False, volatile: bool = False) -> Tensor:  # type: ignore[misc]
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = wrap(data._data)
        t._vc = data._vc
        if requires_grad:
            t.requires_grad_(True)
        return t


class _LegacyTypeMeta(type):
    _dtype: _dtype.dtype

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls._dtype

    def __repr__(cls) -> str:
        return f"<class 'chainrule.{cls.__name__}'>"


def legacy_tensor_type(name: str, dtype: _dtype.dtype) -> type:
    """A class like ``FloatTensor``: calling it makes a tensor of that dtype."""

    def new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
        from ..ops.creation import legacy_new

        return wrap(legacy_new(dtype, args, kwargs))

    return _LegacyTypeMeta(name, (), {"__new__": new, "_dtype": dtype, "__doc__": f"Legacy constructor for {dtype!r} tensors."})
