"""Passes over a graph: each rewrites it in place and returns how many nodes it removed.

``roots`` are the values the caller needs (a list: a pass that replaces one of them writes
the replacement into it). Placeholders and variables are never removed; nodes with effects
(``assign``, ``group``), impure functions (``ir.IMPURE``) and nodes with control inputs are
left alone.

* :func:`eliminate_dead_code`: nodes no root needs;
* :func:`eliminate_common_subexpressions`: a call of the same function on the same values
  and the same Python arguments as an earlier one reads the earlier one's outputs instead;
* :func:`fold_constants`: a call whose inputs are all constants becomes a constant (computed
  as the interpreter computes it);
* :func:`optimize`: the three, until nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .graph import Graph, Node, Value, _values_in
from .interpreter import IMPURE, needed_nodes, run

__all__ = [
    "needed",
    "eliminate_dead_code",
    "eliminate_common_subexpressions",
    "fold_constants",
    "optimize",
    "replace_uses",
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
    """Remove the calls and constants that no root needs."""
    live = {id(n) for n in needed(graph, roots)}
    for node in graph.nodes:  # (what the live nodes wait for stays too)
        if id(node) in live:
            live.update(id(c) for c in node.control)
    dead = {id(n) for n in graph.nodes if id(n) not in live and _removable(n)}
    return _remove(graph, dead)


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
