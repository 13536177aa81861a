"""``utils.swap_tensors``: two tensor objects exchange everything they are (class, attributes,
data and autograd state), so every reference to the one now sees the other's contents."""

from __future__ import annotations

import copyreg
import weakref
from typing import Any

from .._dtype import REPR_NAMESPACE
from .._tensor import Tensor

__all__ = ["swap_tensors"]

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen "
    "when you try to run backward on a tensor that was swapped. For a module m with "
    "`{ns}.__future__.set_swap_module_params_on_conversion(True)` you should not change the "
    "device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running forward and "
    "backward. To resolve this, please only change the device/dtype before running forward "
    "(or after both forward and backward)."
)


def _poison_accumulator(t: Tensor) -> None:
    """A graph recorded before the swap would accumulate into the wrong tensor: its
    AccumulateGrad node refuses to run (PyTorch's pre-hook and message)."""
    ref = t._acc
    node = ref() if isinstance(ref, weakref.ref) else None
    if node is None:
        return

    def refuse(grad_outputs: Any) -> Any:
        raise RuntimeError(_POISONED.format(ns=REPR_NAMESPACE[0]))

    node.register_prehook(refuse)


def swap_tensors(t1: Tensor, t2: Tensor) -> None:
    """Swap ``t1`` and ``t2`` in place: afterwards ``t1`` is what ``t2`` was (class,
    ``__dict__``, data, ``requires_grad``, ``grad`` ...) and the other way round. A graph that
    used either as a leaf can no longer be run backward.

    Example:
        >>> import chainrule as torch
        >>> a, b = torch.arange(2), torch.arange(3)
        >>> torch.utils.swap_tensors(a, b)
        >>> a
        tensor([0, 1, 2])
    """
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = set(copyreg._slotnames(type(t1)))  # type: ignore[attr-defined]
    if slots != set(copyreg._slotnames(type(t2))):  # type: ignore[attr-defined]
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for t in (t1, t2):
        if t.is_leaf:
            _poison_accumulator(t)
    if type(t1) is not type(t2):
        cls1, cls2 = type(t1), type(t2)
        t1.__class__, t2.__class__ = cls2, cls1
    if hasattr(t1, "__dict__") and hasattr(t2, "__dict__"):
        t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    # The slots hold the tensor itself (data, version counter, autograd state): PyTorch's
    # swap of the underlying at::Tensor.
    for slot in slots - {"__weakref__"}:
        has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
        value1 = getattr(t1, slot) if has1 else None
        value2 = getattr(t2, slot) if has2 else None
        if has2:
            setattr(t1, slot, value2)
        elif has1:
            delattr(t1, slot)
        if has1:
            setattr(t2, slot, value1)
        elif has2:
            delattr(t2, slot)
