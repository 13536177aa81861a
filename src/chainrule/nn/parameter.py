"""``nn.Parameter``: a leaf tensor that a Module registers as a learnable weight; ``Buffer``;
and the placeholders of lazy modules, ``UninitializedParameter`` / ``UninitializedBuffer``
(no shape until ``materialize``)."""

from __future__ import annotations

import weakref
from typing import Any

from .._overrides import DisableTorchFunctionSubclass, disabled_torch_function_impl
from .._tensor import Tensor, _init
from .._tensor import _new as _new_object

__all__ = [
    "Buffer",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "UninitializedTensorMixin",
    "is_lazy",
]


class Parameter(Tensor):
    """A tensor that is a module parameter (``requires_grad=True`` by default).

    Example:
        >>> import chainrule as torch
        >>> torch.nn.Parameter(torch.zeros(2))
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
    """

    # Ops on parameters give plain tensors (the protocol is off for them, as in PyTorch).
    __torch_function__ = disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if requires_grad and data._data.dtype.kind not in "fcV":
            # (PyTorch's Parameter words it as its factories do, not as requires_grad_.)
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        p = _new_object(cls)
        _init(p, data._data, False)
        p._vc = data._vc
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:  # type: ignore[override]
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        from .._tensor import wrap

        result = Parameter(wrap(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            result._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data: Any, requires_grad: bool) -> Parameter:
    from .._tensor import wrap

    return Parameter(wrap(data), requires_grad)


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when assigned as an attribute.

    ``persistent=False`` keeps it out of ``state_dict``.

    Example:
        >>> import chainrule as torch
        >>> m = torch.nn.Module()
        >>> m.count = torch.nn.Buffer(torch.zeros(1))
        >>> [name for name, _ in m.named_buffers()]
        ['count']
    """

    persistent: bool
    __torch_function__ = disabled_torch_function_impl  # (ops give plain tensors)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        b = _new_object(cls)
        _init(b, data._data, data._requires_grad)
        b._vc = data._vc
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


# The methods an uninitialized tensor allows (by name): size, dtype casts, copy_, the queries a
# module's ``to()``/``double()`` ask (PyTorch's ``UninitializedTensorMixin._allowed_methods``).
_ALLOWED_ON_UNINITIALIZED = frozenset(
    {
        "__hash__",
        "size",
        "copy_",
        "is_complex",
        "is_floating_point",
        "half",
        "float",
        "double",
        "char",
        "short",
        "int",
        "long",
        "cuda",
        "cpu",
        "to",
        "get_device",
    }
)


class UninitializedTensorMixin:
    """A tensor without a shape yet (a lazy module's parameter or buffer): every op but a few
    (``size``, dtype casts ...) raises PyTorch's ValueError until :meth:`materialize` gives it
    its shape and turns it into ``cls_to_become``."""

    # No instance dict: an UninitializedBuffer must keep Tensor's layout to become a Tensor.
    __slots__ = ()
    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Allocate the data (uninitialised memory, as ``empty``) with ``shape`` and become
        ``cls_to_become`` (a ``Parameter`` or a plain tensor), in place."""
        from ..ops.creation import empty

        t: Any = self
        data = empty(shape, dtype=t.dtype if dtype is None else dtype)
        t._data = data._data
        t.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes."
        )

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        t: Any = self
        return (self.__class__, (t.requires_grad,))

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if getattr(func, "__name__", None) in _ALLOWED_ON_UNINITIALIZED:
            # (subclass dispatch off: the method's own calls compute on the empty data)
            with DisableTorchFunctionSubclass():
                return super().__torch_function__(  # type: ignore[misc]
                    func, types, args, kwargs or {}
                )
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {func}. This error happens when you "
            "are using a `LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules Call `forward` "
            "with a dummy batch to initialize the parameters before calling torch functions"
        )


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


def _empty_data(dtype: Any) -> Any:
    from ..ops.creation import empty

    return empty(0, dtype=dtype)._data


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape a lazy module infers on its first call; it becomes a
    ``Parameter`` when materialised.

    Example:
        >>> import chainrule as torch
        >>> p = torch.nn.UninitializedParameter()
        >>> p
        <UninitializedParameter>
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', chainrule.Size([2, 3]))
    """

    cls_to_become = Parameter

    def __new__(
        cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> UninitializedParameter:
        p = _new_object(cls)
        _init(p, _empty_data(dtype), False)
        if requires_grad:
            with DisableTorchFunctionSubclass():
                Tensor.requires_grad_(p, True)
        return p

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self._requires_grad, None, self.dtype)
        memo[id(self)] = result
        return result


# An UninitializedBuffer's ``persistent`` flag by id (kept outside the object, which has only
# Tensor's slots so that it can become a plain Tensor in place; a tensor's ``==`` is an op, so
# not a WeakKeyDictionary).
_BUFFER_PERSISTENT: dict[int, bool] = {}


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers on its first call; it becomes a plain tensor
    when materialised."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(
        cls,
        requires_grad: bool = False,
        device: Any = None,
        dtype: Any = None,
        persistent: bool = True,
    ) -> UninitializedBuffer:
        b = _new_object(cls)
        _init(b, _empty_data(dtype), False)
        if requires_grad:
            with DisableTorchFunctionSubclass():
                Tensor.requires_grad_(b, True)
        _BUFFER_PERSISTENT[id(b)] = persistent
        weakref.finalize(b, _BUFFER_PERSISTENT.pop, id(b), None)
        return b

    @property
    def persistent(self) -> bool:
        """Whether a module that registers it saves it in ``state_dict``."""
        return _BUFFER_PERSISTENT.get(id(self), True)

    def __init__(
        self,
        requires_grad: bool = False,
        device: Any = None,
        dtype: Any = None,
        persistent: bool = True,
    ) -> None:
        pass

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedBuffer:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self._requires_grad, None, self.dtype)
        memo[id(self)] = result
        return result
