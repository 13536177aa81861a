"""The :class:`Tensor`: a NumPy array plus the autograd metadata PyTorch keeps beside it.

Only what needs no op machinery lives here (attributes, conversions, ``backward``); the ops
modules attach the arithmetic methods and operators (``Tensor.add``, ``__mul__`` ...) from the op
table, so each op is declared once.
"""

from __future__ import annotations

import math
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from . import _dtype
from ._dtype import dtype as DType
from ._frames import user_stacklevel
from ._meta import ITEM_MESSAGE, NO_DATA_MESSAGE, NUMPY_MESSAGE, MetaArray, logical_strides
from ._size import CPU, META_DEVICE, Size, device
from ._strides import (
    MEMORY_FORMATS,
    TypedStorage,
    UntypedStorage,
    dim_order,
    element_strides,
    is_contiguous_as,
    memory_format,
    storage_root,
    typed_storage,
    untyped_storage,
)
from ._strides import strided as _strided_layout
from .autograd.forward_grad import DUAL, clear_tangent, get_tangent
from .autograd.grad_mode import GRAD, INFERENCE, INFERENCE_BLOCKS, mode_get
from .autograd.node import (
    AccumulateGrad,
    HookDict,
    Node,
    RemovableHandle,
    next_sequence_nr,
    remember_output,
    short_name,
)

__all__ = ["Tensor", "make_tensor", "wrap"]

_ndarray = np.ndarray
_new = object.__new__

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)


# Complex tensors can require grad, but only the ops on the allowlist of complex autograd
# (``complex_ok``: derivatives following PyTorch's conjugate Wirtinger convention, tested against
# PyTorch) record a node with a complex input or result; the others refuse with this message
# (``{name}``: the op) rather than give a silently wrong gradient.
COMPLEX_GRAD_MESSAGE = (
    "chainrule does not differentiate complex tensors through {name} yet: its derivative is not "
    "on chainrule's allowlist of complex autograd"
)


# Attributes ``del`` may not remove, with PyTorch's message (``del x.grad`` is allowed: it sets
# the gradient to None). Refused by the properties' deleters, not by a ``__delattr__``: defining
# that would route every attribute store of every tensor through a Python-level slot (CPython
# cannot specialise STORE_ATTR on a class that overrides ``__setattr__``/``__delattr__``),
# which made each attribute store ~5x slower (the seed step took 51% more instructions).
_UNDELETABLE = {
    "data": "Deleting tensor data is not allowed. Delete tensor instead!",
    "requires_grad": "requires_grad must be a bool",
    "_grad_fn": "Deletion of _grad_fn not allowed. Detach tensor instead!",
    "_backward_hooks": "Deletion of _backwards_hooks not allowed!",
}


def _refuse_delete(name: str) -> None:
    raise RuntimeError(_UNDELETABLE[name])


#: Non-leaf tensors ``detach_()`` cut from their history: id -> (weak reference, the sequence
#: number at the time). A node made before that and saving the tensor as an input refuses to
#: unpack it (:func:`check_not_detached_in_place`).
DETACHED_IN_PLACE: dict[int, tuple[weakref.ref, int]] = {}

#: PyTorch's error for such a saved tensor.
DETACHED_SAVED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead"
)


def check_not_detached_in_place(t: Any, node: Node) -> None:
    """PyTorch's error if ``t``, saved by ``node`` while it had a history, was detached in
    place since (call only when ``DETACHED_IN_PLACE`` is not empty)."""
    entry = DETACHED_IN_PLACE.get(id(t))
    if entry is not None and entry[0]() is t and t._grad_node is None and node._seq < entry[1]:
        raise RuntimeError(DETACHED_SAVED_MESSAGE)


#: ``_backward_hooks`` assigned on non-leaf tensors: id -> (weak reference, the value).
_ASSIGNED_HOOKS: dict[int, tuple[weakref.ref, Any]] = {}


class _ClearedHooks(HookDict):
    """A leaf's hooks after ``_backward_hooks = None`` (read back as None while empty)."""

    __slots__ = ()


class TensorHooks:
    """Hooks registered on a leaf tensor (non-leaf hooks live on the ``grad_fn`` node)."""

    __slots__ = ("pre", "post_accumulate")

    def __init__(self) -> None:
        self.pre: HookDict = HookDict()
        self.post_accumulate: HookDict = HookDict()


if TYPE_CHECKING:
    # The methods and operators the ops modules attach to Tensor at import time (``t + 1``,
    # ``t.sum()``, ``t.relu_()`` ...), declared for type checkers by a generated stub: after
    # adding an op, run ``python -m chainrule._stubgen``. At run time the base is ``object``.
    from ._tensor_methods import TensorMethods
else:
    TensorMethods = object


class Tensor(TensorMethods):
    """A multi-dimensional array that can record the operations applied to it.

    Example:
        >>> import chainrule as torch
        >>> w = torch.tensor([1.], requires_grad=True)
        >>> y = (w + 2) * w
        >>> y
        tensor([3.], grad_fn=<MulBackward0>)
        >>> y.backward()
        >>> w.grad
        tensor([4.])
    """

    # _data: the ndarray. _requires_grad: True for leaves that require grad and for every
    # tensor with a grad_fn (so ops test one flag). _grad_node: the grad_fn (PyTorch's legacy
    # ``_grad_fn`` is a property over it). _vc: the version counter, a one-element
    # list shared with views. _base: the tensor this one is a view of. _acc: a weak reference
    # to the leaf's AccumulateGrad node. _hooks: TensorHooks (leaves) or None.
    # Views only (set when ``_base`` is set, read only then): _view_meta, how the view was made
    # (PyTorch's CreationMeta: None for an ordinary view, else one of the *_VIEW kinds below,
    # views PyTorch refuses to modify in place). _view_version: the version the view was made
    # (or last rebased) at. _view_src_fn: for an ordinary view, the base's grad_fn when this
    # view's grad_fn was made; when the base's history or the version changes (an in-place
    # op, even under no_grad), the view's history is regenerated on next use. Other views never
    # regenerate it: using one after its version changed is PyTorch's error
    # (``ops.inplace.refresh_special_view``, installed by ``install_view_history``).
    __slots__ = (
        "_data", "_requires_grad", "_grad_node", "_output_nr", "_grad", "_vc", "_base", "_acc",
        "_hooks", "_retains_grad", "_view_src_fn", "_view_meta", "_view_version", "__weakref__",
    )

    # ``Tensor(2, 3)``, the legacy constructor, is ``ops.creation.legacy_tensor`` (a layer
    # above: it parses sizes and data), installed as ``Tensor.__new__`` there.
    if TYPE_CHECKING:
        def __new__(cls, *args: Any, **kwargs: Any) -> Tensor: ...

    # ------------------------------------------------------------------------------------------
    # autograd attributes

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor (leaves: set by the user; others: inherited)."""
        if self._base is not None:
            refresh_view(self, check=False)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self._data.dtype.kind not in "fcV":
            # (the setter's wording differs from requires_grad_()'s in PyTorch)
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self.requires_grad_(value)

    @requires_grad.deleter
    def requires_grad(self) -> None:
        _refuse_delete("requires_grad")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (leaves only) and return ``self``."""
        if self._grad_node is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if requires_grad and not mode_get() & INFERENCE and is_inference_tensor(self):
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        self._requires_grad = bool(requires_grad)
        if self._acc is NO_ACCUMULATOR:
            self._acc = None  # now a leaf of its own (was a no-grad view of one that requires it)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors the user created (no ``grad_fn``)."""
        return current_grad_fn(self) is None

    @property
    def grad_fn(self) -> Node | None:
        """The node that created this tensor, or None for a leaf."""
        fn = current_grad_fn(self)
        if fn is not None:
            # (for a GradientEdge made of it by hand: autograd.graph.edge_output_meta)
            remember_output(fn, self._output_nr, self._data)
        return fn

    @property
    def _grad_fn(self) -> Node | None:
        """PyTorch's legacy name of :attr:`grad_fn` (assignable, not deletable)."""
        return self.grad_fn

    @_grad_fn.setter
    def _grad_fn(self, node: Node | None) -> None:
        self._grad_node = node

    @_grad_fn.deleter
    def _grad_fn(self) -> None:
        _refuse_delete("_grad_fn")

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, and non-leaves that called ``retain_grad``)."""
        if self._grad_node is not None and not self._retains_grad and self._grad is None:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_C_TYPE_NAMES.get(value._data.dtype.name, value._data.dtype.name)}' to a "
                    f"tensor with grad_dtype "
                    f"'{_SCALAR_NAMES.get(self._data.dtype.name, self._data.dtype.name)}'. The "
                    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). "
                    "You can set the tensor's grad_dtype attribute with a specific dtype, or None "
                    "to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    "tensor and its gradient may break downstream systems that assume they match."
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value._data.shape)}' to a "
                    f"tensor of size '{list(self._data.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        """Whether ``retain_grad()`` was called on this non-leaf tensor."""
        return self._retains_grad

    def retain_grad(self) -> None:
        """Keep the gradient of this non-leaf tensor in ``.grad`` during backward.

        The gradient kept is that of the tensor's current value: after an in-place op the
        tensor has a new ``grad_fn`` and retain_grad follows it (:func:`set_history`).
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_node is None or self._retains_grad:
            return
        self._grad_node._get_hooks().retains[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a new one.

        On a non-leaf the hook belongs to the current ``grad_fn``: after an in-place op it is
        called with the gradient of the value the tensor had when the hook was registered.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_node is not None:
            hooks = self._grad_node._get_hooks().tensor_pre
            handle = RemovableHandle(hooks)
            hooks[handle.id] = (self._output_nr, hook)
            return handle
        if self._hooks is None:
            self._hooks = TensorHooks()
        handle = RemovableHandle(self._hooks.pre)
        self._hooks.pre[handle.id] = hook
        return handle

    @property
    def _backward_hooks(self) -> dict[Any, Callable[..., Any]] | None:
        """The hooks :meth:`register_hook` added, id -> hook (None before the first), as
        PyTorch's legacy attribute. On a leaf it is the dict backward reads (changing it changes
        the hooks); on a non-leaf it is a copy of the hooks of this output of ``grad_fn``."""
        node = self._grad_node
        if node is None:
            if self._hooks is None:
                return None
            pre = self._hooks.pre
            return None if type(pre) is _ClearedHooks and not pre else pre
        entry = _ASSIGNED_HOOKS.get(id(self))
        if entry is not None and entry[0]() is self:
            return entry[1]
        if node._hooks is None:
            return None
        nr = self._output_nr
        found = {key: fn for key, (out, fn) in node._hooks.tensor_pre.items() if out == nr}
        return found or None

    @_backward_hooks.setter
    def _backward_hooks(self, hooks: dict[Any, Callable[..., Any]] | None) -> None:
        # A leaf's hooks become the dict's (None: none). On a non-leaf, as in PyTorch, the dict
        # is only kept (read back): backward runs the hooks register_hook added, not its.
        if self._grad_node is not None:
            key = id(self)
            _ASSIGNED_HOOKS[key] = (
                weakref.ref(self, lambda _ref: _ASSIGNED_HOOKS.pop(key, None)), hooks)
            return
        if self._hooks is None:
            self._hooks = TensorHooks()
        if hooks is None:
            self._hooks.pre = _ClearedHooks()
        elif isinstance(hooks, HookDict | OrderedDict):
            self._hooks.pre = hooks  # type: ignore[assignment] (kept: the caller's later edits count)
        else:
            self._hooks.pre = HookDict(hooks)

    @_backward_hooks.deleter
    def _backward_hooks(self) -> None:
        _refuse_delete("_backward_hooks")

    def register_post_accumulate_grad_hook(
        self, hook: Callable[[Tensor], None]
    ) -> RemovableHandle:
        """Call ``hook(tensor)`` after a gradient was accumulated into this leaf's ``.grad``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_node is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._hooks is None:
            self._hooks = TensorHooks()
        handle = RemovableHandle(self._hooks.post_accumulate)
        self._hooks.post_accumulate[handle.id] = hook
        return handle

    def detach(self) -> Tensor:
        """A tensor sharing this one's data and version counter, cut from the graph."""
        t = _new(Tensor)
        _init(t, self._data, False)
        t._vc = self._vc
        if INFERENCE_TENSORS:
            inherit_inference(t, self)
        return t

    def detach_(self) -> Tensor:
        """Detach this tensor from the graph in place (it becomes a leaf). A view refuses, as
        in PyTorch (also one of a tensor that does not require grad)."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        if self._grad_node is not None:
            # A node made before now that saved this tensor refuses to use it (PyTorch's
            # error): remember when it lost its history.
            key = id(self)
            DETACHED_IN_PLACE[key] = (
                weakref.ref(self, lambda _ref: DETACHED_IN_PLACE.pop(key, None)),
                next_sequence_nr(),
            )
        self._grad_node = None
        self._output_nr = 0
        self._requires_grad = False
        if DUAL[0]:  # (its forward-mode tangent goes too, as in PyTorch)
            clear_tangent(self)
        return self

    @property
    def volatile(self) -> bool:
        """Removed from PyTorch long ago: always False, with PyTorch's warning."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
        return False

    @volatile.setter
    def volatile(self, value: bool) -> None:
        warnings.warn(
            "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
            stacklevel=2,
        )

    @property
    def data(self) -> Tensor:
        """An untracked alias of this tensor (changes to it are invisible to autograd)."""
        t = _new(Tensor)
        _init(t, self._data, False)
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(value).__name__}"
            )
        if self._requires_grad and value._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point or complex "
                "dtype"
            )
        self._data = value._data

    @data.deleter
    def data(self) -> None:
        _refuse_delete("data")

    def is_inference(self) -> bool:
        """Whether this tensor was made inside ``inference_mode()`` (or is a view or
        ``detach()`` of such a tensor)."""
        return is_inference_tensor(self)

    @property
    def _version(self) -> int:
        if is_inference_tensor(self):
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    @property
    def output_nr(self) -> int:
        """Which output of ``grad_fn`` this tensor is."""
        return self._output_nr

    def _is_view(self) -> bool:
        return self._base is not None

    def is_contiguous(self, memory_format: object = None) -> bool:
        """Whether the elements are laid out in row-major order without gaps (or, for
        ``memory_format=torch.channels_last``/``channels_last_3d``, with the channels
        innermost, as PyTorch's check)."""
        if memory_format is not None and memory_format not in MEMORY_FORMATS:
            raise TypeError("is_contiguous(): argument 'memory_format' must be "
                            f"torch.memory_format, not {type(memory_format).__name__}")
        if type(self._data) is MetaArray:
            return _meta_contiguous(self._data, memory_format)
        return is_contiguous_as(self._data, memory_format)

    def dim_order(self, *, ambiguity_check: bool | list[Any] = False) -> tuple[int, ...]:
        """The dimensions from the outermost in memory to the innermost (``(0, 2, 3, 1)`` for
        channels-last). With ``ambiguity_check=True`` a layout with several such orders (a
        dimension of size 1, equal strides) raises; with a list of memory formats, a layout
        that is exactly one of them is accepted."""
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list)
            and all(isinstance(f, memory_format) for f in ambiguity_check)
        ):
            raise TypeError(
                "The ambiguity_check argument must be a bool or a list of memory formats."
            )
        check = ambiguity_check if isinstance(ambiguity_check, bool) else True
        data = self._data
        if check:
            strides = element_strides(data)
            several = any(a == b for a, b in zip(strides, strides[1:], strict=False)) or any(
                n == 1 for n in data.shape
            )
            matching = sum(is_contiguous_as(data, f) for f in formats)
            if several and matching != 1:
                raise RuntimeError(
                    "The tensor does not have unique dim order, or cannot map to exact one of "
                    "the given memory formats."
                )
        order, ambiguous = dim_order(data)
        if ambiguous and bool(ambiguity_check):
            raise RuntimeError("The tensor does not have unique dim order.")
        return tuple(order)

    # ------------------------------------------------------------------------------------------
    # shape, dtype, device

    @property
    def shape(self) -> Size:
        """The size of each dimension, as ``chainrule.Size``."""
        return Size(self._data.shape)

    @overload
    def size(self, dim: None = None) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...

    def size(self, dim: int | None = None) -> Size | int:
        """The shape, or the size of one dimension."""
        if dim is None:
            return Size(self._data.shape)
        if not isinstance(dim, int):
            raise TypeError(
                f"size(): argument 'dim' (position 1) must be int, not {type(dim).__name__}"
            )
        return self._data.shape[wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements."""
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes taken by the elements."""
        return self._data.nbytes

    @property
    def dtype(self) -> DType:
        """The element type, e.g. ``chainrule.float32``."""
        return _dtype._BY_NUMPY[self._data.dtype]

    @property
    def device(self) -> device:
        """``device(type='cpu')``, or ``device(type='meta')`` for a tensor without data."""
        return META_DEVICE if type(self._data) is MetaArray else CPU

    @property
    def is_cuda(self) -> bool:
        """Always False: chainrule runs on the CPU."""
        return False

    @property
    def is_cpu(self) -> bool:
        """True but for meta tensors: chainrule runs on the CPU."""
        return type(self._data) is not MetaArray

    @property
    def is_sparse(self) -> bool:
        """Always False."""
        return False

    @property
    def is_quantized(self) -> bool:
        """Always False."""
        return False

    @property
    def is_meta(self) -> bool:
        """Whether this is a meta tensor (a shape, a dtype and strides, no data)."""
        return type(self._data) is MetaArray

    @property
    def layout(self) -> Any:
        """Always ``strided``."""
        return _strided_layout

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point type."""
        return self._data.dtype.kind in "fV"

    def is_complex(self) -> bool:
        """Whether the dtype is a complex type."""
        return self._data.dtype.kind == "c"

    def get_device(self) -> int:
        """-1, the CPU."""
        return -1

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """Without arguments, the legacy type name (``'chainrule.FloatTensor'``); else a cast."""
        if dtype is None:
            return f"{_dtype.REPR_NAMESPACE[0]}." + LEGACY_TYPE_NAMES[self.dtype]
        if isinstance(dtype, str):
            dtype = LEGACY_NAME_TO_DTYPE[dtype.rsplit(".", 1)[-1]]
        elif isinstance(dtype, type) and isinstance(getattr(dtype, "_dtype", None), _dtype.dtype):
            dtype = dtype._dtype  # (a legacy type: ``x.type(torch.DoubleTensor)``)
        return self.to(dtype)

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Steps in elements between neighbours in each dimension."""
        # (An empty array: contiguous strides, unless a view gave it PyTorch's.)
        data = self._data
        strides = logical_strides(data) if type(data) is MetaArray else element_strides(data)
        if dim is None:
            return strides
        return strides[wrap_dim(dim, self._data.ndim)]

    def data_ptr(self) -> int:
        """The address of the first element."""
        return int(self._data.__array_interface__["data"][0])

    def is_pinned(self, device: Any = None) -> bool:
        """False: there is no pinned (page-locked) memory without an accelerator."""
        if device is not None:
            warnings.warn(
                "The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass "
                "this argument. (Triggered internally at "
                "/__w/pytorch/pytorch/aten/src/ATen/native/Memory.cpp:31.)",
                DeprecationWarning,
                stacklevel=2,
            )
        return False

    def pin_memory(self, device: Any = None) -> Tensor:
        """PyTorch's error on a machine without an accelerator: memory cannot be pinned."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def const_data_ptr(self) -> int:
        """The address of the first element (PyTorch's read-only twin of ``data_ptr``)."""
        return self.data_ptr()

    def storage_offset(self) -> int:
        """Offset of the first element from the start of the base array, in elements."""
        start = storage_root(self._data).__array_interface__["data"][0]
        return (self.data_ptr() - start) // self._data.itemsize

    def storage(self) -> TypedStorage:
        """The storage this tensor lies in, as elements of its dtype (PyTorch's deprecated
        ``TypedStorage``: ``len`` is the whole storage's, ``data_ptr()`` its start); warns, as
        PyTorch, that ``TypedStorage`` is deprecated."""
        return typed_storage(self._data, self.dtype)

    def untyped_storage(self) -> UntypedStorage:
        """The bytes this tensor lies in (PyTorch's ``UntypedStorage``: the same object for
        every tensor over the same memory; ``nbytes()``, ``data_ptr()``, byte indexing)."""
        return untyped_storage(self._data)

    # ------------------------------------------------------------------------------------------
    # conversions to Python and NumPy

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying array (shares memory). Raises if the tensor requires grad while grad
        mode is on (under ``no_grad`` it is allowed, as in PyTorch)."""
        if self._requires_grad and not force and mode_get() & GRAD:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if HAS_CONJ_BIT[0](self) and not force:  # (the values are already conjugated)
            raise RuntimeError(
                "Can't call numpy() on Tensor that has conjugate bit set. Use "
                "tensor.resolve_conj().numpy() instead."
            )
        if self._data.dtype is _dtype.BFLOAT16:
            raise TypeError("Got unsupported ScalarType BFloat16")  # NumPy has none
        if type(self._data) is MetaArray:
            raise TypeError(NUMPY_MESSAGE)
        return self._data

    # NumPy's protocol, spoken as PyTorch's Tensor speaks it: ``np.asarray(t)`` is ``t.numpy()``
    # (same memory, same refusals); a ufunc on tensors (``np.exp(t)``, and ``t + ndarray``,
    # which Tensor's operators hand to ndarray's reflected one) computes on those arrays, and
    # ``__array_wrap__`` makes its result a tensor. ``ndarray + t`` raises TypeError, as in
    # PyTorch: NumPy defers to the higher priority and Tensor's operators refuse arrays.
    __array_priority__ = 1000

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.numpy()
        if dtype is not None and np.dtype(dtype) != array.dtype:
            if copy is False:  # (NumPy's own message, as PyTorch's __array__ leaves it to NumPy)
                raise ValueError(
                    "Unable to avoid copy while creating an array as requested.\nIf using "
                    "`np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy "
                    "when needed (no behavior change in NumPy 1.x).\nFor more details, see "
                    "https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
                    "#adapting-to-changes-in-the-copy-keyword."
                )
            return array.astype(dtype)
        if copy:
            return array.copy()
        return array

    def __array_wrap__(self, array: np.ndarray, context: Any = None,
                       return_scalar: bool = False) -> Tensor:
        """A NumPy ufunc's result as a tensor sharing its memory (a bool result as uint8, as
        PyTorch's ``__array_wrap__`` makes it; a 0-d result stays a 0-d tensor)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        _dtype.from_numpy_dtype(array.dtype)  # PyTorch's TypeError for a type it lacks
        return wrap(array)

    def __dlpack__(self, *, stream: Any = -1, max_version: tuple[int, int] | None = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """A DLPack capsule of this tensor's memory, for ``np.from_dlpack``,
        ``torch.from_dlpack`` ...: zero-copy (a write on one side shows on the other) unless
        ``copy=True``. Tensors that require grad or have the conjugate bit are refused, as
        PyTorch refuses them."""
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        if HAS_CONJ_BIT[0](self):
            raise BufferError("Can't export tensors with the conjugate bit set")
        from ._dlpack import export

        return export(self._data, stream=stream, max_version=max_version, dl_device=dl_device,
                      copy=copy)

    def __dlpack_device__(self) -> tuple[Any, int]:
        """``(DLDeviceType.kDLCPU, 0)``: where DLPack finds this tensor's memory."""
        from ._dlpack import CPU_DEVICE

        return CPU_DEVICE

    def item(self) -> Any:
        """The single element as a Python number."""
        if type(self._data) is MetaArray:
            raise RuntimeError(ITEM_MESSAGE)
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.item()

    def tolist(self) -> Any:
        """The elements as (nested) Python lists of numbers."""
        if type(self._data) is MetaArray:
            raise NotImplementedError(NO_DATA_MESSAGE)
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        if type(self._data) is MetaArray:
            raise RuntimeError(ITEM_MESSAGE)
        if self._data.size != 1:
            how_many = "no values" if self._data.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {how_many} is ambiguous")
        return bool(self._data.reshape(()))

    def _scalar(self) -> Any:
        if type(self._data) is MetaArray:
            raise RuntimeError(ITEM_MESSAGE)
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.item()

    def __float__(self) -> float:
        if self._requires_grad:  # (int() and item() do not warn in PyTorch)
            warn_scalar_conversion()
        return float(self._real_scalar("double"))

    def __int__(self) -> int:
        return int(self._real_scalar("int64_t"))

    def _real_scalar(self, cpp_type: str) -> Any:
        """The single element for ``float()``/``int()``: a complex one only when its imaginary
        part is 0 (its real part), else PyTorch's overflow error."""
        value = self._scalar()
        if type(value) is complex:
            real = value.real
            if value.imag != 0 or (
                cpp_type == "int64_t" and not (math.isfinite(real) and -(2**63) <= real < 2**63)
            ):
                raise RuntimeError(
                    f"value cannot be converted to type {cpp_type} without overflow"
                )
            return value.real
        return value

    def __complex__(self) -> complex:
        return complex(self._scalar())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self._data.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        from ._printing import format_tensor

        suffixes = []
        try:
            # (a view's history regenerated first, as PyTorch's repr reads ``grad_fn``)
            fn = current_grad_fn(self)
        except RuntimeError:
            # A view PyTorch forbids using after an in-place change of it or its base (made
            # in no_grad mode, a multi-output view ...): PyTorch's repr says so.
            suffixes.append("grad_fn=<Invalid>")
            fn = None
        if fn is not None:
            suffixes.append(f"grad_fn=<{short_name(fn)}>")
        elif self._requires_grad and not suffixes:
            suffixes.append("requires_grad=True")
        if DUAL[0]:
            tangent = get_tangent(self)  # (forward mode: a dual tensor shows its tangent)
            if tangent is not None:  # (0-d: PyTorch shows the number)
                shown = tangent._data.item() if not tangent._data.ndim else tangent
                suffixes.append(f"tangent={shown!r}")
        cls = type(self)
        plain = cls is Tensor or (cls.__module__.startswith("chainrule.")
                                  and not cls._tf_active)  # type: ignore[attr-defined]
        return format_tensor(
            self._data,
            dtype_name=self.dtype.name,
            default_dtype_name=_dtype.get_default_dtype().name,
            suffixes=suffixes,
            prefix="tensor(" if plain else f"{cls.__name__}(",  # (a subclass: its name)
        )

    # (no __str__: object's calls type(self).__repr__, so a subclass's repr - Parameter's
    # "Parameter containing:" - is its str too, as in PyTorch)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)

    def __dir__(self) -> list[str]:
        # Every name listed can be read (slots only views fill are left out of other tensors),
        # as PyTorch's dir(); ``imag`` stays listed and raises for a real tensor, as there.
        unset = {name for name in Tensor.__slots__ if not hasattr(self, name)}
        return sorted(set(dir(type(self))) - {"__weakref__"} - unset)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if self._grad_node is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        if id(self) in memo:
            return memo[id(self)]
        new = _new(type(self))
        _init(new, self._data.copy(), self._requires_grad)
        if type(self) is not Tensor and hasattr(self, "__dict__"):
            new.__dict__.update(self.__dict__)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_tensor, (self._data.copy(), self._requires_grad))



_C_TYPE_NAMES = {
    "float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int",
    "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
    "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}
_SCALAR_NAMES = {
    "float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
    "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def _rebuild_tensor(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = wrap(data)
    t._requires_grad = requires_grad
    return t


def _init(t: Tensor, data: np.ndarray, requires_grad: bool) -> None:
    """Every field of a new tensor (the ops' fast paths in ops/_dispatch.py set the same ones
    inline)."""
    t._data = data
    t._requires_grad = requires_grad
    t._grad_node = None
    t._output_nr = 0
    t._grad = None
    t._vc = [0]
    t._base = None
    t._acc = None
    t._hooks = None
    t._retains_grad = False


_MISSING_SLOT: Any = object()


def retype(t: Tensor, cls: type[Tensor]) -> Tensor:
    """``t`` as an instance of the Tensor subclass ``cls``: a new object with ``t``'s fields
    (data, history, version counter, base); ``t`` itself if it is one already. For a tensor
    no one else holds yet (a fresh alias or detached copy)."""
    if type(t) is cls:
        return t
    new = _new(cls)
    for name in Tensor.__slots__:
        if name != "__weakref__":
            value = getattr(t, name, _MISSING_SLOT)
            if value is not _MISSING_SLOT:
                setattr(new, name, value)
    if INFERENCE_TENSORS:
        inherit_inference(new, t)
    return new


_SCALAR_WARNED = [False]


def warn_scalar_conversion() -> None:
    """PyTorch's warning for turning a tensor that requires grad into a Python number
    (``float(t)``, ``tensor([t])``): given once per process, whichever call comes first, and
    pointing at the user's line."""
    if not _SCALAR_WARNED[0]:
        _SCALAR_WARNED[0] = True
        warnings.warn(
            "Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
            "behavior.\nConsider using tensor.detach() first.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )

# Inference tensors by id. Not a WeakSet: membership there compares with ``==``, which for
# tensors is elementwise. The weak reference's callback forgets a tensor when it dies.
INFERENCE_TENSORS: dict[int, weakref.ref[Tensor]] = {}


INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


def is_inference_tensor(t: Tensor) -> bool:
    """``t.is_inference()`` (cheap when no inference tensor exists)."""
    if not INFERENCE_TENSORS:
        return False
    ref = INFERENCE_TENSORS.get(id(t))
    return ref is not None and ref() is t


def check_inference_inplace(t: Tensor) -> None:
    """PyTorch's refusal to modify an inference tensor in place outside inference mode."""
    if INFERENCE_TENSORS and not mode_get() & INFERENCE and is_inference_tensor(t):
        raise RuntimeError(INFERENCE_INPLACE_MESSAGE)


def check_not_inference_for_saving(t: Any) -> None:
    """PyTorch's refusal to save an inference tensor for backward."""
    if INFERENCE_TENSORS and isinstance(t, Tensor) and is_inference_tensor(t):
        raise RuntimeError(INFERENCE_SAVE_MESSAGE)


def inherit_inference(view: Tensor, source: Tensor) -> None:
    """A view (or ``detach()``) of an inference tensor is one, wherever it is made."""
    if is_inference_tensor(source):
        _mark_inference(view)


def _mark_inference(t: Tensor) -> None:
    key = id(t)
    INFERENCE_TENSORS[key] = weakref.ref(t, lambda _ref: INFERENCE_TENSORS.pop(key, None))


def mark_if_inference(t: Tensor) -> None:
    """Remember ``t`` as an inference tensor if this thread is in ``inference_mode``."""
    if mode_get() & INFERENCE:
        _mark_inference(t)


def wrap(data: np.ndarray) -> Tensor:
    """A new leaf tensor around ``data`` (no copy, requires_grad False)."""
    t = _new(Tensor)
    _init(t, data, False)
    if INFERENCE_BLOCKS[0]:
        mark_if_inference(t)
    return t


def make_tensor(data: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor; checks that only floating and complex types require grad."""
    if requires_grad and data.dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t = wrap(data)
    t._requires_grad = requires_grad
    return t


# How a view was made, when PyTorch forbids modifying it in place with grad mode on (its
# CreationMeta): in no_grad mode, in inference mode, as one of several outputs (split, unbind),
# or as an output of a custom Function. A view of such a view inherits its kind (an inference
# view stays one).
NO_GRAD_VIEW = "no_grad"
INFERENCE_VIEW = "inference"
MULTI_OUTPUT_VIEW = "multi_output"
CUSTOM_FUNCTION_VIEW = "custom_function"

# ``_view_src_fn`` of views that never regenerate their history: no grad_fn is this object, so
# every use of such a view goes through the check of ``refresh_special_view``.
# Whether a tensor carries PyTorch's conjugate bit (``numpy()`` refuses it); ops.conjugate,
# which flags the tensors ``conj()`` makes, installs the test.
HAS_CONJ_BIT: list[Callable[[Tensor], bool]] = [lambda t: False]

SPECIAL_VIEW: Any = object()


class _NoAccumulator:
    """``_acc`` of a no-grad view of a tensor that requires grad: the view requires grad (as in
    PyTorch, through its base) but gradients sent to it go nowhere (PyTorch's null
    accumulator), so ops record it with the edge ``(None, 0)``."""

    def __call__(self) -> None:
        return None


NO_ACCUMULATOR: Any = _NoAccumulator()


# How a view's history is regenerated: by ``ops.inplace``, the layer that records the
# AsStridedBackward0 node, which installs its functions here when it is imported (this module
# sits below the ops and does not import them).
_refresh_special_view: Callable[[Tensor, Tensor, bool | None], None] | None = None
_view_of_base: Callable[[Tensor, Tensor], Any] | None = None


def install_view_history(refresh_special_view: Callable[[Tensor, Tensor, bool | None], None],
                         view_of_base: Callable[[Tensor, Tensor], Any]) -> None:
    """Called once by ``ops.inplace``: the functions :func:`refresh_view` regenerates a view's
    history with (checking a special view; a view of its base's current history)."""
    global _refresh_special_view, _view_of_base
    _refresh_special_view, _view_of_base = refresh_special_view, view_of_base


def refresh_view(t: Tensor, check: bool | None = None) -> None:
    """Regenerate a view's history (``AsStridedBackward0`` of its base's current history) if
    its base's history changed since it was made, or its memory was written in place since
    (also under no_grad, through the base or another view), as PyTorch does.

    For the views PyTorch forbids modifying in place, check instead that nothing modified
    them since: ``check`` True raises PyTorch's error then, None raises it only in grad mode
    (an op that may record), False never (reading ``requires_grad``).
    """
    base = t._base
    # (Only a version change regenerates an ordinary view's history, as in PyTorch: a base
    # detached in place, ``base.detach_()``, leaves its views their history.)
    if base is not None and (
        t._view_src_fn is SPECIAL_VIEW or t._vc[0] != t._view_version
    ):
        if t._view_src_fn is SPECIAL_VIEW:
            _refresh_special_view(t, base, check)  # type: ignore[misc]
        elif t._grad_node is not None or base._requires_grad:
            # (a view with no history of a base that needs none keeps having none)
            _view_of_base(t, base)  # type: ignore[misc]
    elif base is not None and t._grad_node is None and t._requires_grad != base._requires_grad:
        _follow_base_requires_grad(t, base)


def _follow_base_requires_grad(t: Tensor, base: Tensor) -> None:
    """A view without history made before its base required grad (or stopped requiring it):
    PyTorch reads a view's ``requires_grad`` through its base, so the view requires grad too,
    and gradients sent to it go nowhere (no accumulator of its own, as a no-grad view's)."""
    if base._requires_grad:
        t._requires_grad = True
        t._acc = NO_ACCUMULATOR
    elif t._acc is NO_ACCUMULATOR:  # (not a view that was made to require grad itself)
        t._requires_grad = False
        t._acc = None


def current_grad_fn(t: Tensor) -> Node | None:
    """``t.grad_fn``, regenerated first for a view whose base was modified in place."""
    if t._base is not None:
        refresh_view(t, check=True)
    return t._grad_node


def set_history(t: Tensor, node: Node, output_nr: int = 0) -> None:
    """Give ``t`` (modified in place, or a view regenerated) the new history ``node``.

    ``retain_grad`` follows the tensor to its new ``grad_fn``, as PyTorch moves its
    retains-grad hook: ``.grad`` is then the gradient of the tensor's current value. Hooks
    registered before stay with the old node.
    """
    if t._retains_grad:
        old = t._grad_node
        if old is not None and old._hooks is not None:
            ref = old._hooks.retains.get(t._output_nr)
            if ref is not None and ref() is t:
                del old._hooks.retains[t._output_nr]
        node._get_hooks().retains[output_nr] = weakref.ref(t)
    t._grad_node = node
    t._output_nr = output_nr
    t._requires_grad = True


def gradient_edge(t: Tensor) -> tuple[Node | None, int]:
    """Where a gradient for ``t`` goes: ``(grad_fn, output_nr)``, its AccumulateGrad, or None."""
    if t._base is not None:
        refresh_view(t, check=True)
    fn = t._grad_node
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def grad_accumulator(t: Tensor) -> AccumulateGrad | None:
    """The leaf's AccumulateGrad node: one per leaf while any graph holds it (None for a
    no-grad view, see :data:`NO_ACCUMULATOR`)."""
    ref = t._acc
    if ref is not None:
        acc = ref()
        if acc is not None:
            return acc
        if ref is NO_ACCUMULATOR:
            return None
    acc = AccumulateGrad(t)
    t._acc = weakref.ref(acc)
    return acc


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim, with PyTorch's IndexError when out of range."""
    low = -ndim if ndim else -1
    high = ndim - 1 if ndim else 0
    if dim < low or dim > high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})"
        )
    return dim + ndim if dim < 0 else dim


LEGACY_TYPE_NAMES: dict[DType, str] = {
    _dtype.float32: "FloatTensor",
    _dtype.float64: "DoubleTensor",
    _dtype.float16: "HalfTensor",
    _dtype.int64: "LongTensor",
    _dtype.int32: "IntTensor",
    _dtype.int16: "ShortTensor",
    _dtype.int8: "CharTensor",
    _dtype.uint8: "ByteTensor",
    _dtype.bool: "BoolTensor",
    _dtype.complex64: "ComplexFloatTensor",
    _dtype.complex128: "ComplexDoubleTensor",
    _dtype.bfloat16: "BFloat16Tensor",
    _dtype.uint16: "UInt16Tensor",
    _dtype.uint32: "UInt32Tensor",
    _dtype.uint64: "UInt64Tensor",
}
LEGACY_NAME_TO_DTYPE: dict[str, DType] = {v: k for k, v in LEGACY_TYPE_NAMES.items()}


def _meta_contiguous(data: MetaArray, memory_format: object) -> bool:
    """``is_contiguous`` of a meta tensor, from the strides it has as a tensor."""
    strides = logical_strides(data)
    itemsize = data.itemsize
    shaped = np.lib.stride_tricks.as_strided(
        np.zeros(1, data.dtype), data.shape, tuple(s * itemsize for s in strides)
    ) if data.ndim else np.zeros((), data.dtype)
    if memory_format is None or data.size <= 1:
        expected = 1
        for size, stride in zip(reversed(data.shape), reversed(strides), strict=True):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True
    return is_contiguous_as(shaped, memory_format)
