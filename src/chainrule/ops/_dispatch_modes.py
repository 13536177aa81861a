"""Dispatch modes: a context that sees every op of the op table below autograd.

PyTorch's ``TorchDispatchMode`` is called with each ATen operator a program runs, with plain
tensors (no autograd) as arguments, and returns the operator's result; autograd records the node
around it with the original arguments. chainrule's counterpart works on its op table: while a
mode is entered, each op that runs through :func:`~chainrule.ops._dispatch.run_general` calls
the innermost mode's ``__torch_dispatch__(func, types, args, kwargs)`` with ``func`` the op's
:class:`OpOverload` (``aten.sin.default``) and its arguments, the mode and grad mode off while it
runs (so that ``func(*args)`` computes, or reaches the next mode out); the op's node is then
recorded on the original arguments with the handler's result as the op's output (which shares
the returned tensor's version counter, as PyTorch's output is the returned tensor).

What a mode sees is chainrule's op table, not ATen: a composite op is one call (``matmul`` of
batches; of matrices and vectors it is seen as the ``mm``, ``mv`` or ``dot`` PyTorch's
decomposition calls), an in-place method is seen as its out-of-place op (``mul``, not
``mul_``), ops outside the table (factories, ``detach`` but for checkpoint's) are not seen, and
the backward pass's formulas are not seen unless ``create_graph=True``. ``torch.ops.aten`` holds
the packets (``aten.sin``) and their overloads (``aten.sin.default``), one object each, so that
policies compare them as PyTorch's; an op's overload is the one PyTorch's call would choose for
the ops :func:`_overload_name` knows, ``default`` otherwise.

Used by selective activation checkpointing (:mod:`chainrule.utils.checkpoint`) and by
:mod:`chainrule.utils._python_dispatch`. Entering a mode raises the count of entered modes that
the ops' fast paths read (``MODES_ENTERED``), so every op takes the general path meanwhile.
"""

from __future__ import annotations

import contextvars
import copy
from collections.abc import Callable
from typing import Any

from .._overrides import MODES_ENTERED, _swap_tensor_methods
from .._tensor import Tensor, refresh_view
from ..autograd.grad_mode import GRAD, MODE

__all__ = [
    "OpOverload",
    "OpOverloadPacket",
    "TorchDispatchModeBase",
    "aten",
    "current_dispatch_mode",
    "dispatch_mode_stack",
    "dispatch_modes_active",
    "dispatches",
    "run_dispatched",
]

# The entered dispatch modes of this thread and task, innermost last.
_STACK: contextvars.ContextVar[tuple[TorchDispatchModeBase, ...]] = contextvars.ContextVar(
    "chainrule_dispatch_modes", default=()
)


# Whether a mode's handler is running (below autograd: the overloads it calls record nothing).
_BELOW_AUTOGRAD: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "chainrule_below_autograd", default=False
)


# ----------------------------------------------------------------------------------------------
# torch.ops.aten: packets and overloads


class OpOverload:
    """One overload of an operator (PyTorch's ``torch._ops.OpOverload``): ``aten.sin.default``.
    Calling it runs the op."""

    def __init__(self, packet: OpOverloadPacket, overload: str) -> None:
        self._packet = packet
        self._overloadname = overload
        self._name = f"{packet._qualified_op_name}.{overload}"
        # The op-table entry last dispatched as this overload: what calling it runs.
        self._op: Any = None

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        """The packet this overload belongs to (``aten.sin`` for ``aten.sin.default``)."""
        return self._packet

    def name(self) -> str:
        """The schema name, ``aten::sin.default`` (``aten::sin`` for the default overload)."""
        base = f"{self._packet._namespace}::{self._packet._op_name}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __repr__(self) -> str:
        return (
            f"<OpOverload(op='{self._packet._qualified_op_name}', overload='{self._overloadname}')>"
        )

    def __str__(self) -> str:
        return self._name

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return f"{self._packet._op_name}.{self._overloadname}"

    def __hash__(self) -> int:
        return id(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._op is not None:
            return _run_op(self._op, args, kwargs)
        packet = self._packet
        if packet._op is None and _STACK.get():
            # Not an op of the table (detach ...): the innermost mode is given the call.
            return _call_mode(self, args, kwargs)
        return packet._call(args, kwargs)


class OpOverloadPacket:
    """All overloads of one operator (PyTorch's ``torch._ops.OpOverloadPacket``):
    ``aten.sin``; its attributes are the overloads (``aten.sin.default``), one object each."""

    def __init__(self, namespace: str, op_name: str) -> None:
        self._namespace = namespace
        self._op_name = op_name
        self._qualified_op_name = f"{namespace}.{op_name}"
        self._overloads: dict[str, OpOverload] = {}
        self._op: Any = None  # the op-table entry, once an op of this name has run

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        found = self._overloads.get(overload)
        if found is None:
            found = self._overloads[overload] = OpOverload(self, overload)
        return found

    def overloads(self) -> list[str]:
        """The overload names used so far."""
        return list(self._overloads)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._qualified_op_name}')>"

    def __str__(self) -> str:
        return self._qualified_op_name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.default(*args, **kwargs)

    def _call(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        if self._op is not None:
            return _run_op(self._op, args, kwargs)
        method = getattr(Tensor, self._op_name, None)
        if method is None or not args or not isinstance(args[0], Tensor):
            raise NotImplementedError(
                f"chainrule cannot call {self._qualified_op_name}: not an op it knows by this name"
            )
        return method(*args, **kwargs)


class _OpNamespace:
    """``torch.ops.aten``: an attribute per operator name, its :class:`OpOverloadPacket`."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._packets: dict[str, OpOverloadPacket] = {}

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        found = self._packets.get(op_name)
        if found is None:
            found = self._packets[op_name] = OpOverloadPacket(self._name, op_name)
        return found

    def __repr__(self) -> str:
        return f"'torch.ops.{self._name}'"


aten = _OpNamespace("aten")

# Op-table names whose ATen operator has another name.
_ATEN_NAMES = {
    "_var_mean": "var_mean",
    "_sum_all": "sum",
    "_mean_all": "mean",
    "_pow_scalar": "pow",
    "_std_mean": "std_mean",
    "_view": "view",
    "_unsafe_view": "_unsafe_view",
    "_sum_dim": "sum",
    "_permute": "permute",
    "_expand": "expand",
    "_where": "where",
}
_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_TENSOR_OVERLOADS = frozenset({"add", "sub", "mul", "div", "rsub", "remainder", "fmod"})
_CORRECTION = frozenset({"var", "std", "var_mean", "std_mean"})


def _overload_name(name: str, args: tuple) -> str:
    """The overload PyTorch's call of operator ``name`` with ``args`` would choose."""
    if name in _CORRECTION:
        return "correction"
    if name in _TENSOR_OVERLOADS:
        return "Tensor"
    if name in _COMPARISONS:
        return "Tensor" if len(args) > 1 and isinstance(args[1], Tensor) else "Scalar"
    if name == "pow":
        second = len(args) > 1 and isinstance(args[1], Tensor)
        if isinstance(args[0], Tensor):
            return "Tensor_Tensor" if second else "Tensor_Scalar"
        return "Scalar"
    if name in ("sum", "mean") and len(args) > 1 and args[1] is not None:
        return "dim_IntList" if name == "sum" else "dim"
    return "default"


def _aten_name(name: str) -> str:
    if name in _ATEN_NAMES:
        return _ATEN_NAMES[name]
    if name.startswith("_") and hasattr(Tensor, name[1:]):
        return name[1:]  # (an op-table entry behind a public function of that name)
    return name


# matmul is composite in PyTorch: its modes see the product it chooses by the operands' ranks.
_MATMUL_PRODUCTS = {(2, 2): "mm", (2, 1): "mv", (1, 1): "dot"}


def overload_of(op: Any, args: tuple) -> OpOverload:
    """The :class:`OpOverload` standing for a call of op-table entry ``op`` on ``args``."""
    name = _aten_name(op.name)
    if name == "matmul" and all(isinstance(a, Tensor) for a in args[:2]):
        name = _MATMUL_PRODUCTS.get((args[0].ndim, args[1].ndim), name)
    packet = getattr(aten, name)
    if packet._op is None:
        packet._op = op
    overload = getattr(packet, _overload_name(name, args))
    overload._op = op
    return overload


# ----------------------------------------------------------------------------------------------
# The mode stack


class TorchDispatchModeBase:
    """A context whose ``__torch_dispatch__(func, types, args=(), kwargs=None)`` is called for
    every op of the op table run inside it, below autograd (see the module's docstring)."""

    def __torch_dispatch__(
        self, func: OpOverload, types: tuple, args: tuple = (), kwargs: dict[str, Any] | None = None
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Any:
        tokens = self.__dict__.setdefault("_dispatch_tokens", [])
        tokens.append(_STACK.set((*_STACK.get(), self)))
        _count(+1)
        return self

    def __exit__(self, *exc: object) -> None:
        _count(-1)
        _STACK.reset(self.__dict__["_dispatch_tokens"].pop())


def _count(step: int) -> None:
    if step > 0 and not MODES_ENTERED[0]:
        _swap_tensor_methods(dispatching=True)
    MODES_ENTERED[0] += step
    if step < 0 and not MODES_ENTERED[0]:
        _swap_tensor_methods(dispatching=False)


def dispatch_mode_stack() -> tuple[TorchDispatchModeBase, ...]:
    """The dispatch modes entered in this thread, innermost last."""
    return _STACK.get()


def current_dispatch_mode() -> TorchDispatchModeBase | None:
    """The innermost entered dispatch mode, or None."""
    stack = _STACK.get()
    return stack[-1] if stack else None


def dispatch_modes_active() -> bool:
    """Whether a dispatch mode is entered in this thread."""
    return bool(_STACK.get())


def _call_mode(func: OpOverload, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``func(*args, **kwargs)`` handed to the innermost mode, which is off meanwhile. The
    handler runs below autograd: the overloads it calls record nothing (grad mode itself stays
    as it is, as PyTorch's)."""
    stack = _STACK.get()
    token = _STACK.set(stack[:-1])
    below = _BELOW_AUTOGRAD.set(True)
    MODES_ENTERED[0] -= 1
    try:
        return stack[-1].__torch_dispatch__(func, (), args, kwargs)
    finally:
        MODES_ENTERED[0] += 1
        _BELOW_AUTOGRAD.reset(below)
        _STACK.reset(token)


def _run_op(op: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """Run op-table entry ``op``: without recording when called by a mode's handler."""
    from ._dispatch import run_keywords

    if not _BELOW_AUTOGRAD.get():
        return run_keywords(op, args, kwargs)
    token = MODE.set(MODE.get() & ~GRAD)
    below = _BELOW_AUTOGRAD.set(False)  # (the next mode out's handler sets it again)
    try:
        return run_keywords(op, args, kwargs)
    finally:
        _BELOW_AUTOGRAD.reset(below)
        MODE.reset(token)


def _refreshed(x: Any) -> Any:
    if isinstance(x, Tensor):
        if x._base is not None:
            refresh_view(x)
    elif type(x) is tuple:
        for e in x:
            _refreshed(e)
    return x


def _arrays(out: Any) -> Any:
    if isinstance(out, Tensor):
        return out._data
    if isinstance(out, tuple | list):
        return tuple(_arrays(o) for o in out)
    return out


def dispatches(op: Any) -> bool:
    """Whether a call of ``op`` goes to a dispatch mode (one is entered in this thread)."""
    # (an entry _forced made returns a mode's result: not dispatched again)
    return bool(_STACK.get()) and "_forced" not in op.__dict__


def _forced(op: Any, out: Any) -> Any:
    """``op`` with its forward replaced by one that returns the arrays of ``out``."""
    arrays = _arrays(out)

    def forward(*values: Any) -> Any:
        return arrays

    forced = copy.copy(op)
    forced._forced = True
    forced.forward = forward
    forced.meta_forward = forward
    forced.half_native = True
    return forced


def run_dispatched(op: Any, args: tuple, offset: int, run: Callable[[Any, tuple, int], Any]) -> Any:
    """Run ``op`` on ``args`` (bound) through the innermost dispatch mode: its handler gives
    the result, ``run`` (``run_general``) records the node with that result as the output."""
    from ._dispatch import _given

    func = overload_of(op, args)
    inner = _given(op, tuple(_refreshed(a) for a in args))
    out = _call_mode(func, inner, {})
    result = run(_forced(op, out), args, offset)
    if not op.view:
        # The op's output is the handler's tensor in PyTorch: they share the version counter.
        if isinstance(result, Tensor) and isinstance(out, Tensor):
            result._vc = out._vc
        elif isinstance(result, tuple) and isinstance(out, tuple | list):
            for r, o in zip(result, out, strict=False):
                if isinstance(r, Tensor) and isinstance(o, Tensor):
                    r._vc = o._vc
    return result
