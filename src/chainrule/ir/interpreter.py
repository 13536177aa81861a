"""Running a graph: the nodes a fetch needs, in graph order, over NumPy arrays.

``run(graph, fetches, feeds, state)`` walks back from the fetched values and nodes (an explicit
stack, no recursion) to find the nodes they need, stopping at fed values, then runs those nodes
in the graph's order: a placeholder takes its fed array, a constant its value, a variable its
array in ``state``, a call applies its function to tensors wrapping its inputs' arrays (under
``no_grad``), an assign writes a new array into ``state``. Results are NumPy arrays.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.grad_mode import no_grad
from .graph import Graph, Node, Value

__all__ = ["run", "needed_nodes", "MissingFeed", "UninitializedVariable"]


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
    env: dict[Value, np.ndarray] = dict(feeds)
    with no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for node in needed_nodes(graph, fetches, list(feeds)):
            kind = node.kind
            if kind == "call":
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
    return [env[f] if isinstance(f, Value) else None for f in fetches]
