"""Running a graph: the nodes a fetch needs, in graph order, over NumPy arrays.

``run(graph, fetches, feeds, state)`` walks back from the fetched values and nodes (an explicit
stack, no recursion) to find the nodes they need, stopping at fed values, then runs those nodes
in the graph's order: a placeholder takes its fed array, a constant its value, a variable its
array in ``state``, a call applies its function to tensors wrapping its inputs' arrays (under
``no_grad``), an assign writes a new array into ``state``. Results are NumPy arrays.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.grad_mode import no_grad
from .graph import Graph, Node, Value

__all__ = [
    "run",
    "Runner",
    "needed_nodes",
    "MissingFeed",
    "UninitializedVariable",
    "IMPURE",
    "impure",
]


class MissingFeed(LookupError):
    """A placeholder the fetches need was not fed (``.node`` is the placeholder)."""

    def __init__(self, node: Node) -> None:
        super().__init__(f"no value fed for placeholder {node.name!r}")
        self.node = node


class UninitializedVariable(LookupError):
    """A variable was read before anything was assigned to it (``.node``: the variable)."""

    def __init__(self, node: Node) -> None:
        super().__init__(f"variable {node.name!r} read before it was assigned")
        self.node = node


def needed_nodes(graph: Graph, fetches: Sequence[Value | Node], fed: Sequence[Value]) -> list[Node]:
    """The nodes that computing ``fetches`` runs, in graph order (a fed value's node is not
    run for it)."""
    fed_ids = {id(v) for v in fed}
    seen: set[int] = set()
    stack: list[Node] = []
    for fetch in fetches:
        if isinstance(fetch, Value):
            if id(fetch) not in fed_ids:
                stack.append(fetch.node)
        else:
            stack.append(fetch)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for value in node.inputs:
            if id(value) not in fed_ids and id(value.node) not in seen:
                stack.append(value.node)
        for before in node.control:
            if id(before) not in seen:
                stack.append(before)
    return [node for node in graph.nodes if id(node) in seen]


def _array(arg: Any, env: dict[Value, np.ndarray]) -> Any:
    """``arg`` with graph values (also inside a tuple or list) as tensors of their arrays."""
    if isinstance(arg, Value):
        return wrap(env[arg])
    if isinstance(arg, tuple | list):
        return type(arg)(wrap(env[a]) if isinstance(a, Value) else a for a in arg)
    return arg


def _call(node: Node, env: dict[Value, np.ndarray]) -> None:
    args = [_array(a, env) for a in node.args]
    kwargs = {k: _array(v, env) for k, v in node.kwargs.items()}
    out = node.target(*args, **kwargs)  # type: ignore[misc]
    items = out if isinstance(out, tuple | list) else (out,)
    for value, item in zip(node.outputs, items, strict=True):
        env[value] = item._data if isinstance(item, Tensor) else np.asarray(item)


def _assign(node: Node, env: dict[Value, np.ndarray], state: dict[Node, np.ndarray]) -> None:
    if node.target is None:
        new = env[node.args[0]]
    else:
        args = [_array(a, env) for a in node.args]
        new = node.target(*args)._data
    variable = node.variable
    if variable is None:
        raise ValueError(f"assign node {node.name!r} has no variable")
    target_dtype = variable.outputs[0].dtype.np
    if new.dtype != target_dtype:
        new = new.astype(target_dtype)
    state[variable] = new
    env[node.outputs[0]] = new


def _execute(
    nodes: Sequence[Node],
    env: dict[Value, np.ndarray],
    state: dict[Node, np.ndarray],
    folded: dict[Value, np.ndarray | None] | None,
) -> None:
    """Run ``nodes`` in order into ``env``; a value found in ``folded`` is taken from there,
    and a foldable node's new value (``folded`` has a key for each foldable output) kept."""
    with no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for node in nodes:
            kind = node.kind
            if kind == "call":
                if folded is not None and node.outputs and node.outputs[0] in folded:
                    cached = folded[node.outputs[0]]
                    if cached is not None:
                        env[node.outputs[0]] = cached
                        continue
                    _call(node, env)
                    folded[node.outputs[0]] = env[node.outputs[0]]
                    continue
                _call(node, env)
            elif kind == "constant":
                env[node.outputs[0]] = node.value  # type: ignore[assignment]
            elif kind == "placeholder":
                if node.outputs[0] not in env:
                    raise MissingFeed(node)
            elif kind == "variable":
                if node.outputs[0] not in env:
                    if node not in state:
                        raise UninitializedVariable(node)
                    env[node.outputs[0]] = state[node]
            elif kind == "assign":
                _assign(node, env, state)


def _fed(feeds: dict[Value, np.ndarray]) -> dict[Value, np.ndarray]:
    """The fed arrays (a NumPy scalar or a list made an array: a tensor wraps arrays only)."""
    return {v: a if type(a) is np.ndarray else np.asarray(a) for v, a in feeds.items()}


def run(
    graph: Graph,
    fetches: Sequence[Value | Node],
    feeds: dict[Value, np.ndarray] | None = None,
    state: dict[Node, np.ndarray] | None = None,
) -> list[np.ndarray | None]:
    """The arrays of ``fetches`` (None for a node fetched for its effect), computing only what
    they need. ``feeds`` maps values to arrays (any value may be fed, not only placeholders);
    ``state`` holds the variables' arrays and receives what assign nodes write."""
    feeds = feeds or {}
    state = state if state is not None else {}
    env = _fed(feeds)
    _execute(needed_nodes(graph, fetches, list(feeds)), env, state, None)
    return [env[f] if isinstance(f, Value) else None for f in fetches]


#: Functions whose nodes give a new value at each run (random samplers): never folded.
IMPURE: set[Callable[..., Any]] = set()


def impure(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare that nodes applying ``fn`` must run each time (a decorator)."""
    IMPURE.add(fn)
    return fn


# A run's plan: the nodes to run, the folded values it starts from, whether any computes.
_Plan = tuple[list[Node], list[tuple[Value, np.ndarray]], bool]


class Runner:
    """Runs one graph again and again (a session): :func:`run` with two caches.

    * the plan: the needed nodes for a set of fetches and fed values;
    * constant folding: the value of a call node that depends on constants only (no
      placeholder, variable or impure function upstream) is computed once and reused, unless
      a run feeds a value such a node depends on.
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._plans: dict[tuple, _Plan] = {}
        self._folded: dict[Value, np.ndarray | None] = {}  # a key for each foldable output
        self._constant_nodes: set[int] = set()  # ids of constant and foldable nodes
        self._classified = 0  # how many of graph.nodes were looked at

    def _classify(self) -> None:
        """Find the foldable nodes among those added since the last run."""
        nodes = self.graph.nodes
        for node in nodes[self._classified :]:
            if node.kind == "constant":
                self._constant_nodes.add(id(node))
            elif (
                node.kind == "call"
                and len(node.outputs) == 1
                and node.target not in IMPURE
                and not node.control
                and all(id(v.node) in self._constant_nodes for v in node.inputs)
            ):
                self._constant_nodes.add(id(node))
                for value in node.outputs:
                    self._folded[value] = None
        self._classified = len(nodes)

    def _plan(
        self, fetches: Sequence[Value | Node], feeds: dict[Value, np.ndarray], fold: bool
    ) -> _Plan:
        """What a run does: the nodes to run, the folded values it starts from, and whether
        any node computes (needs grad mode off and warnings filtered)."""
        needed = needed_nodes(self.graph, fetches, list(feeds))
        if not fold:
            return needed, [], any(n.kind in ("call", "assign") for n in needed)
        constant = self._constant_nodes
        rest = [n for n in needed if id(n) not in constant]
        # The folded values the rest reads or the caller fetches: computed once, kept.
        wanted: list[Value] = []
        for value in [*(v for n in rest for v in n.inputs), *fetches]:
            if isinstance(value, Value) and id(value.node) in constant and value not in feeds:
                if not any(value is w for w in wanted):
                    wanted.append(value)
        env: dict[Value, np.ndarray] = {}
        folded_nodes = needed_nodes(self.graph, wanted, [])
        _execute(folded_nodes, env, {}, self._folded)
        starts = [(value, env[value]) for value in wanted]
        return rest, starts, any(n.kind in ("call", "assign") for n in rest)

    def run(
        self,
        fetches: Sequence[Value | Node],
        feeds: dict[Value, np.ndarray],
        state: dict[Node, np.ndarray],
    ) -> list[np.ndarray | None]:
        """As :func:`run`, with the plan and the folded constants cached."""
        if self._classified != len(self.graph.nodes):
            self._classify()
            self._plans.clear()
        # Feeding a value computed from constants changes what depends on it: no folding then.
        fold = not feeds or not any(id(v.node) in self._constant_nodes for v in feeds)
        key = (tuple(id(f) for f in fetches), tuple(id(v) for v in feeds), fold)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plan(fetches, feeds, fold)
            self._plans[key] = plan
        nodes, starts, computes = plan
        env: dict[Value, np.ndarray] = dict(starts)
        env.update(_fed(feeds))
        if computes:
            _execute(nodes, env, state, None)
        else:
            _read_inputs(nodes, env, state)
        return [env[f] if isinstance(f, Value) else None for f in fetches]


def _read_inputs(
    nodes: Sequence[Node], env: dict[Value, np.ndarray], state: dict[Node, np.ndarray]
) -> None:
    """The part of :func:`_execute` for placeholders, constants and variables only."""
    for node in nodes:
        value = node.outputs[0] if node.outputs else None
        if value is None or value in env:
            continue
        if node.kind == "constant":
            env[value] = node.value  # type: ignore[assignment]
        elif node.kind == "placeholder":
            raise MissingFeed(node)
        elif node.kind == "variable":
            if node not in state:
                raise UninitializedVariable(node)
            env[value] = state[node]
