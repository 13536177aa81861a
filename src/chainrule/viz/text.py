"""The backward graph as an indented text tree, like the box diagrams of the seed articles.

Each node is printed once, where a depth-first walk first meets it, with its walk number
(``[#3]``); later uses print ``(see above)`` instead of expanding it again. Long runs of repeated
steps are folded into one line, and very deep trees restart at the left margin, so a
million-node chain prints in a few lines.

Example:
    >>> import chainrule as torch
    >>> from chainrule import viz
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> print(viz.tree((w + x) * (w + 1), params={"w": w, "x": x}))
    output (1) float32
    └── MulBackward0 [#0]
        ├── AddBackward0 [#1]
        │   ├── AccumulateGrad [#2] ← w (1) float32
        │   └── AccumulateGrad [#3] ← x (1) float32
        └── AddBackward0 [#4]
            └── AccumulateGrad [#2] (see above)
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from .._tensor import Tensor
from .graph import BackwardGraph, dtype_name, shape_text, walk
from .groups import Hierarchy, ModuleRecorder

__all__ = ["tree", "TextTree"]

MAX_INDENT = 24  # levels of indentation before a branch restarts at the left margin


class TextTree(str):
    """The text of :func:`tree`: a ``str`` (so it prints as is) with the node count; Jupyter
    shows it as preformatted text."""

    nodes: int

    def __new__(cls, text: str, nodes: int) -> TextTree:
        obj = super().__new__(cls, text)
        obj.nodes = nodes
        return obj

    def _repr_html_(self) -> str:
        """The tree as Jupyter shows it: preformatted text (not the escaped ``repr`` of a str)."""
        return f'<pre class="chainrule-tree">{html.escape(str(self))}</pre>'

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text display (a terminal, ``text/plain``): the tree, not its repr."""
        printer.text(str(self))


def tree(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    params: Mapping[str, Tensor] | None = None,
    *,
    modules: ModuleRecorder | None = None,
    fold: int = 16,
    show_none: bool = False,
) -> TextTree:
    """The backward graph of ``output`` as an indented tree (print it).

    ``params`` names tensors, leaves (``dict(model.named_parameters())``) and others
    (``{"a": a}``: ``AddBackward0 [#1] → a``); ``modules`` (from
    :func:`~chainrule.viz.record_modules`) adds the module call that made each node; ``fold``
    is the shortest run of repeated steps printed as one line (0: never fold); ``show_none``
    also prints the ``next_functions`` slots holding ``None`` (inputs that need no gradient).

    Example:
        >>> import chainrule as torch
        >>> from chainrule import viz
        >>> x = torch.ones(3, requires_grad=True)
        >>> print(viz.tree((x * 2).sum()))
        output () float32
        └── SumBackward0 [#0]
            └── MulBackward0 [#1]
                └── AccumulateGrad [#2] ← leaf (3) float32
    """
    graph = walk(output, params)
    hierarchy = Hierarchy(graph, modules, fold=fold, collapse_above=0)
    groups = hierarchy.groups
    names = graph.names
    lines: list[str] = []
    printed: set[int] = set()
    chains_printed: set[int] = set()

    def chain_of(node: int) -> int:
        for g in hierarchy.path(node):
            if groups[g].kind == "chain":
                return g
        return -1

    def module_text(node: int) -> str:
        for g in reversed(hierarchy.path(node)):
            if groups[g].kind == "module":
                return f"  in {groups[g].label}"
        return ""

    # Stack entries: (node or -1 for a None slot, prefix, is_last, depth).
    for k, out in enumerate(graph.outputs):
        lines.append(f"{out.label} {shape_text(out.shape)} {out.dtype}")
        stack: list[tuple[int, str, bool, int]] = [(out.node, "", True, 0)]
        while stack:
            node, prefix, last, depth = stack.pop()
            branch = "└── " if last else "├── "
            if node < 0:
                lines.append(f"{prefix}{branch}None")
                continue
            if depth >= MAX_INDENT:
                lines.append(f"{prefix}{branch}⋮ (deeper: continued at the left margin)")
                prefix, depth = "", 0
                branch = "└── "
            g = chain_of(node)
            if g >= 0:
                group = groups[g]
                if g in chains_printed:
                    lines.append(f"{prefix}{branch}{group.label} (see above)")
                    continue
                chains_printed.add(g)
                lines.append(
                    f"{prefix}{branch}{group.label}: {group.size} nodes folded, "
                    f"entered at {names[node]} [#{node}]{module_text(node)}"
                )
                exits = _chain_exits(hierarchy, g)
                child_prefix = prefix + ("    " if last else "│   ")
                for j in range(len(exits) - 1, -1, -1):
                    stack.append((exits[j], child_prefix, j == len(exits) - 1, depth + 1))
                continue
            if node in printed:
                lines.append(f"{prefix}{branch}{names[node]} [#{node}] (see above)")
                continue
            printed.add(node)
            made = graph.tensor_label(node)
            lines.append(
                f"{prefix}{branch}{names[node]} [#{node}]{_leaf_text(graph, node)}"
                f"{f' → {made}' if made else ''}{module_text(node)}"
            )
            slots = [c for c, _ in graph.children[node] if c >= 0 or show_none]
            child_prefix = prefix + ("    " if last else "│   ")
            for j in range(len(slots) - 1, -1, -1):
                stack.append((slots[j], child_prefix, j == len(slots) - 1, depth + 1))
        if k < len(graph.outputs) - 1:
            lines.append("")
    return TextTree("\n".join(lines), len(graph))


def _leaf_text(graph: BackwardGraph, node: int) -> str:
    if not graph.is_leaf(node):
        return ""
    var = graph.nodes[node].variable
    name = graph.leaf_label(node) or "leaf"
    return f" ← {name} {shape_text(var._data.shape)} {dtype_name(var._data.dtype)}"


def _chain_exits(hierarchy: Hierarchy, g: int) -> list[int]:
    """Nodes outside chain ``g`` that its members send gradients to, in walk order."""
    exits: dict[int, None] = {}
    for u, c in hierarchy._cross_edges():
        if g in hierarchy.path(u) and g not in hierarchy.path(c):
            exits[c] = None
    return sorted(exits)
