"""``Proxy``: the stand-in value symbolic tracing passes through a program.

Every operation on a Proxy (arithmetic, indexing, a method, a torch function via
``__torch_function__``) appends a node to the tracer's graph and returns a new Proxy.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from chainrule.fx.graph import Node

if TYPE_CHECKING:
    from chainrule.fx.tracer import Tracer

__all__ = ["Attribute", "Proxy", "TraceError"]


class TraceError(ValueError):
    """A program symbolic tracing cannot record (torch.fx's TraceError)."""


class Proxy:
    """A value during symbolic tracing; ``.node`` is the node that produces it."""

    def __init__(self, node: Node, tracer: Tracer) -> None:
        self.node = node
        self.tracer = tracer

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str) -> Attribute:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Attribute(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __bool__(self) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def __iter__(self) -> Any:
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the "
            "Proxy is used in a loop or as a *args or **kwargs function argument. "
            "See the torch.fx docs on pytorch.org for a more detailed "
            "explanation of what types of control flow can be traced, and check "
            "out the Proxy docstring for help troubleshooting Proxy iteration "
            "errors"
        )

    def __len__(self) -> int:
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want "
            "this call to be recorded, please call torch.fx.wrap('len') at "
            "module scope"
        )

    def keys(self) -> Proxy:
        return self.tracer.create_proxy("call_method", "keys", (self,), {})

    @classmethod
    def __torch_function__(
        cls, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Proxy:
        tracer = None
        stack = list(args) + list((kwargs or {}).values())
        while stack:  # (also inside lists and tuples: torch.cat([x, y]))
            a = stack.pop()
            if isinstance(a, Proxy):
                tracer = a.tracer
                break
            if isinstance(a, tuple | list):
                stack.extend(a)
            elif isinstance(a, dict):
                stack.extend(a.values())
        if tracer is None:
            raise TraceError(f"no Proxy among the arguments of {func}")
        return tracer.create_proxy("call_function", func, args, kwargs or {})


class Attribute(Proxy):
    """``proxy.name``: a method call when called, else a ``getattr`` node made on use."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy(
                "call_function", getattr, (self.root, self.attr), {}
            ).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _binary(op: Any, reflected: bool = False) -> Any:
    if reflected:

        def method(self: Proxy, other: Any) -> Proxy:
            return self.tracer.create_proxy("call_function", op, (other, self), {})
    else:

        def method(self: Proxy, other: Any) -> Proxy:
            return self.tracer.create_proxy("call_function", op, (self, other), {})

    return method


def _unary(op: Any) -> Any:
    def method(self: Proxy) -> Proxy:
        return self.tracer.create_proxy("call_function", op, (self,), {})

    return method


for _name in (
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
):
    _op = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    setattr(Proxy, f"__{_name}__", _binary(_op))
    setattr(Proxy, f"__r{_name}__", _binary(_op, reflected=True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name)))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__  # type: ignore[method-assign]
