"""See the backward graph: Graphviz drawings, a text tree, and an interactive HTML explorer.

    >>> import chainrule as torch
    >>> from chainrule import viz
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> y = (w + x) * (w + 1)
    >>> print(viz.tree(y, params={"w": w, "x": x}))             # doctest: +SKIP
    >>> viz.make_dot(y, params={"w": w, "x": x}).render("seed", format="svg")  # doctest: +SKIP
    >>> viz.explore(y, "seed.html", params={"w": w, "x": x})    # doctest: +SKIP
    >>> viz.forward_graph(y, values=True).render("seed_forward.svg")  # doctest: +SKIP

``forward_graph`` draws the graph as the seed articles do: tensors as nodes, operations as edges,
optionally with values, gradients and each edge's local derivative.

``explain(y)`` derives each gradient by the chain rule along the graph, as the articles do by
hand (``∂y/∂w = ∂y/∂a · ∂a/∂w + ∂y/∂b · ∂b/∂w = b · 1 + a · 1 = … = 5``); it is also
``chainrule.autograd.explain``.

``record_modules(model)`` remembers which module call created each node, so large models draw
as one box per module that opens on a click.
"""

from __future__ import annotations

from .dot import GraphDrawing, GraphvizMissingWarning, has_dot, make_dot
from .explain import Derivation, Explanation, explain
from .explorer import GraphvizNotFoundError, explore, record_steps
from .forward import ForwardGraph, forward_graph
from .graph import BackwardGraph, walk
from .groups import Hierarchy, ModuleRecorder, record_modules
from .text import TextTree, tree

__all__ = [
    "make_dot",
    "tree",
    "explore",
    "record_modules",
    "record_steps",
    "walk",
    "has_dot",
    "BackwardGraph",
    "Hierarchy",
    "ModuleRecorder",
    "GraphDrawing",
    "GraphvizMissingWarning",
    "GraphvizNotFoundError",
    "TextTree",
    "forward_graph",
    "ForwardGraph",
    "explain",
    "Explanation",
    "Derivation",
]
