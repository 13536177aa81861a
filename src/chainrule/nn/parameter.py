"""``nn.Parameter``: a leaf tensor that a Module registers as a learnable weight."""

from __future__ import annotations

from typing import Any

from .._overrides import disabled_torch_function_impl
from .._tensor import Tensor, _init
from .._tensor import _new as _new_object

__all__ = ["Buffer", "Parameter"]


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
