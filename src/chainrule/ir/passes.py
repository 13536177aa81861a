"""Passes over a graph: each rewrites it in place and returns how many nodes it removed.

``roots`` are the values the caller needs (a list: a pass that replaces one of them writes
the replacement into it). Placeholders and variables are never removed; nodes with effects
(``assign``, ``group``), impure functions (``ir.IMPURE``) and nodes with control inputs are
left alone.

* :func:`eliminate_dead_code`: nodes no root needs (impure calls stay: :func:`effects`);
* :func:`eliminate_common_subexpressions`: a call of the same function on the same values
  and the same Python arguments as an earlier one reads the earlier one's outputs instead;
* :func:`fold_constants`: a call whose inputs are all constants becomes a constant (computed
  as the interpreter computes it);
* :func:`optimize`: the three, until nothing changes;
* :func:`fuse_elementwise`: a chain of element-wise calls, each intermediate read by the next
  only, becomes one call of a :class:`FusedElementwise` function (a small graph of its own,
  generated as one NumPy function whose intermediates reuse one buffer). Run it last: the
  derivative formulas know the single ops, not the fused ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._tensor import Tensor, wrap
from .graph import Graph, Node, Value, _values_in
from .interpreter import IMPURE, needed_nodes, run

__all__ = [
    "needed",
    "effects",
    "eliminate_dead_code",
    "eliminate_common_subexpressions",
    "fold_constants",
    "optimize",
    "replace_uses",
    "fuse_elementwise",
    "FusedElementwise",
    "MIN_FUSED_CHAIN",
]


def needed(graph: Graph, roots: Sequence[Value], fed: Sequence[Value] = ()) -> list[Node]:
    """The nodes computing ``roots`` runs, in graph order (not upstream of ``fed``)."""
    return needed_nodes(graph, list(roots), list(fed))


def _substitute(arg: Any, old: Value, new: Value) -> Any:
    if arg is old:
        return new
    if isinstance(arg, tuple | list):
        return type(arg)(new if a is old else a for a in arg)
    return arg


def replace_uses(graph: Graph, old: Value, new: Value, roots: list[Value] | None = None) -> None:
    """Make every node (and root) reading ``old`` read ``new``."""
    for node in graph.nodes:
        if any(v is old for v in node.inputs):
            node.args = tuple(_substitute(a, old, new) for a in node.args)
            node.kwargs = {k: _substitute(v, old, new) for k, v in node.kwargs.items()}
            node.inputs = _values_in(node.args, node.kwargs)
    if roots is not None:
        for i, root in enumerate(roots):
            if root is old:
                roots[i] = new


def _remove(graph: Graph, dead: set[int]) -> int:
    before = len(graph.nodes)
    kept = []
    for node in graph.nodes:
        if id(node) in dead:
            graph._by_name.pop(node.name, None)
        else:
            kept.append(node)
    graph.nodes[:] = kept
    return before - len(kept)


def _removable(node: Node) -> bool:
    return node.kind in ("call", "constant") and not node.control


def eliminate_dead_code(graph: Graph, roots: Sequence[Value]) -> int:
    """Remove the calls and constants that no root needs (an impure call stays, with what it
    reads: a random draw nothing reads still advances the generator)."""
    live = {id(n) for n in needed(graph, list(roots) + effects(graph))}
    for node in graph.nodes:  # (what the live nodes wait for stays too)
        if id(node) in live:
            live.update(id(c) for c in node.control)
    dead = {id(n) for n in graph.nodes if id(n) not in live and _removable(n)}
    return _remove(graph, dead)


def effects(graph: Graph) -> list[Value]:
    """The first outputs of the graph's impure calls (``ir.IMPURE``): computed for their
    effects, whether or not anything reads them."""
    return [
        node.outputs[0]
        for node in graph.nodes
        if node.kind == "call" and node.target in IMPURE and node.outputs
    ]


def _key(arg: Any) -> Any:
    """A hashable key of an argument (``TypeError`` when there is none): a value by
    identity, a number by type and representation (``1``, ``1.0``, ``-0.0`` and ``True``
    differ)."""
    if isinstance(arg, Value):
        return ("value", id(arg))
    if isinstance(arg, tuple | list):
        return (type(arg).__name__, tuple(_key(a) for a in arg))
    if arg is None or isinstance(arg, bool | int | float | complex | str):
        return (type(arg).__name__, repr(arg))
    hash(arg)
    return (type(arg).__name__, id(arg), arg)


def eliminate_common_subexpressions(graph: Graph, roots: list[Value]) -> int:
    """Replace a call equal to an earlier one (same function, same arguments) by it."""
    seen: dict[Any, Node] = {}
    dead: set[int] = set()
    for node in list(graph.nodes):
        if node.kind != "call" or node.control or node.target in IMPURE:
            continue
        try:
            key = (
                id(node.target),
                _key(node.args),
                tuple(sorted((k, _key(v)) for k, v in node.kwargs.items())),
            )
        except TypeError:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = node
            continue
        for old, new in zip(node.outputs, first.outputs, strict=True):
            replace_uses(graph, old, new, roots)
        dead.add(id(node))
    return _remove(graph, dead)


def fold_constants(graph: Graph, roots: list[Value]) -> int:
    """Replace each call whose inputs are all constants (one output, a pure function) by a
    constant holding its value. Returns the number of calls folded."""
    folded = 0
    for node in list(graph.nodes):
        if (
            node.kind != "call"
            or node.control
            or len(node.outputs) != 1
            or not node.inputs
            or node.target in IMPURE
            or any(v.node.kind != "constant" for v in node.inputs)
        ):
            continue
        value = node.outputs[0]
        (array,) = run(graph, [value])
        constant = graph.constant(array, name=graph.unique_name(f"{node.name}_folded"))
        graph.nodes.pop()  # (appended last: it takes the folded node's place)
        graph.nodes.insert(graph.nodes.index(node), constant.node)
        replace_uses(graph, value, constant, roots)
        _remove(graph, {id(node)})
        folded += 1
    return folded


def optimize(graph: Graph, roots: list[Value]) -> dict[str, int]:
    """Constant folding, common-subexpression and dead-code elimination until the graph
    stops changing: how many nodes each removed (folding: how many it replaced)."""
    report = {"fold_constants": 0, "eliminate_common_subexpressions": 0, "eliminate_dead_code": 0}
    while True:
        changes = 0
        for name, run_pass in (
            ("fold_constants", fold_constants),
            ("eliminate_common_subexpressions", eliminate_common_subexpressions),
            ("eliminate_dead_code", eliminate_dead_code),
        ):
            n = run_pass(graph, roots)
            report[name] += n
            changes += n
        if not changes:
            return report


#: The shortest chain :func:`fuse_elementwise` fuses: in NumPy each op stays one call, so a
#: fused pair saves one temporary only, and the generated code reads better unfused.
MIN_FUSED_CHAIN = 3

# Element-wise ops of other modules than ops.pointwise (by name).
_ELEMENTWISE_ELSEWHERE = frozenset({"threshold_backward"})


class FusedElementwise:
    """A chain of element-wise calls as one function over tensors. ``graph`` holds the
    chain: one placeholder per input (``inputs``), then the calls; ``output`` is the last
    call's value. Calling it runs the chain (the interpreter); ``ir.numpy_codegen`` writes it
    as a NumPy function of its own."""

    def __init__(
        self,
        graph: Graph,
        inputs: list[Value],
        output: Value,
        name: str,
        origins: dict[Value, Value] | None = None,
    ) -> None:
        self.graph = graph
        self.inputs = inputs
        self.output = output
        # the value of the fused graph each of this graph's values stands for (for names)
        self.origins = origins or {}
        self.__name__ = self.__qualname__ = name
        self.__module__ = __name__

    def __call__(self, *tensors: Tensor) -> Tensor:
        feeds = {v: t._data for v, t in zip(self.inputs, tensors, strict=True)}
        (result,) = run(self.graph, [self.output], feeds)
        return wrap(result)

    def __repr__(self) -> str:
        return f"<FusedElementwise {self.__name__}: {len(self.graph.nodes) - len(self.inputs)} ops>"


def _elementwise(node: Node) -> bool:
    op = node.op
    if node.kind != "call" or op is None or op.multi_output or op.view or node.control:
        return False
    module = op.forward.__module__
    if not (module.endswith("ops.pointwise") or op.name in _ELEMENTWISE_ELSEWHERE):
        return False
    shape = node.outputs[0].shape
    if shape is None or None in shape or len(shape) == 0:
        return False
    dtype = node.outputs[0].dtype
    if dtype.np.kind != "f" or dtype.itemsize < 4:
        return False
    return all(v.shape == shape and v.dtype is dtype for v in node.inputs)


def _users(graph: Graph) -> dict[int, list[Node]]:
    users: dict[int, list[Node]] = {}
    for node in graph.nodes:
        for value in node.inputs:
            users.setdefault(id(value), []).append(node)
    return users


def fuse_elementwise(
    graph: Graph, roots: list[Value], keep: Sequence[Value] = (), min_chain: int = MIN_FUSED_CHAIN
) -> int:
    """Fuse chains of at least ``min_chain`` element-wise calls of one shape and float dtype
    whose intermediates only the next call reads (none a root or in ``keep``). Returns how many
    nodes the graph lost."""
    users = _users(graph)
    kept = {id(v) for v in (*roots, *keep)}
    chains: list[list[Node]] = []
    in_chain: set[int] = set()
    for node in graph.nodes:
        if id(node) in in_chain or not _elementwise(node):
            continue
        chain = [node]
        while True:
            value = chain[-1].outputs[0]
            readers = users.get(id(value), [])
            if id(value) in kept or len(readers) != 1:
                break
            reader = readers[0]
            if (
                id(reader) in in_chain
                or not _elementwise(reader)
                or sum(v is value for v in reader.inputs) != 1
            ):
                break
            chain.append(reader)
        if len(chain) >= min_chain:
            chains.append(chain)
            in_chain.update(id(n) for n in chain)
    removed = 0
    for number, chain in enumerate(chains):
        removed += _fuse(graph, chain, roots, number)
    return removed


def _fuse(graph: Graph, chain: list[Node], roots: list[Value], number: int) -> int:
    inner = Graph()
    outer_inputs: list[Value] = []
    mapping: dict[int, Value] = {}
    inputs: list[Value] = []
    for node in chain:
        for value in node.inputs:
            if id(value) not in mapping:
                placeholder = inner.placeholder(value.shape, value.dtype, name=f"in{len(inputs)}")
                mapping[id(value)] = placeholder
                inputs.append(placeholder)
                outer_inputs.append(value)
        args = tuple(_mapped(a, mapping) for a in node.args)
        kwargs = {k: _mapped(v, mapping) for k, v in node.kwargs.items()}
        copy = inner.call(node.target, args, kwargs, name=node.name)
        mapping[id(node.outputs[0])] = copy.outputs[0]
    last = chain[-1]
    name = "fused_" + "_".join(n.op.name.strip("_") for n in chain)
    origins = {}
    for node in chain:
        for value in node.inputs:
            origins[mapping[id(value)]] = value
        origins[mapping[id(node.outputs[0])]] = node.outputs[0]
    fused = FusedElementwise(inner, inputs, mapping[id(last.outputs[0])], name, origins)
    node = graph.call(fused, tuple(outer_inputs), name=graph.unique_name(f"{last.name}_fused"))
    graph.nodes.pop()  # (appended last: it takes the chain's last node's place)
    graph.nodes.insert(graph.nodes.index(last), node)
    node.attrs.update(last.attrs)
    replace_uses(graph, last.outputs[0], node.outputs[0], roots)
    return _remove(graph, {id(n) for n in chain}) - 1


def _mapped(arg: Any, mapping: dict[int, Value]) -> Any:
    if isinstance(arg, Value):
        return mapping[id(arg)]
    if isinstance(arg, tuple | list):
        return type(arg)(mapping[id(a)] if isinstance(a, Value) else a for a in arg)
    return arg
