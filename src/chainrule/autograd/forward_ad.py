"""``torch.autograd.forward_ad``: dual tensors for forward-mode AD.

    >>> import chainrule as torch
    >>> import chainrule.autograd.forward_ad as fwAD
    >>> x = torch.tensor([1., 2.])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, torch.ones(2)).sin()
    ...     fwAD.unpack_dual(y).tangent
    tensor([ 0.5403, -0.4161])

Tangents are carried through the ops with a JVP rule (``ops/_jvp_rules.py``: PyTorch's
forward formulas), views and in-place writes, and custom ``autograd.Function``'s ``jvp``; an op
without a rule raises PyTorch's NotImplementedError rather than drop a tangent. A backward pass
run in a dual level carries tangents too (forward-over-reverse: the backward formulas run on the
dual tensors, as PyTorch's). One level at a time, as PyTorch.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._strides import storage_root
from .._tensor import Tensor
from ..ops import creation, indexing, shape
from ..ops.conjugate import flag_conjugate_result, is_conj_tensor
from .forward_grad import (
    DUAL,
    current_level,
    enter_level,
    exit_level,
    get_tangent,
    is_fwd_grad_enabled,
    set_fwd_grad_enabled,
    set_tangent,
    suspended,
)
from .grad_mode import INFERENCE, _DecoratorContextManager, mode_get

__all__ = [
    "UnpackedDualTensor",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
    "dual_level",
]


class UnpackedDualTensor(NamedTuple):
    """What :func:`unpack_dual` returns: the primal (a view of the tensor without its tangent)
    and the tangent (None when it has none)."""

    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Enter a new forward AD level (0): tensors made dual at it carry tangents through ops
    until :func:`exit_dual_level`. PyTorch's error when a level is already entered."""
    return enter_level()


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the forward AD level ``level`` (default: the current one); the tangents made at it
    are dropped."""
    exit_level(current_level() if level is None else level)


def _floating(x: Tensor) -> bool:
    return x._data.dtype.kind in "fcV"


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` whose tangent is ``tangent`` (the direction of a Jacobian-vector
    product), at ``level`` (default: the current one).

    ``tangent`` is kept as it is when its layout is ``tensor``'s, otherwise copied into that
    layout, as PyTorch does; its dtype may be another floating type."""
    if level is None:
        level = current_level()
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if not _floating(tensor):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not _floating(tangent):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if level != current_level():
        raise RuntimeError("Invalid level given to _make_dual")
    if get_tangent(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported."
        )
    if get_tangent(tangent) is not None:
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same "
            f"level{level} is not supported."
        )
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}."
        )
    with suspended():
        dual = shape.view(tensor, tuple(tensor._data.shape))
        # PyTorch's metadata check for a primal whose elements have memory of their own; an
        # expanded primal (func's transforms make them: PyTorch's own make_dual refuses to
        # write into one) gets the primal's strides only, with memory for every element.
        plain = (
            type(tangent) is Tensor
            and type(tensor) is Tensor
            and not any(
                st == 0 and n > 1
                for st, n in zip(tensor._data.strides, tensor._data.shape, strict=True)
            )
        )
        if not plain and tangent._data.strides != tensor._data.strides:
            laid_out = creation.empty_strided(
                tuple(tensor._data.shape), tensor.stride(), dtype=tangent.dtype
            )
            laid_out.copy_(tangent)
            tangent = laid_out
        elif plain and not _same_layout(tangent, tensor):
            # PyTorch's tangent takes the primal's layout: its strides, and (for a tensor with
            # elements) its storage offset and a storage as large as the primal's, so views
            # reaching beyond the primal (``as_strided``) find their tangent (a copy).
            size = tuple(tensor._data.shape)
            if tensor._data.size == 0:
                laid_out = creation.empty_strided(size, tensor.stride(), dtype=tangent.dtype)
            else:
                storage = creation.zeros(_storage_numel(tensor), dtype=tangent.dtype)
                laid_out = shape.as_strided(storage, size, tensor.stride(), tensor.storage_offset())
            laid_out.copy_(tangent)
            tangent = laid_out
    if is_conj_tensor(tangent) != is_conj_tensor(tensor):
        # PyTorch's tangent has the primal's conjugate bit: the same values, with or without it
        tangent = (
            tangent.resolve_conj()
            if is_conj_tensor(tangent)
            else flag_conjugate_result(tangent.clone())
        )
    if not mode_get() & INFERENCE:  # (inference mode: no tangent, as PyTorch)
        set_tangent(dual, tangent)  # (also with forward grad mode off: seen once it is on)
    return dual


def _storage_numel(t: Tensor) -> int:
    """How many elements of ``t``'s dtype its storage holds."""
    return storage_root(t._data).nbytes // t._data.itemsize


def _same_layout(tangent: Tensor, primal: Tensor) -> bool:
    """Whether ``tangent`` can be kept as the tangent of ``primal``: the same strides, and for
    a primal with elements the same storage offset and storage size (PyTorch's check)."""
    if tangent.stride() != primal.stride():
        return False
    if primal._data.size == 0:
        return True
    return tangent.storage_offset() == primal.storage_offset() and _storage_numel(
        tangent
    ) == _storage_numel(primal)


def _is_fwd_grad_enabled() -> bool:
    """Whether forward grad mode is on (PyTorch's private helper)."""
    return is_fwd_grad_enabled()


class _set_fwd_grad_enabled(_DecoratorContextManager):  # noqa: N801 (PyTorch's name)
    """Set forward grad mode to ``mode`` at once; as a context manager, the previous mode is
    restored on exit (PyTorch's private helper; as there, a function it decorates cannot be
    called: the fresh instance it enters lacks ``mode``)."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_fwd_grad_enabled()
        set_fwd_grad_enabled(mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        set_fwd_grad_enabled(self.prev)


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at ``level`` (default: the current one): the primal
    is a view of ``tensor`` without tangent, the tangent is the tensor given to
    :func:`make_dual` (or computed by the ops), None when it has none. Outside a level:
    ``(tensor, None)``."""
    if level is None:
        level = current_level()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(
            "_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
            f"{type(tensor).__name__}"
        )
    # (while tangents are suspended, in a custom Function's forward and jvp, PyTorch's forward
    # grad mode is off: no tangent is seen)
    tangent = get_tangent(tensor) if level == current_level() and DUAL[0] else None
    if level != current_level() and get_tangent(tensor) is not None:
        raise RuntimeError("Invalid level given to _fw_primal")
    with suspended():
        primal = indexing._alias(tensor)
    set_tangent(primal, None)  # (a view of a tensor with a tangent, but without one itself)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):  # noqa: N801 (PyTorch's name)
    """Context manager (or decorator) for forward AD: enters a dual level on entry, exits it
    (dropping its tangents) on exit; ``as`` gives the level.

        >>> with dual_level():
        ...     inp = make_dual(x, v)
        ...     out = f(inp)
        ...     y, jvp = unpack_dual(out)
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def clone(self) -> dual_level:
        """A fresh instance (what a decorated function enters)."""
        return self.__class__()


def __getattr__(name: str) -> Any:
    # PyTorch keeps the current level in the module global ``_current_level`` (-1 outside
    # any); code and tests read it (``while fwAD._current_level >= 0: fwAD.exit_dual_level()``).
    if name == "_current_level":
        return current_level()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
