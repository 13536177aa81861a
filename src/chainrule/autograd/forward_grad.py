"""Where forward-mode tangents live (the core of ``autograd.forward_ad``).

A tangent belongs to one tensor object at one dual level, as in PyTorch: a table from the
tensor's id (with a weak reference, so a dead tensor's entry goes with it) to its tangent.
Nothing here costs ordinary code anything: the ops' fast paths read ``DUAL[0]``, the number of
dual levels entered (0 or 1: PyTorch does not nest them), and take the general path, which looks
tangents up, only when it is not 0. While a JVP rule computes a tangent, ``DUAL[0]`` is 0 (the
rule's own ops neither read nor make tangents).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = [
    "DUAL",
    "FWD_GRAD_ENABLED",
    "set_fwd_grad_enabled",
    "is_fwd_grad_enabled",
    "current_level",
    "enter_level",
    "exit_level",
    "get_tangent",
    "set_tangent",
    "clear_tangent",
    "has_tangent",
    "suspended",
    "refuse_in_place",
    "NOT_IMPLEMENTED_MESSAGE",
    "VIEW_TANGENT",
    "tangents_alive",
    "set_output_tangents",
    "output_tangent",
]

#: How many dual levels are entered (read by the ops' fast paths; 0 while a rule runs).
DUAL = [0]
#: PyTorch's forward grad mode (``torch._C._set_fwd_grad_enabled``): off, no tangent is made,
#: read or carried, even within a level (``DUAL[0]`` stays 0).
FWD_GRAD_ENABLED = [True]
#: The current level (-1: none), as ``torch.autograd.forward_ad._current_level``.
_LEVEL = [-1]
_TANGENTS: dict[int, tuple[weakref.ref, Any]] = {}
#: The tangents of a node's outputs when they were made (``id(node)`` -> (weak reference to the
#: node, tangents by output number)): a node keeps its saved output as an array, and the output
#: Tensor (which holds the tangent) may be gone by the time a backward pass re-wraps the array;
#: forward mode through that backward pass (forward-over-reverse) reads the tangent here.
_OUTPUT_TANGENTS: dict[int, tuple[weakref.ref, tuple[Any, ...]]] = {}
#: How a view without a tangent of its own gets one from its base's (installed by
#: ops/_forward.py, which makes Tensors): ``VIEW_TANGENT[0](view)`` -> Tensor or None.
VIEW_TANGENT: list[Callable[[Any], Any] | None] = [None]

#: PyTorch's error for an op without a forward derivative (``{name}``: the op).
NOT_IMPLEMENTED_MESSAGE = (
    "Trying to use forward AD with {name} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation or submit a PR adding the implementation to derivatives.yaml"
)


def current_level() -> int:
    """The dual level entered, or -1."""
    return _LEVEL[0]


def enter_level() -> int:
    """Enter a new dual level (0); PyTorch's error when one is already entered."""
    if _LEVEL[0] >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVEL[0] = 0
    DUAL[0] = 1 if FWD_GRAD_ENABLED[0] else 0
    return 0


def set_fwd_grad_enabled(mode: bool) -> None:
    """Turn forward grad mode on or off (``torch._C._set_fwd_grad_enabled``)."""
    FWD_GRAD_ENABLED[0] = bool(mode)
    DUAL[0] = 1 if mode and _LEVEL[0] >= 0 else 0


def is_fwd_grad_enabled() -> bool:
    """Whether forward grad mode is on (``torch._C._is_fwd_grad_enabled``)."""
    return FWD_GRAD_ENABLED[0]


def exit_level(level: int) -> None:
    """Exit ``level`` (the current one): every tangent made at it is dropped."""
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _LEVEL[0]:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    _TANGENTS.clear()
    _OUTPUT_TANGENTS.clear()
    _LEVEL[0] = -1
    DUAL[0] = 0


def get_tangent(x: Any) -> Any:
    """The tangent of tensor ``x`` at the current level, or None. A view without a tangent of
    its own whose base has one gets the matching view of the base's tangent (sharing its
    memory), as PyTorch's views read their base's forward gradient."""
    entry = _TANGENTS.get(id(x))
    if entry is not None and entry[0]() is x:
        return entry[1]
    if _TANGENTS and getattr(x, "_base", None) is not None and VIEW_TANGENT[0] is not None:
        derived = VIEW_TANGENT[0](x)
        if derived is not None:
            set_tangent(x, derived)
        return derived
    return None


def has_tangent(x: Any) -> bool:
    """Whether ``x`` is a tensor with a tangent at the current level."""
    return bool(_TANGENTS) and get_tangent(x) is not None


def set_tangent(x: Tensor, tangent: Any) -> None:
    """Give tensor ``x`` its tangent at the current level."""
    key = id(x)

    def forget(ref: weakref.ref, key: int = key) -> None:
        entry = _TANGENTS.get(key)
        if entry is not None and entry[0] is ref:
            del _TANGENTS[key]

    _TANGENTS[key] = (weakref.ref(x, forget), tangent)


def tangents_alive() -> bool:
    """Whether a dual level is entered (forward grad mode on) and some tensor has a tangent:
    then a backward pass runs its formulas on Tensors, so that the gradients carry tangents
    (forward-over-reverse), as PyTorch's."""
    return bool(DUAL[0] and _TANGENTS)


def set_output_tangents(node: Any, tangents: tuple[Any, ...]) -> None:
    """Remember the tangents of ``node``'s outputs (by output number; None for none)."""
    key = id(node)

    def forget(ref: weakref.ref, key: int = key) -> None:
        entry = _OUTPUT_TANGENTS.get(key)
        if entry is not None and entry[0] is ref:
            del _OUTPUT_TANGENTS[key]

    _OUTPUT_TANGENTS[key] = (weakref.ref(node, forget), tangents)


def output_tangent(node: Any, output_nr: int) -> Any:
    """The tangent output ``output_nr`` of ``node`` had when it was made, or None."""
    entry = _OUTPUT_TANGENTS.get(id(node))
    if entry is None or entry[0]() is not node or output_nr >= len(entry[1]):
        return None
    return entry[1][output_nr]


def clear_tangent(x: Tensor) -> None:
    """Drop tensor ``x``'s own tangent at the current level (``x.detach_()``)."""
    _TANGENTS.pop(id(x), None)


class suspended:  # noqa: N801 (a context manager used as a statement, like no_grad)
    """Within: tangents are neither read nor made (a JVP rule runs on primals)."""

    __slots__ = ("_saved",)

    def __enter__(self) -> None:
        self._saved = DUAL[0]
        DUAL[0] = 0

    def __exit__(self, *exc: object) -> None:
        DUAL[0] = self._saved


def refuse_in_place(name: str, *tensors: Any) -> None:
    """An in-place write while a dual level is entered that cannot carry tangents (complex
    ones): refused (NotImplementedError) when a tangent is involved, rather than leave a tangent
    silently stale."""
    if DUAL[0] and _TANGENTS and any(get_tangent(t) is not None for t in tensors):
        raise NotImplementedError(NOT_IMPLEMENTED_MESSAGE.format(name=name))
