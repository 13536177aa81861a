"""``torch._dynamo``'s functions programs call directly: ``reset``, ``disable``,
``is_compiling``, ``graph_break``, ``allow_in_graph``, ``assume_constant_result``,
``mark_dynamic``, ``mark_static`` and ``config`` (``recompile_limit`` ...): those of
``chainrule.compiler`` (see ``compiler/api.py``), whose tracer stands for dynamo."""

from __future__ import annotations

from ..compiler.api import (
    allow_in_graph,
    assume_constant_result,
    config,
    disable,
    graph_break,
    is_compiling,
    mark_dynamic,
    mark_static,
    reset,
)

__all__ = [
    "allow_in_graph", "assume_constant_result", "config", "disable", "graph_break",
    "is_compiling", "mark_dynamic", "mark_static", "reset",
]  # fmt: skip
