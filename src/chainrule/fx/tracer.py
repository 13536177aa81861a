"""``Tracer`` and ``symbolic_trace``: run a module's ``forward`` (or a function) on
Proxies and record what it does as a ``Graph``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from chainrule._tensor import Tensor
from chainrule.fx.graph import Graph, map_arg
from chainrule.fx.graph_module import GraphModule
from chainrule.fx.proxy import Proxy
from chainrule.nn.modules.module import Module

__all__ = ["Tracer", "symbolic_trace"]

_CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")


class Tracer:
    """Records a program; ``trace(root)`` returns its Graph."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.root: Module = Module()
        self._module_paths: dict[int, str] = {}
        self._attr_paths: dict[int, str] = {}
        self._constants: dict[int, str] = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """Modules of chainrule.nn (not containers) are called as one node."""
        return type(m).__module__.startswith("chainrule.nn") and type(m).__name__ not in _CONTAINERS

    def create_arg(self, a: Any) -> Any:
        """Proxies become their nodes, parameters get_attr nodes, tensors constants."""

        def one(x: Any) -> Any:
            return x

        def convert(x: Any) -> Any:
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):
                path = self._attr_paths.get(id(x))
                if path is None:
                    path = self._constants.get(id(x))
                    if path is None:
                        path = f"_tensor_constant{len(self._constants)}"
                        self._constants[id(x)] = path
                        setattr(self.root, path, x)
                return self.create_proxy("get_attr", path, (), {}).node
            if isinstance(x, tuple):
                return tuple(convert(y) for y in x)
            if isinstance(x, list):
                return [convert(y) for y in x]
            if isinstance(x, dict):
                return {k: convert(v) for k, v in x.items()}
            if isinstance(x, slice):
                return slice(convert(x.start), convert(x.stop), convert(x.step))
            return map_arg(x, one)

        return convert(a)

    def create_proxy(
        self, op: str, target: Any, args: tuple, kwargs: dict[str, Any], name: str | None = None
    ) -> Proxy:
        """Record one node and return a Proxy for its result."""
        node = self.graph.create_node(
            op, target, self.create_arg(tuple(args)), self.create_arg(dict(kwargs)), name
        )
        return Proxy(node, self)

    def trace(self, root: Module | Callable[..., Any]) -> Graph:
        """Run ``root`` on Proxies, one per parameter of its forward, and return the Graph."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            bound: tuple = (root,)
        else:
            self.root = Module()
            fn = root
            bound = ()
        self._module_paths = {id(m): name for name, m in self.root.named_modules()}
        self._attr_paths = {id(t): name for name, t in self.root.named_parameters()}
        self._attr_paths.update({id(t): name for name, t in self.root.named_buffers()})
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[len(bound) :]
        args = []
        for p in params:
            has_default = p.default is not inspect.Parameter.empty
            node = self.graph.create_node(
                "placeholder", p.name, (p.default,) if has_default else ()
            )
            args.append(Proxy(node, self))
        tracer = self
        original_call = Module.__call__
        original_getattr = Module.__getattr__

        def traced_call(mod: Module, *a: Any, **kw: Any) -> Any:
            path = tracer._module_paths.get(id(mod))
            if path is not None and path and tracer.is_leaf_module(mod, path):
                return tracer.create_proxy("call_module", path, a, kw)
            return mod.forward(*a, **kw)

        def traced_getattr(mod: Module, name: str) -> Any:
            value = original_getattr(mod, name)
            if isinstance(value, Tensor) and id(value) in tracer._attr_paths:
                return tracer.create_proxy("get_attr", tracer._attr_paths[id(value)], (), {})
            return value

        Module.__call__ = traced_call  # type: ignore[method-assign]
        Module.__getattr__ = traced_getattr  # type: ignore[method-assign]
        try:
            result = fn(*bound, *args)
        finally:
            Module.__call__ = original_call  # type: ignore[method-assign]
            Module.__getattr__ = original_getattr  # type: ignore[method-assign]
        self.graph.create_node("output", "output", (self.create_arg(result),))
        return self.graph


def symbolic_trace(root: Module | Callable[..., Any]) -> GraphModule:
    """Trace ``root`` (a Module or a function) into a ``GraphModule``, as torch.fx does."""
    tracer = Tracer()
    graph = tracer.trace(root)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
