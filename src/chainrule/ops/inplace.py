"""In-place ops (``add_``, ``mul_``, ``x[i] = v``, ``a -= b`` ...) and the history they rewrite.

An in-place op here is its out-of-place op, whose result is then written into ``self``'s memory
(so every view sees it), with ``self``'s version bumped. When the result is recorded:

* a tensor that is not a view takes the op's node as its new ``grad_fn``;
* a view: its base's history becomes ``CopySlices`` (the gradient of the base is the incoming
  gradient with the view's region replaced by what the op sends to its old values), and the view
  itself becomes ``AsStridedBackward0`` of the new base -- as PyTorch does. Other views of the
  same base pick up the new history the next time they are used (``_tensor.current_grad_fn``).

Saved values keep their meaning: a node that saved ``self`` before it was overwritten gets a
snapshot of the old values, a node that saved its result sees the tensor it was written into
(with its new version), and the version check names the file and line of the last in-place
write, beyond PyTorch's message.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype, _strides
from .._meta import NO_DATA_MESSAGE, MetaArray, meta_like
from .._overrides import AUGMENTED_METHODS, handle_torch_function, overrides_enabled
from .._tensor import (
    _C_TYPE_NAMES,
    COMPLEX_GRAD_MESSAGE,
    CUSTOM_FUNCTION_VIEW,
    INFERENCE_TENSORS,
    INFERENCE_VIEW,
    MULTI_OUTPUT_VIEW,
    NO_ACCUMULATOR,
    NO_GRAD_VIEW,
    Tensor,
    check_inference_inplace,
    gradient_edge,
    install_view_history,
    set_history,
    wrap,
)
from ..autograd.forward_grad import DUAL, get_tangent, refuse_in_place, set_tangent
from ..autograd.grad_mode import GRAD, MODE, SAVED_HOOKS, mode_get
from ..autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ..autograd.inplace import bump_version
from ..autograd.node import SECOND_BACKWARD_MESSAGE, Node, is_released, new_node
from . import pointwise, shape
from ._dispatch import broadcast_error
from ._forward import write_tangent
from ._opnode import OpNode, pack_saved
from ._registry import KEEP, declare_methods, op, recorded_as, zero_derivative
from .conjugate import CONJ_WRITE_MESSAGE, is_conj_view
from .scalar_conversion import fill_value_for

__all__ = [
    "commit", "apply_inplace", "inplace_call", "inplace_method", "augmented", "check_inplace",
    "CopySlices", "AsStridedBackward0", "view_positions", "fill_", "zero_", "copy_",
    "uniform_", "normal_", "view_inplace_error", "refresh_special_view", "t_", "transpose_",
    "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_", "SHIFTS_IN_PLACE", "check_shape",
    "check_cast", "resize_", "resize_as_", "set_", "SetNotImplemented",
]

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)


# PyTorch's refusals to modify a view in place, by how the view was made: the end of the
# message (its start says which view, and whether it or its base was modified).
_VIEW_MESSAGE_ENDS = {
    MULTI_OUTPUT_VIEW: (
        " This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    ),
    NO_GRAD_VIEW: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked)."
    ),
    INFERENCE_VIEW: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside (if "
        "you want the inplace to be tracked)."
    ),
    CUSTOM_FUNCTION_VIEW: (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."
    ),
}


def view_inplace_error(view: Tensor, indirect: bool) -> RuntimeError:
    """PyTorch's error for an in-place change of a view it forbids changing (``indirect``: the
    change was to its base or another view of it, found when the view is next used)."""
    kind = view._view_meta
    fn = view._grad_node
    modified = "its base or another view of its base has been" if indirect else "is being"
    if kind is NO_GRAD_VIEW or kind is INFERENCE_VIEW or fn is None:
        if fn is not None:
            prefix = (
                f"Output {view._output_nr} of {_op_name(fn)} is a view of a view which was "
                "created in"
            )
        else:
            prefix = "A view was created in"
        if kind is INFERENCE_VIEW:
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:
            message = (
                f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
            )
    else:
        message = f"Output {view._output_nr} of {_op_name(fn)} is a view and {modified} " \
            "modified inplace."
    return RuntimeError(message + _VIEW_MESSAGE_ENDS[kind])


def _op_name(node: Node) -> str:
    return re.sub(r"Backward\d*$", "", node.name())


def refresh_special_view(view: Tensor, base: Tensor, check: bool | None) -> None:
    """Use of a view PyTorch forbids modifying in place (``_tensor.NO_GRAD_VIEW`` ...): its
    history is never regenerated; if it or its base changed since it was made, using it where
    autograd needs its history is PyTorch's error (``check``: see ``_tensor.refresh_view``)."""
    if view._vc[0] != view._view_version:
        if view._grad_node is None and not base._requires_grad:
            return  # no history to be wrong about
        if check or (check is None and mode_get() & GRAD):
            raise view_inplace_error(view, indirect=True)
    if view._grad_node is None and base._requires_grad and not view._requires_grad:
        # The base started to require grad (requires_grad_(), or an in-place op with an
        # operand that requires it): so does the view, as PyTorch reads it through its base
        # (any kind: made in no_grad mode, by unbind/split, ...; its grad_fn stays refused).
        view._requires_grad = True
        view._acc = NO_ACCUMULATOR


def check_inplace(self: Tensor, *others: Any) -> None:
    """PyTorch's refusals, when autograd would record an in-place op on ``self`` (grad mode on
    and ``self`` or one of the op's ``others`` requires grad): to modify a view made in no_grad
    mode, by a multi-view op or by a custom Function, a view of a leaf that requires grad, or
    such a leaf; and, in any mode, to modify an inference tensor outside inference mode."""
    check_inference_inplace(self)
    if is_conj_view(self):
        raise RuntimeError(CONJ_WRITE_MESSAGE)
    if not mode_get() & GRAD:
        return
    base = self._base
    if not (
        self._requires_grad
        or (base is not None and base._requires_grad)
        or any(isinstance(o, Tensor) and o._requires_grad for o in others)
    ):
        return
    if base is not None:
        if self._view_meta is not None:
            raise view_inplace_error(self, indirect=False)
        if base._grad_node is None and (self._requires_grad or base._requires_grad):
            # (PyTorch: the view requires grad and its base is a leaf; also when the base
            # stopped requiring grad after the view was made)
            raise RuntimeError(VIEW_OF_LEAF_MESSAGE)
        if base._data.dtype != self._data.dtype:
            raise RuntimeError(DTYPE_VIEW_MESSAGE)
    if self._grad_node is None and self._requires_grad:
        raise RuntimeError(LEAF_MESSAGE)


# A view of another dtype (``.real``, ``.imag``, ``view_as_real``, ``view_as_complex``) maps its
# elements to its base's differently from the element positions CopySlices and
# AsStridedBackward0 use: modifying one (or its base) in place in a graph is refused.
DTYPE_VIEW_MESSAGE = COMPLEX_GRAD_MESSAGE.format(
    name="an in-place change of a view of another dtype (.real, .imag, view_as_real, "
    "view_as_complex) or of its base"
)


def _snapshot_saved_self(node: Any, self: Tensor) -> None:
    """The op's node saved ``self``, which is about to be overwritten: save a copy instead."""
    saved = node._saved
    if saved is None or is_released(saved):
        return
    positions = [
        pos for pos, version in node._versions if version is not None and saved[pos] is self
    ]
    if not positions:
        return
    from .copying import clone

    # Recorded (CloneBackward0 of self's old history), as PyTorch's ``original_self.clone()``.
    snapshot = clone(self)
    values = list(saved)
    for pos in positions:
        values[pos] = snapshot
    node._saved = tuple(values)
    node._versions = tuple(
        (pos, 0 if pos in positions else version) for pos, version in node._versions
    )


#: PyTorch's error for an in-place op without forward derivative (``{name}``: the op, ``_``).
IN_PLACE_NOT_IMPLEMENTED = (
    "Trying to use forward AD with {name}_ that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
    "prioritize its implementation."
)


def _refusing_as_in_place(out_of_place: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``out_of_place`` whose forward-mode refusal names the in-place op, as PyTorch's."""

    def run(*args: Any, **kwargs: Any) -> Tensor:
        try:
            return out_of_place(*args, **kwargs)
        except NotImplementedError as error:
            prefix = "Trying to use forward AD with "
            text = str(error)
            if not text.startswith(prefix) or "derivatives.yaml" not in text:
                raise
            name = text[len(prefix):].split()[0]
            raise NotImplementedError(IN_PLACE_NOT_IMPLEMENTED.format(name=name)) from None

    return run


def apply_inplace(self: Tensor, out_of_place: Callable[..., Tensor], *args: Any,
                  **kwargs: Any) -> Tensor:
    """``out_of_place(self, *args, **kwargs)`` written into ``self`` (:func:`commit`).

    With ``saved_tensors_hooks`` active, what the op's node saves is packed once ``self`` is
    written, as PyTorch packs an in-place op's: the old ``self`` as its (recorded) copy, the
    output as ``self`` itself with its new history.
    """
    mode = mode_get()
    if DUAL[0]:
        out_of_place = _refusing_as_in_place(out_of_place)
    overlap_ok = _check_overlap(self, out_of_place)
    check_operand_overlap(self, out_of_place, args, kwargs)
    if not mode & SAVED_HOOKS:
        return commit(self, out_of_place(self, *args, **kwargs), overlap_ok)
    token = MODE.set(mode & ~SAVED_HOOKS)
    try:
        out = out_of_place(self, *args, **kwargs)
    finally:
        MODE.reset(token)
    commit(self, out, overlap_ok)
    node = out._grad_node
    if isinstance(node, OpNode):
        from ..autograd.graph import current_saved_tensors_hooks

        hooks = current_saved_tensors_hooks()
        if hooks is not None:
            pack_saved(node, hooks, self)
    return self


# In-place ops PyTorch lets write into a tensor whose elements share memory (an expanded one):
# by the name of the out-of-place function they run, None or the deprecation warning's op and
# example.
_OVERLAP_ALLOWED: dict[str, tuple[str, str] | None] = {
    "_fill_scalar": None, "_fill_tensor": None, "_zero": None,
    "masked_fill": ("masked_fill_", "tensor[mask] = scalar"),
    "index_fill": ("index_fill_", "tensor[mask] = scalar"),
    "index_put": ("index_put_", "tensor[indices] = tensor"),
    "_index_put": ("index_put_", "tensor[indices] = tensor"),
}


def _check_overlap(self: Tensor, out_of_place: Callable[..., Any]) -> bool:
    """Whether ``out_of_place`` may be written into ``self`` although its elements share memory
    (PyTorch's refusal otherwise, raised by :func:`commit`); warns as PyTorch for the
    deprecated cases."""
    data = self._data
    if data.flags.writeable or not _strides.has_internal_overlap(data):
        return False
    name = getattr(out_of_place, "__name__", "")
    if name not in _OVERLAP_ALLOWED:
        return False
    warning = _OVERLAP_ALLOWED[name]
    if warning is not None:
        _strides.warn_expanded_write(*warning)
    return True


# Ops PyTorch does not check for inputs overlapping the written tensor (they are no
# TensorIterator ops), and ops that refuse an input on the written tensor's memory even when it
# is the same block (``assert_no_overlap``: the indexed writes), by out-of-place function name.
# (ldexp_: PyTorch's multiplies self by a new tensor, 2 ** other.)
_OPERAND_OVERLAP_UNCHECKED = frozenset(
    "addmm addmv addr baddbmm addbmm masked_scatter masked_fill index_fill _fill_tensor "
    "_fill_scalar set_ _masked_scatter_in_place ldexp".split()
)
_OPERAND_OVERLAP_REFUSED = frozenset(
    "index_add index_copy scatter scatter_add scatter_reduce index_reduce put index_put "
    "_index_put".split()
)


def check_operand_overlap(
    self: Tensor, out_of_place: Callable[..., Any], args: tuple, kwargs: dict[str, Any]
) -> None:
    """PyTorch's refusal of an in-place op whose tensor input shares part of the written
    tensor's memory (``assert_no_partial_overlap``; for the indexed writes any of it): both
    non-overlapping and dense, their blocks overlapping otherwise than as the same block with
    the same strides. Inputs PyTorch cannot judge (an expanded or strided view) pass."""
    name = getattr(out_of_place, "__name__", "")
    if name in _OPERAND_OVERLAP_UNCHECKED:
        return
    refused = ("partial", "full") if name in _OPERAND_OVERLAP_REFUSED else ("partial",)
    data = self._data
    for arg in (*args, *kwargs.values()):
        if isinstance(arg, Tensor):
            status = "full" if arg is self else _strides.overlap_status(data, arg._data)
            if status in refused:
                raise RuntimeError(_strides.PARTIAL_OVERLAP_MESSAGE)


def inplace_call(self: Tensor, out_of_place: Callable[..., Tensor], *args: Any,
                 **kwargs: Any) -> Tensor:
    """``out_of_place(self, *args, **kwargs)`` written into ``self`` as an in-place op, for
    code that writes a result in place (``Tensor.<op>_``, nn's ``inplace=True`` activations,
    dropout): PyTorch's refusals first (:func:`check_inplace`), then :func:`apply_inplace`.

    Pass the op, not its result: under ``saved_tensors_hooks`` the op must run with packing
    deferred, so that its node packs what PyTorch's in-place node packs (the written tensor, a
    recorded copy of the old ``self``), not the temporary result.
    """
    check_inplace(self, *args, *kwargs.values())
    return apply_inplace(self, out_of_place, *args, **kwargs)


def commit(self: Tensor, out: Tensor, overlap_ok: bool = False) -> Tensor:
    """Write the out-of-place result ``out`` into ``self`` and rewrite ``self``'s history.

    ``out`` must have been computed without ``saved_tensors_hooks`` packing (call
    :func:`inplace_call` or :func:`apply_inplace` instead, which see to it)."""
    tangent: Any = False  # (False: no tangent involved)
    if DUAL[0]:
        tangent = _in_place_tangent(self, out)
    data = self._data
    result = out._data
    check_shape(data, result.shape)
    check_cast(data, result.dtype)
    node = out._grad_node
    if isinstance(node, OpNode):
        _snapshot_saved_self(node, self)
    if not data.flags.writeable and not overlap_ok and _strides.has_internal_overlap(data):
        raise RuntimeError(_strides.OVERLAP_MESSAGE)
    if MUTATION_WATCH:
        clone_saved_before_write(self)  # (allow_mutation_on_saved_tensors)
    np.copyto(_strides.writable(data), result, casting="unsafe")
    bump_version(self)
    if tangent is not False:
        write_tangent(self, tangent)
    if node is None:
        return self
    if isinstance(node, OpNode) and node._result is not None:
        # The node's saved output is this tensor, at its new version.
        node._result = (data, self._vc, self._vc[0])
    base = self._base
    if base is None:
        set_history(self, node)
        return self
    _rebase_view(self, base, node)
    return self


def _in_place_tangent(self: Tensor, out: Tensor) -> Any:
    """Forward mode: the tangent ``self`` takes when ``out`` is written into it (``out``'s, None
    for zero), or False when no tangent is involved. Complex tangents are refused."""
    out_tangent = get_tangent(out)
    if out_tangent is None and get_tangent(self) is None:
        return False
    if self._data.dtype.kind == "c" or out._data.dtype.kind == "c":
        refuse_in_place("an in-place operation", self, out)
    return out_tangent


def check_shape(data: np.ndarray, shape: tuple[int, ...]) -> None:
    """PyTorch's error for an in-place result of another shape than ``data``'s (checked before
    :func:`check_cast`)."""
    if shape != data.shape:
        raise RuntimeError(
            f"output with shape [{', '.join(map(str, data.shape))}] doesn't match the broadcast "
            f"shape [{', '.join(map(str, shape))}]"
        )


def check_cast(data: np.ndarray, dtype: np.dtype) -> None:
    """PyTorch's error for an in-place result whose dtype is of a higher category than
    ``data``'s (float into an integer tensor)."""
    if dtype != data.dtype:
        have = _dtype.from_numpy_dtype(dtype)
        want = _dtype.from_numpy_dtype(data.dtype)
        if not _dtype.can_cast(have, want):
            names = _dtype.SCALAR_TYPE_NAMES
            raise RuntimeError(
                f"result type {names[have]} can't be cast to the desired output type {names[want]}"
            )


# ----------------------------------------------------------------------------------------------
# Views: CopySlices on the base, AsStridedBackward0 on the view


def view_positions(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """For each element of ``view``, its index in ``base.reshape(-1)`` (row-major order of
    ``base``); -1 for an element that is not one of the base's.

    As PyTorch's ``AsStridedBackward0`` and ``CopySlices``, the view's place is its offset and
    strides in its own storage, read against the base's offset and strides in the base's
    storage: the same memory while the view shares the base's (every element is found), and
    still PyTorch's positions after the base's data was replaced (``base.data = other``), where
    the addresses of the two no longer relate and an element may fall outside the base.
    """
    itemsize = base.itemsize
    start = relative_offset(base, view) * itemsize
    shared = _strides.storage_root(view) is _strides.storage_root(base)
    if shared and base.flags.c_contiguous:
        flat = np.arange(base.size, dtype=np.int64)
        steps = tuple(s // itemsize * flat.itemsize for s in view.strides)
        return np.lib.stride_tricks.as_strided(
            flat[start // itemsize:], shape=view.shape, strides=steps
        ).copy()
    # General base layout: match byte offsets of the view's elements to the base's.
    base_offsets = _byte_offsets(base)
    view_offsets = _byte_offsets(view) + start
    order = np.argsort(base_offsets, kind="stable")
    ordered = base_offsets[order]
    found = np.minimum(np.searchsorted(ordered, view_offsets), max(base.size - 1, 0))
    if shared:
        return order[found].reshape(view.shape)
    inside = ordered[found] == view_offsets if base.size else np.zeros(view.size, bool)
    return np.where(inside, order[found] if base.size else -1, -1).reshape(view.shape)


def _outside(base: np.ndarray, view: np.ndarray, positions: np.ndarray) -> int | None:
    """None when every element of ``view`` is one of ``base``'s (always, unless the base's
    data was replaced); else the view's offset relative to the base (see CopySlices)."""
    if _strides.storage_root(view) is _strides.storage_root(base):
        return None
    offset = relative_offset(base, view)
    return offset if offset < 0 or (positions < 0).any() else None


def relative_offset(base: np.ndarray, view: np.ndarray) -> int:
    """The view's storage offset less the base's, in elements (PyTorch's ``as_strided``
    offset of the view on the base's gradient)."""
    return _storage_offset(view) - _storage_offset(base)


def _storage_offset(array: np.ndarray) -> int:
    """The offset of ``array``'s first element from the start of its storage, in elements."""
    root = _strides.storage_root(array)
    address = array.__array_interface__["data"][0]
    return (address - root.__array_interface__["data"][0]) // array.itemsize


def _overlaps(view: np.ndarray) -> bool:
    """Whether two elements of ``view`` share memory (a zero stride over a dimension of more
    than one element, as ``expand`` makes, or strides that step onto each other)."""
    if view.size <= 1:
        return False
    dims = sorted((abs(s), n) for n, s in zip(view.shape, view.strides, strict=True) if n > 1)
    span = view.itemsize
    for stride, size in dims:  # each stride must step past everything the smaller ones cover
        if stride < span:
            return True
        span = stride * (size - 1) + span
    return False


def _byte_offsets(a: np.ndarray) -> np.ndarray:
    offsets = np.zeros(a.shape, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(a.shape, a.strides, strict=True)):
        shape = [1] * a.ndim
        shape[axis] = size
        offsets = offsets + (np.arange(size, dtype=np.int64) * stride).reshape(shape)
    return offsets.reshape(-1)


class CopySlices(Node):
    """The base's history after an in-place op on one of its views (PyTorch's ``CopySlices``).

    Its inputs: the base's previous history, then the op's other inputs. Backward: the
    gradient of the base is the incoming gradient except in the view's region, where it is
    what the op sends to the view's old values.
    """

    __slots__ = ("fn", "positions", "view_shape", "overlapping", "outside")

    def name(self) -> str:
        """``'chainrule::autograd::CopySlices'`` (PyTorch's C++ name, this package's)."""
        return "chainrule::autograd::CopySlices"

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        fn = self.fn
        if fn is None:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        positions = self.positions
        if self.outside is not None:
            return self._apply_outside(grads, create_graph)
        if create_graph:
            from .creation import zeros_like
            from .indexing import put, take

            index = wrap(positions.reshape(-1))
            region = take(grads, index).reshape(self.view_shape)
            sent = fn.apply(region, True)
            old = sent[0]
            self._check_overlap(old)
            filler = old if old is not None else zeros_like(region)
            filler = filler.expand(self.view_shape).reshape(-1)
            base_grad = put(grads, index, filler, False)
            return [base_grad, *sent[1:]]
        # Row-major, so that ``flat`` is a view of it (``positions`` index the base row-major):
        # a copy keeping a transposed gradient's layout would make ``reshape`` copy, and the
        # writes below would be lost.
        base_grad = np.array(grads, copy=True, order="C")
        flat = base_grad.reshape(-1)
        region = flat[positions]
        sent = fn.apply(region, False)
        old = sent[0]
        self._check_overlap(old)
        flat[positions] = 0 if old is None else np.broadcast_to(old, region.shape)
        return [base_grad, *sent[1:]]

    def _apply_outside(self, grads: Any, create_graph: bool) -> list[Any]:
        """The view lies partly outside its base (the base's data was replaced after the view
        was made): as PyTorch, a view starting before the base is an error, and the elements
        outside send the op nothing and receive nothing (PyTorch reads memory it never
        initialised there)."""
        if self.outside < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {self.outside}")
        positions = self.positions
        inside = positions >= 0
        if create_graph:
            from .creation import zeros_like
            from .indexing import put

            region = zeros_like(grads.reshape(-1)[:1]).expand(self.view_shape).clone()
            index = wrap(positions[inside])
            region[wrap(inside)] = grads.reshape(-1)[index]
            sent = self.fn.apply(region, True)
            old = sent[0]
            self._check_overlap(old)
            filler = old if old is not None else zeros_like(region)
            filler = filler.expand(self.view_shape)[wrap(inside)]
            return [put(grads, index, filler, False), *sent[1:]]
        base_grad = np.array(grads, copy=True, order="C")
        flat = base_grad.reshape(-1)
        region = np.zeros(self.view_shape, base_grad.dtype)
        region[inside] = flat[positions[inside]]
        sent = self.fn.apply(region, False)
        old = sent[0]
        self._check_overlap(old)
        new = 0 if old is None else np.broadcast_to(old, region.shape)[inside]
        flat[positions[inside]] = new
        return [base_grad, *sent[1:]]

    def _check_overlap(self, old: Any) -> None:
        # PyTorch copies the op's gradient into the view's region of the base's gradient: a
        # view whose elements share memory (an expanded one, written by fill_ or zero_) makes
        # that copy its refusal, in backward.
        if old is not None and self.overlapping:
            raise RuntimeError(_strides.OVERLAP_MESSAGE)

    def release(self) -> None:
        # PyTorch's CopySlices drops the op's node: a second backward through it raises even
        # when that node saved nothing.
        self.fn = None


class AsStridedBackward0(Node):
    """A view's history after its base was rewritten: the gradient goes into the view's
    region of a zero gradient of the base. Where the view sees one element of the base more
    than once (an ``expand``), the gradients of its copies add up."""

    __slots__ = ("positions", "base_shape", "base_dtype", "overlapping", "outside")

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        positions = self.positions.reshape(-1)
        inside = None
        if self.outside is not None:  # (the base's data was replaced: see CopySlices)
            inside = positions >= 0
            positions = positions[inside]
        if create_graph:
            from .creation import zeros
            from .indexing import put

            zero = zeros(self.base_shape, dtype=_dtype.from_numpy_dtype(self.base_dtype))
            values = grads.reshape(-1)
            if inside is not None:
                values = values[wrap(inside)]
            overlapping = self.overlapping or inside is not None
            return [put(zero, wrap(positions), values, overlapping)]
        out = np.zeros(self.base_shape, self.base_dtype)
        values = np.reshape(grads, -1)
        if inside is not None:
            values = values[inside]
        if self.overlapping or inside is not None:
            np.add.at(out.reshape(-1), positions, values)
        else:
            out.reshape(-1)[positions] = values.reshape(positions.shape)
        return [out]


def _rebase_view(view: Tensor, base: Tensor, fn: Node) -> None:
    """``fn`` was applied in place to ``view``: rewrite the histories of base and view."""
    positions = view_positions(base._data, view._data)
    base_edge = gradient_edge(base)
    base_meta = (base._data.shape, base._data.dtype) if base._requires_grad else None
    copy_slices = new_node(
        CopySlices,
        (base_edge, *fn.next_functions[1:]),
        (base_meta, *fn._in_meta[1:]),
    )
    copy_slices.fn = fn
    copy_slices.positions = positions
    copy_slices.view_shape = view._data.shape
    copy_slices.overlapping = _strides.has_internal_overlap(view._data)
    copy_slices.outside = _outside(base._data, view._data, positions)
    set_history(base, copy_slices)
    view_of_base(view, base, positions)


def view_of_base(view: Tensor, base: Tensor, positions: np.ndarray | None = None) -> Node:
    """Give ``view`` the history "this region of its base's current history"."""
    if view._data.dtype != base._data.dtype:
        raise RuntimeError(DTYPE_VIEW_MESSAGE)
    if positions is None:
        positions = view_positions(base._data, view._data)
    # (a leaf base that requires grad: its AccumulateGrad)
    node = new_node(AsStridedBackward0, (gradient_edge(base),),
                    ((base._data.shape, base._data.dtype),))
    node.positions = positions
    node.base_shape = base._data.shape
    node.base_dtype = base._data.dtype
    node.overlapping = _overlaps(view._data)
    node.outside = _outside(base._data, view._data, positions)
    set_history(view, node)
    view._view_src_fn = base._grad_node
    view._view_version = view._vc[0]
    return node


# ----------------------------------------------------------------------------------------------
# View ops in place (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``): ``self`` takes the
# view's shape and strides. Its memory is unchanged, but its version is bumped (a node that saved
# it refuses to use it), and its history is the view op's own node (``TBackward1`` ...), whose
# next function is ``self``'s old history; a view stays a view of its base.


def _callable_names(fn: Any) -> tuple[str, ...]:
    """The names the errors of ``fn`` itself give it: its function's, its op's."""
    op_name = getattr(getattr(fn, "op", None), "name", "")
    return (getattr(fn, "__name__", ""), getattr(fn, "__qualname__", ""), op_name)


def _in_place_view_op(recorded: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    names = _callable_names(recorded)

    def method(self: Tensor, *args: Any) -> Tensor:
        check_inplace(self)
        try:
            out = recorded(self, *args)  # (raises before anything changed)
        except TypeError as error:
            message = in_place_argument_error(str(error), name[:-1], False, names)
            if message is None:
                raise
            raise TypeError(message) from None
        if MUTATION_WATCH:
            clone_saved_before_write(self)  # (allow_mutation_on_saved_tensors)
        self._data = out._data
        if DUAL[0]:
            tangent = get_tangent(out)  # (the view of self's tangent: it follows self)
            if tangent is not None:
                set_tangent(self, tangent)
        bump_version(self)
        node = out._grad_node
        if node is not None:
            # Not set_history: PyTorch leaves retain_grad on the old history here, so ``.grad``
            # is the gradient of the value before the op, in its old shape.
            self._grad_node = node
            self._output_nr = 0
            if self._base is not None:
                # The view's history is now this node, made at this version of its base.
                self._view_src_fn = self._base._grad_node
                self._view_version = self._vc[0]
        return self

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = (f"In-place ``{name[:-1]}``: ``self`` takes the result's shape and strides "
                      "(returns ``self``).")
    return method


_t_in_place = recorded_as(shape.t, "TBackward1")
_transpose_in_place = recorded_as(shape.transpose, "TransposeBackward1")
_unsqueeze_in_place = recorded_as(shape.unsqueeze, "UnsqueezeBackward1")
# squeeze_'s nodes: SqueezeBackward3 (no dim), 4 (one dim), 5 (several), as squeeze's 0, 1, 2.
_SQUEEZE_IN_PLACE = tuple(recorded_as(overload, f"SqueezeBackward{3 + k}")
                          for k, overload in enumerate(shape.SQUEEZE_OVERLOADS))


def _squeeze_in_place(self: Tensor, dim: Any = None) -> Tensor:
    return shape.squeeze_with(_SQUEEZE_IN_PLACE, self, dim)


def _t(self: Tensor) -> Tensor:
    if self._data.ndim > 2:
        raise RuntimeError(
            f"t_() expects a tensor with <= 2 dimensions, but self is {self._data.ndim}D")
    return _t_in_place(self)


_as_strided_in_place_op = recorded_as(shape._as_strided, "AsStridedBackward1")


def _as_strided_in_place(self: Tensor, size: Any, stride: Any,
                         storage_offset: int | None = None) -> Tensor:
    return _as_strided_in_place_op(
        self, *shape._as_strided_arguments(self, size, stride, storage_offset))


t_ = _in_place_view_op(_t, "t_")
as_strided_ = _in_place_view_op(_as_strided_in_place, "as_strided_")
transpose_ = swapaxes_ = swapdims_ = _in_place_view_op(_transpose_in_place, "transpose_")
unsqueeze_ = _in_place_view_op(_unsqueeze_in_place, "unsqueeze_")
squeeze_ = _in_place_view_op(_squeeze_in_place, "squeeze_")


# ----------------------------------------------------------------------------------------------
# Making in-place methods from out-of-place ops


# Arithmetic that optimizers do in place under no_grad (``p.add_(g, alpha=-lr)``): computed by
# the out-of-place op's own forward on the arrays and written straight into the tensor when
# nothing is recorded, without making a Tensor and a history for the result. The forward is the
# out-of-place one so the values are the same to the bit (float16 times a number in float32,
# the single-rounding ``add`` with ``alpha`` ...): method name -> (forward, forward with alpha),
# filled on first use.
_KERNELS: dict[str, tuple[Callable[..., Any], Callable[..., Any] | None]] = {}


def _kernels() -> dict[str, tuple[Callable[..., Any], Callable[..., Any] | None]]:
    _KERNELS.update({
        "add_": (pointwise._add.op.forward, pointwise._add_alpha.op.forward),
        "sub_": (pointwise._sub.op.forward, pointwise._sub_alpha.op.forward),
        "mul_": (pointwise.mul.op.forward, None),
        "div_": (pointwise._div.op.forward, None),
    })
    return _KERNELS


def _direct(self: Tensor, name: str, args: tuple, kwargs: dict[str, Any]) -> bool:
    """Try the unrecorded fast path for a floating ``self``; False when the general path is
    needed (grad recorded, type promotion, broadcasting ``self``, errors to raise)."""
    if len(args) != 1 or MUTATION_WATCH or DUAL[0]:  # (MUTATION_WATCH, DUAL: see commit)
        return False
    forward, with_alpha = (_KERNELS or _kernels())[name]
    alpha = 1
    if kwargs:
        if with_alpha is None or len(kwargs) != 1 or "alpha" not in kwargs:
            return False
        alpha = kwargs["alpha"]
        if type(alpha) is not int and type(alpha) is not float:
            return False
    other = args[0]
    data = self._data
    if data.dtype.kind not in "fV" or not data.flags.writeable:
        return False
    if INFERENCE_TENSORS:
        check_inference_inplace(self)
    grad_mode = mode_get() & GRAD
    if grad_mode and (self._requires_grad or self._base is not None and self._base._requires_grad):
        return False  # (a view made before its base required grad: check_inplace's error)
    if isinstance(other, Tensor):
        if other._requires_grad and grad_mode:
            return False
        value = other._data
        if value.dtype != data.dtype:
            return False  # promotion (and PyTorch's errors for a result it cannot cast)
        if value is not data and np.may_share_memory(data, value):
            return False  # (the general path refuses a partial overlap)
    elif type(other) is float or type(other) is int:
        value = other  # a number never promotes a floating tensor
    else:
        return False
    try:
        if alpha == 1 and data.dtype is not _HALF:
            # float32/float64 with a number or an array of the same dtype: the forward is this
            # NumPy ufunc, so it may write straight into ``self`` (a large tensor is not copied;
            # NumPy refuses, before writing, an ``other`` that would broadcast ``self``).
            _UFUNCS[name](data, value, out=data)
            bump_version(self)
            return True
        if data.dtype is _SINGLE and np.shape(value) == data.shape:
            # ``p.add_(g, alpha=-lr)``, the optimizers' step: the multiply-add written
            # straight into ``self`` (the forward's values, without a sum to copy back).
            pointwise.multiply_add_single(data, value, alpha if name == "add_" else -alpha,
                                          out=data)
            bump_version(self)
            return True
        result = forward(data, value) if alpha == 1 else with_alpha(data, value, alpha)
    except ValueError:
        return False  # not broadcastable: the general path raises PyTorch's error
    if result.shape != data.shape:
        return False  # ``other`` broadcasts ``self``: the general path raises
    np.copyto(data, result)
    bump_version(self)
    return True


_HALF = np.dtype(np.float16)
_SINGLE = np.dtype(np.float32)
_UFUNCS: dict[str, Any] = {
    "add_": np.add, "sub_": np.subtract, "mul_": np.multiply, "div_": np.true_divide,
}


def overriding_argument(args: tuple, kwargs: dict[str, Any]) -> bool:
    """Whether an argument after ``self`` is a tensor whose type overrides
    ``__torch_function__`` (dispatch on): PyTorch hands ``self.<op>_(...)`` to that type, with
    the in-place method as ``func``, even when ``self`` is a plain tensor (``vmap``'s batched
    tensors refuse to be written into a tensor that is not batched there)."""
    for arg in args:
        if type(arg) is not Tensor and isinstance(arg, Tensor) and arg._tf_active:
            return overrides_enabled()
    for arg in kwargs.values():
        if type(arg) is not Tensor and isinstance(arg, Tensor) and arg._tf_active:
            return overrides_enabled()
    return False


def dispatch_in_place(name: str, self: Tensor, args: tuple, kwargs: dict[str, Any]) -> Any:
    """``self.<name>(*args, **kwargs)`` handed to the overriding types among the arguments."""
    relevant = (self, *args, *kwargs.values())
    return handle_torch_function(getattr(Tensor, name), relevant, self, *args, **kwargs)


def inplace_method(out_of_place: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``self.<name>(*args)``: ``out_of_place(self, *args)`` written into ``self``; its
    argument errors name the in-place method as PyTorch's (``add_(): argument 'other'
    (position 1)``, not the function's ``add(): ... (position 2)``)."""
    fast = name in ("add_", "sub_", "mul_", "div_")
    doc = f"In-place version of ``{out_of_place.__name__}`` (returns ``self``)."
    base = name[:-1]
    # (a Tensor method's errors already count positions after ``self``)
    method_form = getattr(Tensor, base, None) is out_of_place
    names = _callable_names(out_of_place)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if (args or kwargs) and overriding_argument(args, kwargs):
            return dispatch_in_place(name, self, args, kwargs)
        if fast and _direct(self, name, args, kwargs):
            return self
        try:
            return inplace_call(self, out_of_place, *args, **kwargs)
        except TypeError as error:
            message = in_place_argument_error(str(error), base, method_form, names)
            if message is None:
                raise
            raise TypeError(message) from None

    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = doc
    return method


_POSITION = re.compile(r"\(position (\d+)\)")
_ARITY = re.compile(
    r"^([\w.<>]+)\(\) takes (?:from (\d+) to )?(\d+) positional arguments? but (\d+) were given$"
)
_SELF_PARAMETER = re.compile(r"^ \* \(Tensor input(, |\))", re.MULTILINE)


def in_place_argument_error(message: str, base: str, method_form: bool,
                            names: tuple[str, ...] = ()) -> str | None:
    """The argument error ``message`` of the function ``base`` (an arity error also of one of
    ``names``, those of the callable computing it) as PyTorch words it for ``<base>_``:
    named so, positions counted after ``self`` (unless ``method_form``: they are already),
    and in an "invalid combination" the given types and the signatures without ``self``,
    ``out`` and the overloads taking a number as ``self``. None when the message is not one
    of those argument errors."""
    arity = _ARITY.match(message)
    if arity and arity.group(1) in (base, *names):
        least = None if arity.group(2) is None else int(arity.group(2)) - 1
        takes, given = int(arity.group(3)) - 1, int(arity.group(4)) - 1
        if takes == 0:  # (a method of self alone: CPython's message for PyTorch's C method)
            return f"TensorBase.{base}_() takes no arguments ({given} given)"
        plural = "" if takes == 1 and least is None else "s"
        count = f"from {least} to {takes}" if least is not None else f"{takes}"
        return f"{base}_() takes {count} positional argument{plural} but {given} were given"
    named = next((n for n in (base, *names) if n and message.startswith(f"{n}(")), None)
    if named is None:
        return None
    message = f"{base}_{message[len(named):]}"
    if method_form:
        return message
    message = _POSITION.sub(lambda m: f"(position {int(m.group(1)) - 1})", message, count=1)
    if "received an invalid combination of arguments - got (Tensor" in message:
        message = message.replace("got (Tensor, ", "got (", 1).replace("got (Tensor)", "got ()", 1)
        lines = [line for line in message.split("\n") if not line.startswith(" * (Number self")]
        message = "\n".join(lines).replace(", *, Tensor out = None", "")
        message = _SELF_PARAMETER.sub(lambda m: " * (" if m.group(1) == ", " else " * ()", message)
    return message


def augmented(out_of_place: Callable[..., Tensor], name: str) -> Callable[..., Any]:
    """``a op= b``: in place when ``b`` is a tensor or number, as PyTorch's ``__iadd__``."""

    def method(self: Tensor, other: Any) -> Any:
        if not (isinstance(other, Tensor | int | float | bool | complex | np.generic)):
            return NotImplemented
        if overriding_argument((other,), {}):
            return dispatch_in_place(AUGMENTED_METHODS.get(name, name), self, (other,), {})
        check_inplace(self, other)
        return apply_inplace(self, out_of_place, other)

    method.__name__ = name
    return method



def _shift_in_place(name: str) -> Callable[..., Tensor]:
    """``self.<name>_(other)``'s op (and ``<<=``'s or ``>>=``'s): the shift, after PyTorch's
    checks of its result against ``self``, which come before its kernel's error for a dtype it
    does not take (``"lshift_cpu" not implemented for 'Float'``)."""
    shift = pointwise.SHIFT_OPS[name]

    def in_place(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        other = pointwise.shift_argument(f"{name}_", args, kwargs)
        data = self._data
        try:
            shape = np.broadcast_shapes(data.shape, np.shape(other._data if isinstance(
                other, Tensor) else other))
        except ValueError:
            pass  # the shift raises PyTorch's error for shapes that do not broadcast
        else:
            check_shape(data, shape)
            check_cast(data, _dtype.result_type(self, other).np)
        return shift(self, other)

    in_place.__name__ = name  # (the in-place method's doc names it)
    return in_place


#: The shifts' in-place ops: ``Tensor.bitwise_left_shift_`` ... write them into ``self``, as do
#: ``<<=`` and ``>>=`` (ops/__init__.py).
SHIFTS_IN_PLACE = {name: _shift_in_place(name) for name in pointwise.SHIFT_OPS}
declare_methods("bitwise_left_shift", inplace=SHIFTS_IN_PLACE["bitwise_left_shift"])
declare_methods("bitwise_right_shift", inplace=SHIFTS_IN_PLACE["bitwise_right_shift"])


# ----------------------------------------------------------------------------------------------
# Ops that exist only to be written in place: fill, zero, copy, random fills


@op("FillBackward2", promote=KEEP, complex_ok=True)
def _fill_scalar(self, value):
    return np.full_like(self, fill_value_for(value, self.dtype, self.size))


_fill_scalar.derivative("self")(zero_derivative)  # (zeros where grad is inf or NaN too)


@op("FillBackward3", inputs=("self", "value"), promote=KEEP, complex_ok=True)
def _fill_tensor(self, value):
    return np.full_like(self, value)


_fill_tensor.derivative("self")(zero_derivative)  # (zeros where grad is inf or NaN too)


@_fill_tensor.derivative("value")
def _(ops, grad):
    return ops.sum(grad, tuple(range(len(grad.shape))), False)


@op("ZeroBackward0", promote=KEEP, complex_ok=True)
def _zero(self):
    return np.zeros_like(self)


_zero.derivative("self")(zero_derivative)  # (zeros where grad is inf or NaN too)


@op("CopyBackwards", inputs=("self", "src"), promote=KEEP, half_native=True,
    complex_ok=True)
def _copy(self, src):
    if np.shape(src) != self.shape:
        try:
            src = np.broadcast_to(src, self.shape)
        except ValueError:
            # PyTorch's errors: shapes that do not broadcast, else a source that broadcasts to
            # another shape than the destination's
            error = broadcast_error(self, src)
            if error is None:
                check_shape(self, np.broadcast_shapes(self.shape, np.shape(src)))
            raise error from None
    return np.array(src, dtype=self.dtype, copy=True)


_copy.derivative("self")(zero_derivative)  # (zeros where grad is inf or NaN too)


@_copy.derivative("src")
def _(ops, grad):
    # The engine sums broadcast dimensions and casts to the source's dtype.
    return grad


@op("UniformBackward0", promote=KEEP, half_native=True)
def _uniform(self, low, high, generator):
    from . import random_streams
    from .creation import _gen

    rng = _gen(generator)
    return random_streams.uniform(rng, self.shape, self.dtype, low, high, self.strides)


_uniform.derivative("self")(zero_derivative)  # (zeros where grad is inf or NaN too)


@op("NormalBackward0", promote=KEEP, half_native=True)
def _normal(self, mean, std, generator):
    from . import random_streams
    from .creation import _gen

    rng = _gen(generator)
    return random_streams.normal(rng, self.shape, self.dtype, mean, std, self.strides)


_normal.derivative("self")(zero_derivative)  # (zeros where grad is inf or NaN too)


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to ``value`` (a number or a 0-d tensor)."""
    if overriding_argument((value,), {}):
        return dispatch_in_place("fill_", self, (value,), {})
    check_inplace(self, value)
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value._data.ndim} dimensions."
            )
        return apply_inplace(self, _fill_tensor, value)
    return apply_inplace(self, _fill_scalar, value)


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero."""
    check_inplace(self)
    return apply_inplace(self, _zero)


def copy_(self: Tensor, src: Any, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, cast to ``self``'s dtype) into ``self``."""
    if overriding_argument((src,), {}):
        given = {"non_blocking": True} if non_blocking else {}
        return dispatch_in_place("copy_", self, (src,), given)
    check_inplace(self, src)
    if not isinstance(src, Tensor):
        raise TypeError(
            f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}"
        )
    if (type(src._data) is MetaArray) != (type(self._data) is MetaArray):
        if type(src._data) is MetaArray:
            raise NotImplementedError(NO_DATA_MESSAGE)
        src = wrap(meta_like(src._data))  # (into a meta tensor: only the shapes matter)
    return apply_inplace(self, _copy, src)


#: Installed by ``chainrule.func`` while a ``vmap`` with ``randomness="different"`` runs: the
#: in-place random ops call them first, and they refuse to fill a tensor that is not batched
#: (every example would get the same draws), as PyTorch's vmap does.
INPLACE_DRAW_CHECKS: list[Callable[[], None]] = []


def check_inplace_draw() -> None:
    """Run the checks of :data:`INPLACE_DRAW_CHECKS` (an in-place random op is starting)."""
    for check in INPLACE_DRAW_CHECKS:
        check()


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples from ``U(from_, to)``."""
    check_inplace_draw()
    check_inplace(self)
    _check_draw_kernel(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}"
        )
    return apply_inplace(self, _uniform, from_, to, generator)


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with samples from ``N(mean, std**2)``."""
    check_inplace_draw()
    check_inplace(self)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    _check_draw_kernel(self, "normal_kernel_cpu")
    return apply_inplace(self, _normal, mean, std, generator)


def _check_draw_kernel(self: Tensor, kernel: str) -> None:
    """PyTorch's refusal to draw floating-point samples into an integer or bool tensor."""
    if self._data.dtype.kind not in "fcV":  # (V: bfloat16)
        name = _dtype.SCALAR_TYPE_NAMES[_dtype.from_numpy_dtype(self._data.dtype)]
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


install_view_history(refresh_special_view, view_of_base)


# ----------------------------------------------------------------------------------------------
# resize_, resize_as_ and set_: ``self`` takes another geometry (and for set_ other memory). A
# storage that must grow is replaced by a longer copy, and every tensor that shares it is moved
# onto the copy, as all tensors of a PyTorch storage see it grow.

RESIZE_GRAD_MESSAGE = "cannot resize variables that require grad"

def _byte_offset(a: np.ndarray, root: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0] - root.__array_interface__["data"][0])


def _grow_storage(root: np.ndarray, elements: int) -> np.ndarray:
    """Replace the storage ``root`` by one of ``elements`` elements (its old ones first, zeros
    after) and move every tensor on ``root`` there; return the new 1-D storage.

    NumPy cannot re-point an array at other memory, and nothing lists the tensors on a storage
    (a NumPy view knows its base, not the other way round; views, ``.data``, ``set_`` and
    ``from_numpy`` tensors share no object of their own), so they are found among the live
    objects (only when a storage grows, which PyTorch does by reallocating it). Only tensors
    are read, through Tensor's own ``_data`` slot: no other object's attributes, no subclass's
    ``__getattribute__`` or properties run."""
    import gc

    old = _strides.flat_storage(root)
    new = np.zeros(elements, root.dtype)
    new[:old.size] = old
    for obj in gc.get_objects():
        if not issubclass(type(obj), Tensor):  # (not isinstance: it reads obj.__class__)
            continue
        try:
            data = _DATA_SLOT.__get__(obj, Tensor)
        except AttributeError:  # (a tensor being made or torn down: no data yet)
            continue
        # (a tensor vmap batched holds no NumPy array: it is on no storage)
        if isinstance(data, np.ndarray) and _strides.storage_root(data) is root:
            strides = tuple(s // data.itemsize for s in data.strides)
            offset = _byte_offset(data, root) // data.itemsize
            moved = _strides.on_storage(new, data.shape, strides, offset, data.flags.writeable)
            _DATA_SLOT.__set__(obj, moved)
    return new


_DATA_SLOT = Tensor.__dict__["_data"]  # (the slot's descriptor, under any subclass's override)


def _place(self: Tensor, root: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...],
           offset: int) -> np.ndarray:
    """``shape``/``strides`` at ``offset`` on the storage ``root``, grown first if too small
    (the storage a geometry needs: PyTorch's, none for no element)."""
    needed = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(
        shape, strides, strict=True))
    flat = _strides.flat_storage(root)
    if needed > flat.size:
        flat = _grow_storage(root, needed)
    return _strides.on_storage(flat, shape, strides, offset)


def _size_arguments(name: str, sizes: tuple[Any, ...]) -> tuple[int, ...]:
    """``resize_``'s sizes (ints, or one sequence of ints), with PyTorch's TypeErrors."""
    if not sizes:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(sizes) == 1 and isinstance(sizes[0], tuple | list):
        for pos, n in enumerate(sizes[0]):
            if not _is_int(n):
                raise TypeError(
                    f"{name}(): argument 'size' (position 1) must be tuple of ints, but found "
                    f"element of type {type(n).__name__} at pos {pos}"
                )
        return tuple(int(n) for n in sizes[0])
    for n in sizes:
        if not _is_int(n):
            raise TypeError(
                f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                f"{type(n).__name__}"
            )
    return tuple(int(n) for n in sizes)


def _is_int(n: Any) -> bool:
    return isinstance(n, int | np.integer) or (
        isinstance(n, Tensor) and n._data.ndim == 0 and n._data.dtype.kind in "iu")


def _check_numel(shape: tuple[int, ...]) -> None:
    if any(n < 0 for n in shape):
        if 0 in shape:
            # PyTorch makes a tensor of that size (no element: nothing overflows); NumPy cannot.
            raise RuntimeError(
                f"chainrule cannot make a tensor of size {list(shape)}: negative sizes (which "
                "PyTorch accepts beside a size 0) are not supported"
            )
        raise RuntimeError("numel: integer multiplication overflow")
    if math.prod(shape) > 2 ** 63 - 1:
        raise RuntimeError("numel: integer multiplication overflow")


def _format_strides(name: str, shape: tuple[int, ...], memory_format: Any) -> tuple[int, ...]:
    """The strides ``resize_`` gives ``shape`` in ``memory_format`` (PyTorch's errors)."""
    if memory_format is None or memory_format == _strides.contiguous_format:
        return _strides.contiguous_strides(shape)
    if memory_format not in _strides.MEMORY_FORMATS:
        raise TypeError(
            f"{name}(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(memory_format).__name__}"
        )
    if memory_format == _strides.preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    return _strides.memory_format_strides(shape, memory_format)


def _resize(self: Tensor, name: str, shape: tuple[int, ...], memory_format: Any) -> Tensor:
    if self.requires_grad:  # (also a no-grad view of a tensor that requires grad)
        raise RuntimeError(RESIZE_GRAD_MESSAGE)
    check_inference_inplace(self)
    _check_numel(shape)
    data = self._data
    if data.shape == shape and memory_format is None:
        return self  # nothing changes, not even the version (as in PyTorch)
    # Every check before any change (PyTorch gives ``self`` the sizes before it refuses a
    # memory format; chainrule leaves a call that raises without effect).
    strides = _format_strides(name, shape, memory_format)
    root = _strides.storage_root(data)
    offset = _byte_offset(data, root) // data.itemsize
    if MUTATION_WATCH:
        clone_saved_before_write(self)  # (allow_mutation_on_saved_tensors)
    if data.shape == shape and _strides.element_strides(data) == strides:
        return self
    # (growing moves ``self`` too: its new array is made on the grown storage)
    self._data = _place(self, root, shape, strides, offset)
    if data.shape != shape:
        bump_version(self)  # (a new layout of the same sizes is no write for PyTorch)
    return self


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the sizes ``sizes`` (contiguous strides, or ``memory_format``'s), in
    place: its elements are the first ones of its storage from its offset, in row-major
    order; the storage grows (new elements are zeros here, uninitialised in PyTorch) when it is
    too small. Refused for a tensor that requires grad. Returns ``self``."""
    return _resize(self, "resize_", _size_arguments("resize_", sizes), memory_format)


def resize_as_(self: Tensor, the_template: Any, *, memory_format: Any = None) -> Tensor:
    """:meth:`resize_` to the sizes of ``the_template`` (with ``memory_format``
    ``preserve_format``, in the template's suggested memory format)."""
    if not isinstance(the_template, Tensor):
        raise TypeError(
            "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
            f"{type(the_template).__name__}"
        )
    if memory_format == _strides.preserve_format:
        memory_format = _strides.suggest_memory_format(the_template._data)
        if memory_format == _strides.contiguous_format:
            memory_format = None
    return _resize(self, "resize_as_", tuple(the_template._data.shape), memory_format)


class SetNotImplemented(Node):
    """What PyTorch records for ``set_`` in grad mode (its derivative is not implemented):
    ``grad_fn=<NotImplemented>``; running it raises PyTorch's error."""

    __slots__ = ()

    def name(self) -> str:
        """``'chainrule::autograd::NotImplemented'`` (PyTorch's C++ name, this package's)."""
        return "chainrule::autograd::NotImplemented"

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        raise RuntimeError("derivative for set_ is not implemented")


SetNotImplemented.__name__ = SetNotImplemented.__qualname__ = "NotImplemented"

_SET_SIGNATURES = (
    "()", "(torch.Storage source)",
    "(torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
    "(Tensor source)",
    "(Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None)",
)
_MISSING: Any = object()


def _type_label(value: Any, elements: bool = True) -> str:
    if isinstance(value, Tensor):
        return "Tensor"
    if elements and isinstance(value, list) and value:
        return f"list of [{', '.join(sorted({type(v).__name__ for v in value}))}]"
    return type(value).__name__


def _set_type_error(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    """PyTorch's TypeError for arguments no ``set_`` overload takes."""
    got = [_type_label(a, False) for a in args] + [f"{k}={_type_label(v, False)}"
                                                   for k, v in kwargs.items()]
    lines = []
    for signature in _SET_SIGNATURES:
        lines.append(f" * {signature}\n")
        if (len(args) == 1 and not kwargs and not isinstance(args[0], Tensor)
                and "offset" not in signature):
            lines.append("      didn't match because some of the arguments have invalid types: "
                         f"(!{_type_label(args[0])}!)\n")
    return TypeError(
        f"set_() received an invalid combination of arguments - got ({', '.join(got)}), but "
        f"expected one of:\n{''.join(lines)}"
    )


def _sizes_or_none(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, tuple | list) and all(_is_int(n) for n in value):
        return tuple(int(n) for n in value)
    return None


def set_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Make ``self`` a tensor of another memory: ``set_()`` an empty one; ``set_(source)``
    ``source``'s storage, sizes, strides and offset (sharing its memory, as a view would, but
    keeping ``self``'s version counter); ``set_(source, storage_offset, size, stride=None)``
    that geometry on the storage of ``source`` (contiguous; offsets add up; the storage grows
    if too small). ``source`` is a Tensor of ``self``'s dtype (chainrule has no Storage).

    In grad mode, when ``self`` (or a Tensor ``source``, by the one-argument form) requires
    grad, the history becomes PyTorch's ``NotImplemented`` node. Returns ``self``.
    """
    names = ("source", "storage_offset", "size", "stride")
    bound = dict(zip(names, args, strict=False))
    if len(args) > len(names) or any(k not in names or k in bound for k in kwargs):
        raise _set_type_error(args, kwargs)
    bound.update(kwargs)
    source = bound.get("source", _MISSING)
    geometry = None
    if source is not _MISSING and not isinstance(source, Tensor):
        raise _set_type_error(args, kwargs)
    if len(bound) > 1:
        offset, size = bound.get("storage_offset", _MISSING), bound.get("size", _MISSING)
        stride = bound.get("stride")
        shape = _sizes_or_none(size)
        steps = None if stride is None else _sizes_or_none(stride)
        if (source is _MISSING or not _is_int(offset) or shape is None
                or (stride is not None and steps is None)):
            raise _set_type_error(args, kwargs)
        geometry = (int(offset), shape, steps)
    check_inplace(self, *(() if source is _MISSING or geometry else (source,)))
    data = self._data
    if source is not _MISSING and source._data.dtype != data.dtype:
        names_c = _C_TYPE_NAMES
        raise RuntimeError(
            f"Could not set tensor of type {names_c.get(source._data.dtype.name)} to a tensor "
            f"of type {names_c.get(data.dtype.name)}"
        )
    if geometry is not None:
        new = _set_geometry(source, *geometry)
    elif source is _MISSING:
        new = np.empty(0, data.dtype)
    else:
        new = source._data
    if MUTATION_WATCH:
        clone_saved_before_write(self)  # (allow_mutation_on_saved_tensors)
    self._data = new
    if self._base is not None:
        # PyTorch keeps calling it a view of its old base; here it is a tensor of its own.
        self._base = None
    if self._grad_node is None and self._acc is not None and self._acc is not NO_ACCUMULATOR:
        # A leaf gets a new AccumulateGrad, as in PyTorch: graphs made before send their
        # gradient to the old one (``autograd.grad`` asked for the leaf refuses them).
        self._acc = None
    bump_version(self)
    if not mode_get() & GRAD:
        return self
    if self._requires_grad or (geometry is None and source is not _MISSING
                               and source._requires_grad):
        edges = [gradient_edge(self)] if self._requires_grad else [(None, 0)]
        metas: list[Any] = [(data.shape, data.dtype) if self._requires_grad else None]
        if source is not _MISSING and geometry is None:
            edges.append(gradient_edge(source))
            metas.append((source._data.shape, source._data.dtype)
                         if source._requires_grad else None)
        set_history(self, new_node(SetNotImplemented, tuple(edges), tuple(metas)))
    return self


def _set_geometry(source: Tensor, offset: int, shape: tuple[int, ...],
                  strides: tuple[int, ...] | None) -> np.ndarray:
    """``set_(source, offset, shape, strides)``'s array (PyTorch's checks, in its order)."""
    data = source._data
    if not data.flags.c_contiguous:
        raise RuntimeError("passed in tensor to be used as storage must be contiguous")
    root = _strides.storage_root(data)
    offset += _byte_offset(data, root) // data.itemsize
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if strides is None:
        _check_numel(shape)
        strides = _strides.contiguous_strides(shape)
    elif len(strides) != len(shape):
        raise RuntimeError(
            f"unequal size length ({len(shape)}) and stride length ({len(strides)})")
    elif any(s < 0 for s in strides):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(shape)} and "
            f"strides={list(strides)}"
        )
    else:
        _check_numel(shape)
    return _place(source, root, shape, strides, offset)
