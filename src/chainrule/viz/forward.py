"""The forward graph as the seed articles draw it: data as nodes, operations as edges.

The articles explain ``y = (x + w) * (w + 1)`` with a graph whose nodes are the tensors
``x, w, a, b, y`` and whose arrows are the operations (``+``, ``×``): first bare, then with the
values ``x=2, w=1 -> a=3, b=2, y=6``, then with the chain rule's gradients (``∂y/∂a = b = 2``,
``∂y/∂w = 5``). :func:`forward_graph` reads that picture off the live backward graph: one data
node per tensor (a leaf behind each ``AccumulateGrad``, an output of each other node), one edge
per input of each operation (an operation of two inputs draws two arrows into its output).

Where the numbers come from, without changing anything of the user's:

* values: the tensors themselves where known (the outputs, the leaves, the caller's variables
  found by ``names="auto"`` or given in ``names``), else what a consumer saved for backward
  (``MulBackward0`` saves both factors), else the op's forward run again on known inputs and
  saved arguments (deterministic ops only); otherwise the value is not shown. Values are the
  tensors' data now: a tensor written in place since the graph used it (an optimizer step) is
  named in :attr:`ForwardGraph.notes`;
* gradients (``gradients=True``): a leaf's ``.grad``; for the others (and leaves without
  ``.grad``) ``autograd.grad`` on the graph, retained, with the retained ``.grad`` of
  intermediates put back afterwards (hooks registered on tensors and nodes do run). That needs
  the graph: after a ``backward()`` that freed it, only ``.grad`` of leaves and of tensors that
  called ``retain_grad()`` are known, and :attr:`ForwardGraph.notes` says what is required;
* local derivatives (``derivatives=True``): each node run once on a gradient of ones
  (``grad_fn(ones)``, no hooks, no recording): for one-element tensors and element-wise ops that
  is ``∂out/∂in`` itself; for other ops it is the vector-Jacobian product with ones.

Example:
    >>> import chainrule as torch
    >>> from chainrule import viz
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> a = torch.add(w, x)
    >>> b = torch.add(w, 1)
    >>> y = torch.mul(a, b)
    >>> print(viz.forward_graph(y, values=True))
    forward graph of y: 5 tensors, 3 operations
    w (1) leaf = 1
    x (1) leaf = 2
    a (1) = w + x = 3
    b (1) = w + (a number) = 2
    y (1) = a × b = 6
"""

from __future__ import annotations

import html
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import graphviz
import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.engine import grad as autograd_grad
from ..autograd.grad_mode import no_grad
from ..autograd.graph import GradientEdge
from ..autograd.node import AccumulateGrad, Node, is_released
from ..ops.creation import ones_like
from .dot import GraphDrawing, dot_label
from .graph import NO_CHILD, BackwardGraph, as_outputs, dtype_name, shape_text, walk

__all__ = ["forward_graph", "ForwardGraph", "DataNode", "OpEdge", "op_symbol", "format_value"]

# How an edge shows its operation: PyTorch's node name without ``Backward<n>``, as a symbol
# for arithmetic, else in lower case (``ExpBackward0`` -> ``exp``).
SYMBOLS = {
    "Add": "+",
    "Sub": "-",
    "Rsub": "-",
    "Mul": "×",
    "Div": "÷",
    "Pow": "**",
    "Neg": "-",
    "Mm": "@",
    "Matmul": "@",
    "Bmm": "@",
    "Mv": "@",
    "Dot": "·",
}
INFIX = {"+", "-", "×", "÷", "**", "@"}
# Ops whose forward draws random numbers: never run again to recover a value.
RANDOM_WORDS = (
    "Dropout",
    "Bernoulli",
    "Rrelu",
    "Normal",
    "Uniform",
    "Multinomial",
    "Poisson",
    "Gamma",
    "Exponential",
    "Cauchy",
    "Geometric",
    "LogNormal",
    "Random",
    "Dirichlet",
    "Binomial",
)
MAX_SHOWN = 4  # values shown per tensor

NodeKey = tuple[int, int]  # (backward node id, output_nr)


@dataclass
class DataNode:
    """A tensor of the forward graph.

    ``key`` is ``(backward node id, output_nr)`` (the ``AccumulateGrad`` of a leaf, output 0);
    ``kind`` is ``"leaf"``, ``"intermediate"`` or ``"output"``; ``value``/``grad`` are arrays
    or None when not known.
    """

    id: int
    key: NodeKey
    name: str
    kind: str
    shape: tuple[int, ...]
    dtype: str
    node_name: str
    value: np.ndarray | None = None
    grad: np.ndarray | None = None
    # A number the op took in place of a tensor (``3 * t``, ``t ** 3``): (operand slot, text).
    constant: tuple[int, str] | None = None

    @property
    def label(self) -> str:
        """The variable name, or ``#<backward node id>`` for a tensor nobody named."""
        return self.name or f"#{self.key[0]}"


@dataclass
class OpEdge:
    """One input of one operation: an arrow from the input's data node to the output's."""

    source: int
    target: int
    op: str
    node: int
    slot: int
    derivative: np.ndarray | None = None
    formula: str = ""


def op_symbol(node_name: str) -> str:
    """``+`` for ``AddBackward0``, ``×`` for ``MulBackward0``, ``exp`` for ``ExpBackward0``."""
    stem = node_name.split("::")[-1]
    cut = stem.find("Backward")
    if cut > 0:
        stem = stem[:cut]
    return SYMBOLS.get(stem, stem.lower())


def format_value(value: np.ndarray | None) -> str:
    """A short text of an array: ``3`` for one element, ``[1, 2, 3, 4, …]`` for more."""
    if value is None:
        return "?"
    flat = np.asarray(value).reshape(-1)
    parts = [_number(v) for v in flat[:MAX_SHOWN].tolist()]
    if flat.size == 1:
        return parts[0]
    more = ", …" if flat.size > MAX_SHOWN else ""
    return "[" + ", ".join(parts) + more + "]"


def _number(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


class ForwardGraph:
    """The forward graph of :func:`forward_graph`: ``nodes`` (data, in forward order),
    ``edges`` (operations), ``notes`` (what could not be shown, and why).

    ``source`` is the Graphviz DOT text, ``render(path)`` draws it (SVG or PNG), ``str()`` is a
    text form; in Jupyter it displays as SVG (or as text when Graphviz is not installed).
    """

    def __init__(
        self,
        nodes: list[DataNode],
        edges: list[OpEdge],
        notes: list[str],
        *,
        values: bool,
        gradients: bool,
        derivatives: bool,
        title: str,
    ) -> None:
        self.nodes = nodes
        self.edges = edges
        self.notes = notes
        self.values = values
        self.gradients = gradients
        self.derivatives = derivatives
        self.title = title
        self._drawing: GraphDrawing | None = None

    def __repr__(self) -> str:
        return f"<ForwardGraph of {self.title}: {len(self.nodes)} tensors, {len(self.edges)} edges>"

    def node(self, name: str) -> DataNode:
        """The data node labelled ``name`` (``KeyError`` if none)."""
        for data in self.nodes:
            if data.label == name:
                return data
        raise KeyError(name)

    def edge(self, source: str, target: str) -> OpEdge:
        """The first edge from the node labelled ``source`` to the one labelled ``target``."""
        for e in self.edges:
            if self.nodes[e.source].label == source and self.nodes[e.target].label == target:
                return e
        raise KeyError((source, target))

    # ------------------------------------------------------------------ Graphviz
    @property
    def drawing(self) -> GraphDrawing:
        """The ``graphviz.Digraph`` (a :class:`~chainrule.viz.GraphDrawing`)."""
        if self._drawing is None:
            self._drawing = self._digraph()
        return self._drawing

    @property
    def source(self) -> str:
        """The DOT source."""
        return self.drawing.source

    def render(self, path: str | Path = "forward_graph.svg", format: str | None = None) -> str:
        """Draw the graph to ``path`` (format from ``format`` or the suffix, SVG by default);
        returns the written path (the DOT source's, with a warning, without Graphviz)."""
        target = Path(path)
        fmt = format or (target.suffix[1:] if target.suffix else "svg")
        if target.suffix != f".{fmt}":
            target = target.with_name(f"{target.name}.{fmt}")
        target.parent.mkdir(parents=True, exist_ok=True)
        return self.drawing.render(outfile=os.fspath(target), format=fmt, cleanup=True)

    def _repr_svg_(self) -> str | None:
        try:
            return self.drawing._repr_svg_()
        except (graphviz.ExecutableNotFound, graphviz.CalledProcessError):
            return None

    def _repr_html_(self) -> str:
        svg = self._repr_svg_()
        if svg is not None:
            return svg
        return "<pre>" + html.escape(str(self)) + "</pre>"

    def _node_lines(self, data: DataNode) -> list[str]:
        lines = [data.label, shape_text(data.shape)]
        if self.values:
            lines.append(f"= {format_value(data.value)}")
        if self.gradients:
            lines.append(f"grad {format_value(data.grad)}")
        return lines

    def _edge_lines(self, e: OpEdge) -> list[str]:
        # A number the op took shows beside it (``** 3``, ``× 3``), as the formulas write it.
        constant = self.nodes[e.target].constant
        op = e.op
        if constant is not None:
            op = f"{op} {constant[1]}" if constant[0] == 1 else f"{constant[1]} {op}"
        lines = [op]
        if self.derivatives:
            lines.append(self._derivative_text(e))
        return lines

    def _derivative_text(self, e: OpEdge) -> str:
        out = self.nodes[e.target].label
        inp = self.nodes[e.source].label
        shown = format_value(e.derivative)
        formula = f" = {e.formula}" if e.formula and e.formula != shown else ""
        return f"∂{out}/∂{inp}{formula} = {shown}"

    def _digraph(self) -> GraphDrawing:
        dot = GraphDrawing(
            name="forward",
            graph_attr={"rankdir": "LR", "size": "12,12"},
            node_attr={
                "shape": "ellipse",
                "fontname": "monospace",
                "fontsize": "10",
                "style": "filled",
            },
            edge_attr={"fontname": "monospace", "fontsize": "10"},
        )
        fill = {"leaf": "lightblue", "intermediate": "white", "output": "darkolivegreen1"}
        for data in self.nodes:
            key = f"d{data.id}"
            dot.node(
                key,
                dot_label(*self._node_lines(data)),
                id=key,
                fillcolor=fill[data.kind],
                tooltip=dot_label(f"{data.node_name or 'leaf'} [#{data.key[0]}]"),
                **{"class": f"data {data.kind}"},
            )
        for k, e in enumerate(self.edges):
            dot.edge(
                f"d{e.source}", f"d{e.target}", label=dot_label(*self._edge_lines(e)), id=f"e{k}"
            )
        if self.notes:
            dot.attr(label=dot_label(*self.notes), labelloc="b", fontsize="9")
        return dot

    # ------------------------------------------------------------------ text
    def __str__(self) -> str:
        n_ops = len({(e.node, e.target) for e in self.edges})
        lines = [f"forward graph of {self.title}: {len(self.nodes)} tensors, {n_ops} operations"]
        into: dict[int, list[OpEdge]] = {}
        for e in self.edges:
            into.setdefault(e.target, []).append(e)
        for data in self.nodes:
            text = f"{data.label} {shape_text(data.shape)}"
            incoming = into.get(data.id, [])
            if data.kind == "leaf":
                text += " leaf"
            elif incoming or data.node_name:
                text += f" = {self._expression(data, incoming)}"
            if self.values:
                text += f" = {format_value(data.value)}"
            if self.gradients:
                text += f", grad {format_value(data.grad)}"
            lines.append(text)
            if self.derivatives:
                lines.extend(f"    {self._derivative_text(e)}" for e in incoming)
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

    def _expression(self, data: DataNode, incoming: list[OpEdge]) -> str:
        op = op_symbol(data.node_name)
        operands = [self.nodes[e.source].label for e in incoming]
        constant = data.constant
        if constant is not None:
            operands.insert(constant[0], constant[1])
        if op in INFIX and len(operands) == 1 and len(incoming) == 1 and op != "-":
            operands.append("(a number)")
        if op in INFIX and len(operands) == 2:
            return f"{operands[0]} {op} {operands[1]}"
        if op == "-" and len(operands) == 1:
            return f"-{operands[0]}"
        return f"{op}({', '.join(operands)})"


def forward_graph(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    names: Literal["auto"] | Mapping[str, Tensor] | None = "auto",
    values: bool = False,
    gradients: bool = False,
    derivatives: bool = False,
    *,
    _frame_depth: int = 1,
) -> ForwardGraph:
    """The forward graph of ``output`` as the seed articles draw it (data nodes, op edges).

    ``names``: ``"auto"`` names tensors by the caller's local variables that hold them (leaves
    and intermediates); a mapping ``{name: tensor}`` names them explicitly (any tensor); None
    names none (unnamed tensors show their backward node id, ``#3``). ``values`` shows each
    tensor's value, ``gradients`` its gradient (after ``backward()``, or computed here while the
    graph is alive), ``derivatives`` each edge's local derivative. Nothing of the user's graph,
    tensors or ``.grad`` changes. See the module docstring for where each number comes from.

    Example:
        >>> import chainrule as torch
        >>> from chainrule import viz
        >>> a = torch.tensor(2., requires_grad=True)
        >>> b = torch.tensor(6., requires_grad=True)
        >>> Q = 3 * a**3 - b**2
        >>> g = viz.forward_graph(Q, gradients=True, derivatives=True)
        >>> g.render("Q.svg")  # doctest: +SKIP
        'Q.svg'
    """
    if isinstance(names, str) and names != "auto":
        raise ValueError(
            f"names must be 'auto', a mapping of names to tensors or None, got {names!r}"
        )
    if names == "auto":
        named = caller_tensor_names(_frame_depth + 1)
    elif names is None:
        named = {}
    else:
        named = dict(names)
    graph = walk(output)
    builder = _Builder(graph, as_outputs(output), named)
    builder.build()
    if values:
        builder.fill_values()
    if gradients:
        builder.fill_gradients()
    if derivatives:
        builder.fill_derivatives()
    return ForwardGraph(
        builder.data,
        builder.edges,
        builder.notes,
        values=values,
        gradients=gradients,
        derivatives=derivatives,
        title=", ".join(builder.data[i].label for i in builder.out_ids),
    )


def caller_tensor_names(depth: int = 1) -> dict[str, Tensor]:
    """``{name: tensor}`` of the local variables holding tensors in the frame ``depth`` levels
    up (1: the function calling this one, 2: its caller), as ``names="auto"`` finds them."""
    frame = sys._getframe(depth)
    found = [(k, v) for k, v in frame.f_locals.items() if isinstance(v, Tensor)]
    del frame
    # Names without a leading underscore first: in IPython, ``_`` and ``_3`` hold the outputs
    # last displayed, often the very tensors the user named.
    return dict(sorted(found, key=lambda item: item[0].startswith("_")))


class _Builder:
    """Builds the data nodes and edges of one graph, then fills in what was asked for."""

    def __init__(
        self, graph: BackwardGraph, outputs: list[tuple[str, Tensor]], named: dict[str, Tensor]
    ) -> None:
        self.graph = graph
        self.outputs = outputs
        self.named = named
        self.data: list[DataNode] = []
        self.edges: list[OpEdge] = []
        self.notes: list[str] = []
        self.by_key: dict[NodeKey, int] = {}
        self.tensors: dict[int, Tensor] = {}  # data id -> the user's tensor, where known
        self.out_ids: list[int] = []
        self.np_dtypes: dict[NodeKey, np.dtype] = {}
        # Data nodes written in place after the graph saved them: (version saved, version now).
        self.stale: dict[int, tuple[int, int]] = {}

    # -------------------------------------------------------------- structure
    def _key_of(self, t: Tensor) -> NodeKey | None:
        graph = self.graph
        fn = t.grad_fn
        if fn is not None:
            i = graph.index.get(fn)
            return None if i is None else (i, t.output_nr)
        acc = t._acc() if callable(t._acc) else None
        i = graph.index.get(acc) if acc is not None else None
        return None if i is None else (i, 0)

    def build(self) -> None:
        graph = self.graph
        order = self._forward_order()
        # The outputs of each node that some consumer or output reads.
        used: dict[int, set[int]] = {}
        for slots in graph.children:
            for c, nr in slots:
                if c != NO_CHILD:
                    used.setdefault(c, set()).add(nr)
        for out in graph.outputs:
            used.setdefault(out.node, set()).add(out.output_nr)
        meta: dict[NodeKey, tuple[tuple[int, ...], str]] = {}
        for i, slots in enumerate(graph.children):
            in_meta = getattr(graph.nodes[i], "_in_meta", ()) or ()
            for k, (c, nr) in enumerate(slots):
                if c != NO_CHILD and k < len(in_meta) and in_meta[k] is not None:
                    # (shape, numpy dtype, ...): some nodes keep more of an input (strides).
                    shape, dtype = in_meta[k][0], in_meta[k][1]
                    meta.setdefault((c, nr), (tuple(int(s) for s in shape), dtype_name(dtype)))
                    self.np_dtypes.setdefault((c, nr), np.dtype(dtype))
        names: dict[NodeKey, str] = {}
        named_tensors: dict[NodeKey, Tensor] = {}
        for name, t in self.named.items():
            key = self._key_of(t)
            if key is not None and key not in names:
                names[key] = name
                named_tensors[key] = t
        out_keys: dict[NodeKey, tuple[str, Tensor]] = {}
        for out, (label, t) in zip(graph.outputs, self.outputs_with_grad(), strict=True):
            out_keys.setdefault((out.node, out.output_nr), (label or out.label, t))
        for i in order:
            node = graph.nodes[i]
            is_leaf = type(node) is AccumulateGrad
            for nr in sorted(used.get(i, ())):
                key = (i, nr)
                tensor = named_tensors.get(key)
                if key in out_keys:
                    label, tensor = out_keys[key]
                    name = names.get(key) or label
                    kind = "output"
                elif is_leaf:
                    tensor = _leaf(node)
                    name = names.get(key) or graph.params.get(id(tensor), "")
                    kind = "leaf"
                else:
                    name = names.get(key, "")
                    kind = "intermediate"
                if is_leaf:
                    kind = "leaf" if key not in out_keys else "output"
                    tensor = _leaf(node)
                if tensor is not None:
                    shape = tuple(int(s) for s in tensor.shape)
                    dtype = dtype_name(tensor._data.dtype)
                    self.np_dtypes[key] = tensor._data.dtype
                else:
                    shape, dtype = meta.get(key, ((), "?"))
                d = DataNode(
                    len(self.data), key, name, kind, shape, dtype, "" if is_leaf else graph.names[i]
                )
                self.by_key[key] = d.id
                if tensor is not None:
                    self.tensors[d.id] = tensor
                if kind == "output":
                    self.out_ids.append(d.id)
                self.data.append(d)
        for i in order:
            if type(graph.nodes[i]) is AccumulateGrad:
                continue
            symbol = op_symbol(graph.names[i])
            targets = [self.by_key[(i, nr)] for nr in sorted(used.get(i, ()))]
            for target in targets:
                for k, (c, nr) in enumerate(graph.children[i]):
                    if c != NO_CHILD:
                        self.edges.append(OpEdge(self.by_key[(c, nr)], target, symbol, i, k))
                constant = self._constant_operand(i)
                if constant is not None:
                    self.data[target].constant = constant

    def outputs_with_grad(self) -> list[tuple[str, Tensor]]:
        """The outputs walk() kept (those with a grad_fn or requiring grad), in order."""
        return [(label, t) for label, t in self.outputs if t.grad_fn is not None or t.requires_grad]

    def _forward_order(self) -> list[int]:
        """Backward node ids with every node after the nodes it reads (Kahn's algorithm from
        the outputs, reversed), leaves first in walk order."""
        graph = self.graph
        parents = graph.parents
        pending = [len(p) for p in parents]
        ready = [i for i in range(len(graph)) if pending[i] == 0]
        order: list[int] = []
        while ready:
            i = ready.pop()
            order.append(i)
            seen: set[int] = set()
            for c, _ in graph.children[i]:
                if c != NO_CHILD and c not in seen:
                    seen.add(c)
                    pending[c] -= 1
                    if pending[c] == 0:
                        ready.append(c)
        order.reverse()
        leaves = sorted(i for i in order if graph.is_leaf(i))
        return leaves + [i for i in order if not graph.is_leaf(i)]

    def _saved(self, i: int) -> dict[str, Any]:
        saved_values = getattr(self.graph.nodes[i], "saved_values", None)
        if saved_values is None:
            return {}
        try:
            return saved_values()
        except RuntimeError:
            return {}

    def _constant_operand(self, i: int) -> tuple[int, str] | None:
        """``(slot, text)`` of a number a binary op took in place of a tensor: ``3 * t`` (an
        input that is a number), ``t ** 3`` (a saved number argument)."""
        node = self.graph.nodes[i]
        op = getattr(node, "_op", None)
        slots = self.graph.children[i]
        if op is None or op_symbol(op.node_name) not in INFIX:
            return None
        saved = self._saved(i)
        if len(slots) == 2 and len(op.input_names) == 2:
            for k, (c, _) in enumerate(slots):
                if c == NO_CHILD:
                    text = _number_text(saved.get(op.input_names[k]))
                    return None if text is None else (k, text)
            return None
        if len(slots) == 1 and len(op.param_names) == 2:
            text = _number_text(saved.get(op.param_names[1]))
            return None if text is None else (1, text)
        return None

    # -------------------------------------------------------------- values
    def fill_values(self) -> None:
        graph = self.graph
        data = self.data
        for d in data:
            t = self.tensors.get(d.id)
            if t is not None:
                d.value = np.array(t._data, copy=True)
        # What consumers saved of their inputs, and at which version they saved them: a
        # tensor written in place since (an optimizer step on a leaf) no longer holds the value
        # the graph used.
        for i, slots in enumerate(graph.children):
            node = graph.nodes[i]
            op = getattr(node, "_op", None)
            if op is None or len(slots) != len(op.input_names):
                continue
            saved = self._saved(i)
            versions = dict(getattr(node, "_versions", ()) or ())
            for k, (c, nr) in enumerate(slots):
                if c == NO_CHILD:
                    continue
                d = data[self.by_key[(c, nr)]]
                name = op.input_names[k]
                value = saved.get(name)
                if not isinstance(value, Tensor | np.ndarray):
                    continue
                version = versions.get(op.index_of[name])
                if isinstance(value, Tensor) and isinstance(version, int):
                    if value._version != version:
                        self.stale[d.id] = (version, value._version)
                        continue
                    user = self.tensors.get(d.id)
                    if user is not None and user is value and user._version != version:
                        self.stale[d.id] = (version, user._version)
                if d.value is None:
                    array = value._data if isinstance(value, Tensor) else value
                    if tuple(array.shape) == d.shape:
                        d.value = np.array(array, copy=True)
        # The forward run again, in forward order, where every argument is known.
        for d in data:
            if d.value is None and d.kind != "leaf":
                d.value = self._recompute(d)
        unknown = [d.label for d in data if d.value is None]
        if unknown:
            self.notes.append(
                f"value not kept for {', '.join(unknown)}: name the tensor (names='auto' finds "
                "the caller's variables) to show it"
            )
        for d_id, (then, now) in self.stale.items():
            self.notes.append(
                f"{data[d_id].label} was modified in place after the graph used it (version "
                f"{then} -> {now}): the value shown is its value now"
            )

    def _recompute(self, d: DataNode) -> np.ndarray | None:
        i, nr = d.key
        node = self.graph.nodes[i]
        op = getattr(node, "_op", None)
        slots = self.graph.children[i]
        if op is None or nr != 0 or op.num_outputs != 1 or len(slots) != len(op.input_names):
            return None
        if any(word in op.node_name for word in RANDOM_WORDS) or "generator" in op.param_names:
            return None
        saved = self._saved(i)
        args: list[Any] = []
        for name in op.param_names:
            if name in op.input_names:
                c, cnr = slots[op.input_names.index(name)]
                if c == NO_CHILD:
                    value = saved.get(name)
                    if not isinstance(value, int | float | bool):
                        return None
                else:
                    source = self.by_key[(c, cnr)]
                    value = self.data[source].value
                    if source in self.stale:
                        return None
                    if value is None or value.dtype.kind not in "biuf" or value.itemsize < 4:
                        return None  # half types compute otherwise; leave them out
                args.append(value)
            elif name in saved and not isinstance(saved[name], Tensor | np.ndarray):
                args.append(saved[name])
            else:
                return None
        try:
            with np.errstate(all="ignore"):
                result = np.asarray(op.forward(*args))
        except Exception:  # noqa: BLE001 - a value we cannot recover is just not shown
            return None
        if tuple(result.shape) != d.shape or dtype_name(result.dtype) != d.dtype:
            return None
        return result

    # -------------------------------------------------------------- gradients
    def fill_gradients(self) -> None:
        graph = self.graph
        for d in self.data:
            if d.kind == "leaf" or (d.kind == "output" and graph.is_leaf(d.key[0])):
                grad = _leaf(graph.nodes[d.key[0]])._grad
                if grad is not None:
                    d.grad = np.array(grad._data, copy=True)
        if len(self.out_ids) == 1:  # the seed: d output / d output
            out = self.data[self.out_ids[0]]
            if out.grad is None and out.dtype != "?":
                out.grad = np.ones(out.shape, dtype=self.np_dtypes[out.key])
        wanted = [d for d in self.data if d.grad is None]
        if not wanted:
            return
        try:
            grads = self._autograd_grads(wanted)
        except RuntimeError as error:
            for d in wanted:
                t = self.tensors.get(d.id)
                if t is not None and not t.is_leaf and t._grad is not None:
                    d.grad = np.array(t._grad._data, copy=True)
            missing = [d.label for d in wanted if d.grad is None]
            if missing:
                self.notes.append(
                    f"gradient not available for {', '.join(missing)}: the graph was freed "
                    f"by backward() ({type(error).__name__}); call forward_graph(..., "
                    "gradients=True) before backward(), or backward(retain_graph=True), "
                    "or retain_grad() on the tensor"
                )
            return
        for d, g in zip(wanted, grads, strict=True):
            if g is not None:
                d.grad = np.array(g._data, copy=True)

    def _autograd_grads(self, wanted: list[DataNode]) -> list[Tensor | None]:
        """Gradients of the outputs (seeded with ones) at ``wanted``, by ``autograd.grad`` on
        the retained graph; the retained ``.grad`` of intermediates put back."""
        graph = self.graph
        kept: list[tuple[Tensor, Tensor | None]] = []
        for node in graph.nodes:
            hooks = getattr(node, "_hooks", None)
            for ref in hooks.retains.values() if hooks is not None else ():
                t = ref()
                if t is not None:
                    kept.append((t, t._grad))
        outs = [t for _, t in self.outputs_with_grad()]
        seeds = [ones_like(t) for t in outs]
        inputs = [GradientEdge(graph.nodes[d.key[0]], d.key[1]) for d in wanted]
        try:
            grads = autograd_grad(outs, inputs, seeds, retain_graph=True, allow_unused=True)
        finally:
            for t, g in kept:
                t._grad = g
        return list(grads)

    # -------------------------------------------------------------- local derivatives
    def fill_derivatives(self) -> None:
        graph = self.graph
        runs: dict[int, tuple[Any, ...] | None] = {}
        self.operands: dict[tuple[int, int], list[OpEdge]] = {}
        for e in self.edges:
            self.operands.setdefault((e.node, e.target), []).append(e)
        freed: list[str] = []
        for e in self.edges:
            i = e.node
            if i not in runs:
                runs[i] = self._run_on_ones(i)
                if runs[i] is None:
                    freed.append(graph.names[i] + f" [#{i}]")
            result = runs[i]
            if result is not None and e.slot < len(result) and result[e.slot] is not None:
                value = result[e.slot]
                array = value._data if isinstance(value, Tensor) else np.asarray(value)
                shape = self.data[e.source].shape
                if tuple(array.shape) != shape:
                    array = _sum_to(array, shape)
                e.derivative = np.array(array, copy=True)
            e.formula = self._formula(e)
        if freed:
            self.notes.append(
                f"local derivatives not available at {', '.join(freed)}: its saved values were "
                "freed by backward(); draw before backward() or use backward(retain_graph=True)"
            )

    def _run_on_ones(self, i: int) -> tuple[Any, ...] | None:
        node: Node = self.graph.nodes[i]
        if getattr(node, "_n_out", 1) != 1 or is_released(getattr(node, "_saved", None)):
            return None
        target = self.by_key.get((i, 0))
        if target is None:
            return None
        d = self.data[target]
        dtype = self.np_dtypes.get(d.key)
        if dtype is None:
            return None
        try:
            with no_grad():
                result = node(wrap(np.ones(d.shape, dtype=dtype)))
        except (RuntimeError, TypeError, ValueError):
            return None
        return result if isinstance(result, tuple) else (result,)

    def _formula(self, e: OpEdge) -> str:
        """The local derivative in the operands' names, for + − × ÷ and ** (else '')."""
        operands = [self.data[x.source].label for x in self.operands[(e.node, e.target)]]
        constant = self.data[e.target].constant
        if constant is not None:
            operands.insert(constant[0], constant[1])
        op, k = e.op, e.slot
        alpha = getattr(self.graph.nodes[e.node], "_saved_alpha", 1) if k == 1 else 1
        if op == "+":
            return "1" if alpha == 1 else _number(alpha)
        if op == "-":
            return "1" if k == 0 else ("-1" if alpha == 1 else f"-{_number(alpha)}")
        if len(operands) != 2 or (alpha != 1 and op in "×÷"):
            return ""
        if op == "×":
            return operands[1 - k]
        if op == "÷":
            return f"1/{operands[1]}" if k == 0 else f"-{operands[0]}/{operands[1]}**2"
        if op == "**" and k == 0:
            n = operands[1]
            try:
                lower = float(n) - 1
            except ValueError:
                return f"{n}*{operands[0]}**({n}-1)"
            power = "" if lower == 1 else f"**{_number(lower)}"
            return f"{n}*{operands[0]}{power}"
        return ""


def _leaf(node: Node) -> Tensor:
    """The leaf tensor an ``AccumulateGrad`` node feeds."""
    return cast(AccumulateGrad, node).variable


def _number_text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return _number(value)


def _sum_to(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``array`` summed over the dimensions broadcasting added to ``shape``."""
    lead = array.ndim - len(shape)
    out = array.sum(axis=tuple(range(lead))) if lead > 0 else array
    axes = tuple(k for k, s in enumerate(shape) if s == 1 and out.shape[k] != 1)
    return out.sum(axis=axes, keepdims=True) if axes else out
