"""Backward-graph nodes: the base :class:`Node` and the per-leaf :class:`AccumulateGrad` sink.

A node is what a tensor's ``grad_fn`` points at. It knows how to turn the gradient of its outputs
into gradients of its inputs (:meth:`Node.apply`) and where those go next: ``next_functions``, a
tuple with one ``(node or None, input_nr)`` pair per input, in input order. Leaves that require
grad are reached through one :class:`AccumulateGrad` per leaf.

No node refers back to the tensor it produced (that would be a reference cycle the garbage
collector has to find); the tensor refers to the node, and the node to its inputs' nodes.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = [
    "Node", "AccumulateGrad", "RemovableHandle", "HookDict", "NodeHooks", "SECOND_BACKWARD_MESSAGE",
    "short_name", "type_name", "RELEASED", "ReleasedNumbers", "is_released", "new_node",
    "OUTPUT_META", "remember_output", "set_edges",
]


class _Released:
    """Marks what a node saved once a backward pass without ``retain_graph`` freed it."""

    def __repr__(self) -> str:
        return "<released>"


RELEASED: Any = _Released()


class ReleasedNumbers(_Released):
    """What a released op node keeps: the numbers it saved (``_saved_alpha``, group norm's
    ``_saved_N``), which PyTorch's nodes keep readable after a backward pass freed their saved
    tensors. ``numbers`` maps argument positions to values."""

    __slots__ = ("numbers",)

    def __init__(self, numbers: dict[int, Any]) -> None:
        self.numbers = numbers


def is_released(saved: Any) -> bool:
    """Whether a node's saved values were freed by a backward pass."""
    return isinstance(saved, _Released)

SECOND_BACKWARD_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

# Sequence numbers order the engine's ready queue: the most recently created node runs first.
# AccumulateGrad nodes all share the maximum number, as in PyTorch, so they run as soon as they
# are ready; among them the engine keeps the order in which they became ready.
_sequence = itertools.count()
next_sequence_nr = _sequence.__next__

N = TypeVar("N", bound="Node")
ACCUMULATE_GRAD_SEQ = (1 << 64) - 1


def new_node(cls: type[N], edges: tuple = (), metas: tuple = ()) -> N:
    """A node of ``cls`` with the fields every node has: its edges (``next_functions``), the
    shape and dtype each input had (``_in_meta``), its sequence number and no hooks. (The ops'
    recorders, ops/_recorder.py, set the same fields in generated code.)"""
    node = object.__new__(cls)
    set_edges(node, edges)
    node._in_meta = metas
    node._seq = next_sequence_nr()
    node._hooks = None
    return node


def set_edges(node: Node, edges: Sequence[tuple[Node | None, int]]) -> None:
    """Give ``node`` its edges, ``((node or None, input_nr), ...)``, one per input in order."""
    node._next_fns = tuple(edge[0] for edge in edges)
    node._next_nrs = tuple(edge[1] for edge in edges)


class RemovableHandle:
    """Returned by ``register_*hook``; ``remove()`` unregisters the hook (also
    ``chainrule.utils.hooks.RemovableHandle``, as PyTorch's ``torch.utils.hooks``).

    ``extra_dict`` (a dict, or a list of dicts) names dicts keyed by the same hook ids (a
    module's flags for its hooks): ``remove()`` forgets the hook's entry there too. The dicts
    are held by weak reference (a ``HookDict``, or any dict type that can be weakly referenced).
    """

    __slots__ = ("_hooks_ref", "id", "_extra_refs")
    __module__ = "chainrule.utils.hooks"  # its public home, as PyTorch's torch.utils.hooks
    _next_id = itertools.count()

    def __init__(self, hooks_dict: HookDict, *, extra_dict: Any = None) -> None:
        self._hooks_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        if isinstance(extra_dict, dict):
            self._extra_refs: tuple[weakref.ref, ...] = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self._extra_refs = tuple(weakref.ref(d) for d in extra_dict)
        else:
            self._extra_refs = ()

    def remove(self) -> None:
        """Unregister the hook (a second call does nothing)."""
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)
        for ref in self._extra_refs:
            extra = ref()
            if extra is not None:
                extra.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class HookDict(dict):
    """A dict that can be weakly referenced (plain dicts cannot)."""

    __slots__ = ("__weakref__",)


class NodeHooks:
    """Hooks attached to one node, created on first registration (most nodes have none)."""

    __slots__ = ("tensor_pre", "retains", "pre", "post", "metadata")

    def __init__(self) -> None:
        # tensor_pre: hooks registered on the node's output tensors: id -> (output_nr, fn)
        self.tensor_pre: HookDict = HookDict()
        # retains: output_nr -> weak reference to a non-leaf tensor that called retain_grad()
        self.retains: dict[int, weakref.ref] = {}
        self.pre: HookDict = HookDict()
        self.post: HookDict = HookDict()
        self.metadata: dict[str, Any] | None = None


class Node:
    """A node of the backward graph (what ``tensor.grad_fn`` returns).

    Subclasses implement :meth:`apply`. Attributes every node has:

    * ``next_functions`` -- ``((node | None, input_nr), ...)``, one pair per input, built on
      each read (as PyTorch's) from ``_next_fns`` (the nodes, or None, in input order) and
      ``_next_nrs`` (the input numbers). Two flat tuples instead of a tuple of pairs: a pair per
      edge was one more object per node for memory and for Python's cyclic garbage collector to
      track (the tuple of ints is not tracked, and is a shared constant when all are 0);
    * ``_seq`` -- creation order, used by the engine to order execution;
    * ``_in_meta`` -- per input, ``(shape, numpy dtype)`` of the input (``None`` if that input
      needs no gradient), so the engine can reduce broadcast gradients and cast them once.
    """

    __slots__ = ("_next_fns", "_next_nrs", "_seq", "_in_meta", "_hooks", "__weakref__")

    _n_out = 1
    # Whether the gradients apply() returns are new arrays or the incoming gradient or a view
    # of it, never an array held elsewhere (op-table nodes: the engine may hand them to .grad).
    _fresh_outputs = False
    # Whether the node is a one-output view's (``TBackward0``, ``ViewBackward0`` ...), whose
    # gradient is typically a view of its incoming one: the engine then tracks whether it owns
    # that incoming gradient, so a weight's gradient through ``w.t()`` needs no copy.
    _passes_grad_view = False
    # Whether ``backward()`` from this node may run it without a GraphTask when every edge
    # leads to a leaf without hooks (engine._run_alone): its results must be fresh
    # (``_fresh_outputs``) and no array for two inputs (a compiled call's node).
    _runs_alone = False

    def name(self) -> str:
        """The node's name, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """``((node or None, input_nr), ...)``: where this node's gradients go, one edge per
        input in order (None for an input that needs no gradient)."""
        return tuple(zip(self._next_fns, self._next_nrs, strict=True))

    @next_functions.setter
    def next_functions(self, value: Any) -> None:
        raise AttributeError(
            f"attribute 'next_functions' of '{type(self).__name__}' objects is not writable")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        """Map the gradient(s) of this node's outputs to one gradient per input (or None)."""
        raise NotImplementedError

    def __call__(self, *grads: Any) -> Any:
        """Run this node on gradients of its outputs, as PyTorch's ``grad_fn(grad)``: one
        Tensor per output in, its gradients for its inputs out (one Tensor, or a tuple when it
        has several), computed under the current grad mode; saved values are kept."""
        n_out = self._n_out
        if len(grads) != n_out:
            raise TypeError(f"expected {n_out} arguments, got {len(grads)} instead")
        outputs = self.apply(grads[0] if n_out == 1 else list(grads), True)
        return outputs[0] if len(self._next_fns) == 1 else tuple(outputs)

    def release(self) -> None:
        """Drop saved values after a backward pass that does not retain the graph."""

    def run_backward(self, grads: Any, create_graph: bool, release: bool) -> Sequence[Any]:
        """What the engine runs: :meth:`apply`, then :meth:`release` if ``release`` (op nodes
        do both in one call)."""
        outputs = self.apply(grads, create_graph)
        if release:
            self.release()
        return outputs

    def run_without_grad(self, grads: Any, create_graph: bool, release: bool) -> Sequence[Any]:
        """What the engine runs for a node that received no gradient at all (``grads`` is None,
        or all None): PyTorch still runs it, and most nodes then send no gradient. Subclasses
        that do more (check what they saved, call a custom backward on zeros) override it."""
        if release:
            self.release()
        return (None,) * len(self._next_fns)

    def _sequence_nr(self) -> int:
        return self._seq

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        """Change the node's sequence number: among nodes ready at once, the engine runs the
        one with the larger number first (PyTorch's private setter)."""
        self._seq = sequence_nr

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict for user data attached to the node (as ``Node.metadata`` in PyTorch)."""
        hooks = self._get_hooks()
        if hooks.metadata is None:
            hooks.metadata = {}
        return hooks.metadata

    def _get_hooks(self) -> NodeHooks:
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = NodeHooks()
        return hooks

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Run ``fn(grad_inputs, grad_outputs)`` after this node; it may return new grad_inputs."""
        hooks = self._get_hooks().post
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Run ``fn(grad_outputs)`` before this node; it may return new grad_outputs."""
        hooks = self._get_hooks().pre
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle


class AccumulateGrad(Node):
    """The sink that adds a gradient into a leaf's ``.grad``; ``.variable`` is that leaf."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self._next_fns = self._next_nrs = ()
        self._seq = ACCUMULATE_GRAD_SEQ
        self._in_meta = ()
        self._hooks = None

    def name(self) -> str:
        """``'chainrule::autograd::AccumulateGrad'`` (PyTorch's C++ name, this package's)."""
        return "chainrule::autograd::AccumulateGrad"

    # apply(): adding into ``.grad`` is the engine's (autograd.engine installs it).


# The shape and dtype of node outputs whose tensor was seen by ``Tensor.grad_fn`` or
# ``autograd.graph.get_gradient_edge``: what PyTorch's nodes keep for each output
# (``_input_metadata``) and ``autograd.grad`` reads for a GradientEdge output. Most nodes here do
# not record their outputs' metadata when they are made: recording it for every op would slow
# every op for the sake of that one use.
OUTPUT_META: weakref.WeakKeyDictionary[Node, dict[int, tuple[tuple[int, ...], Any]]] = (
    weakref.WeakKeyDictionary()
)


def remember_output(node: Node, output_nr: int, data: Any) -> None:
    """Record that output ``output_nr`` of ``node`` has the shape and dtype of ``data``."""
    known = OUTPUT_META.get(node)
    if known is None:
        OUTPUT_META[node] = {output_nr: (data.shape, data.dtype)}
    else:
        known[output_nr] = (data.shape, data.dtype)


def type_name(obj: Any) -> str:
    """The type's name as PyTorch's C++ code prints it (CPython's ``tp_name``): bare for
    builtins and Python classes, with the module for other C types (``numpy.ndarray``)."""
    kind = type(obj)
    if kind.__flags__ & _HEAP_TYPE or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__name__}"


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def short_name(node: Node) -> str:
    """The name reprs, drawings and steps show: ``name()`` without the
    ``chainrule::autograd::`` prefix of ``AccumulateGrad`` and ``CopySlices`` (PyTorch prints
    ``grad_fn=<CopySlices>`` although its ``name()`` is ``torch::autograd::CopySlices``)."""
    return node.name().rpartition("::")[2]
