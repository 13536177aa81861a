"""A :class:`~.interpreter.Runner` whose plans run as generated NumPy code.

A session runs the same fetches with the same fed values again and again; the interpreter
walks the plan's nodes each time, wrapping arrays into tensors for every call. Here a plan
of function applications only (calls, constants, fed placeholders: no variables, assigns or
control dependencies) is generated once as a NumPy function (``ir.numpy_codegen``) taking the
fed arrays and the folded constants; other plans, and any run whose generated code raises,
go to the interpreter, which raises the errors its callers expect (an unfed placeholder, a
fed shape that does not fit, with chainrule's messages).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .graph import Graph, Node, Value
from .interpreter import Runner, needed_nodes
from .numpy_codegen import NumpyFunction, numpy_function

__all__ = ["GeneratedRunner"]

# The nodes a generated plan may hold.
_GENERATED_KINDS = frozenset({"call", "constant", "placeholder"})


class GeneratedRunner(Runner):
    """:class:`Runner` with each plan of calls generated as a NumPy function."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        # per plan key: (the function, the fed values and folded values it takes), or None
        self._generated: dict[tuple, tuple[NumpyFunction, list[Value]] | None] = {}

    def run(
        self,
        fetches: Sequence[Value | Node],
        feeds: dict[Value, np.ndarray],
        state: dict[Node, np.ndarray],
    ) -> list[np.ndarray | None]:
        """As :meth:`Runner.run`, through the plan's generated function when it has one."""
        if self._classified != len(self.graph.nodes):
            self._generated.clear()
        key = (tuple(id(f) for f in fetches), tuple(id(v) for v in feeds))
        if key not in self._generated:
            result = super().run(fetches, feeds, state)  # (plans and folds; checks the run)
            self._generated[key] = self._generate(fetches, feeds)
            return result
        generated = self._generated[key]
        if generated is None:
            return super().run(fetches, feeds, state)
        fn, starts = generated
        arrays = [a if type(a) is np.ndarray else np.asarray(a) for a in feeds.values()]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return list(fn.fn(*arrays, *(self._folded[v] for v in starts)))
        except Exception:  # noqa: BLE001 - the interpreter raises what callers expect
            return super().run(fetches, feeds, state)

    def _generate(
        self, fetches: Sequence[Value | Node], feeds: dict[Value, np.ndarray]
    ) -> tuple[NumpyFunction, list[Value]] | None:
        """The plan's generated function and the folded values it reads, or None."""
        if not fetches or not all(isinstance(f, Value) for f in fetches):
            return None
        fed = list(feeds)
        nodes = needed_nodes(self.graph, list(fetches), fed)
        constant = self._constant_nodes
        fold = not feeds or not any(id(v.node) in constant for v in feeds)
        starts: list[Value] = []
        rest = []
        for node in nodes:
            if fold and id(node) in constant and node.kind == "call":
                continue
            rest.append(node)
        for node in rest:
            if node.kind not in _GENERATED_KINDS or node.control:
                return None
            if any(v.shape is None for v in node.outputs):
                return None  # (unknown rank: a 0-d result would stay a NumPy scalar)
            for value in node.inputs:
                folded = fold and id(value.node) in constant and value.node.kind == "call"
                if folded and not any(value is s for s in starts):
                    starts.append(value)
        for fetch in fetches:
            folded = fold and id(fetch.node) in constant and fetch.node.kind == "call"
            if folded and not any(fetch is s for s in starts):
                starts.append(fetch)
        if any(self._folded.get(v) is None for v in starts):
            return None
        try:
            fn = numpy_function(
                self.graph, fed + starts, list(fetches), "run", _names(fed + starts)
            )
        except ValueError:  # (a placeholder it needs is not fed: the interpreter says so)
            return None
        return fn, starts


def _names(values: Sequence[Value]) -> dict[Value, str]:
    return {v: f"in{i}" for i, v in enumerate(values)}
