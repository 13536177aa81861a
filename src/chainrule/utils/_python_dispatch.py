"""``torch.utils._python_dispatch``: dispatch modes (see :mod:`chainrule.ops._dispatch_modes`).

A :class:`TorchDispatchMode` subclass defines ``__torch_dispatch__(func, types, args=(),
kwargs=None)``; entered, it is called with each op of chainrule's op table that runs, below
autograd (``func`` an ``OpOverload`` such as ``torch.ops.aten.sin.default``, the tensors
detached), and returns the op's result. chainrule's ops are its op table, not ATen: composite
ops are seen as one call and in-place methods are not seen.
"""

from __future__ import annotations

from typing import Any

from ..ops._dispatch_modes import (
    TorchDispatchModeBase,
    current_dispatch_mode,
    dispatch_mode_stack,
)

__all__ = [
    "BaseTorchDispatchMode",
    "TorchDispatchMode",
    "_get_current_dispatch_mode",
    "_get_current_dispatch_mode_stack",
    "any_torch_dispatch_mode_on_stack",
    "is_in_torch_dispatch_mode",
]


class TorchDispatchMode(TorchDispatchModeBase):
    """A context manager whose ``__torch_dispatch__`` sees every op run inside it (PyTorch's
    ``torch.utils._python_dispatch.TorchDispatchMode``); subclass it and define the handler."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        self._dispatch_key = _dispatch_key

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        """Whether compilation ignores this mode (PyTorch's hook; always False here)."""
        return False


class BaseTorchDispatchMode(TorchDispatchMode):
    """A mode whose handler just runs the op."""

    def __torch_dispatch__(
        self, func: Any, types: tuple, args: tuple = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        return func(*args, **(kwargs or {}))


def _get_current_dispatch_mode() -> TorchDispatchModeBase | None:
    """The innermost entered dispatch mode, or None."""
    return current_dispatch_mode()


def _get_current_dispatch_mode_stack() -> list[TorchDispatchModeBase]:
    """The entered dispatch modes, innermost last."""
    return list(dispatch_mode_stack())


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """Whether a dispatch mode is entered."""
    return bool(dispatch_mode_stack())


def any_torch_dispatch_mode_on_stack() -> bool:
    """Whether a dispatch mode is entered."""
    return bool(dispatch_mode_stack())
