"""One graph IR for chainrule's static side: define-then-run (``chainrule.static``) builds it,
the interpreter runs it, and the backward graph is derived from the op table's formulas.

* :mod:`.graph`: :class:`Value`, :class:`Node`, :class:`Graph` (nodes in execution order,
  TensorFlow-style unique names, ``table()`` and ``code()``);
* :mod:`.infer`: shapes and dtypes, by running each new node on example arrays;
* :mod:`.interpreter`: :func:`run`, the needed nodes in order over NumPy arrays, and
  :class:`Runner`, which caches the plan and folds what depends on constants only;
* :mod:`.backward`: :func:`gradients`, the joint forward and backward graph;
* :mod:`.codegen`: the graph as Python source; :mod:`.helpers`: the engine's plumbing as nodes;
* :mod:`.numpy_codegen`: the graph as a generated NumPy function; :mod:`.passes`: dead code,
  common subexpressions, constant folding, element-wise fusion;
  :mod:`.generated_runner`: :class:`GeneratedRunner`, a Runner whose plans run as generated code.
"""

from __future__ import annotations

from .backward import gradients
from .generated_runner import GeneratedRunner
from .graph import NODE_KINDS, Graph, Node, Value
from .interpreter import (
    IMPURE,
    MissingFeed,
    Runner,
    UninitializedVariable,
    impure,
    needed_nodes,
    run,
)

__all__ = [
    "Graph",
    "Node",
    "Value",
    "NODE_KINDS",
    "gradients",
    "run",
    "Runner",
    "GeneratedRunner",
    "IMPURE",
    "impure",
    "needed_nodes",
    "MissingFeed",
    "UninitializedVariable",
]
