"""``out=``: an op's result written into a tensor the caller gives, as PyTorch writes it.

PyTorch's rules, in the order it applies them:

1. In grad mode, no argument (the inputs or ``out``) may require grad: ``mm(): functions with
   out=... arguments don't support automatic differentiation, but one of the arguments requires
   grad.`` (checked before anything is computed).
2. The op computes its result (its own errors first: shapes, dtypes of the inputs).
3. ``out``'s dtype is checked by the op's rule (:data:`SAME`, :data:`INPUT`, :data:`CAST` ...).
4. ``out`` is resized to the result's shape when it differs; a non-empty ``out`` of another
   shape is resized with a deprecation warning. A resized ``out`` takes the result's layout,
   one whose shape already fits keeps its own strides.
5. The result is written into ``out`` (cast to its dtype), counted as one in-place write, and
   ``out`` itself is returned.
6. Within a forward-AD dual level, when an input or ``out`` has a tangent, the call raises
   NotImplementedError after the write (``Trying to use forward AD with add_out ...``): out=
   functions carry no tangent.

An op declares its rule with :func:`allow_out` (op-table ops, whose public function then takes
``out=`` as a keyword; their Tensor methods do not, as PyTorch's do not) or calls
:func:`check_out` and :func:`write_out` itself (plain functions such as ``matmul``).

A resized ``out`` gets new memory: where PyTorch's storage was large enough it keeps it, so a
view of the old ``out`` taken before the call does not see the result here.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import _dtype
from .._frames import user_stacklevel
from .._tensor import Tensor, check_inference_inplace, refresh_view
from ..autograd.forward_grad import DUAL, has_tangent
from ..autograd.grad_mode import GRAD, mode_get
from ..autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ..autograd.inplace import bump_version

__all__ = [
    "SAME",
    "INPUT",
    "CAST",
    "ADDBMM",
    "ADDMV_FOLDED",
    "MV",
    "allow_out",
    "check_out",
    "write_out",
    "squeeze_row",
]

#: Structured kernels (mm, bmm, mv, addmm ...): ``out`` must have the result's dtype.
SAME = "same"
#: dot and vdot: ``out`` must have the first input's dtype.
INPUT = "input"
#: Element-wise (TensorIterator) ops: any dtype the result casts to without losing its category.
CAST = "cast"
#: addbmm: ``out`` must have the dtype of ``batch2``.
ADDBMM = "addbmm"
#: matmul of a batch with a vector, which PyTorch folds into addmv's out= overload.
ADDMV_FOLDED = "addmv_folded"
#: mv: addmv's check when ``out`` already has the result's shape, else :data:`SAME`'s.
MV = "mv"

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {had}, which does not "
    "match the required output shape {want}. This behavior is deprecated, and in a future "
    "PyTorch release outputs will not be resized unless they have zero elements. You can "
    "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
    "t.resize_(0). (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)"
)


def allow_out(rule: str, *publics: Any) -> None:
    """Let the public functions of the ops of ``publics`` take ``out=`` with ``rule``'s dtype
    check (their Tensor methods keep refusing it, as PyTorch's methods have no ``out``)."""
    for public in publics:
        public.op.out_rule = rule


def check_out(name: str, out: Any, inputs: Iterable[Any]) -> None:
    """Before computing: ``out`` is a tensor, and in grad mode neither it nor an input
    requires grad (PyTorch's errors)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if not mode_get() & GRAD:
        return
    if out.requires_grad or any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )


def _check_dtype(rule: str, have: np.ndarray, want: np.ndarray, inputs: list[Any]) -> None:
    if rule == MV:
        rule = ADDMV_FOLDED if have.shape == want.shape else SAME
    have, want = have.dtype, want.dtype
    got = _dtype.from_numpy_dtype(have)
    result = _dtype.from_numpy_dtype(want)
    names = _dtype.SCALAR_TYPE_NAMES
    if rule == SAME:
        if got is not result:
            cpp = _dtype.CPP_TYPE_NAMES
            raise RuntimeError(
                f"Expected out tensor to have dtype {cpp[result]}, but got {cpp[got]} instead"
            )
    elif rule == INPUT:
        first = _dtype.from_numpy_dtype(inputs[0]._data.dtype)
        if got is not first:
            raise RuntimeError(
                f"result dtype {names[got]} does not match input dtype {names[first]}"
            )
    elif rule == CAST:
        if not _dtype.can_cast(result, got):
            raise RuntimeError(
                f"result type {names[result]} can't be cast to the desired output type {names[got]}"
            )
    elif rule == ADDBMM:
        other = _dtype.from_numpy_dtype(inputs[-1]._data.dtype)
        if got is not other:
            raise RuntimeError(
                f"self and mat2 must have the same dtype, but got {names[got]} and {names[other]}"
            )
    elif rule == ADDMV_FOLDED:
        first, second = (_dtype.from_numpy_dtype(x._data.dtype) for x in inputs[:2])
        if not got is first is second:
            raise RuntimeError(
                "addmv input tensors must have the same dtype, but got "
                f"{names[got]}, {names[first]}, and {names[second]}"
            )
    else:
        raise ValueError(f"unknown out= rule {rule!r}")


def write_out(name: str, out: Tensor, result: Tensor, rule: str, inputs: list[Any]) -> Tensor:
    """Write ``result`` (the op's new tensor) into ``out`` by ``rule`` and return ``out``
    (after :func:`check_out` passed and the op computed ``result``)."""
    if out._base is not None:
        refresh_view(out, False)
    data = out._data
    value = result._data
    _check_dtype(rule, data, value, inputs)
    check_inference_inplace(out)
    if MUTATION_WATCH:
        clone_saved_before_write(out)  # (allow_mutation_on_saved_tensors)
    if data.shape != value.shape:
        if data.size != 0 and rule != ADDBMM:  # (addbmm resizes without the warning)
            # An element-wise op writing into another dtype resizes twice in PyTorch (its
            # TensorIterator resizes ``out``, then again when it copies the result in): two
            # warnings.
            times = 2 if rule == CAST and data.dtype != value.dtype else 1
            for _ in range(times):
                warnings.warn(
                    _RESIZE_WARNING.format(had=list(data.shape), want=list(value.shape)),
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
        if data.flags.c_contiguous and value.flags.c_contiguous and data.size >= value.size:
            # PyTorch's resize keeps a storage that is large enough (views of out see it).
            data = data.reshape(-1)[: value.size].reshape(value.shape)
        else:
            # New memory in the result's layout (contiguous for the matrix products, the
            # operands' for an element-wise op), in out's dtype.
            data = np.empty_like(value, dtype=data.dtype)
        out._data = data
    np.copyto(data, value, casting="unsafe")
    bump_version(out)
    if DUAL[0] and (has_tangent(out) or any(has_tangent(x) for x in inputs)):
        # (PyTorch checks after the kernel wrote ``out``)
        raise NotImplementedError(
            f"Trying to use forward AD with {name}_out that does not support it because it is "
            "an out= function"
        )
    return out


def squeeze_row(out: Tensor) -> None:
    """``out.squeeze_(0)`` of a ``(1, p)`` out (PyTorch's matmul of a vector and a matrix
    writes a row into its out, then squeezes it in place: one more version)."""
    out._data = out._data[0]
    bump_version(out)
