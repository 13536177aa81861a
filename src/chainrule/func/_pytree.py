"""Pytrees (nested tuples, lists and dicts of leaves) for the function transforms: flatten to
leaves and a structure, rebuild, map; explicit stacks where the nesting is walked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["_Spec", "_tree_flatten", "_tree_map", "_tree_unflatten"]


class _Spec:
    """The structure of a pytree: ``kind`` is "leaf", "tuple", "list" or "dict"."""

    __slots__ = ("kind", "children", "keys", "type")

    def __init__(
        self,
        kind: str,
        children: tuple[_Spec, ...] = (),
        keys: tuple = (),
        type_: type | None = None,
    ) -> None:
        self.kind = kind
        self.children = children
        self.keys = keys
        self.type = type_

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Spec)
            and self.kind == other.kind
            and self.keys == other.keys
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.keys, self.children))

    def __str__(self) -> str:
        """PyTorch's ``treespec_pprint``: ``*`` for a leaf, ``(*, *)``, ``[*]``, ``{'a': *}``."""
        if self.kind == "leaf":
            return "*"
        parts = [str(c) for c in self.children]
        if self.kind == "dict":
            items = (f"{k!r}: {p}" for k, p in zip(self.keys, parts, strict=True))
            return "{" + ", ".join(items) + "}"
        if self.kind == "list":
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


_LEAF = _Spec("leaf")
_CONTAINERS = (tuple, list, dict)


def _tree_flatten(tree: Any) -> tuple[list[Any], _Spec]:
    """The leaves of ``tree`` in order, and its structure (explicit stack, no recursion)."""
    if not isinstance(tree, _CONTAINERS):
        return [tree], _LEAF  # (a lone tensor: most transforms' arguments and results)
    if type(tree) is tuple and not any(isinstance(item, _CONTAINERS) for item in tree):
        return list(tree), _flat_tuple_spec(len(tree))
    leaves: list[Any] = []
    root: list[_Spec] = []
    # Frames are (node, where its spec goes); a container is closed (its spec built from its
    # children's) once all of them have been visited.
    stack: list[tuple[Any, ...]] = [(tree, root)]
    while stack:
        frame = stack.pop()
        if frame[0] is _CLOSE:
            _, node, into, children = frame
            into.append(_container_spec(node, children))
            continue
        node, into = frame
        if isinstance(node, tuple | list | dict):
            children: list[_Spec] = []
            stack.append((_CLOSE, node, into, children))
            values = list(node.values()) if isinstance(node, dict) else list(node)
            for value in reversed(values):
                stack.append((value, children))
        else:
            leaves.append(node)
            into.append(_LEAF)
    return leaves, root[0]


_CLOSE = object()
_FLAT_TUPLES: dict[int, _Spec] = {}


def _flat_tuple_spec(n: int) -> _Spec:
    """The structure of a tuple of ``n`` leaves (shared: specs are never changed)."""
    spec = _FLAT_TUPLES.get(n)
    if spec is None:
        spec = _FLAT_TUPLES[n] = _Spec("tuple", (_LEAF,) * n, type_=tuple)
    return spec


def _container_spec(node: Any, children: list[_Spec]) -> _Spec:
    if isinstance(node, dict):
        return _Spec("dict", tuple(children), tuple(node.keys()))
    if isinstance(node, list):
        return _Spec("list", tuple(children))
    return _Spec("tuple", tuple(children), type_=type(node))


def _tree_unflatten(leaves: list[Any], spec: _Spec) -> Any:
    """Rebuild a pytree of structure ``spec`` from its leaves (explicit stack, no recursion and
    no self-referencing closure: a reference cycle would keep the leaves, large gradients among
    them, alive until the garbage collector runs)."""
    if spec.kind == "leaf":
        return leaves[0]
    position = 0
    # Frames are (spec, the values of its children built so far); a container is built once
    # all its children are, and appended to its parent's values.
    stack: list[tuple[_Spec, list[Any]]] = [(spec, [])]
    while True:
        s, values = stack[-1]
        if len(values) < len(s.children):
            child = s.children[len(values)]
            if child.kind == "leaf":
                values.append(leaves[position])
                position += 1
            else:
                stack.append((child, []))
            continue
        stack.pop()
        built = _container(s, values)
        if not stack:
            return built
        stack[-1][1].append(built)


def _container(s: _Spec, values: list[Any]) -> Any:
    if s.kind == "dict":
        return dict(zip(s.keys, values, strict=True))
    if s.kind == "list":
        return values
    if s.type is not None and s.type is not tuple and hasattr(s.type, "_fields"):
        if hasattr(s.type, "_make"):
            return s.type._make(values)  # a namedtuple
        return s.type(values)  # a struct sequence (``return_types``), built from one sequence
    return tuple(values)


def _tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = _tree_flatten(tree)
    return _tree_unflatten([fn(leaf) for leaf in leaves], spec)
