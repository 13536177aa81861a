"""Drawing the backward graph with Graphviz, the way torchviz draws PyTorch's.

One grey box per backward node (``MulBackward0``), a light blue box per leaf tensor feeding an
``AccumulateGrad`` (its parameter name and shape), a green box for the output, orange boxes for
saved tensors (``show_saved=True``). Arrows point the way data flowed forward, from the leaves
to the output; the backward pass walks them in reverse. Ids are ``n<walk order>``, never
addresses, so the same program gives the same DOT source.

Example:
    >>> import chainrule as torch
    >>> from chainrule.viz import make_dot
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> dot = make_dot((w + x) * (w + 1), params={"w": w, "x": x})
    >>> dot.render("seed", format="svg")  # doctest: +SKIP
    'seed.svg'
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import graphviz
import numpy as np

from .._tensor import Tensor
from ..autograd.node import AccumulateGrad
from .graph import BackwardGraph, dtype_name, shape_text, walk
from .groups import Hierarchy, ModuleRecorder, View, item_key

__all__ = [
    "make_dot",
    "GraphDrawing",
    "GraphvizMissingWarning",
    "INSTALL_HINT",
    "dot_label",
    "view_digraph",
    "has_dot",
    "AUTO_COLLAPSE_ABOVE",
]

INSTALL_HINT = (
    "Graphviz's `dot` program was not found on PATH, so only the DOT source was written{where}. "
    "Install Graphviz to render SVG/PNG/PDF: `sudo apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS), `conda install graphviz`, or https://graphviz.org/download/;"
    " or paste the source into any Graphviz viewer."
)

# Past this many nodes the drawing folds repeated steps by default (dot's layout time grows
# quickly, and nobody reads ten thousand boxes).
AUTO_COLLAPSE_ABOVE = 1500

NODE_ATTR = {
    "style": "filled",
    "shape": "box",
    "align": "left",
    "fontsize": "10",
    "ranksep": "0.1",
    "height": "0.2",
    "fontname": "monospace",
}
COLORS = {
    "op": "lightgrey",
    "leaf": "lightblue",
    "output": "darkolivegreen1",
    "saved": "orange",
    "module": "#dde8f6",
    "chain": "#f6e7c8",
}


class GraphvizMissingWarning(UserWarning):
    """Graphviz's ``dot`` is not installed: the DOT source was saved, nothing was rendered."""


def has_dot() -> bool:
    """Whether Graphviz's ``dot`` program can be run."""
    try:
        graphviz.version()
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError, OSError):
        return False
    return True


class GraphDrawing(graphviz.Digraph):
    """A ``graphviz.Digraph`` that still saves its source when Graphviz is not installed.

    ``render`` returns the path of the rendered file, or of the DOT source (with a
    :class:`GraphvizMissingWarning` saying how to install Graphviz) when ``dot`` is missing.
    In Jupyter it displays as SVG (``_repr_mimebundle_`` / ``_repr_svg_``).
    """

    def render(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        try:
            return super().render(*args, **kwargs)
        except graphviz.ExecutableNotFound:
            path = self.filepath
            if not os.path.exists(path):  # pragma: no cover - graphviz saves before it runs dot
                path = self.save()
            warnings.warn(
                INSTALL_HINT.format(where=f" to {path}"), GraphvizMissingWarning, stacklevel=2
            )
            return path

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **kwargs: Any) -> dict:
        try:
            return super()._repr_mimebundle_(include, exclude, **kwargs)
        except graphviz.ExecutableNotFound:
            return {"text/plain": INSTALL_HINT.format(where="") + "\n\n" + self.source}

    def _repr_svg_(self) -> str:
        """The drawing as SVG text (what Jupyter shows)."""
        return self.pipe(format="svg", encoding="utf-8")


def dot_label(*lines: str) -> str:
    """A DOT label showing ``lines`` literally: no HTML-like label, no backslash escapes."""
    cleaned = [graphviz.escape(_one_line(line)) for line in lines]
    return graphviz.nohtml("\\n".join(cleaned))


def _one_line(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in str(text))


def _tooltip(text: str) -> str:
    return graphviz.nohtml(graphviz.escape(_one_line(text)))


def _graph_attrs() -> dict[str, str]:
    return {"size": "12,12"}


def make_dot(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    params: Mapping[str, Tensor] | None = None,
    show_attrs: bool = False,
    show_saved: bool = False,
    max_attr_chars: int = 50,
    *,
    modules: ModuleRecorder | None = None,
    collapse: bool | None = None,
) -> GraphDrawing:
    """Draw the backward graph of ``output`` (a tensor, or several) as a Graphviz digraph.

    ``params`` names tensors: leaves (``dict(model.named_parameters())``) and intermediates
    (``{"a": a}``, shown under the node that made them); ``show_attrs`` lists
    what each node saved in its box; ``show_saved`` draws saved tensors as orange boxes.
    ``modules`` (from :func:`~chainrule.viz.record_modules`) draws each module call as a
    cluster, or as one box when collapsed. ``collapse`` folds repeated steps and modules into
    single boxes; by default it does so past :data:`AUTO_COLLAPSE_ABOVE` nodes.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.viz import make_dot
        >>> x = torch.ones(2, 3, requires_grad=True)
        >>> print(make_dot(x.sum()).source)  # doctest: +ELLIPSIS
        digraph {
        ...
    """
    graph = walk(output, params)
    if collapse is None:
        collapse = len(graph) > AUTO_COLLAPSE_ABOVE
    options = _Options(show_attrs, show_saved, max_attr_chars)
    if collapse:
        hierarchy = Hierarchy(graph, modules, fold=16, collapse_above=0)
        return view_digraph(hierarchy, hierarchy.view(-1), options)
    hierarchy = Hierarchy(graph, modules, fold=0)
    return _full_digraph(hierarchy, options)


class _Options:
    __slots__ = ("show_attrs", "show_saved", "max_attr_chars")

    def __init__(
        self, show_attrs: bool = False, show_saved: bool = False, max_attr_chars: int = 50
    ) -> None:
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_attr_chars = max_attr_chars


class _Emitter:
    """Adds boxes and arrows for nodes, leaves, outputs and saved values to one digraph."""

    def __init__(self, dot: graphviz.Digraph, graph: BackwardGraph, options: _Options) -> None:
        self.dot = dot
        self.graph = graph
        self.options = options
        self._saved_ids: dict[int, str] = {}

    def node(self, target: Any, i: int) -> None:
        graph = self.graph
        node = graph.nodes[i]
        key = f"n{i}"
        # The walk id tells two boxes of the same name apart (``AddBackward0 [#1]``, ``[#4]``),
        # as in the text tree; a tensor named in ``params`` shows under the node that made it.
        lines = [f"{graph.names[i]} [#{i}]"]
        made = graph.tensor_label(i)
        if made:
            lines.append(f"→ {made}")
        if self.options.show_attrs:
            lines.extend(self._attr_lines(node))
        target.node(
            key,
            dot_label(*lines),
            id=key,
            tooltip=_tooltip(f"{graph.names[i]} [#{i}]"),
            fillcolor=COLORS["op"],
            **{"class": "graphnode"},
        )
        if type(node) is AccumulateGrad:
            var = node.variable
            name = graph.leaf_label(i)
            target.node(
                f"v{i}",
                dot_label(name, shape_text(var._data.shape)),
                id=f"v{i}",
                fillcolor=COLORS["leaf"],
                **{"class": "leafvar"},
            )
            self.dot.edge(f"v{i}", key)
        if self.options.show_saved:
            self._saved_boxes(target, node, key)

    def _attr_lines(self, node: Any) -> list[str]:
        saved_values = getattr(node, "saved_values", None)
        if saved_values is None:
            return []
        values = saved_values()
        if not values:
            return []
        width = self.options.max_attr_chars
        rows = []
        for name, value in values.items():
            if isinstance(value, Tensor | np.ndarray):
                data = value._data if isinstance(value, Tensor) else value
                text = f"{name}: [saved tensor] {shape_text(data.shape)} {dtype_name(data.dtype)}"
            else:
                text = f"{name}: {value!r}"
            rows.append(text if len(text) <= width else text[: width - 3] + "...")
        return ["-" * min(width, max(len(r) for r in rows)), *rows]

    def _saved_boxes(self, target: Any, node: Any, key: str) -> None:
        saved_values = getattr(node, "saved_values", None)
        if saved_values is None:
            return
        for name, value in saved_values().items():
            if not isinstance(value, Tensor | np.ndarray):
                continue
            box = self._saved_box(target, name, value)
            self.dot.edge(key, box, dir="none")

    def _saved_box(self, target: Any, name: str, value: Any) -> str:
        # The same tensor saved twice is one box; a saved leaf is its light blue box.
        existing = self._saved_ids.get(id(value))
        if existing is not None:
            return existing
        if isinstance(value, Tensor):
            acc = value._acc() if value._acc is not None else None
            index = self.graph.index.get(acc) if acc is not None else None
            if index is not None:
                self._saved_ids[id(value)] = f"v{index}"
                return f"v{index}"
        data = value._data if isinstance(value, Tensor) else value
        box = f"s{len(self._saved_ids)}"
        self._saved_ids[id(value)] = box
        target.node(
            box,
            dot_label(name, f"{shape_text(data.shape)} {dtype_name(data.dtype)}"),
            id=box,
            fillcolor=COLORS["saved"],
            **{"class": "saved"},
        )
        return box

    def outputs(self, item_of_node: Any) -> None:
        for k, out in enumerate(self.graph.outputs):
            key = item_of_node(out.node)
            if key is None:
                continue
            box = f"out{k}"
            self.dot.node(
                box,
                dot_label(out.label, shape_text(out.shape)),
                id=box,
                fillcolor=COLORS["output"],
                **{"class": "output"},
            )
            self.dot.edge(key, box)


def _full_digraph(hierarchy: Hierarchy, options: _Options) -> GraphDrawing:
    """Every node; module calls (if recorded) as nested clusters."""
    graph = hierarchy.graph
    dot = GraphDrawing(node_attr=NODE_ATTR, graph_attr=_graph_attrs())
    emitter = _Emitter(dot, graph, options)
    # Clusters, outermost first, with an explicit stack (no recursion).
    direct: dict[int, list[int]] = {}
    for i in range(len(graph)):
        path = hierarchy.path(i)
        direct.setdefault(path[-1] if path else -1, []).append(i)
    sub: dict[int, list[int]] = {}
    for group in hierarchy.groups:
        sub.setdefault(group.parent, []).append(group.id)
    for i in direct.get(-1, []):
        emitter.node(dot, i)
    stack: list[tuple[int, Any]] = [(g, dot) for g in reversed(sub.get(-1, []))]
    opened: list[tuple[Any, Any]] = []
    while stack:
        g, parent = stack.pop()
        if g < 0:  # close a cluster: attach it to its parent
            cluster, outer = opened.pop()
            outer.subgraph(cluster)
            continue
        group = hierarchy.groups[g]
        cluster = graphviz.Digraph(name=f"cluster_g{g}")
        cluster.attr(
            label=dot_label(group.label),
            style="rounded,filled",
            fillcolor=COLORS["module"],
            fontname="monospace",
            fontsize="10",
        )
        for i in direct.get(g, []):
            emitter.node(cluster, i)
        opened.append((cluster, parent))
        stack.append((-1, None))
        for child in reversed(sub.get(g, [])):
            stack.append((child, cluster))
    for i, slots in enumerate(graph.children):
        for c, _ in slots:
            if c >= 0:
                dot.edge(f"n{c}", f"n{i}")
    emitter.outputs(lambda node: f"n{node}")
    return dot


def view_digraph(
    hierarchy: Hierarchy, view: View, options: _Options | None = None, name: str | None = None
) -> GraphDrawing:
    """The digraph of one level of a :class:`Hierarchy`: groups are single boxes."""
    options = options or _Options()
    graph = hierarchy.graph
    dot = GraphDrawing(name=name, node_attr=NODE_ATTR, graph_attr=_graph_attrs())
    emitter = _Emitter(dot, graph, options)
    drawn = set(view.items)
    for item in view.items:
        if item >= 0:
            emitter.node(dot, item)
        else:
            _group_box(dot, hierarchy, -1 - item)
    if view.hidden:
        dot.node(
            "e",
            dot_label(f"… {view.hidden} more steps …"),
            id="e",
            shape="box",
            style="dashed",
            **{"class": "ellipsis"},
        )
    if view.truncated:
        dot.node(
            "more",
            dot_label(f"{view.truncated} more items not drawn (search to find them)"),
            id="more",
            shape="note",
            style="dashed",
            **{"class": "truncated"},
        )
    for a, b, count in view.edges:
        attrs = {"label": f"×{count}", "fontsize": "9"} if count > 1 else {}
        dot.edge(b, a, **attrs)
    for direction, node in view.stubs[:40]:
        key = f"x{node}"
        dot.node(
            key,
            dot_label(f"{graph.names[node]} [#{node}]"),
            id=key,
            style="dashed",
            fontcolor="gray30",
            color="gray50",
            **{"class": "stub"},
        )
        # The stub's inner end: the drawn item holding the other side of the edge.
        inner = _stub_inner(hierarchy, view, node, direction)
        if inner is None:
            continue
        if direction == "out":
            dot.edge(key, inner, style="dashed", color="gray50")
        else:
            dot.edge(inner, key, style="dashed", color="gray50")
    depth = len(hierarchy.level_path(view.level))

    def output_item(node: int) -> str | None:
        path = hierarchy.path(node)
        if path[:depth] != hierarchy.level_path(view.level):
            return None
        item = -1 - path[depth] if len(path) > depth else node
        return item_key(item) if item in drawn else None

    emitter.outputs(output_item)
    return dot


def _stub_inner(hierarchy: Hierarchy, view: View, outside: int, direction: str) -> str | None:
    """The drawn item at the inner end of an edge from/to a node outside the level."""
    graph = hierarchy.graph
    here = hierarchy.level_path(view.level)
    depth = len(here)
    drawn = set(view.items)
    if direction == "out":
        inside = [p for p in graph.parents[outside]]
    else:
        inside = [c for c, _ in graph.children[outside] if c >= 0]
    for node in inside:
        path = hierarchy.path(node)
        if path[:depth] != here:
            continue
        item = -1 - path[depth] if len(path) > depth else node
        if item in drawn:
            return item_key(item)
    return None


def _group_box(dot: graphviz.Digraph, hierarchy: Hierarchy, g: int) -> None:
    group = hierarchy.groups[g]
    top = ", ".join(name for name, _ in group.names.most_common(3))
    more = " …" if len(group.names) > 3 else ""
    nodes = "node" if group.size == 1 else "nodes"
    lines = [group.label, f"{group.size} {nodes}: {top}{more}", "(open to expand)"]
    dot.node(
        f"g{g}",
        dot_label(*lines),
        id=f"g{g}",
        shape="box",
        style="filled,rounded,bold",
        fillcolor=COLORS[group.kind],
        peripheries="2",
        tooltip=_tooltip(f"{group.label}: {group.size} {nodes}"),
        **{"class": f"group {group.kind}"},
    )
