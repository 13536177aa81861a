"""The graph torch.fx records: ``Node`` (one operation) and ``Graph`` (their order).

A node's ``op`` is one of placeholder, get_attr, call_function, call_method,
call_module, output; ``target`` is what it calls (a function, a method name, a
module path, an attribute path); ``args`` and ``kwargs`` hold other nodes or
constants. ``Graph.python_code`` writes the ``forward`` that torch.fx generates.
"""

from __future__ import annotations

import builtins
import keyword
import operator
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["Graph", "Node", "map_arg"]

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

# operator functions written infix, as torch.fx writes them
_BINARY = {
    operator.add: "+",
    operator.sub: "-",
    operator.mul: "*",
    operator.truediv: "/",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}
_ILLEGAL = set(dir(builtins)) | set(keyword.kwlist) | {"self", "torch", "operator"}


def map_arg(a: Any, fn: Callable[[Node], Any]) -> Any:
    """Apply ``fn`` to every Node inside ``a`` (tuples, lists, dicts, slices kept)."""
    if isinstance(a, Node):
        return fn(a)
    if isinstance(a, tuple):
        return tuple(map_arg(x, fn) for x in a)
    if isinstance(a, list):
        return [map_arg(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_arg(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_arg(a.start, fn), map_arg(a.stop, fn), map_arg(a.step, fn))
    return a


def _nodes_in(a: Any) -> list[Node]:
    found: list[Node] = []
    map_arg(a, found.append)
    return found


class Node:
    """One operation of a ``Graph``."""

    def __init__(
        self, graph: Graph, name: str, op: str, target: Any, args: tuple, kwargs: dict[str, Any]
    ) -> None:
        if op not in _OPS:
            raise ValueError(f"Unknown op {op!r}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.args = args
        self.kwargs = kwargs
        self.users: dict[Node, None] = {}
        self.meta: dict[str, Any] = {}
        for n in self.all_input_nodes:
            n.users[self] = None

    @property
    def all_input_nodes(self) -> list[Node]:
        """The nodes this node reads, in order of first appearance, once each."""
        return list(dict.fromkeys(_nodes_in(self.args) + _nodes_in(self.kwargs)))

    def __repr__(self) -> str:
        return self.name

    def format_node(self) -> str:
        """The node as ``print(graph)`` lists it."""
        if self.op == "output":
            return f"return {self.args[0]!r}"
        target = _target_str(self.target) if self.op == "call_function" else self.target
        arg_str = ""
        if self.op != "placeholder" or self.args:
            arg_str = f"(args = {self.args!r}, kwargs = {self.kwargs!r})"
        if self.op == "placeholder" and self.args:
            arg_str = f"(default={self.args[0]!r})"
        if self.op == "get_attr":
            arg_str = ""
        return f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target}]{arg_str}"


def _target_str(target: Any) -> str:
    if isinstance(target, str):
        return target
    if getattr(target, "__module__", None) == "_operator" or target in (getattr,):
        return f"<built-in function {target.__name__}>"
    return getattr(target, "__qualname__", repr(target))


def _snake(name: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]+", "_", name)
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if not name or name[0].isdigit():
        name = "_" + name
    return name


class Graph:
    """An ordered list of nodes ending in one ``output`` node."""

    def __init__(self) -> None:
        self._nodes: list[Node] = []
        self._used: set[str] = set()
        self._counts: dict[str, int] = {}

    @property
    def nodes(self) -> list[Node]:
        """The nodes in execution order."""
        return list(self._nodes)

    def _unique_name(self, base: str) -> str:
        base = _snake(base)
        m = re.fullmatch(r"(.*)_(\d+)", base)
        if m and base in self._used:
            base = m.group(1)
        candidate = base
        while candidate in self._used or candidate in _ILLEGAL:
            self._counts[base] = self._counts.get(base, 0) + 1
            candidate = f"{base}_{self._counts[base]}"
        self._used.add(candidate)
        return candidate

    def create_node(
        self,
        op: str,
        target: Any,
        args: tuple = (),
        kwargs: dict | None = None,
        name: str | None = None,
    ) -> Node:
        """Append a node; its name is ``name`` or one derived from the target, made unique."""
        node = Node(
            self,
            self._unique_name(name or _default_name(op, target)),
            op,
            target,
            tuple(args),
            dict(kwargs or {}),
        )
        self._nodes.append(node)
        return node

    def placeholder(self, name: str, default: Any = None, has_default: bool = False) -> Node:
        """An input of the graph."""
        return self.create_node("placeholder", name, (default,) if has_default else ())

    def output(self, result: Any) -> Node:
        """The graph's result."""
        return self.create_node("output", "output", (result,))

    def erase_node(self, node: Node) -> None:
        """Remove a node that no other node reads."""
        if node.users:
            raise RuntimeError(
                f"Tried to erase Node {node} but it still had "
                f"{len(node.users)} users in the graph: {node.users}!"
            )
        for n in node.all_input_nodes:
            n.users.pop(node, None)
        self._nodes.remove(node)

    def eliminate_dead_code(self) -> bool:
        """Remove nodes whose results nobody uses (not placeholders or the output)."""
        changed = False
        for node in reversed(self._nodes):
            if node.op not in ("placeholder", "output") and not node.users:
                self.erase_node(node)
                changed = True
        return changed

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes)

    def __str__(self) -> str:
        lines = ["graph():"]
        lines += ["    " + n.format_node() for n in self._nodes]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print the nodes as a table (opcode, name, target, args, kwargs), in tabulate's
        'simple' layout, as torch.fx prints it."""
        rows = [
            [
                n.op,
                n.name,
                _target_str(n.target) if n.op == "call_function" else str(n.target),
                str(n.args),
                str(n.kwargs),
            ]
            for n in self._nodes
        ]
        print(tabulate(rows, ["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, globals_: dict[str, Any]) -> str:
        """The source of ``forward(self, ...)``; names it needs are added to ``globals_``."""
        return _write_forward(self, globals_)


def tabulate(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned columns two spaces apart under dashed headers (tabulate's 'simple')."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(out)


def _default_name(op: str, target: Any) -> str:
    if op in ("placeholder", "get_attr", "call_module", "output"):
        return str(target).replace(".", "_")
    if op == "call_method":
        return str(target)
    return getattr(target, "__name__", "node").strip("_")


def _function_ref(fn: Any, globals_: dict[str, Any], taken: frozenset[str] = frozenset()) -> str:
    """How the generated code names ``fn``: torch.X / torch.nn.functional.X where that is
    the same object, else a global added for it, under a name no local (``taken``: the
    nodes' names) hides."""
    import chainrule  # the namespace the code runs against, read at code-writing time
    import chainrule.nn.functional as F

    name = getattr(fn, "__name__", "fn")
    if getattr(chainrule, name, None) is fn:
        globals_["torch"] = chainrule
        return f"torch.{name}"
    if getattr(F, name, None) is fn:
        globals_["torch"] = chainrule
        return f"torch.nn.functional.{name}"
    key = _snake(name)
    while key in taken or (key in globals_ and globals_[key] is not fn):
        key += "_"
    globals_[key] = fn
    return key


def _fmt(a: Any, globals_: dict[str, Any]) -> str:
    if isinstance(a, Node):
        return a.name
    if isinstance(a, tuple):
        inner = ", ".join(_fmt(x, globals_) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt(x, globals_) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v, globals_)}" for k, v in a.items()) + "}"
    if isinstance(a, slice):
        return (
            f"slice({_fmt(a.start, globals_)}, {_fmt(a.stop, globals_)}, {_fmt(a.step, globals_)})"
        )
    if isinstance(a, float) and (a != a or a in (float("inf"), float("-inf"))):
        return f"float({str(a)!r})"
    if type(a).__module__ == "builtins" and not callable(a):
        return repr(a)
    key = f"_const_{len(globals_)}"
    globals_[key] = a
    return key


def _call_args(args: tuple, kwargs: dict[str, Any], globals_: dict[str, Any]) -> str:
    parts = [_fmt(a, globals_) for a in args]
    parts += [f"{k} = {_fmt(v, globals_)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _attr_path(path: str) -> str:
    """``self.a.b``, with ``getattr(x, "0")`` for a part that is no identifier."""
    text = "self"
    for part in path.split("."):
        if part.isidentifier() and not keyword.iskeyword(part):
            text = f"{text}.{part}"
        else:
            text = f'getattr({text}, "{part}")'
    return text


def _expr(node: Node, globals_: dict[str, Any], taken: frozenset[str] = frozenset()) -> str:
    a, kw = node.args, node.kwargs
    if node.op == "get_attr":
        return _attr_path(node.target)
    if node.op == "call_module":
        return f"{_attr_path(node.target)}({_call_args(a, kw, globals_)})"
    if node.op == "call_method":
        return f"{_fmt(a[0], globals_)}.{node.target}({_call_args(a[1:], kw, globals_)})"
    t = node.target
    if not kw and t in _BINARY and len(a) == 2:
        return f"{_fmt(a[0], globals_)} {_BINARY[t]} {_fmt(a[1], globals_)}"
    if not kw and t in _UNARY and len(a) == 1:
        return f"{_UNARY[t]}{_fmt(a[0], globals_)}"
    if t is operator.getitem and not kw:
        return f"{_fmt(a[0], globals_)}[{_fmt(a[1], globals_)}]"
    if t is getattr and len(a) == 2 and isinstance(a[1], str):
        return f"{_fmt(a[0], globals_)}.{a[1]}"
    return f"{_function_ref(t, globals_, taken)}({_call_args(a, kw, globals_)})"


def _write_forward(graph: Graph, globals_: dict[str, Any]) -> str:
    nodes = graph.nodes
    last_use: dict[Node, Node] = {}
    for node in nodes:
        for n in node.all_input_nodes:
            last_use[n] = node
    params: list[str] = []
    body: list[str] = []
    taken = frozenset(n.name for n in nodes) | frozenset(str(n.target) for n in nodes)
    for node in nodes:
        if node.op == "placeholder":
            param = str(node.target)
            params.append(param if not node.args else f"{param} = {_fmt(node.args[0], globals_)}")
            if node.name != param:
                body.append(f"{node.name} = {param}")
            continue
        if node.op == "output":
            body.append(f"return {_fmt(node.args[0], globals_)}")
            break
        line = f"{node.name} = {_expr(node, globals_, taken)}"
        dead = [n.name for n in node.all_input_nodes if last_use[n] is node]
        if not node.users:
            dead.append(node.name)
        if dead:
            line += ";  " + " = ".join(dead) + " = None"
        body.append(line)
    head = "def forward(" + ", ".join(["self"] + params) + "):"
    return "\n\n\n" + head + "\n" + "".join(f"    {b}\n" for b in body) + "    "
