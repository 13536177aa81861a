"""What the op sweep reaches: the node types its graphs contain and the public names it calls.

Used by ``test_op_coverage.py``. Running every OpInfo sample once (forward, then a first-order
gradient recorded with ``create_graph=True`` from a cotangent that requires grad, so the
backward's own nodes appear too) and walking the graphs gives the node types produced; calling
the samples while every public function and Tensor method is wrapped by a recorder gives the
names called.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import chainrule
import chainrule.nn.functional
from chainrule.autograd.node import Node

from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs

#: Namespaces whose public callables the guard enumerates, by the prefix used in reports.
NAMESPACES: dict[str, Any] = {
    "torch": chainrule,
    "Tensor": chainrule.Tensor,
    "F": chainrule.nn.functional,
    "linalg": chainrule.linalg,
    "special": chainrule.special,
    "fft": chainrule.fft,
}


def node_types() -> set[str]:
    """Names of the node classes an op can record (subclasses of Node, walked without recursion).

    Abstract bases (no name of PyTorch's: ``Node``, ``OpNode`` ...), the classes of ops that are
    not differentiable (they never record a node) and ops declared outside chainrule (by tests)
    are left out.
    """
    names: set[str] = set()
    stack = list(Node.__subclasses__())
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
        opdef = getattr(cls, "_op", None)
        if opdef is not None and not opdef.differentiable:
            continue
        defined_in = opdef.forward.__module__ if opdef is not None else cls.__module__
        if not defined_in.startswith("chainrule."):
            continue  # declared by a test (a deliberately wrong op, say), not by chainrule
        if getattr(cls, "_abstract", False) or not _has_torch_name(cls.__name__):
            continue
        names.add(cls.__name__)
    return names


def _has_torch_name(name: str) -> bool:
    return name[:1].isupper() and (name.endswith(("Backward0", "Backward1", "Backward2",
                                                   "Backward3", "Backwards"))
                                   or name in ("CopySlices", "AccumulateGrad"))


def _walk(roots: list[Any], into: set[str]) -> None:
    stack = [r.grad_fn for r in roots if r is not None and r.grad_fn is not None]
    done: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in done:
            continue
        done.add(id(node))
        into.add(type(node).__name__)
        stack.extend(next_node for next_node, _ in node.next_functions)


def _run_sample(info: OpInfo, index: int, seen: set[str] | None) -> None:
    arrays = sample_inputs(info, index, "float64")
    requires = requires_grad_flags(info, arrays)
    xs = [chainrule.from_numpy(a.copy()).requires_grad_(r)
          for a, r in zip(arrays, requires, strict=True)]
    outs = [o for o in flat_outputs(info.fn(chainrule, *xs)) if o.requires_grad]
    if seen is None:
        return
    _walk(outs, seen)
    wanted = [x for x, r in zip(xs, requires, strict=True) if r]
    if outs and wanted:
        vs = [chainrule.ones(tuple(o.shape), dtype=o.dtype, requires_grad=True) for o in outs]
        # (an entry whose gradients cannot be recorded, such as eig's complex ones, says so)
        record = info.extra.get("record_gradients", True)
        grads = chainrule.autograd.grad(outs, wanted, vs, create_graph=record,
                                        allow_unused=True)
        _walk([g for g in grads if g is not None and g.grad_fn is not None], seen)
        seen.add("AccumulateGrad")  # every leaf that requires grad is reached through one


def produced_node_types() -> set[str]:
    """Node types in the graphs of every OpInfo sample and of their recorded gradients."""
    seen: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in ALL_OPS:
            for index in range(len(info.shapes)):
                _run_sample(info, index, seen)
    return seen


def public_callables() -> dict[str, Callable[..., Any]]:
    """``"torch.exp"``, ``"Tensor.add_"``, ``"F.relu"`` ... -> the callable."""
    found: dict[str, Callable[..., Any]] = {}
    for prefix, namespace in NAMESPACES.items():
        names = vars(namespace) if inspect.isclass(namespace) else dir(namespace)
        for name in names:
            public = not name.startswith("_") or (name.startswith("__") and name.endswith("__"))
            if not public:
                continue
            value = inspect.getattr_static(namespace, name)
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if inspect.isclass(value) or inspect.ismodule(value) or not callable(value):
                continue
            if prefix == "Tensor" and name.startswith("__") and name in _OBJECT_PROTOCOL:
                continue
            found[f"{prefix}.{name}"] = value
    return found


# Python's object protocol on Tensor: not ops (tested by the tensor API tests).
_OBJECT_PROTOCOL = frozenset({
    "__init__", "__new__", "__repr__", "__str__", "__format__", "__hash__", "__bool__",
    "__len__", "__iter__", "__contains__", "__reduce_ex__", "__reduce__", "__getstate__",
    "__setstate__", "__deepcopy__", "__copy__", "__dir__", "__array__", "__array_priority__",
    "__array_wrap__", "__index__", "__int__", "__float__", "__complex__", "__init_subclass__",
    "__class_getitem__", "__subclasshook__", "__sizeof__", "__getattr__", "__setattr__",
    "__delattr__", "__eq__", "__ne__", "__dlpack__", "__dlpack_device__", "__torch_function__",
    "__weakref__",
})


@contextmanager
def _recording(called: set[str]) -> Iterator[None]:
    """Wrap every public callable so a call through its public name is recorded."""
    originals: list[tuple[Any, str, Any]] = []
    for qualified in public_callables():
        prefix, name = qualified.split(".", 1)
        namespace = NAMESPACES[prefix]
        original = inspect.getattr_static(namespace, name)
        function = original
        if isinstance(original, staticmethod | classmethod):
            function = original.__func__

        def recorder(*args: Any, __name: str = qualified, __fn: Any = function,
                     **kwargs: Any) -> Any:
            called.add(__name)
            return __fn(*args, **kwargs)

        functools.update_wrapper(recorder, function)
        wrapped: Any = recorder
        if isinstance(original, staticmethod):
            wrapped = staticmethod(recorder)
        elif isinstance(original, classmethod):
            wrapped = classmethod(recorder)
        originals.append((namespace, name, original))
        setattr(namespace, name, wrapped)
    try:
        yield
    finally:
        for namespace, name, original in reversed(originals):
            setattr(namespace, name, original)


def called_public_names() -> set[str]:
    """Public names the OpInfo entries call (forward only)."""
    called: set[str] = set()
    with warnings.catch_warnings(), _recording(called):
        warnings.simplefilter("ignore")
        np.seterr(all="ignore")
        for info in ALL_OPS:
            for index in range(len(info.shapes)):
                _run_sample(info, index, None)
    return called
