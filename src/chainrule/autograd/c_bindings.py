"""PyTorch's private ``torch._C`` autograd names that Python code written for PyTorch (and
PyTorch's own autograd tests) reach for, installed on :mod:`chainrule._C` by this module
(``_C`` sits below the autograd layer, so the layer that has the machinery installs them):

* ``_C._functions``: the node classes ``AccumulateGrad``, ``Error`` and
  ``UndefinedGradBackward``, and the callables ``UndefinedGrad()(t)`` (``t``'s values behind a
  node that sends no gradient on) and ``DelayedError(message, num_inputs)(*tensors)``
  (aliases of the tensors behind an ``Error`` node, whose backward raises ``message``);
* ``_C._autograd``: ``SavedTensor`` (the class of ``grad_fn._raw_saved_<name>``),
  ``_saved_tensors_hooks_is_enabled``, ``_unsafe_set_version_counter``,
  ``_get_current_graph_task_keep_graph``;
* ``_C._WeakTensorRef(t).expired()``, ``_C.is_grad_enabled``, ``_C._current_graph_task_id``,
  ``_C._will_engine_execute_node``;
* ``_C._nn._test_warn_in_autograd`` (a copy whose backward warns).
"""

from __future__ import annotations

import types
import warnings
import weakref
from typing import Any

from .. import _C
from .._tensor import Tensor, gradient_edge, set_history, wrap
from ..ops._opnode import RawSavedTensor
from . import graph
from .forward_grad import is_fwd_grad_enabled, set_fwd_grad_enabled
from .function import Error, RawSavedFunctionTensor
from .grad_mode import _DecoratorContextManager, is_grad_enabled
from .gradcheck import UndefinedGradBackward
from .node import AccumulateGrad, Node, new_node

__all__ = ["UndefinedGrad", "DelayedError", "WeakTensorRef", "SavedTensor"]


def _check_tensors(args: tuple, expected: int | None) -> None:
    if expected is not None and len(args) != expected:
        raise TypeError(f"expected {expected} arguments, got {len(args)} instead")
    for i, arg in enumerate(args):
        if not isinstance(arg, Tensor):
            raise TypeError(f"argument {i} is not a Variable")


def _one_or_tuple(results: list[Tensor]) -> Tensor | tuple[Tensor, ...]:
    return results[0] if len(results) == 1 else tuple(results)


class UndefinedGrad(Node):
    """``UndefinedGrad()(t)``: a copy of ``t`` whose ``grad_fn`` is an
    ``UndefinedGradBackward`` node, so whatever gradient reaches it, the node below ``t`` runs
    with an undefined (None) one. A tensor that does not require grad comes back without
    history. (A Node class, as PyTorch's, though calling it makes the node.)"""

    __slots__ = ()

    def __call__(self, *tensors: Any) -> Tensor | tuple[Tensor, ...]:
        _check_tensors(tensors, 1)
        t = tensors[0]
        data = t._data
        out = wrap(data.copy())
        if t.requires_grad:
            node = new_node(UndefinedGradBackward, (gradient_edge(t),), ((data.shape, data.dtype),))
            set_history(out, node)
        return out


class DelayedError(Node):
    """``DelayedError(message, num_inputs)(*tensors)``: aliases of the tensors (same memory,
    a version counter of their own) behind one ``Error`` node whose backward raises
    ``RuntimeError(message)``: the error is delayed until a backward pass runs the node."""

    __slots__ = ("message", "num_inputs")

    def __init__(self, message: str, num_inputs: int) -> None:
        self.message = message
        self.num_inputs = num_inputs

    def __call__(self, *tensors: Any) -> Tensor | tuple[Tensor, ...]:
        _check_tensors(tensors, self.num_inputs)
        outputs = [wrap(t._data) for t in tensors]
        if not is_grad_enabled() or not any(t.requires_grad for t in tensors):
            return _one_or_tuple(outputs)
        edges = tuple(gradient_edge(t) if t.requires_grad else (None, 0) for t in tensors)
        metas = tuple(
            (t._data.shape, t._data.dtype) if t.requires_grad else None for t in tensors
        )
        node = new_node(Error, edges, metas)
        node.message = self.message
        node._n_out = len(tensors)
        for nr, out in enumerate(outputs):
            set_history(out, node, nr)
        return _one_or_tuple(outputs)


class WeakTensorRef:
    """``torch._C._WeakTensorRef(t)``: a weak reference to ``t``; ``expired()`` says whether
    ``t`` is gone."""

    __slots__ = ("_ref",)

    def __init__(self, tensor: Tensor) -> None:
        self._ref = weakref.ref(tensor)

    def expired(self) -> bool:
        """Whether the tensor has been freed."""
        return self._ref() is None


class _SavedTensorMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, RawSavedTensor | RawSavedFunctionTensor)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")


SavedTensor = _SavedTensorMeta(  # type: ignore[misc]
    "SavedTensor",
    (),
    {
        "__doc__": "``torch._C._autograd.SavedTensor``: the class of "
        "``grad_fn._raw_saved_<name>`` values (isinstance holds for them); made only by the "
        "nodes, never from Python.",
        "__module__": "chainrule._C._autograd",
    },
)


def _saved_tensors_hooks_is_enabled() -> bool:
    """False inside ``disable_saved_tensors_hooks``."""
    return graph.saved_tensors_hooks_disabled_message() is None


def _unsafe_set_version_counter(tensors: tuple, versions: tuple) -> None:
    """Set each tensor's version counter (shared with its views) to the given value."""
    for t, version in zip(tensors, versions, strict=True):
        if version < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {version}")
        t._vc[0] = version


class _unsafe_preserve_version_counter(_DecoratorContextManager):  # noqa: N801 - PyTorch's name
    """``torch.autograd._unsafe_preserve_version_counter(tensors)``: in-place changes made in
    the block do not count: each tensor's version counter is set back to its value at entry
    (PyTorch's warning holds: autograd then cannot see those changes)."""

    def __init__(self, tensors: Tensor | tuple[Tensor, ...]) -> None:
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        _unsafe_set_version_counter(self.tensors, self.prev_versions)


def _get_current_graph_task_keep_graph() -> bool:
    """Whether the running backward pass keeps its graph (``retain_graph``); True outside one."""
    task = graph.CURRENT_GRAPH_TASK.get()
    return True if task is None else bool(getattr(task, "keep_graph", True))


# ``torch._C._add_cached_tensor`` and friends (CUDA graphs' cached tensors): a registry of
# tensor objects (a view is another tensor), usable once enabled.
_CACHED_ENABLED = [False]
_CACHED: dict[int, weakref.ref] = {}  # id -> weak reference (a Tensor's == is elementwise)


def _set_cached_tensors_enabled(enabled: bool) -> None:
    """Enable (or disable) the cached-tensor registry."""
    _CACHED_ENABLED[0] = bool(enabled)


def _check_cached_enabled() -> None:
    if not _CACHED_ENABLED[0]:
        raise RuntimeError(
            "cached_tensorimpls_enabled.load(std::memory_order_acquire) INTERNAL ASSERT FAILED: "
            "call torch._C._set_cached_tensors_enabled(True) first"
        )


def _add_cached_tensor(t: Tensor) -> None:
    """Mark ``t`` as a cached tensor (adding it twice is adding it once)."""
    _check_cached_enabled()
    key = id(t)
    _CACHED[key] = weakref.ref(t, lambda _ref: _CACHED.pop(key, None))


def _remove_cached_tensor(t: Tensor) -> None:
    """Unmark ``t`` (nothing if it is not marked)."""
    _check_cached_enabled()
    ref = _CACHED.get(id(t))
    if ref is not None and ref() is t:
        del _CACHED[id(t)]


def _is_cached_tensor(t: Tensor) -> bool:
    """Whether ``t`` itself (not a view or copy of it) is marked; False while disabled."""
    ref = _CACHED.get(id(t))
    return _CACHED_ENABLED[0] and ref is not None and ref() is t


class TestWarnInAutogradBackward0(Node):
    """The node of ``_C._nn._test_warn_in_autograd``: passes its gradient on unchanged and
    warns ``'Warn from backward'`` (PyTorch's check that a warning raised inside a backward pass
    reaches Python's warnings)."""

    __slots__ = ()

    def name(self) -> str:
        """``'TestWarnInAutogradBackward0'``."""
        return "TestWarnInAutogradBackward0"

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        """Warn, then the gradient of the output as that of the input."""
        warnings.warn("Warn from backward", UserWarning, stacklevel=2)
        return (grads,)


def _test_warn_in_autograd(t: Tensor) -> Tensor:
    """``torch._C._nn._test_warn_in_autograd(t)``: a copy of ``t`` whose backward warns
    (a test op of PyTorch's)."""
    _check_tensors((t,), 1)
    data = t._data
    out = wrap(data.copy())
    if t.requires_grad and is_grad_enabled():
        node = new_node(TestWarnInAutogradBackward0, (gradient_edge(t),),
                        ((data.shape, data.dtype),))
        set_history(out, node)
    return out


def _install() -> None:
    functions = types.ModuleType("chainrule._C._functions")
    functions.AccumulateGrad = AccumulateGrad  # type: ignore[attr-defined]
    functions.Error = Error  # type: ignore[attr-defined]
    functions.UndefinedGradBackward = UndefinedGradBackward  # type: ignore[attr-defined]
    functions.UndefinedGrad = UndefinedGrad  # type: ignore[attr-defined]
    functions.DelayedError = DelayedError  # type: ignore[attr-defined]
    autograd = types.ModuleType("chainrule._C._autograd")
    autograd.SavedTensor = SavedTensor  # type: ignore[attr-defined]
    autograd._saved_tensors_hooks_is_enabled = _saved_tensors_hooks_is_enabled  # type: ignore[attr-defined]
    autograd._unsafe_set_version_counter = _unsafe_set_version_counter  # type: ignore[attr-defined]
    autograd._get_current_graph_task_keep_graph = _get_current_graph_task_keep_graph  # type: ignore[attr-defined]
    nn = types.ModuleType("chainrule._C._nn")
    nn._test_warn_in_autograd = _test_warn_in_autograd  # type: ignore[attr-defined]
    _C._functions = functions  # type: ignore[attr-defined]
    _C._nn = nn  # type: ignore[attr-defined]
    _C._autograd = autograd  # type: ignore[attr-defined]
    _C._WeakTensorRef = WeakTensorRef  # type: ignore[attr-defined]
    _C.is_grad_enabled = is_grad_enabled  # type: ignore[attr-defined]
    _C._current_graph_task_id = graph._current_graph_task_id  # type: ignore[attr-defined]
    _C._will_engine_execute_node = graph._will_engine_execute_node  # type: ignore[attr-defined]
    _C._set_cached_tensors_enabled = _set_cached_tensors_enabled  # type: ignore[attr-defined]
    _C._add_cached_tensor = _add_cached_tensor  # type: ignore[attr-defined]
    _C._remove_cached_tensor = _remove_cached_tensor  # type: ignore[attr-defined]
    _C._is_cached_tensor = _is_cached_tensor  # type: ignore[attr-defined]
    _C._set_fwd_grad_enabled = set_fwd_grad_enabled  # type: ignore[attr-defined]
    _C._is_fwd_grad_enabled = is_fwd_grad_enabled  # type: ignore[attr-defined]


_install()
