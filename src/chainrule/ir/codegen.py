"""The graph as Python source: one line per node, which reads as the program it runs.

    def graph(w, x):
        Const = 1.0  # float32 ()
        Add = ops.pointwise._add(w, x)
        ...
        return Mul

Functions are named by module (without ``chainrule.``) and name; graph inputs (placeholders,
variables) are the parameters; a constant of up to eight elements is written out, a larger one
read from ``constants[name]``.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["graph_code", "target_name", "identifier_names"]

_SMALL_CONSTANT = 8


def target_name(target: Any) -> str:
    """``module.name`` of a node's function, without the leading ``chainrule.``."""
    op = getattr(target, "op", None)
    if op is not None:
        module, name = op.forward.__module__, op.name
    else:
        module = getattr(target, "__module__", None) or ""
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    module = module.removeprefix("chainrule.").removeprefix("chainrule")
    return f"{module}.{name}" if module else name


def identifier_names(nodes: Sequence[Any]) -> dict[Any, str]:
    """A distinct Python identifier for each node's output (``gradients/Mul_grad/Mul`` ->
    ``gradients_Mul_grad_Mul``)."""
    names: dict[Any, str] = {}
    taken: set[str] = set()
    for node in nodes:
        for value in node.outputs:
            base = re.sub(r"\W", "_", value.name)
            if not base or base[0].isdigit() or keyword.iskeyword(base):
                base = "_" + base
            name, n = base, 1
            while name in taken:
                name = f"{base}_{n}"
                n += 1
            taken.add(name)
            names[value] = name
    return names


def _argument(arg: Any, names: dict[Any, str]) -> str:
    if isinstance(arg, tuple | list):
        inner = ", ".join(_argument(a, names) for a in arg)
        if isinstance(arg, tuple):
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        return f"[{inner}]"
    if hasattr(arg, "node") and arg in names:
        return names[arg]
    text = repr(arg)
    return text.removeprefix("chainrule.") if text.startswith("chainrule.") else text


def _dtype_text(value: Any) -> str:
    return str(value.dtype).removeprefix("chainrule.")


def _shape_text(shape: tuple) -> str:
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def graph_code(graph: Any, outputs: Sequence[Any] | None = None) -> str:
    """Python source of ``graph``: a function of its placeholders and variables returning
    ``outputs`` (by default the outputs of the last node that has any)."""
    names = identifier_names(graph.nodes)
    params = [names[n.outputs[0]] for n in graph.nodes if n.kind in ("placeholder", "variable")]
    lines = [f"def graph({', '.join(params)}):"]
    for node in graph.nodes:
        lines.extend(_node_lines(node, names))
    if outputs is None:
        last = next((n for n in reversed(graph.nodes) if n.outputs), None)
        outputs = list(last.outputs) if last is not None else []
    returned = ", ".join(names[v] for v in outputs)
    lines.append(f"    return {returned}" if returned else "    return None")
    return "\n".join(lines) + "\n"


def _node_lines(node: Any, names: dict[Any, str]) -> list[str]:
    if node.kind in ("placeholder", "variable"):
        return []
    if node.kind == "group":
        after = ", ".join(c.name for c in node.control)
        return [f"    # {node.name} ({node.type}): after {after}"]
    out = ", ".join(names[v] for v in node.outputs)
    if node.kind == "constant":
        value = node.value
        note = f"  # {_dtype_text(node.outputs[0])} {_shape_text(value.shape)}"
        if value.size <= _SMALL_CONSTANT:
            literal = repr(value.tolist()) if value.ndim else repr(value.item())
            return [f"    {out} = {literal}{note}"]
        return [f"    {out} = constants[{node.name!r}]{note}"]
    args = [_argument(a, names) for a in node.args]
    args += [f"{k}={_argument(v, names)}" for k, v in node.kwargs.items()]
    if node.kind == "assign":
        variable = names[node.variable.outputs[0]]
        if node.target is None:
            return [f"    {variable} = {out} = {args[0]}  # {node.name}"]
        call = f"{target_name(node.target)}({', '.join(args)})"
        return [f"    {variable} = {out} = {call}  # {node.name}"]
    return [f"    {out} = {target_name(node.target)}({', '.join(args)})"]
