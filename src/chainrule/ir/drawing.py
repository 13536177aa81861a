"""The graph as Graphviz DOT source: one box per node (name, type, output shape and dtype),
one edge per value read, dashed edges for ``control`` (run-before) dependencies.

    print(graph.dot())          # paste into any Graphviz viewer, or `dot -Tsvg`
"""

from __future__ import annotations

from typing import Any

__all__ = ["graph_dot"]

_SHAPES = {
    "placeholder": "invhouse",
    "constant": "plaintext",
    "variable": "cylinder",
    "call": "box",
    "assign": "box3d",
    "group": "octagon",
}


def _quote(text: str) -> str:
    """A DOT string: backslashes and quotes escaped, newlines as DOT's ``\\n``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'


def _dims(shape: Any) -> str:
    if shape is None:
        return "<unknown>"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"


def graph_dot(graph: Any, name: str = "graph") -> str:
    """DOT source of ``graph``, nodes in graph order (the same graph gives the same text)."""
    ids = {id(node): f"n{i}" for i, node in enumerate(graph.nodes)}
    lines = [f"digraph {_quote(name)} {{", "    rankdir=TB;", '    node [fontname="monospace"];']
    for node in graph.nodes:
        outputs = "; ".join(
            f"{_dims(v.shape)} {str(v.dtype).removeprefix('chainrule.')}" for v in node.outputs
        )
        label = f"{node.name}\n{node.type}" + (f"\n{outputs}" if outputs else "")
        shape = _SHAPES[node.kind]
        lines.append(f"    {ids[id(node)]} [label={_quote(label)}, shape={shape}];")
    for node in graph.nodes:
        for value in node.inputs:
            edge = f"    {ids[id(value.node)]} -> {ids[id(node)]}"
            if len(value.node.outputs) > 1:
                edge += f" [label={_quote(str(value.index))}]"
            lines.append(edge + ";")
        for before in node.control:
            lines.append(f"    {ids[id(before)]} -> {ids[id(node)]} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"
