"""An interactive explorer of the backward graph: one self-contained HTML file.

The page holds Graphviz's SVG drawings (one per level: the top level and each group), the
graph's data as JSON, and a small script of our own (``explorer.js``, no framework, nothing
fetched): click a node to see what it saved and which gradients flowed through it, play the
backward pass step by step in the order the engine ran it, open a group (a module call, a run
of repeated steps) and go back up, search nodes by name.

The steps are recorded by running the real engine (:func:`~chainrule.autograd.stepping.
backward_steps`) with ``retain_graph=True``; the leaves' ``.grad`` are put back afterwards.

Example:
    >>> import chainrule as torch
    >>> from chainrule import viz
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> viz.explore((w + x) * (w + 1), "seed.html", params={"w": w, "x": x})  # doctest: +SKIP
    ExplorerPage('seed.html')
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import graphviz
import numpy as np

from .._tensor import Tensor
from ..autograd.node import AccumulateGrad
from .dot import INSTALL_HINT, _Options, view_digraph
from .explain import check_text, explain
from .forward import ForwardGraph, caller_tensor_names, forward_graph
from .graph import as_outputs, node_details, tensor_summary, walk
from .groups import Hierarchy, ModuleRecorder

__all__ = [
    "explore",
    "record_steps",
    "GraphvizNotFoundError",
    "page_data",
    "forward_data",
    "ExplorerPage",
]


class GraphvizNotFoundError(RuntimeError):
    """Graphviz's ``dot`` is needed to lay out the explorer's drawings and is not installed."""


class ExplorerPage(type(Path())):  # type: ignore[misc]  # PosixPath or WindowsPath
    """The path of a page written by :func:`explore`: a ``Path`` (open it, pass it on) that
    Jupyter shows inline, the page in a sandboxed frame."""

    @property
    def path(self) -> Path:
        """The page's path as a plain ``Path``."""
        return Path(self)

    def _repr_html_(self) -> str:
        page = Path(self).read_text(encoding="utf-8")
        return (
            f'<iframe class="chainrule-explorer" srcdoc="{html.escape(page, quote=True)}" '
            'sandbox="allow-scripts" style="width: 100%; height: 640px; border: 0"></iframe>'
        )


def record_steps(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
) -> list[Any]:
    """Run the backward pass of ``output`` step by step and return the steps, changing nothing.

    The graph is retained (``retain_graph=True``) and every leaf's ``.grad`` (and retained
    ``.grad`` of non-leaves) is put back as it was; hooks on tensors and nodes do run.
    Non-scalar outputs are seeded with ones.
    """
    return _record_pass(output)[0]


def _grads_after(node: Any) -> dict[str, Any]:
    """The ``.grad`` a step left behind: its leaf's (``AccumulateGrad``) and the retained
    ``.grad`` of the node's outputs (``retain_grad()``), JSON-ready."""
    after: dict[str, Any] = {}
    if type(node) is AccumulateGrad:
        grad = node.variable._grad
        after["leaf"] = None if grad is None else tensor_summary(grad)
    hooks = getattr(node, "_hooks", None)
    retained = {}
    for nr, ref in hooks.retains.items() if hooks is not None else ():
        t = ref()
        if t is not None:
            retained[str(nr)] = None if t._grad is None else tensor_summary(t._grad)
    if retained:
        after["retained"] = retained
    return after


def _record_pass(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
) -> tuple[list[Any], list[dict[str, Any]]]:
    """The steps of :func:`record_steps`, and after each step the ``.grad`` it left behind
    (:func:`_grads_after`; the pass starts with every such ``.grad`` None)."""
    from ..autograd.stepping import backward_steps
    from ..ops.creation import ones_like

    tensors = [t for _, t in as_outputs(output)]
    graph = walk(tensors)
    kept: list[tuple[Tensor, Tensor | None]] = []
    for node in graph.nodes:
        if type(node) is AccumulateGrad:
            kept.append((node.variable, node.variable._grad))
            node.variable._grad = None
        hooks = getattr(node, "_hooks", None)
        for ref in hooks.retains.values() if hooks is not None else ():
            t = ref()
            if t is not None:
                kept.append((t, t._grad))
                t._grad = None
    seeds = [None if t._data.size == 1 else ones_like(t) for t in tensors]
    steps: list[Any] = []
    after: list[dict[str, Any]] = []
    try:
        for step in backward_steps(tensors, seeds, retain_graph=True):
            steps.append(step)
            after.append(_grads_after(step.node))
        return steps, after
    finally:
        for t, grad in kept:
            t._grad = grad


def explore(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    path: str | Path = "graph.html",
    params: Mapping[str, Tensor] | None = None,
    *,
    modules: ModuleRecorder | None = None,
    steps: Iterable[Any] | None = None,
    record: bool = True,
    title: str | None = None,
    fold: int = 16,
    collapse_above: int = 150,
    show_attrs: bool = False,
    max_view_items: int = 400,
    detail_limit: int = 20_000,
    record_limit: int = 20_000,
    expand_below: int = 40,
    forward_limit: int = 200,
    explain_limit: int = 60,
) -> ExplorerPage:
    """Write an interactive HTML page of the backward graph of ``output``; return its path
    (an :class:`ExplorerPage`: a ``Path`` that Jupyter displays as the page itself).

    ``params`` names leaves (``dict(model.named_parameters())``); ``modules`` (from
    :func:`~chainrule.viz.record_modules`) groups nodes by the module call that made them.
    ``steps``: steps already recorded with ``backward_steps`` (for a graph since freed);
    otherwise, with ``record``, the backward pass is recorded here if the graph has at most
    ``record_limit`` nodes. A level with more than ``collapse_above`` items folds runs of at
    least ``fold`` repeated steps; a drawing shows at most ``max_view_items`` items; node
    details are embedded for graphs of at most ``detail_limit`` nodes (else for drawn nodes).
    A graph of fewer than ``expand_below`` nodes is drawn whole, without module boxes (the
    details still say which module made a node). Graphs of at most ``forward_limit`` nodes get a
    second view, the forward graph as :func:`~chainrule.viz.forward_graph` draws it (named by
    ``params``, or by the caller's variables when ``params`` is None), whose gradients appear as
    the player reaches them. Graphs of at most ``explain_limit`` nodes also get the chain rule
    written out (:func:`~chainrule.viz.explain`): clicking an input in the forward view shows
    its derivation, each term lit once the backward pass has run the nodes that compute it.

    Raises :class:`GraphvizNotFoundError` when Graphviz's ``dot`` is not installed.

    Example:
        >>> import chainrule as torch
        >>> from chainrule import nn, viz
        >>> model = nn.Linear(3, 1)
        >>> with viz.record_modules(model) as rec:
        ...     loss = model(torch.ones(2, 3)).sum()
        >>> viz.explore(loss, "step.html", dict(model.named_parameters()), modules=rec)
        ... # doctest: +SKIP
        ExplorerPage('step.html')
    """
    graph = walk(output, params)
    note = ""
    step_list: list[Any] = []
    grads_after: list[dict[str, Any]] | None = None
    if steps is not None:
        step_list = list(steps)
    elif record and len(graph) <= record_limit:
        try:
            step_list, grads_after = _record_pass(output)
        except RuntimeError as error:
            note = f"The backward pass could not be recorded: {error}"
    elif record:
        note = (
            f"The graph has {len(graph)} nodes, more than record_limit={record_limit}: the "
            "backward pass was not recorded (pass steps= or a larger record_limit)."
        )
    small = len(graph) < expand_below
    hierarchy = Hierarchy(
        graph, None if small else modules, fold=fold, collapse_above=collapse_above
    )
    data, views = page_data(hierarchy, step_list, max_view_items, detail_limit, grads_after)
    if small and modules is not None and modules.calls:
        _add_module_labels(data, Hierarchy(graph, modules, fold=0))
    if note:
        data["note"] = note
    options = _Options(show_attrs=show_attrs)
    digraphs = [view_digraph(hierarchy, v, options, name=f"view{k}") for k, v in enumerate(views)]
    forward = None
    if 0 < len(graph) <= forward_limit:
        names: Any = params if params is not None else caller_tensor_names(2)
        forward, forward_note = _forward_view(output, names, step_list, graph.index)
        data["forward"] = forward_data(forward) if forward is not None else {"note": forward_note}
        if forward is not None and isinstance(output, Tensor) and len(graph) <= explain_limit:
            data["forward"]["explain"] = explain_data(output, names)
    else:
        data["forward"] = {
            "note": f"The forward graph is drawn for graphs of at most forward_limit="
            f"{forward_limit} nodes; this one has {len(graph)}."
        }
    if forward is not None:
        digraphs.append(forward.drawing)
    svgs = _render_svgs(digraphs)
    forward_svg = svgs.pop() if forward is not None else None
    page_title = title or f"Backward graph of {graph.outputs[0].label}"
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_page(page_title, data, svgs, forward_svg), encoding="utf-8")
    return ExplorerPage(target)


def _add_module_labels(data: dict[str, Any], with_modules: Hierarchy) -> None:
    """Name, in each node's details, the module calls that made it (a graph drawn whole)."""
    for key, details in data["nodes"].items():
        labels = [with_modules.groups[g].label for g in with_modules.path(int(key))]
        if labels:
            details["modules"] = labels


def _forward_view(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    names: Any,
    steps: Sequence[Any],
    index: Mapping[Any, int],
) -> tuple[ForwardGraph | None, str]:
    """The forward graph with values and local derivatives, each tensor's gradient taken from
    the recorded pass (the gradient its node received); or None and why not."""
    try:
        # _frame_depth=3: the caller of explore (forward_graph <- _forward_view <- explore).
        forward = forward_graph(output, names, values=True, derivatives=True, _frame_depth=3)
    except Exception as error:  # the second view is optional: the page says why it is missing
        return None, f"The forward graph could not be drawn: {type(error).__name__}: {error}"
    received: dict[int, tuple[Any, ...]] = {}
    for step in steps:
        i = index.get(step.node)
        if i is not None:
            received[i] = step.grad_outputs
    for d in forward.nodes:
        grads = received.get(d.key[0])
        g = grads[d.key[1]] if grads is not None and d.key[1] < len(grads) else None
        d.grad = None if g is None else np.array(g._data if isinstance(g, Tensor) else g)
    forward.gradients = bool(steps)
    return forward, ""


def explain_data(output: Tensor, names: Mapping[str, Tensor]) -> dict[str, Any]:
    """The derivations of :func:`~chainrule.viz.explain` for the forward view: each input's
    lines and terms (with the backward nodes that compute each term), or why there are none."""
    try:
        explanation = explain(output, names=dict(names))
    except Exception as error:  # optional: the page says why it is missing
        return {"note": f"The chain rule could not be written out: {type(error).__name__}: "
                        f"{error}"}
    return {
        "definitions": [text for text, _ in explanation.definitions],
        "derivations": [
            {
                "input": d.input,
                "node": d.key[0],
                "nr": d.key[1],
                "element": d.element,
                "mode": d.mode,
                "blocks": d.blocks,
                "locals": [text for text, _ in d.locals],
                "terms": [{"text": text, "nodes": nodes} for text, nodes in d.terms],
                "check": check_text(d),
            }
            for d in explanation.derivations
        ],
    }


def forward_data(forward: ForwardGraph) -> dict[str, Any]:
    """What the page needs of the forward view: each data node's backward node and output."""
    return {
        "nodes": [
            {
                "id": d.id,
                "label": d.label,
                "node": d.key[0],
                "nr": d.key[1],
                "kind": d.kind,
                "shape": list(d.shape),
                "dtype": d.dtype,
                "value": None if d.value is None else tensor_summary(d.value),
            }
            for d in forward.nodes
        ],
        "edges": [
            {
                "source": e.source,
                "target": e.target,
                "op": e.op,
                "node": e.node,
                "derivative": None if e.derivative is None else tensor_summary(e.derivative),
                "formula": e.formula,
            }
            for e in forward.edges
        ],
        "notes": list(forward.notes),
    }


# ----------------------------------------------------------------------------------------------
# The page's data


def page_data(
    hierarchy: Hierarchy,
    steps: Sequence[Any],
    max_view_items: int = 400,
    detail_limit: int = 20_000,
    grads_after: Sequence[dict[str, Any]] | None = None,
    ends: int = 3,
) -> tuple[dict[str, Any], list[Any]]:
    """The JSON the page embeds, and the views to draw (top level first, then each group).

    ``grads_after``: per step, the ``.grad`` it left behind (a recorded pass); without it, a
    leaf's ``.grad`` after its step is read from the leaf now (steps run before the page).
    """
    graph = hierarchy.graph
    # Views of the top level and of every group drawn in a view (breadth first): a group that
    # no drawing shows (inside the undrawn middle of a chain) cannot be opened, so is not drawn.
    views = [hierarchy.view(-1, ends, max_view_items)]
    view_of_group: dict[int, int] = {}
    k = 0
    while k < len(views):
        for item in views[k].items:
            g = -1 - item
            if item < 0 and g not in view_of_group:
                view_of_group[g] = len(views)
                views.append(hierarchy.view(g, ends, max_view_items))
        k += 1
    # Which nodes get their details embedded: all of them, or those drawn and stepped through.
    if len(graph) <= detail_limit:
        shown: Iterable[int] = range(len(graph))
    else:
        wanted: set[int] = set()
        for v in views:
            wanted.update(i for i in v.items if i >= 0)
            wanted.update(node for _, node in v.stubs)
        wanted.update(out.node for out in graph.outputs)
        shown = sorted(wanted)
    index = graph.index
    step_rows: list[dict[str, Any]] = []
    step_of: dict[int, int] = {}
    for k, step in enumerate(steps):
        node_id = index.get(step.node)
        if node_id is None:
            continue
        step_of[node_id] = len(step_rows)
        row: dict[str, Any] = {
            "node": node_id,
            "index": int(step.index),
            "in": [None if g is None else tensor_summary(g) for g in step.grad_outputs],
            "out": [None if g is None else tensor_summary(g) for g in step.grad_inputs],
        }
        if grads_after is not None:
            row["after"] = grads_after[k]
        else:
            row["after"] = _grads_after(step.node)
            row["afterNow"] = True  # read after the whole pass, not after this step
        step_rows.append(row)
    nodes: dict[str, Any] = {}
    for i in shown:
        details = node_details(graph, i)
        details["path"] = list(hierarchy.path(i))
        if i in step_of:
            details["step"] = step_of[i]
        nodes[str(i)] = details
    groups = []
    for group in hierarchy.groups:
        entry: dict[str, Any] = {
            "id": group.id,
            "kind": group.kind,
            "label": group.label,
            "parent": group.parent,
            "size": group.size,
            "names": group.names.most_common(12),
            "view": view_of_group.get(group.id),
        }
        if group.kind == "chain":
            entry["steps"] = len(group.blocks)
        groups.append(entry)
    # First and last engine step inside each group (for the player's colouring).
    if step_rows:
        for row_number, row in enumerate(step_rows):
            for g in hierarchy.path(row["node"]):
                entry = groups[g]
                entry.setdefault("firstStep", row_number)
                entry["lastStep"] = row_number
    data = {
        "total": len(graph),
        "names": graph.names if len(graph) <= detail_limit else None,
        "outputs": [
            {"label": o.label, "node": o.node, "shape": list(o.shape), "dtype": o.dtype}
            for o in graph.outputs
        ],
        "nodes": nodes,
        "groups": groups,
        "views": [
            {
                "level": v.level,
                "items": [_key(i) for i in v.items],
                "hidden": v.hidden,
                "truncated": v.truncated,
                "title": "graph" if v.level < 0 else hierarchy.groups[v.level].label,
            }
            for v in views
        ],
        "steps": step_rows,
    }
    return data, views


def _key(item: int) -> str:
    return f"n{item}" if item >= 0 else f"g{-1 - item}"


# ----------------------------------------------------------------------------------------------
# Rendering and the page

_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)


def _render_svgs(digraphs: list[Any]) -> list[str]:
    """Lay out every drawing with one run of ``dot`` (it reads several graphs from one file)."""
    source = "\n".join(d.source for d in digraphs)
    try:
        out = graphviz.pipe("dot", "svg", source.encode("utf-8"), quiet=True)
    except graphviz.ExecutableNotFound as error:
        raise GraphvizNotFoundError(
            INSTALL_HINT.format(where="").replace(", so only the DOT source was written", "")
        ) from error
    svgs = _SVG.findall(out.decode("utf-8"))
    if len(svgs) != len(digraphs):
        raise RuntimeError(f"dot returned {len(svgs)} drawings for {len(digraphs)} graphs")
    return svgs


def _json_for_script(data: Any) -> str:
    """JSON that cannot end the ``<script>`` element it sits in (nor open a comment)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _page(title: str, data: dict[str, Any], svgs: list[str], forward_svg: str | None) -> str:
    script = _asset("explorer.js")
    style = _asset("explorer.css")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    # Only our own script may run: a name that smuggled markup into the page could not execute.
    policy = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:"
    )
    templates = "\n".join(f'<template id="view-{k}">{svg}</template>' for k, svg in enumerate(svgs))
    if forward_svg is not None:
        templates += f'\n<template id="forward-view">{forward_svg}</template>'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="data:,">
<style>
{style}
</style>
</head>
<body>
<header>
  <h1>{html.escape(title)}</h1>
  <div class="search">
    <input id="search" type="search" placeholder="Search nodes (name, parameter, #id)"
           autocomplete="off" aria-label="Search nodes">
    <ol id="results" hidden></ol>
  </div>
  <div class="player" role="group" aria-label="Backward pass player">
    <button id="first" title="Before the first step (Home)">|◀</button>
    <button id="prev" title="Previous step (←)">◀</button>
    <button id="play" title="Play / pause (space)">play</button>
    <button id="next" title="Next step (→)">▶</button>
    <button id="last" title="After the last step (End)">▶|</button>
    <span id="step-label">no step</span>
  </div>
  <div class="views" role="group" aria-label="View">
    <button id="show-backward" aria-pressed="true"
            title="The backward graph: the nodes autograd runs">backward graph</button>
    <button id="show-forward" aria-pressed="false"
            title="The forward graph: tensors as nodes, operations as edges">forward graph</button>
  </div>
</header>
<main>
  <section id="canvas">
    <nav id="crumbs" aria-label="Levels"></nav>
    <div class="zoom"><button id="fit" title="Fit the drawing">fit</button></div>
    <div id="stage"></div>
    <ul id="legend" aria-label="Legend">
      <li><span class="swatch active"></span>current step</li>
      <li><span class="swatch done"></span>done</li>
      <li><span class="swatch partial"></span>group partly done</li>
      <li><span class="swatch selected"></span>selected</li>
      <li><span class="swatch match"></span>search match</li>
    </ul>
  </section>
  <aside id="details" aria-live="polite"></aside>
</main>
{templates}
<script type="application/json" id="graph-data">{_json_for_script(data)}</script>
<script>{script}</script>
</body>
</html>
"""
