"""Legacy ``Variable`` and typed tensor classes (``FloatTensor`` ...), kept so old code runs."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor, make_tensor, wrap

__all__ = ["Variable", "legacy_tensor_type", "set_default_tensor_type"]


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a leaf sharing ``tensor``'s data (and version
    counter), cut from its graph.

    Variables and Tensors were merged in PyTorch 0.4: calling ``Variable`` returns a Tensor, and
    ``isinstance(t, Variable)`` is true for every tensor.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.autograd import Variable
        >>> Variable(torch.ones(2), requires_grad=True)
        tensor([1., 1.], requires_grad=True)
    """

    def __new__(  # type: ignore[misc]
        cls, data: Tensor | None = None, requires_grad: bool = False, volatile: bool = False
    ) -> Tensor:
        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with chainrule.no_grad():` "
                "instead.",
                UserWarning,
                stacklevel=2,
            )
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            return make_tensor(_empty_default(), requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = make_tensor(data._data, requires_grad)
        t._vc = data._vc
        return t


def _empty_default() -> np.ndarray:
    return np.empty((0,), dtype=_dtype.get_default_dtype().np)


class _LegacyTypeMeta(type):
    _dtype: _dtype.dtype

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls._dtype

    def __repr__(cls) -> str:
        return f"<class 'chainrule.{cls.__name__}'>"

    # The class attributes PyTorch's tensor types carry (``torch.DoubleTensor.dtype``).
    @property
    def dtype(cls) -> _dtype.dtype:
        """The dtype of the tensors this type makes."""
        return cls._dtype

    @property
    def layout(cls) -> Any:
        """``strided``: the legacy types are dense."""
        from .._strides import strided

        return strided

    is_cuda = property(lambda cls: False, doc="False: the legacy types are CPU types.")
    is_sparse = property(lambda cls: False, doc="False: the legacy types are dense.")
    is_sparse_csr = property(lambda cls: False, doc="False: the legacy types are dense.")
    is_xpu = property(lambda cls: False, doc="False: the legacy types are CPU types.")


def legacy_tensor_type(name: str, dtype: _dtype.dtype) -> type:
    """A class like ``FloatTensor``: calling it makes a tensor of that dtype.

    ``FloatTensor(2, 3)`` is uninitialised memory of that shape, ``FloatTensor([1, 2])`` a
    copy of the data; a tensor (or NumPy array) of the same dtype is shared, not copied.
    """

    def new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
        from ..ops.creation import legacy_new

        return wrap(legacy_new(dtype, args, kwargs, strict=True))

    namespace = {"__new__": new, "_dtype": dtype,
                 "__doc__": f"Legacy constructor for {dtype!r} tensors."}
    return _LegacyTypeMeta(name, (), namespace)


_DEFAULT_TYPE_WARNED = [False]


def set_default_tensor_type(t: Any) -> None:
    """Deprecated as in PyTorch (it warns once): ``set_default_dtype`` with the dtype of a
    floating-point legacy type (``torch.DoubleTensor``, or its name ``"torch.DoubleTensor"``).
    """
    if isinstance(t, str):
        import importlib

        module_name, _, attribute = t.rpartition(".")
        if module_name.split(".")[0] == "torch":  # (code written for torch names its types so)
            module_name = "chainrule" + module_name[len("torch"):]
        t = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(t, _LegacyTypeMeta):
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if not _DEFAULT_TYPE_WARNED[0]:
        _DEFAULT_TYPE_WARNED[0] = True
        from .._frames import user_stacklevel

        warnings.warn(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "torch.set_default_dtype() and torch.set_default_device() as alternatives. "
            "(Triggered internally at /__w/pytorch/pytorch/torch/csrc/tensor/python_tensor.cpp:"
            "434.)",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    _dtype.set_default_dtype(t.dtype)
