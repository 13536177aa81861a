"""``autograd.graph``: hooks on what the graph saves for backward, and the Node type.

``saved_tensors_hooks(pack_hook, unpack_hook)`` makes every tensor an op saves for backward go
through ``pack_hook`` when it is saved and ``unpack_hook`` when backward needs it (to offload,
compress or inspect saved activations), as in PyTorch.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .._tensor import Tensor, wrap
from .grad_mode import GRAD, MODE, SAVED_HOOKS
from .node import Node, type_name

__all__ = [
    "saved_tensors_hooks", "Node", "current_saved_tensors_hooks", "disable_saved_tensors_hooks",
    "SavedTensor", "pack_tensor",
]

def preorder(roots: Iterable[Node]) -> Iterator[Node]:
    """Every node reachable from ``roots``, once each, depth first in the order a recursive
    walk would visit them (a node's first next function before its second), with an explicit
    stack. The one graph walk of the engine's helpers, gradcheck, ``func`` and ``viz``."""
    seen: set[Node] = set()
    stack = list(roots)
    stack.reverse()
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        slots = node.next_functions
        for k in range(len(slots) - 1, -1, -1):
            child = slots[k][0]
            if child is not None and child not in seen:
                push(child)


PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook."
)

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


class SavedTensor:
    """A tensor saved for backward through a ``saved_tensors_hooks`` pair (PyTorch's
    SavedVariable with hooks): what the pack hook returned, and the autograd identity of the
    saved tensor, given back to what the unpack hook returns.

    The saved tensor itself is not kept (an output would point back at its node). Unpacking
    gives a new tensor with the unpacked data (and its version counter) and the saved
    tensor's history: its ``grad_fn`` (the owning node for an output), or for a leaf its
    ``requires_grad`` and AccumulateGrad, so a gradient through it reaches the leaf.
    """

    __slots__ = (
        "packed", "unpack_hook", "grad_fn", "output_nr", "requires_grad", "accumulator",
        "is_output",
    )

    def unpack(self, owner: Node | None) -> Tensor:
        """Call the unpack hook; ``owner`` is the node that saved the tensor (None for one saved
        outside any node, not as an output: checkpoint's inputs)."""
        data = self.unpack_hook(self.packed)
        if not isinstance(data, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type_name(data)}"
            )
        fn = owner if self.is_output else self.grad_fn
        if fn is None and not self.requires_grad and not data._requires_grad:
            return data  # nothing to give back: PyTorch returns what unpack returned
        t = wrap(data._data)
        t._vc = data._vc
        if fn is not None:
            t._grad_fn = fn
            t._output_nr = self.output_nr
            t._requires_grad = True
        elif self.requires_grad:
            t._requires_grad = True
            t._acc = self.accumulator
        return t


def pack_tensor(t: Tensor, hooks: tuple[PackHook, UnpackHook], is_output: bool) -> SavedTensor:
    """Save ``t`` through ``hooks``: the pack hook sees ``t`` itself, in no_grad mode, and may
    not modify it in place (PyTorch's error, raised after the hook ran)."""
    version = t._vc[0]
    token = MODE.set(MODE.get() & ~GRAD)
    try:
        packed = hooks[0](t)
    finally:
        MODE.reset(token)
    if t._vc[0] != version:
        raise RuntimeError(PACK_INPLACE_MESSAGE)
    saved = SavedTensor()
    saved.packed = packed
    saved.unpack_hook = hooks[1]
    saved.is_output = is_output
    saved.output_nr = t._output_nr
    saved.grad_fn = None if is_output else t._grad_fn
    saved.requires_grad = t._requires_grad
    saved.accumulator = t._acc
    return saved
