"""Complex conjugation: ``conj()``, ``is_conj()``, ``resolve_conj()``, and the ``conj`` that
derivative formulas use (``ops.conj``: PyTorch's formulas conjugate where the conjugate
Wirtinger convention needs it; on real values it is the value itself, no copy).

PyTorch's ``conj()`` of a complex tensor is a lazy view (the conjugate bit, ``is_conj()``); NumPy
has no such view, so here it is a new tensor holding the conjugated values, flagged so that
``is_conj()`` and ``resolve_conj()`` answer as PyTorch's do. Because it shares no memory with
its input, writing into it (or into a view of it) in place is refused (PyTorch would write
through to the input). One difference remains: PyTorch's conjugate view shows later in-place
changes of its input; this copy keeps the values of the moment ``conj()`` was called.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from .._strides import storage_root
from .._tensor import HAS_CONJ_BIT, Tensor
from ..autograd.forward_grad import DUAL, get_tangent
from ..autograd.node import type_name
from ._registry import declare_methods, op, recorded_as, tensor_method
from .copying import clone

__all__ = ["conj", "is_conj", "resolve_conj", "conj_physical", "conj_physical_"]

_ndarray = np.ndarray

# The memory ``conj()`` results hold, by the id of the array that owns it (a weak reference,
# so it can be collected). Every tensor on that memory (the result, its views, ``detach()``)
# has the conjugate bit, as PyTorch's views of a conjugate view do; a copy has not.
_CONJUGATES: dict[int, weakref.ref[np.ndarray]] = {}


# The memory of results PyTorch returns as conjugate views of a buffer nobody else sees
# (``linalg.solve(A, B, left=False)`` solves A^H X^H = B^H and returns the conjugate view of
# the transposed solution): they have the bit, but writing into them is fine, as in PyTorch.
_OWN_CONJUGATES: dict[int, weakref.ref[np.ndarray]] = {}


def _flag(t: Tensor, registry: dict[int, weakref.ref[np.ndarray]] = _CONJUGATES) -> None:
    root = storage_root(t._data)
    key = id(root)
    registry[key] = weakref.ref(root, lambda _ref: registry.pop(key, None))


def flag_conjugate_result(t: Tensor) -> Tensor:
    """Give a complex result of its own memory PyTorch's conjugate bit (``is_conj()`` True,
    ``numpy()`` refused, writes allowed); a real one is returned as it is."""
    if t._data.dtype.kind == "c":
        _flag(t, _OWN_CONJUGATES)
    return t


def _registered(registry: dict[int, weakref.ref[np.ndarray]], t: Any) -> bool:
    root = storage_root(t._data)
    ref = registry.get(id(root))
    return ref is not None and ref() is root


def is_conj_tensor(t: Any) -> bool:
    """Whether ``t`` has PyTorch's conjugate bit, which views and ``detach()`` keep: it lies on
    the memory of a ``conj()`` of a complex tensor, or of a result PyTorch returns conjugated."""
    if not (_CONJUGATES or _OWN_CONJUGATES):
        return False
    if not isinstance(t, Tensor) or t._data.dtype.kind != "c":
        return False
    return _registered(_CONJUGATES, t) or _registered(_OWN_CONJUGATES, t)


def is_conj_view(t: Any) -> bool:
    """Whether ``t`` lies on the memory of a ``conj()`` (a copy here, PyTorch's lazy view of
    its input): writing into it is refused."""
    if not _CONJUGATES or not isinstance(t, Tensor) or t._data.dtype.kind != "c":
        return False
    return _registered(_CONJUGATES, t)


HAS_CONJ_BIT[0] = is_conj_tensor  # (Tensor.numpy() refuses a tensor with the bit set)

CONJ_WRITE_MESSAGE = (
    "chainrule's conj() of a complex tensor is a copy, not PyTorch's lazy conjugate view: it "
    "cannot be modified in place (PyTorch would write through to the conjugated tensor); use "
    "resolve_conj() or conj_physical-style x.conj().clone() first"
)


@op("ConjBackward0", complex_ok=True)
def _conj(self):
    return np.conj(self)


@_conj.derivative("self")
def _(ops, grad):
    return ops.conj(grad)  # PyTorch: grad.conj()


def _input(name: str, value: Any) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(value)}"
        )
    return value


@tensor_method
def conj(input: Tensor) -> Tensor:
    """The complex conjugate (``ConjBackward0``; ``is_conj()`` True). A real tensor is
    returned as it is, as PyTorch does.

    Example:
        >>> import chainrule as torch
        >>> torch.tensor([1 + 2j]).conj()
        tensor([1.-2.j])
    """
    t = _input("conj", input)
    if t._data.dtype.kind != "c":
        return t
    out = _conj(t)
    if not is_conj_tensor(t):  # (the conjugate of a conjugate view has the bit cleared)
        _flag(out)
        if DUAL[0]:  # (forward mode: the tangent is the conjugate view of the input's, too)
            tangent = get_tangent(out)
            if tangent is not None and tangent._data.dtype.kind == "c":
                _flag(tangent)
    return out


@tensor_method
def is_conj(input: Tensor) -> bool:
    """Whether ``input`` is a conjugate view (made by ``conj()`` of a complex tensor)."""
    return is_conj_tensor(_input("is_conj", input))


@tensor_method
def resolve_conj(input: Tensor) -> Tensor:
    """A conjugate view materialised (``CloneBackward0``, ``is_conj()`` False); any other
    tensor as it is."""
    t = _input("resolve_conj", input)
    return clone(t) if is_conj_tensor(t) else t


@op("ConjPhysicalBackward0", complex_ok=True)
def _conj_physical(self):
    return np.conj(self)


@_conj_physical.derivative("self")
def _(ops, grad):
    return ops.conj(grad)  # PyTorch: grad.conj_physical()


@tensor_method
def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate computed into new memory (never a conjugate view); a real
    tensor is returned as it is.

    Example:
        >>> import chainrule as torch
        >>> torch.conj_physical(torch.tensor([1 + 2j]))
        tensor([1.-2.j])
    """
    t = _input("conj_physical", input)
    if t._data.dtype.kind != "c":
        return t
    return _conj_physical(t)


_conj_physical_recorded_in_place = recorded_as(_conj_physical, "ConjPhysicalBackward1")


def _conj_physical_in_place(self: Tensor) -> Tensor:
    """``self.conj_physical_()``'s result (``ConjPhysicalBackward1``, PyTorch's node of the
    in-place form, recorded for a real tensor too)."""
    return _conj_physical_recorded_in_place(_input("conj_physical_", self))


declare_methods("conj_physical", inplace=_conj_physical_in_place)


def conj_physical_(input: Tensor) -> Tensor:
    """``torch.conj_physical_(t)``: ``t.conj_physical_()`` (a real tensor keeps its values)."""
    return _input("conj_physical_", input).conj_physical_()


def conj_value(value: Any) -> Any:
    """``ops.conj`` on the fast path: the conjugate of a complex array or number; a real one
    as it is (no copy)."""
    if type(value) is _ndarray:
        return np.conj(value) if value.dtype.kind == "c" else value
    if isinstance(value, complex | np.complexfloating):
        return value.conjugate()
    return value


def conj_tensor(value: Any) -> Any:
    """``ops.conj`` under ``create_graph=True``: :func:`conj` of a tensor (recorded), the
    conjugate of a number."""
    if isinstance(value, Tensor):
        return conj(value)
    return conj_value(value)
