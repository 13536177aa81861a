"""``autograd.graph``: hooks on what the graph saves for backward, and the Node type.

``saved_tensors_hooks(pack_hook, unpack_hook)`` makes every tensor an op saves for backward go
through ``pack_hook`` when it is saved and ``unpack_hook`` when backward needs it (to offload,
compress or inspect saved activations), as in PyTorch.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from .grad_mode import MODE, SAVED_HOOKS
from .node import Node

__all__ = [
    "saved_tensors_hooks", "Node", "current_saved_tensors_hooks", "disable_saved_tensors_hooks",
]

PackHook = Callable[[Any], Any]
UnpackHook = Callable[[Any], Any]

_STACK: contextvars.ContextVar[tuple[tuple[PackHook, UnpackHook], ...]] = contextvars.ContextVar(
    "chainrule_saved_tensors_hooks", default=()
)


def current_saved_tensors_hooks() -> tuple[PackHook, UnpackHook] | None:
    """The innermost active ``(pack_hook, unpack_hook)`` pair, or None."""
    stack = _STACK.get()
    return stack[-1] if stack else None


class saved_tensors_hooks:  # noqa: N801 - PyTorch's public name
    """Context manager: pack/unpack every tensor saved for backward inside the block.

    Example:
        >>> import chainrule as torch
        >>> seen = []
        >>> x = torch.ones(2, requires_grad=True)
        >>> hooks = torch.autograd.graph.saved_tensors_hooks
        >>> with hooks(lambda t: seen.append(t) or t, lambda t: t):
        ...     y = (x * x).sum()
        >>> len(seen)
        2
    """

    def __init__(self, pack_hook: PackHook, unpack_hook: UnpackHook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._tokens: list[tuple[contextvars.Token, contextvars.Token]] = []

    def __enter__(self) -> saved_tensors_hooks:
        stack_token = _STACK.set(_STACK.get() + ((self.pack_hook, self.unpack_hook),))
        mode_token = MODE.set(MODE.get() | SAVED_HOOKS)
        self._tokens.append((stack_token, mode_token))
        return self

    def __exit__(self, *exc: object) -> None:
        stack_token, mode_token = self._tokens.pop()
        MODE.reset(mode_token)
        _STACK.reset(stack_token)


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's public name
    """Raise ``RuntimeError(error_message)`` if saved_tensors_hooks are used inside the block."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self._token: contextvars.Token | None = None

    def __enter__(self) -> disable_saved_tensors_hooks:
        message = self.error_message

        def refuse(_: Any) -> Any:
            raise RuntimeError(message)

        self._token = _STACK.set(((refuse, refuse),))
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        _STACK.reset(self._token)
