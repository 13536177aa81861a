"""``GraphModule``: a Module whose ``forward`` is the code generated from a Graph."""

from __future__ import annotations

from typing import Any

from chainrule.fx.graph import Graph
from chainrule.nn.modules.module import Module

__all__ = ["GraphModule"]


class GraphModule(Module):
    """Holds ``root``'s submodules, parameters and buffers and runs ``graph`` as code."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # one class per instance, so forward and the class name belong to this module
        name = args[2] if len(args) > 2 else kwargs.get("class_name", "GraphModule")
        sub = type(name, (cls,), {})
        return super().__new__(sub)

    def __init__(self, root: Module, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        for name, m in root._modules.items():
            self._modules[name] = m
        for name, p in root._parameters.items():
            self._parameters[name] = p
        for name, b in root._buffers.items():
            self._buffers[name] = b
        for name, value in vars(root).items():
            if name.startswith("_tensor_constant"):
                setattr(self, name, value)
        self._graph = graph
        self.recompile()

    @property
    def graph(self) -> Graph:
        """The recorded graph."""
        return self._graph

    @property
    def code(self) -> str:
        """The Python source of ``forward``."""
        return self._code

    def recompile(self) -> str:
        """Generate ``forward`` again from ``graph`` (after editing it)."""
        globals_: dict[str, Any] = {}
        self._code = self._graph.python_code(globals_)
        namespace: dict[str, Any] = {}
        exec(compile(self._code, f"<eval_with_key>.{id(self)}", "exec"), globals_, namespace)
        type(self).forward = namespace["forward"]
        return self._code

    def __str__(self) -> str:
        return (
            Module.__repr__(self)
            + "\n"
            + self._code
            + "\n# To see more debug info, please use `graph_module.print_readable()`"
        )

    def print_readable(self, print_output: bool = True) -> str:
        """The generated code with the class around it."""
        text = f"class {type(self).__name__}(torch.nn.Module):\n" + "\n".join(
            "    " + line if line else line for line in self._code.strip("\n").split("\n")
        )
        if print_output:
            print(text)
        return text
