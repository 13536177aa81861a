"""The backward half of the op table: nodes created by op-table entries.

An :class:`OpNode` keeps what its op's derivatives asked for (and nothing else): the forward's
arguments with unneeded tensors dropped, the versions of the saved tensors, and the output when a
derivative reads ``result``. ``apply`` unpacks them (arrays on the fast path, Tensors when the
backward pass is recorded) and calls each needed derivative with the matching ``F`` namespace.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from .._tensor import Tensor, grad_accumulator, wrap
from ..autograd.node import SECOND_BACKWARD_MESSAGE, Node

if TYPE_CHECKING:
    from ._registry import OpDef

__all__ = [
    "OpNode", "MultiOutputOpNode", "make_node_class", "bind_namespaces", "RELEASED", "PackedSaved",
    "pack_saved",
]

# Derivative namespaces, installed by ops/__init__.py once every op exists: NumPy forwards for
# the fast path, the public (recorded) ops when create_graph=True.
NUMPY_NS: Any = None
TENSOR_NS: Any = None


def bind_namespaces(numpy_ns: Any, tensor_ns: Any) -> None:
    """Install the helper namespaces derivatives receive as ``F``."""
    global NUMPY_NS, TENSOR_NS
    NUMPY_NS = numpy_ns
    TENSOR_NS = tensor_ns


class _Released:
    """Marks saved values freed by a backward pass without ``retain_graph``."""

    def __repr__(self) -> str:
        return "<released>"


RELEASED: Any = _Released()


class PackedSaved:
    """Saved arguments that went through a ``saved_tensors_hooks`` pack hook."""

    __slots__ = ("args", "positions", "unpack", "result", "edges")

    def __init__(self, args: tuple, positions: tuple[int, ...], unpack: Any, result: Any,
                 edges: tuple = ()) -> None:
        self.args = args  # packed objects at ``positions``
        self.positions = positions
        self.unpack = unpack
        self.result = result  # the packed output, or None
        # Per position, the saved tensor's place in the graph (see _graph_place): as in
        # PyTorch, what the unpack hook returns gives the values, the original its history.
        self.edges = edges


def _graph_place(t: Any) -> Any:
    """Where a saved tensor sits in the graph: None (no grad), ``(grad_fn, output_nr)``, or a
    weak reference to a leaf's AccumulateGrad (PyTorch's SavedVariable keeps the same)."""
    if not isinstance(t, Tensor) or not t._requires_grad:
        return None
    if t._grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    return weakref.ref(grad_accumulator(t))


def _with_graph_place(data: np.ndarray, place: Any) -> Tensor:
    """A tensor of ``data`` standing where the saved tensor stood in the graph, so gradients
    through an unpacked value reach the original (not whatever the pack hook computed)."""
    t = wrap(data)
    if place is None:
        return t
    t._requires_grad = True
    if type(place) is tuple:
        t._grad_fn, t._output_nr = place
    else:
        t._acc = place
    return t


def pack_saved(node: OpNode, pack: Any, unpack: Any, output: Tensor) -> None:
    """Replace what ``node`` saved by what ``pack`` returns (``saved_tensors_hooks``)."""
    saved = node._saved
    positions: tuple[int, ...] = ()
    args: tuple = ()
    edges: tuple = ()
    if saved is not None:
        values = list(saved)
        positions = tuple(pos for pos, version in node._versions if version is not None)
        edges = tuple(_graph_place(values[pos]) for pos in positions)
        for pos in positions:
            values[pos] = pack(values[pos])
        args = tuple(values)
    result = None
    if node._result is not None:
        result = pack(output)
        node._result = None
    if saved is None and result is None:
        return
    node._saved = PackedSaved(args, positions, unpack, result, edges)


class OpNode(Node):
    """A node created by an op-table entry.

    ``_saved``: the forward's positional arguments as needed by the derivatives (tensors no
    derivative reads are replaced by None), None when nothing is needed, or ``RELEASED``.
    ``_versions``: ``(position, version)`` for every saved tensor argument (version None for a
    saved number, which is freed like a tensor, as PyTorch frees wrapped numbers).
    ``_result``: ``(array, version counter, version)`` when a derivative reads the output.
    """

    __slots__ = ("_saved", "_versions", "_result")

    _op: OpDef

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        return OpNode.run_backward(self, grads, create_graph, False)

    def run_backward(self, grads: Any, create_graph: bool, release: bool) -> list[Any]:
        op = self._op
        if self._saved is None and not op.uses_extras:
            env = op.blank_args  # nothing saved: derivatives read only the gradient
        else:
            env = self._unpack(create_graph)
        F = TENSOR_NS if create_graph else NUMPY_NS
        out = []
        in_meta = self._in_meta
        i = 0
        for derivative in op.derivatives:
            if in_meta[i] is None:
                out.append(None)
            elif derivative is None:
                raise RuntimeError(f"derivative for aten::{op.name} is not implemented")
            elif derivative.single is not None:
                out.append(derivative.fn(F, grads, env[derivative.single]))
            elif derivative.arg_index:
                out.append(derivative.fn(F, grads, *derivative.gather(env)))
            else:
                out.append(derivative.fn(F, grads))
            i += 1
        if release:
            self.release()
        return out

    def _unpack(self, create_graph: bool) -> list[Any]:
        """The derivatives' environment: arguments, then the result, then input shapes."""
        op = self._op
        saved = self._saved
        packed_result = None
        if saved is None:
            env = list(op.blank_args)
        elif saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        elif type(saved) is PackedSaved:
            env = list(saved.args) if saved.args else list(op.blank_args)
            for pos, place in zip(saved.positions, saved.edges, strict=True):
                data = saved.unpack(env[pos])._data
                env[pos] = _with_graph_place(data, place) if create_graph else data
            if saved.result is not None:
                packed_result = saved.unpack(saved.result)._data
        else:
            env = list(saved)
            for pos, version in self._versions:
                if version is None:
                    continue
                t = env[pos]
                if t._vc[0] != version:
                    _raise_modified(t, self, version)
                if not create_graph:
                    env[pos] = t._data
        if op.uses_extras:
            result = self._result
            if packed_result is not None:
                env.append(_saved_output(packed_result, self) if create_graph else packed_result)
            elif result is None:
                env.append(None)
            else:
                data, counter, version = result
                if counter[0] != version:
                    _raise_modified_output(data, self, counter, version)
                env.append(_saved_output(data, self) if create_graph else data)
            for meta in self._in_meta:
                env.append(None if meta is None else meta[0])
            if op.records_strides:
                for meta in self._in_meta:
                    env.append(meta[2] if meta is not None and len(meta) > 2 else None)
        return env

    def release(self) -> None:
        if self._versions or self._result is not None or type(self._saved) is PackedSaved:
            self._saved = RELEASED
            self._versions = ()
            self._result = None

    # -- inspection (drawing, ``grad_fn._saved_self``) ------------------------------------

    def _saved_value(self, key: str, attribute: str) -> Any:
        if self._saved is RELEASED:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        values = self.saved_values()
        if key not in values:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute}'")
        value = values[key]
        if key == "result":
            return _saved_output(value, self)
        return value

    def saved_values(self) -> dict[str, Any]:
        """The values this node saved for backward, by name (empty once released)."""
        values: dict[str, Any] = {}
        saved = self._saved
        if saved is RELEASED:
            return values
        if type(saved) is PackedSaved:
            saved = saved.args or None
        names = self._op.param_names
        if saved is not None:
            for pos, _ in self._versions:
                values[names[pos]] = saved[pos]
            tensor_pos = self._op.tensor_positions
            for pos, value in enumerate(saved):
                if pos not in tensor_pos:
                    values[names[pos]] = value
        if self._result is not None:
            values["result"] = self._result[0]
        return values


class MultiOutputOpNode(OpNode):
    """An op node with several differentiable outputs (split, unbind, ...)."""

    __slots__ = ("_n_out", "_out_meta")

    def apply(self, grads: Any, create_graph: bool) -> list[Any]:
        if self._n_out == 1:
            grads = [grads]  # the engine hands a single-output node its gradient unwrapped
        return OpNode.apply(self, self._materialize(grads, create_graph), create_graph)

    # apply() wraps OpNode's, so the engine's entry point is the generic apply-then-release.
    run_backward = Node.run_backward

    def _materialize(self, grads: list[Any], create_graph: bool) -> list[Any]:
        """Zeros for outputs that received no gradient."""
        result = []
        for g, (shape, np_dtype) in zip(grads, self._out_meta, strict=True):
            if g is None:
                zeros = np.zeros(shape, np_dtype)
                g = wrap(zeros) if create_graph else zeros
            result.append(g)
        return result


def make_node_class(node_name: str, opdef: OpDef, multi_output: bool) -> type[OpNode]:
    """A node class named as PyTorch names it (``MulBackward0``) for one op-table entry.

    Saved values are exposed as PyTorch exposes them, ``grad_fn._saved_self``: one property per
    forward parameter (and ``_saved_result``). They are properties, not ``__getattr__``: a class
    with ``__getattr__`` makes every attribute lookup on its instances slower.
    """
    base = MultiOutputOpNode if multi_output else OpNode
    namespace: dict[str, Any] = {"__slots__": (), "_op": opdef, "__module__": "chainrule.autograd"}
    for name in (*opdef.param_names, "result"):
        for prefix in ("_saved_", "_raw_saved_"):
            namespace[prefix + name] = _saved_property(name, prefix + name)
    return type(node_name, (base,), namespace)


def _saved_property(key: str, attribute: str) -> property:
    def get(node: OpNode) -> Any:
        return node._saved_value(key, attribute)

    return property(get, doc=f"The saved value {key!r} (as PyTorch's ``{attribute}``).")


def _saved_output(data: np.ndarray, node: OpNode) -> Tensor:
    """Re-attach a saved output to its node (the node never holds the output Tensor itself)."""
    t = wrap(data)
    t._requires_grad = True
    t._grad_fn = node
    return t


def _raise_modified(t: Tensor, node: Node, version: int) -> None:
    from ..autograd.inplace import modified_error

    raise modified_error(t, node, t._vc[0], version)


def _raise_modified_output(data: np.ndarray, node: Node, counter: list[Any], version: int) -> None:
    from ..autograd.inplace import modified_output_error

    raise modified_output_error(data, node, counter[0], version, counter)
