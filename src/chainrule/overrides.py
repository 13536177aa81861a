"""``torch.overrides``: the ``__torch_function__`` protocol's helpers.

A Tensor subclass, or any class, with a ``__torch_function__`` classmethod takes over
chainrule's functions and methods when one of its instances is an argument (see
:mod:`chainrule._overrides` for where it is checked).

Example:
    >>> import chainrule as torch
    >>> class Tagged(torch.Tensor):
    ...     pass
    >>> t = torch.tensor([1., 2.]).as_subclass(Tagged)
    >>> type(t + 1).__name__
    'Tagged'
    >>> torch.overrides.has_torch_function((t,))
    True
"""

from __future__ import annotations

from ._overrides import (
    BaseTorchFunctionMode,
    TorchFunctionMode,
    get_default_nowrap_functions,
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
    is_tensor_like,
    resolve_name,
)

__all__ = [
    "BaseTorchFunctionMode", "TorchFunctionMode", "get_default_nowrap_functions",
    "handle_torch_function", "has_torch_function",
    "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
    "resolve_name",
]
