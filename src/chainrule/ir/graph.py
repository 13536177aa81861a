"""The graph IR: values, nodes and the graph that holds them in execution order.

A :class:`Graph` is a list of :class:`Node` objects in the order they were added, which is a
topological order (a node's inputs exist before it). Each node produces zero or more
:class:`Value` objects, each with a shape (``None`` for a dimension known only at run time) and
a chainrule dtype. A node of kind ``"call"`` applies a chainrule function (an entry of the op
table whenever there is one, ``target.op``) to its arguments; the other kinds are the graph's
inputs (``placeholder``, ``constant``, ``variable``) and its effects (``assign``, ``group``).

    >>> from chainrule.ir import Graph
    >>> from chainrule.ops import pointwise
    >>> g = Graph()
    >>> w = g.placeholder((), chainrule.float32, name="w")
    >>> y = g.call(pointwise.mul, (w, w))
    >>> print(g.code())

Shapes and dtypes are inferred when a node is added (``ir.infer``), so a node that cannot run
(mismatched shapes, a bad dtype) fails where it is written, with chainrule's error.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .._dtype import dtype as DType
from .._dtype import from_numpy_dtype
from . import codegen, drawing, infer

__all__ = ["Value", "Node", "Graph", "NODE_KINDS", "op_type"]

#: What a node can be: graph inputs, a function application, and effects on variables.
NODE_KINDS = ("placeholder", "constant", "variable", "call", "assign", "group")


class Value:
    """One output of a node: ``node.outputs[index]``, with its static shape and dtype."""

    __slots__ = ("node", "index", "shape", "dtype", "example", "probe")

    def __init__(
        self,
        node: Node,
        index: int,
        shape: tuple[int | None, ...] | None,
        dtype: DType,
        example: np.ndarray,
        probe: np.ndarray | None,
    ) -> None:
        self.node = node
        self.index = index
        self.shape = shape
        self.dtype = dtype
        # Arrays the value takes when the graph runs on example inputs (``ir.infer``): one
        # with every unknown dimension set to the first probe size, one (``probe``) with the
        # second, None when the shape is fully known.
        self.example = example
        self.probe = probe

    @property
    def name(self) -> str:
        """The node's name, with ``:index`` when the node has several outputs."""
        if len(self.node.outputs) == 1:
            return self.node.name
        return f"{self.node.name}:{self.index}"

    @property
    def known_shape(self) -> bool:
        """True when every dimension is known before the graph runs."""
        return self.shape is not None and None not in self.shape

    def __repr__(self) -> str:
        return f"<Value {self.name} shape={_shape_text(self.shape)} dtype={self.dtype}>"


class Node:
    """One operation of the graph.

    ``kind`` is one of :data:`NODE_KINDS`; ``target`` the function a ``call`` applies (for an
    ``assign``, an optional function computing the new value from ``args``); ``args`` and
    ``kwargs`` its arguments, with :class:`Value` objects (also inside tuples and lists) where
    the graph supplies them; ``control`` nodes that must run first; ``type`` a short name of
    what it does (the op table's node name without ``Backward0``, unless given).
    """

    __slots__ = (
        "graph",
        "kind",
        "name",
        "type",
        "target",
        "args",
        "kwargs",
        "outputs",
        "inputs",
        "control",
        "value",
        "variable",
        "attrs",
    )

    def __init__(
        self,
        graph: Graph,
        kind: str,
        name: str,
        type: str,
        target: Callable[..., Any] | None,
        args: tuple,
        kwargs: dict[str, Any],
        control: tuple[Node, ...] = (),
    ) -> None:
        if kind not in NODE_KINDS:
            raise ValueError(f"unknown node kind {kind!r}; expected one of {NODE_KINDS}")
        self.graph = graph
        self.kind = kind
        self.name = name
        self.type = type
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.outputs: tuple[Value, ...] = ()
        self.inputs: tuple[Value, ...] = _values_in(args, kwargs)
        self.control = control
        self.value: np.ndarray | None = None  # a constant's array
        self.variable: Node | None = None  # the variable an ``assign`` writes
        self.attrs: dict[str, Any] = {}  # what a front end wants to keep on the node

    @property
    def op(self) -> Any:
        """The op-table entry this node applies (``OpDef``), or None."""
        return getattr(self.target, "op", None)

    @property
    def output(self) -> Value:
        """The only output (a ``ValueError`` for a node with none or several)."""
        if len(self.outputs) != 1:
            raise ValueError(f"node {self.name!r} has {len(self.outputs)} outputs, not one")
        return self.outputs[0]

    def __repr__(self) -> str:
        return f"<Node {self.name} kind={self.kind} type={self.type}>"


def _values_in(args: tuple, kwargs: dict[str, Any]) -> tuple[Value, ...]:
    """The values among the arguments (also inside tuples and lists), in order, once each."""
    found: list[Value] = []
    for arg in (*args, *kwargs.values()):
        items = arg if isinstance(arg, tuple | list) else (arg,)
        for item in items:
            if isinstance(item, Value) and not any(item is v for v in found):
                found.append(item)
    return tuple(found)


def op_type(target: Callable[..., Any]) -> str:
    """A node's default type: the op table's node name without ``Backward<n>`` (``Mul`` for
    ``mul``), else the function's name."""
    op = getattr(target, "op", None)
    if op is not None:
        return re.sub(r"Backward\d*$", "", op.node_name) or op.name
    return getattr(target, "__name__", type(target).__name__)


class Graph:
    """A list of nodes in execution order, with unique names and name scopes.

    Names are made unique as TensorFlow makes them: the first ``Add``, then ``Add_1``,
    ``Add_2``...; inside ``with graph.name_scope("gradients"):`` they are
    ``gradients/Mul`` and so on.
    """

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self._by_name: dict[str, Node] = {}
        self._counts: dict[str, int] = {}
        self._scopes: list[str] = []

    # -- names -------------------------------------------------------------------------------

    def unique_name(self, name: str, mark_used: bool = True) -> str:
        """``name`` inside the current name scope, made unique as TensorFlow does it: names
        compare without case, and a taken one gets ``_1``, ``_2``... appended."""
        if self._scopes:
            name = f"{self._scopes[-1]}/{name}"
        key = name.lower()
        count = self._counts.get(key, 0)
        if mark_used:
            self._counts[key] = count + 1
        if count == 0:
            return name
        base = key
        while key in self._counts:
            key = f"{base}_{count}"
            count += 1
        if mark_used:
            self._counts[key] = 1
        return f"{name}_{count - 1}"

    @contextlib.contextmanager
    def name_scope(self, scope: str) -> Iterator[str]:
        """Names made inside start with ``scope/`` (``scope`` itself made unique when it does
        not end with ``/``; one ending with ``/`` is used as it is, without the slash)."""
        full = scope[:-1] if scope.endswith("/") else self.unique_name(scope)
        self._scopes.append(full)
        try:
            yield full
        finally:
            self._scopes.pop()

    def node(self, name: str) -> Node:
        """The node called ``name`` (``KeyError`` if there is none)."""
        return self._by_name[name]

    def has_node(self, name: str) -> bool:
        """True if a node is called ``name``."""
        return name in self._by_name

    # -- building ----------------------------------------------------------------------------

    def _add(
        self,
        node: Node,
        shapes: Sequence[tuple | None],
        dtypes: Sequence[DType],
        examples: Sequence[np.ndarray],
        probes: Sequence[np.ndarray | None],
    ) -> Node:
        node.outputs = tuple(
            Value(node, i, None if shape is None else tuple(shape), dtype, example, probe)
            for i, (shape, dtype, example, probe) in enumerate(
                zip(shapes, dtypes, examples, probes, strict=True)
            )
        )
        self.nodes.append(node)
        self._by_name[node.name] = node
        return node

    def _name(self, name: str | None, default: str) -> str:
        """A node's name: ``name`` exactly (``ValueError`` if a node has it already), or
        ``default`` made unique."""
        if name is None:
            return self.unique_name(default)
        if name in self._by_name:
            raise ValueError(f"Duplicate node name in graph: '{name}'")
        self._counts.setdefault(name.lower(), 1)
        return name

    def placeholder(
        self,
        shape: Sequence[int | None] | None,
        dtype: DType,
        name: str | None = None,
        type: str = "Placeholder",
    ) -> Value:
        """An input fed when the graph runs (``None`` dimensions: any size; ``shape`` None:
        any rank)."""
        node = Node(self, "placeholder", self._name(name, type), type, None, (), {})
        shape = None if shape is None else tuple(shape)
        example, probe = infer.example_input(shape, dtype)
        return self._add(node, [shape], [dtype], [example], [probe]).outputs[0]

    def constant(self, value: np.ndarray, name: str | None = None, type: str = "Const") -> Value:
        """A value fixed when the graph is built."""
        value = np.asarray(value)  # (a NumPy scalar: as a 0-d array)
        node = Node(self, "constant", self._name(name, type), type, None, (), {})
        node.value = value
        dtype = from_numpy_dtype(value.dtype)
        return self._add(node, [value.shape], [dtype], [value], [None]).outputs[0]

    def variable(
        self,
        shape: Sequence[int | None],
        dtype: DType,
        name: str | None = None,
        type: str = "Variable",
    ) -> Value:
        """State kept between runs: its value is what the last ``assign`` wrote."""
        node = Node(self, "variable", self._name(name, type), type, None, (), {})
        shape = tuple(shape)
        example, probe = infer.example_input(shape, dtype)
        return self._add(node, [shape], [dtype], [example], [probe]).outputs[0]

    def call(
        self,
        target: Callable[..., Any],
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
        name: str | None = None,
        type: str | None = None,
        control: Sequence[Node] = (),
    ) -> Node:
        """A node applying ``target`` (a chainrule function over tensors) to ``args``; its
        outputs' shapes and dtypes are inferred now (``ir.infer``)."""
        kwargs = dict(kwargs or {})
        node_type = type if type is not None else op_type(target)
        result = infer.infer_call(target, args, kwargs)
        node = Node(
            self,
            "call",
            self._name(name, node_type),
            node_type,
            target,
            tuple(args),
            kwargs,
            tuple(control),
        )
        return self._add(node, result.shapes, result.dtypes, result.examples, result.probes)

    def assign(
        self,
        variable: Value,
        value: Value | None,
        name: str | None = None,
        type: str = "Assign",
        target: Callable[..., Any] | None = None,
        args: tuple | None = None,
    ) -> Node:
        """A node writing ``value`` (or ``target(*args)``) into ``variable``'s node; its output
        is the value written."""
        if variable.node.kind != "variable":
            raise TypeError(f"{variable.name!r} is not a variable")
        node = Node(
            self,
            "assign",
            self._name(name, type),
            type,
            target,
            (value,) if args is None else tuple(args),
            {},
        )
        node.variable = variable.node
        return self._add(
            node, [variable.shape], [variable.dtype], [variable.example], [variable.probe]
        )

    def group(self, nodes: Sequence[Node], name: str | None = None, type: str = "NoOp") -> Node:
        """A node with no output that runs ``nodes`` first."""
        node = Node(self, "group", self._name(name, type), type, None, (), {}, tuple(nodes))
        return self._add(node, [], [], [], [])

    def truncate(self, length: int) -> None:
        """Drop the nodes added after the first ``length`` (nothing may use them)."""
        for node in self.nodes[length:]:
            self._by_name.pop(node.name, None)
        del self.nodes[length:]

    # -- reading -----------------------------------------------------------------------------

    def table(self) -> str:
        """The nodes as a table: name, kind, type, inputs, shape and dtype of the outputs."""
        rows = [("name", "kind", "type", "inputs", "shape", "dtype")]
        for node in self.nodes:
            inputs = ", ".join(v.name for v in node.inputs)
            if node.control:
                inputs = ", ".join(filter(None, [inputs, *("^" + c.name for c in node.control)]))
            shapes = "; ".join(_shape_text(v.shape) for v in node.outputs)
            dtypes = "; ".join(str(v.dtype).removeprefix("chainrule.") for v in node.outputs)
            rows.append((node.name, node.kind, node.type, inputs, shapes, dtypes))
        # (a column as wide as its widest cell)
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        lines.insert(1, "  ".join("-" * width for width in widths))
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print :meth:`table`."""
        print(self.table())

    def code(self, outputs: Sequence[Value] | None = None) -> str:
        """The graph as a Python function: one line per node, inputs as parameters."""
        return codegen.graph_code(self, outputs)

    def dot(self, name: str = "graph") -> str:
        """The graph as Graphviz DOT source (boxes for nodes, edges for the values read)."""
        return drawing.graph_dot(self, name)

    def __repr__(self) -> str:
        return f"<ir.Graph with {len(self.nodes)} nodes>"


def _shape_text(shape: tuple[int | None, ...] | None) -> str:
    if shape is None:
        return "<unknown>"
    if len(shape) == 1:
        return f"({'?' if shape[0] is None else shape[0]},)"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"
