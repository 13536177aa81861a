"""Explain the chain rule from a live graph, as the seed articles derive it by hand.

For ``y = (x + w) * (w + 1)`` the first article writes::

    ∂y/∂w = ∂y/∂a · ∂a/∂w + ∂y/∂b · ∂b/∂w = b · 1 + a · 1 = (w + 1) + (x + w) = 2w + x + 1 = 5

:func:`explain` writes that derivation for the user's own program:

1. the sum over the graph's paths from the input to the output of the products of local
   derivatives, in Leibniz notation with the variables' names (the caller's local variables,
   as ``viz.forward_graph(names="auto")`` finds them);
2. each local derivative as a formula of the named values, from the op table's own derivative
   formulas run on symbols (:mod:`.explain_symbols`): ``∂(a·b)/∂a = b``; a chain of tensors
   nobody named is folded into one step (``Q = 3a³ − b²`` gives ``∂Q/∂a = 9a²``);
3. the named intermediates replaced by what they were computed from, then simplified;
4. the numbers substituted, and the value, which is checked against what backward computes.

Small tensors are explained element by element (:mod:`.explain_elements`: ``∂L/∂W₁₁`` along
the elements ``h₁₁ = tanh(W₁₁·x₁₁ + W₂₁·x₁₂)`` ...). Larger tensors, ops without an element
view, and graphs with too many paths to list (a deep network has 2ⁿ) are explained by the
per-variable recurrence instead:
``∂y/∂h₁ = ∂y/∂h₂ · ∂h₂/∂h₁``, each product a vector-Jacobian product (``ḡ`` is the gradient
arriving at a variable), with the numbers of each gradient and the same check.

Nothing of the user's graph, tensors or ``.grad`` changes (the gradients are computed as
:func:`viz.forward_graph` computes them). The graph must still hold its saved values (explain
before ``backward()``, or use ``backward(retain_graph=True)``); after a ``backward()`` that freed
them, the formulas that need them are replaced by their numbers where known.

SymPy (in the ``viz`` extra) writes and simplifies the formulas.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal

import numpy as np

from .._tensor import Tensor, wrap
from ..autograd.grad_mode import no_grad
from ..autograd.node import AccumulateGrad, ReleasedNumbers, is_released
from .forward import (
    DataNode,
    ForwardGraph,
    OpEdge,
    _sum_to,
    caller_tensor_names,
    format_value,
    forward_graph,
)
from .graph import BackwardGraph, walk

__all__ = ["explain", "Explanation", "Derivation"]

#: More paths than this from an input to the output: the recurrence is shown instead.
MAX_PATHS = 8
#: A chain nobody named is folded into one step unless its formula has more operations.
MAX_FOLDED_OPS = 24
#: Relative tolerance of the check against backward's number.
RTOL = 1e-4


@dataclass
class Derivation:
    """The derivation of one input's gradient.

    ``blocks``: equations, each a list of lines ``["∂y/∂w = ∂y/∂a · ∂a/∂w + …", "b · 1 + …",
    …]`` (the first line whole, the others each one more step after ``=``); ``latex`` the
    same in LaTeX; ``value`` the number derived; ``backward`` what autograd computes;
    ``matches`` whether they agree; ``locals`` the local derivatives used, as
    ``(text, latex)``.
    """

    input: str
    output: str
    mode: Literal["paths", "recurrence"]
    blocks: list[list[str]]
    latex: list[list[str]]
    value: np.ndarray | None
    backward: np.ndarray | None
    matches: bool | None
    locals: list[tuple[str, str]] = field(default_factory=list)  # (text, latex)
    #: Which input (its position in ``inputs``) and, element by element, which element.
    index: int = 0
    element: int | None = None
    #: The terms of the sum (a path's product, or in the recurrence one variable's step), each
    #: with the backward nodes (ids of ``viz.walk``'s graph) that compute it: the explorer
    #: lights a term once the backward pass has run all of them.
    terms: list[tuple[str, list[int]]] = field(default_factory=list)
    #: The input's backward node (its AccumulateGrad, or the node that made it) and output.
    key: tuple[int, int] = (0, 0)


class Explanation:
    """What :func:`explain` returns: ``derivations`` (one per input), ``notes``; ``str()`` is
    the text, :meth:`latex` the LaTeX (``_repr_latex_`` in notebooks)."""

    def __init__(self, output: str, derivations: list[Derivation], notes: list[str],
                 definitions: list[tuple[str, str]], shapes: list[tuple[int, ...]]) -> None:
        self.output = output
        self.shapes = shapes  # of the inputs
        self.derivations = derivations
        self.notes = notes
        self.definitions = definitions  # (text, latex) of each named intermediate: a = w + x

    def gradients(self) -> list[np.ndarray | None]:
        """The derived gradient of each input, assembled from its derivations (element by
        element, or whole); None where a derivation has no number."""
        found: dict[int, np.ndarray | None] = {}
        for d in self.derivations:
            if d.element is None:
                found[d.index] = None if d.value is None else np.asarray(d.value)
                continue
            if d.index not in found:
                found[d.index] = np.zeros(self.shapes[d.index])
            array = found[d.index]
            if array is not None:
                if d.value is None:
                    found[d.index] = None
                else:
                    array.reshape(-1)[d.element] = np.asarray(d.value).reshape(-1)[0]
        return [found.get(k) for k in range(len(self.shapes))]

    @property
    def all_match(self) -> bool:
        """Every derivation's number equals the gradient backward computes."""
        return all(d.matches for d in self.derivations)

    def __str__(self) -> str:
        lines: list[str] = []
        if self.definitions:
            lines.append("where " + ", ".join(text for text, _ in self.definitions))
            lines.append("")
        for d in self.derivations:
            if d.mode == "recurrence":
                lines.append(f"∂{d.output}/∂{d.input}, from the output down (each gradient "
                             "from the ones above it):")
            for block in d.blocks:
                lines.extend(_aligned(block))
            if d.locals:
                lines.append("  with " + d.locals[0][0])
                lines.extend("       " + text for text, _ in d.locals[1:])
            lines.append("  " + check_text(d))
            lines.append("")
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines).rstrip("\n")

    def __repr__(self) -> str:
        return str(self)

    def latex(self) -> str:
        """The derivations as LaTeX display math: one ``aligned`` block per input, in a
        ``gathered`` block (what ``_repr_latex_`` shows between ``$$``)."""
        blocks: list[str] = []
        if self.definitions:
            blocks.append(r"\text{where } " + r",\; ".join(tex for _, tex in self.definitions))
        for d in self.derivations:
            rows = []
            for first, *rest in d.latex:
                head, _, tail = first.partition(" = ")
                rows += [f"{head} &= {tail}"] + [f"&= {row}" for row in rest]
            blocks.append(r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}")
        return r"\begin{gathered}" + r" \\[1em] ".join(blocks) + r"\end{gathered}"

    def _repr_latex_(self) -> str:
        return "$$" + self.latex() + "$$"


def _aligned(lines: list[str]) -> list[str]:
    """The first line as it is, the others under its ``=``."""
    if not lines:
        return []
    first = lines[0]
    pad = " " * first.index(" = ") if " = " in first else ""
    return [first] + [f"{pad} = {line}" for line in lines[1:]]


def check_text(d: Derivation) -> str:
    """The line saying whether the derivation's number equals what backward computes."""
    if d.value is None:
        return ("no number: a value or a constant of the graph is not known (explain before "
                "backward() frees the graph, or name the tensors)")
    if d.backward is None:
        return "not checked: backward's gradient is not available (the graph was freed)"
    shown = format_value(d.backward).replace("-", "−")
    if d.matches:
        return f"✓ equals what backward computes: ∂{d.output}/∂{d.input} = {shown}"
    return f"✗ differs from what backward computes: ∂{d.output}/∂{d.input} = {shown}"


def explain(
    output: Tensor,
    inputs: Tensor | Sequence[Tensor] | None = None,
    names: Literal["auto"] | Mapping[str, Tensor] | None = "auto",
    *,
    _frame_depth: int = 1,
) -> Explanation:
    """Derive ``∂output/∂input`` for each input along the graph, as the seed articles do.

    ``inputs``: the tensors to differentiate by (default: every leaf of the graph that
    requires grad). ``names``: ``"auto"`` names tensors by the caller's local variables, a
    mapping ``{name: tensor}`` names them explicitly, None names none (``#3``: the backward
    node's id). See the module docstring for what is shown.

    Example:
        >>> import chainrule as torch
        >>> a = torch.tensor(2., requires_grad=True)
        >>> b = torch.tensor(6., requires_grad=True)
        >>> Q = 3 * a**3 - b**2
        >>> print(torch.autograd.explain(Q).derivations[0].blocks[0][-1])
        36
    """
    import sympy  # noqa: F401 - the optional dependency: fail here, with its own message

    from . import explain_symbols as sym

    if not isinstance(output, Tensor):
        raise TypeError(f"explain() expects a Tensor output, got {type(output).__name__}")
    if isinstance(names, str) and names != "auto":
        raise ValueError(
            f"names must be 'auto', a mapping of names to tensors or None, got {names!r}"
        )
    named = caller_tensor_names(_frame_depth + 1) if names == "auto" else dict(names or {})
    fg = forward_graph(output, names=named, values=True, gradients=True)
    graph = walk(output)
    return _Explainer(fg, graph, output, inputs, named, sym).run()


class _Explainer:
    """Builds the derivations of one :func:`explain` call."""

    def __init__(self, fg: ForwardGraph, graph: BackwardGraph, output: Tensor,
                 inputs: Tensor | Sequence[Tensor] | None, named: dict[str, Tensor],
                 sym: Any) -> None:
        self.named = named
        self.fg = fg
        self.graph = graph
        self.sym = sym
        self.sp = sym.sp
        # (forward_graph's notes on gradients of intermediates do not apply here)
        # (values of tensors folded into a formula are not needed; a derivation that lacks
        # a number says so itself)
        self.notes = [n for n in fg.notes
                      if not n.startswith(("gradient not available", "value not kept"))]
        self.data = fg.nodes
        self.by_key = {d.key: d for d in fg.nodes}
        self.into: dict[int, list[OpEdge]] = {}
        for e in fg.edges:
            self.into.setdefault(e.target, []).append(e)
        for edges in self.into.values():
            edges.sort(key=lambda e: e.slot)
        self.out = self._data_of(output)
        if self.out is None:
            raise ValueError("explain(): the output is not part of its own graph")
        self.inputs = self._inputs(inputs)
        self.input_shapes = [tuple(t.shape) for t in self.input_tensors]
        self.G = self.sp.Symbol("ḡ")

    # ---------------------------------------------------------------- structure
    def _data_of(self, t: Tensor) -> DataNode | None:
        fn = t.grad_fn
        if fn is not None:
            i = self.graph.index.get(fn)
            return None if i is None else self.by_key.get((i, t.output_nr))
        acc = t._acc() if callable(t._acc) else None
        i = self.graph.index.get(acc) if acc is not None else None
        return None if i is None else self.by_key.get((i, 0))

    def _inputs(self, inputs: Tensor | Sequence[Tensor] | None) -> list[DataNode]:
        self.unused: list[tuple[int, Tensor]] = []  # inputs the output does not depend on
        if inputs is None:
            leaves = [d for d in self.data if d.kind == "leaf"]
            self.input_tensors = [self.fg_tensor(d) for d in leaves]
            return leaves
        tensors = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        self.input_tensors = tensors
        found: list[DataNode] = []
        for k, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"explain(): inputs[{k}] is not a Tensor")
            d = self._data_of(t)
            if d is None and t.requires_grad and t.is_leaf:
                self.unused.append((k, t))
            elif d is None:
                raise RuntimeError(
                    f"explain(): input {k} is not part of the graph of the output (it does not "
                    "require grad, or the output was not computed from it)"
                )
            else:
                found.append(d)
        return found

    def fg_tensor(self, d: DataNode) -> Tensor:
        """The leaf tensor of data node ``d``."""
        return self.graph.nodes[d.key[0]].variable

    def _is_variable(self, d: DataNode) -> bool:
        """A tensor the derivation names: every tensor unless chains are folded, else the
        named ones, the leaves, the output and the inputs asked for."""
        return not self.fold or bool(d.name) or d.kind != "intermediate" or d in self.inputs

    # ---------------------------------------------------------------- symbols
    def run(self) -> Explanation:
        sp = self.sp
        # One-element tensors: local derivatives are numbers, written as formulas and checked
        # against the node's own; chains nobody named fold into one step unless that makes
        # the formulas long (then every tensor is a variable, named by its node: #3).
        self.scalar = all(int(np.prod(d.shape)) == 1 for d in self.data)
        if not self.scalar:  # small tensors: element by element, where the ops allow
            from .explain_elements import element_explanation

            explanation = element_explanation(self)
            if explanation is not None:
                return explanation
        self.fold = self.scalar
        self.constants: dict[tuple[int, str], Any] = {}  # numbers nobody saved: symbols c, c2
        self.solved: dict[tuple[int, str], Any] = {}  # ... and those found from the values
        self._assign_symbols()
        if self.scalar and self.constants and self._solve_constants():
            self._assign_symbols()
        if self.fold and any(sp.count_ops(self.symbols[d.id]) > MAX_FOLDED_OPS
                             for d in self.data if not self._is_variable(d)):
            self.fold = False
            self._assign_symbols()
        self.locals = {id(e): self._local(e) for e in self.fg.edges}
        definitions = self._definitions()
        self.segment_nodes: dict[tuple[int, int], set[int]] = {}
        self.segments = {d.id: self._segment(d) for d in self.data
                         if self._is_variable(d) and d.id in self.into}
        derivations = [self._derive(x) for x in self.inputs]
        for k, t in self.unused:
            derivations.insert(k, self._unused(t))
        for k, d in enumerate(derivations):
            d.index = k
        return Explanation(self.out.label, derivations, self.notes, definitions,
                           self.input_shapes)

    def _definitions(self) -> list[tuple[str, str]]:
        """``a = w + x`` for each named intermediate, as text and LaTeX."""
        definitions = []
        for d in self.data:
            if d.kind != "leaf" and d.id in self.into and self._is_variable(d):
                expression = self._forward(d)
                definitions.append((f"{d.label} = {self.sym.to_text(expression)}",
                                    f"{self.sym.latex_name(d.label)} = "
                                    f"{self.sym.to_latex(expression)}"))
        return definitions

    def _assign_symbols(self) -> None:
        sp = self.sp
        self.symbols: dict[int, Any] = {}   # data id -> symbol (variables) or expression
        self.values: dict[Any, float] = {}  # variable symbol -> its number (one element)
        for d in self.data:  # forward order: each node after its inputs
            if self._is_variable(d):
                s = sp.Symbol(d.label, real=True)
                self.symbols[d.id] = s
                if d.value is not None and d.value.size == 1:
                    self.values[s] = float(d.value.reshape(-1)[0])
            else:
                self.symbols[d.id] = self._forward(d)

    def _unused(self, t: Tensor) -> Derivation:
        """An input the output was not computed from: its derivative is zero."""
        label = next((n for n, v in self.named.items() if v is t), "input")
        zero = np.zeros(tuple(t.shape))
        line = f"∂{self.out.label}/∂{label} = 0"
        self.notes.append(f"{self.out.label} does not depend on {label}: no path joins them")
        return Derivation(label, self.out.label, "paths", [[line]], [[_latex_text(line)]],
                          zero, zero, True)

    def _operands(self, d: DataNode) -> list[Any]:
        """The symbols of ``d``'s operation's inputs, a number where the op took one."""
        edges = self.into.get(d.id, [])
        i = d.key[0]
        node = self.graph.nodes[i]
        op = getattr(node, "_op", None)
        n = len(op.input_names) if op is not None else len(edges)
        operands: list[Any] = [None] * max(n, len(edges) and max(e.slot for e in edges) + 1)
        for e in edges:
            operands[e.slot] = self.symbols[e.source]
        for k, value in enumerate(operands):
            if value is None and op is not None and k < len(op.input_names):
                operands[k] = self._constant(d, op.input_names[k], edges)
        return operands

    def _saved_numbers(self, i: int) -> dict[str, Any]:
        node = self.graph.nodes[i]
        saved_values = getattr(node, "saved_values", None)
        try:
            saved = saved_values() if saved_values is not None else {}
        except RuntimeError:
            saved = {}
        released = getattr(node, "_saved", None)
        if isinstance(released, ReleasedNumbers):  # what a backward pass left readable
            saved = {node._op.param_names[p]: v for p, v in released.numbers.items()}
        numbers = {k: v for k, v in saved.items()
                   if isinstance(v, int | float) and not isinstance(v, bool)}
        for key in ("alpha", "exponent", "other"):
            try:
                value = getattr(node, f"_saved_{key}", None) if key not in numbers else None
            except RuntimeError:  # freed by backward(); numbers are kept where PyTorch keeps
                value = None
            if isinstance(value, int | float) and not isinstance(value, bool):
                numbers[key] = value
        return numbers

    def _constant(self, d: DataNode, input_name: str, edges: list[OpEdge]) -> Any:
        """A number the op took in place of a tensor input: saved (``3 * t``), or recovered
        from the values (``w + 1``: the output minus the other operand), or a symbol ``c``."""
        sp = self.sp
        numbers = self._saved_numbers(d.key[0])
        if input_name in numbers:
            return self.sym.as_sympy_number(numbers[input_name])
        stem = _stem(d.node_name)
        if stem in ("Add", "Sub") and len(edges) == 1 and d.value is not None:
            other = self.data[edges[0].source].value
            if other is not None and d.value.size == 1 and other.size == 1:
                alpha = numbers.get("alpha", 1)
                out, x = float(d.value.reshape(-1)[0]), float(other.reshape(-1)[0])
                if edges[0].slot == 0:
                    c = (out - x) / alpha if stem == "Add" else (x - out) / alpha
                else:
                    c = out - alpha * x if stem == "Add" else out + alpha * x
                if float(c).is_integer() or abs(c - round(c, 4)) < 1e-9:
                    return self.sym.as_sympy_number(float(round(c, 4)))
        key = (d.key[0], input_name)
        if key in self.solved:
            return self.solved[key]
        if key not in self.constants:
            n = len(self.constants)
            self.constants[key] = sp.Symbol("c" + (str(n + 1) if n else ""), real=True)
        return self.constants[key]

    def _solve_constants(self) -> bool:
        """Numbers nobody saved (``w + 1`` keeps no 1), found from the values: a variable's
        known value equals its formula, which has that one unknown. True if any was found."""
        sp = self.sp
        by_symbol = {s: key for key, s in self.constants.items()}
        found = False
        for d in self.data:
            if d.kind == "leaf" or d.id not in self.into or not self._is_variable(d) \
                    or d.value is None or d.value.size != 1:
                continue
            expression = self.sym.evaluable(self._forward(d)).xreplace(
                {s: sp.Float(v) for s, v in self.values.items()})
            unknown = expression.free_symbols & set(by_symbol)
            if len(unknown) != 1 or expression.free_symbols - unknown:
                continue
            (c,) = unknown
            try:
                roots = [r for r in sp.solve(sp.Eq(expression, float(d.value.reshape(-1)[0])), c)
                         if r.is_real]
            except (NotImplementedError, TypeError, ValueError):
                continue
            if len(roots) == 1:
                number = float(roots[0])
                rounded = float(f"{number:.6g}")
                self.solved[by_symbol[c]] = self.sym.as_sympy_number(rounded)
                found = True
        return found

    def _forward(self, d: DataNode) -> Any:
        numbers = self._saved_numbers(d.key[0])
        return self.sym.forward_expression(_stem(d.node_name), self._operands(d), numbers)

    def _local(self, e: OpEdge) -> Any | None:
        """The op table's derivative of edge ``e`` as an expression (None if not symbolic):
        ``∂target/∂source`` for one element, or the VJP in ``ḡ`` otherwise."""
        sp = self.sp
        node = self.graph.nodes[e.node]
        op = getattr(node, "_op", None)
        if op is None or type(node) is AccumulateGrad or getattr(node, "_n_out", 1) != 1:
            return None
        derivative = op.derivatives[e.slot] if e.slot < len(op.derivatives) else None
        if derivative is None:
            return None
        target = self.data[e.target]
        operands = self._operands(target)
        numbers = self._saved_numbers(e.node)
        args = []
        for name in list(inspect.signature(derivative.fn).parameters)[2:]:
            if name == "result":
                args.append(self.symbols[target.id])
            elif name in op.input_names:
                args.append(operands[op.input_names.index(name)])
            elif name in numbers:
                args.append(numbers[name])
            elif name.endswith("_shape") and name[:-6] in op.input_names:
                slot = op.input_names.index(name[:-6])
                source = [x for x in self.into[target.id] if x.slot == slot]
                if not source:
                    return None
                args.append(self.data[source[0].source].shape)
            else:
                return None
        try:
            vjp = derivative.fn(self.sym.SYMBOLIC_OPS, self.G, *args)
            vjp = sp.sympify(vjp)
        except Exception:  # noqa: BLE001 - a formula for arrays only: shown by its number
            return None
        if vjp.has(sp.Function) and any(
            not hasattr(sp, type(f).__name__) and type(f).__name__ not in ("σ", "relu")
            for f in vjp.atoms(sp.Function)
        ):
            return None
        if not self.scalar:
            return vjp
        local = vjp / self.G  # (SymPy cancels ḡ in the products the formulas are)
        if local.has(self.G):
            return None
        # Checked against the node's own number; after backward() freed the graph there is
        # none, and the derivation's value is checked against .grad instead.
        expected = e.derivative if e.derivative is not None else self._local_number(e)
        if expected is not None:
            got = self.sym.numeric_value(local, self.values)
            if got is None or not _close(got, float(expected.reshape(-1)[0])):
                return None
        return local

    def _local_number(self, e: OpEdge) -> np.ndarray | None:
        """The node run on a gradient of one (``∂target/∂source`` for one element)."""
        target = self.data[e.target]
        if target.value is None:
            return None
        out = _run_node(self.graph.nodes[e.node], np.ones_like(target.value))
        return None if out is None or e.slot >= len(out) else out[e.slot]

    def _segment(self, v: DataNode) -> dict[int, Any]:
        """``{u: ∂v/∂u}`` for the variables ``u`` that ``v`` is computed from directly or
        through tensors nobody named (reverse accumulation over those; no recursion). The
        backward nodes each one goes through are kept in ``segment_nodes[(v, u)]``."""
        sp = self.sp
        adjoint: dict[int, Any] = {v.id: sp.Integer(1)}
        through: dict[int, set[int]] = {v.id: set()}
        found: dict[int, Any] = {}
        for d in reversed(self.data[: v.id + 1]):
            if d.id not in adjoint or (d.id != v.id and self._is_variable(d)):
                continue
            for e in self.into.get(d.id, []):
                local = self.locals[id(e)]
                term = None if local is None or adjoint[d.id] is None else adjoint[d.id] * local
                source = self.data[e.source]
                nodes = through[d.id] | {e.node}
                if self._is_variable(source):
                    found[e.source] = None if term is None or found.get(e.source, 0) is None \
                        else found.get(e.source, 0) + term
                    self.segment_nodes.setdefault((v.id, e.source), set()).update(nodes)
                adjoint[e.source] = None if term is None or adjoint.get(e.source, 0) is None \
                    else adjoint.get(e.source, 0) + term
                through.setdefault(e.source, set()).update(nodes)
        return found

    # ---------------------------------------------------------------- derivations
    def _paths(self, x: DataNode) -> list[list[int]] | None:
        """The variable paths from the output down to ``x`` (None: more than MAX_PATHS)."""
        count: dict[int, int] = {x.id: 1}
        for d in self.data[x.id + 1:]:
            if d.id in self.segments:
                count[d.id] = sum(count.get(u, 0) for u in self.segments[d.id])
        if count.get(self.out.id, 0) > MAX_PATHS:
            return None
        paths: list[list[int]] = []
        stack = [[self.out.id]]
        while stack:
            path = stack.pop()
            if path[-1] == x.id:
                paths.append(path)
                continue
            for u in sorted(self.segments.get(path[-1], {}), reverse=True):
                if count.get(u, 0):
                    stack.append(path + [u])
        return paths

    def _derive(self, x: DataNode) -> Derivation:
        backward = self.fg.nodes[x.id].grad
        paths = self._paths(x) if self.scalar else None
        if paths is not None and self._symbolic(paths):
            return self._derive_paths(x, paths, backward)
        return self._derive_recurrence(x, backward)

    def _symbolic(self, paths: list[list[int]]) -> bool:
        return all(self.segments[v][u] is not None for p in paths for v, u in pairwise(p))

    def _leibniz(self, v: int, u: int, latex: bool = False) -> str:
        top, bottom = self.data[v].label, self.data[u].label
        if latex:
            n = self.sym.latex_name
            return rf"\frac{{\partial {n(top)}}}{{\partial {n(bottom)}}}"
        return f"∂{top}/∂{bottom}"

    def _derive_paths(self, x: DataNode, paths: list[list[int]],
                      backward: np.ndarray | None) -> Derivation:
        sp, sym = self.sp, self.sym
        y = self.out
        factors = [[self.segments[v][u] for v, u in pairwise(p)] for p in paths]
        text = [f"∂{y.label}/∂{x.label}"]
        tex = [self._leibniz(y.id, x.id, latex=True)]
        if len(paths) == 1 and len(paths[0]) == 2:
            expression = self._forward(y)
            leibniz = f"∂({sym.to_text(expression)})/∂{x.label}"
            leibniz_tex = rf"\frac{{\partial \left({sym.to_latex(expression)}\right)}}" \
                          rf"{{\partial {sym.latex_name(x.label)}}}"
        else:
            leibniz = " + ".join(" · ".join(self._leibniz(v, u) for v, u in pairwise(p))
                                 for p in paths)
            leibniz_tex = " + ".join(r" \cdot ".join(self._leibniz(v, u, True)
                                                      for v, u in pairwise(p)) for p in paths)
        text[0] += f" = {leibniz}"
        tex[0] += f" = {leibniz_tex}"
        text.append(_sum_of_products(factors, sym.to_text, " · "))
        tex.append(_sum_of_products(factors, sym.to_latex, r" \cdot "))
        # The named intermediates replaced by what they were computed from, and the sum
        # simplified, where that gives a polynomial (the seed: 2w + x + 1); the numbers are
        # then put into it, else into the local formulas themselves.
        full = self._in_leaves()
        terms = [sp.Mul(*[f.xreplace(full) for f in fs]) for fs in factors]
        total = sp.Add(*terms)
        expanded = sp.expand(total)
        if expanded.is_polynomial(*expanded.free_symbols):
            substituted = _sum_of_products([[t] for t in terms], sym.to_text, " · ")
            if substituted != text[-1]:
                text.append(substituted)
                tex.append(_sum_of_products([[t] for t in terms], sym.to_latex, r" \cdot "))
            total = expanded
            if sym.to_text(total) != text[-1]:
                text.append(sym.to_text(total))
                tex.append(sym.to_latex(total))
            numbers = {s: v for s, v in self.values.items() if s in total.free_symbols}
            if numbers:
                text.append(sym.to_text(total, numbers))
                tex.append(sym.to_latex(total, numbers))
        elif self.values:
            text.append(_sum_of_products(factors, lambda f: sym.to_text(f, self.values), " · "))
            tex.append(_sum_of_products(factors, lambda f: sym.to_latex(f, self.values),
                                        r" \cdot "))
        value = sym.numeric_value(total, self.values)
        derived = None if value is None else np.array([value])
        shown = format_value(derived).replace("-", "−")
        if shown != text[-1]:
            text.append(shown)
            tex.append(shown.replace("−", "-"))
        locals_shown = []
        for p in paths:
            for v, u in pairwise(p):
                local, expression = self.segments[v][u], self._forward(self.data[v])
                entry = (f"{self._leibniz(v, u)} = ∂({sym.to_text(expression)})/"
                         f"∂{self.data[u].label} = {sym.to_text(local)}",
                         f"{self._leibniz(v, u, True)} = {sym.to_latex(local)}")
                if entry not in locals_shown:
                    locals_shown.append(entry)
        terms = []
        for p, fs in zip(paths, factors, strict=True):
            nodes = set().union(*(self.segment_nodes.get((v, u), set()) for v, u in pairwise(p)))
            leibniz_term = " · ".join(self._leibniz(v, u) for v, u in pairwise(p))
            terms.append((f"{leibniz_term} = {_sum_of_products([fs], sym.to_text, ' · ')}",
                          sorted(nodes)))
        return Derivation(x.label, y.label, "paths", [text], [tex], derived, backward,
                          _matches(derived, backward), locals_shown, terms=terms, key=x.key)

    def _in_leaves(self) -> dict[Any, Any]:
        """Each named intermediate's symbol -> its expression in the leaves."""
        full: dict[Any, Any] = {}
        for d in self.data:
            if d.kind != "leaf" and d.id in self.into and self._is_variable(d) \
                    and d.id != self.out.id:
                full[self.symbols[d.id]] = self._forward(d).xreplace(full)
        return full

    def _derive_recurrence(self, x: DataNode, backward: np.ndarray | None) -> Derivation:
        """``∂y/∂v`` for every variable on the way from the output down to ``x``, each from
        the ones above it (vector-Jacobian products for tensors), checked by running each
        node by hand on the gradients above it."""
        y = self.out
        reach = self._reaching(x)
        consumers: dict[int, list[tuple[int, Any]]] = {}
        for v, segment in self.segments.items():
            for u, local in segment.items():
                consumers.setdefault(u, []).append((v, local))
        blocks: list[list[str]] = []
        terms: list[tuple[str, list[int]]] = []
        done: dict[int, np.ndarray | None] = {y.id: y.grad}
        for d in reversed(self.data):
            if d.id == y.id or d.id not in reach or d.id not in consumers:
                continue
            uses = [(v, local) for v, local in consumers[d.id] if v in reach]
            parts = [self._leibniz(v, d.id) if v == y.id
                     else f"∂{y.label}/∂{self.data[v].label} · {self._leibniz(v, d.id)}"
                     for v, _ in uses]
            if parts == [self._leibniz(y.id, d.id)]:  # straight from the output: its formula
                parts = [f"∂({self.sym.to_text(self._forward(y))})/∂{d.label}"]
            formulas = " + ".join(self._vjp_text(v, d, local) for v, local in uses)
            value = self._recompute(d, uses, done)
            done[d.id] = value
            blocks.append([f"∂{y.label}/∂{d.label} = " + " + ".join(parts), formulas,
                           format_value(value).replace("-", "−")])
            nodes = set().union(*(self.segment_nodes.get((v, d.id), set()) for v, _ in uses))
            terms.append((blocks[-1][0], sorted(nodes)))
        derived = done.get(x.id)
        latex = [[_latex_text(line) for line in block] for block in blocks]
        return Derivation(x.label, y.label, "recurrence", blocks, latex, derived, backward,
                          _matches(derived, backward), terms=terms, key=x.key)

    def _reaching(self, x: DataNode) -> set[int]:
        """The variables on some path from ``x`` up to the output."""
        up: dict[int, list[int]] = {}
        for v, segment in self.segments.items():
            for u in segment:
                up.setdefault(u, []).append(v)
        seen = {x.id}
        stack = [x.id]
        while stack:
            for v in up.get(stack.pop(), []):
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return seen

    def _vjp_text(self, v: int, d: DataNode, local: Any) -> str:
        g = f"ḡ{_subscript(self.data[v].label)}"
        stem = _stem(self.data[v].node_name)
        if not self.scalar and not self.sym.is_elementwise(stem):
            local = None  # a formula of whole tensors: written as the node's VJP
        if local is None:
            node = self.graph.nodes[self.data[v].key[0]]
            return f"vjp[{type(node).__name__}]({g})"
        gradient = self.sp.Symbol(g)
        text = self.sym.to_text(local * gradient if self.scalar
                                else local.xreplace({self.G: gradient}))
        if self.data[v].shape != d.shape:
            text = f"sum_to{list(d.shape)}({text})"
        return text

    def _recompute(self, d: DataNode, uses: list[tuple[int, Any]],
                   done: dict[int, np.ndarray | None]) -> np.ndarray | None:
        """``∂y/∂d`` from the gradients of its consumers, each node run by hand on the
        consumer's gradient (through tensors nobody named): the check of the recurrence."""
        total: np.ndarray | None = None
        for v, _ in uses:
            grad = done.get(v)
            if grad is None:
                return None
            part = self._vjp_number(v, d.id, grad)
            if part is None:
                return None
            total = part if total is None else total + part
        return total

    def _vjp_number(self, v: int, u: int, grad: np.ndarray) -> np.ndarray | None:
        """The part of ``∂y/∂u`` that comes through variable ``v``: reverse accumulation of
        ``grad`` from ``v`` over the tensors nobody named, down to ``u``."""
        adjoint: dict[int, np.ndarray] = {v: grad}
        result: np.ndarray | None = None
        for d in reversed(self.data[: v + 1]):
            if d.id not in adjoint or (d.id != v and self._is_variable(d)):
                continue
            by_node: dict[int, list[OpEdge]] = {}
            for e in self.into.get(d.id, []):
                by_node.setdefault(e.node, []).append(e)
            for i, edges in by_node.items():
                out = _run_node(self.graph.nodes[i], adjoint[d.id])
                if out is None:
                    return None
                for e in edges:
                    if e.slot >= len(out) or out[e.slot] is None:
                        continue
                    part = _sum_to(out[e.slot], self.data[e.source].shape)
                    if e.source == u:
                        result = part if result is None else result + part
                    elif not self._is_variable(self.data[e.source]):
                        previous = adjoint.get(e.source)
                        adjoint[e.source] = part if previous is None else previous + part
        return result


def _stem(node_name: str) -> str:
    cut = node_name.find("Backward")
    return node_name[:cut] if cut > 0 else node_name


def _subscript(name: str) -> str:
    return "_" + name if name else ""


def _latex_text(line: str) -> str:
    head, _, tail = line.partition(" = ")
    text = (tail or head).replace("_", r"\_").replace("#", r"\#")
    return (r"\text{" + head.replace("#", r"\#") + "} = " if tail else "") + r"\text{" + text + "}"


def _sum_of_products(factors: list[list[Any]], write: Any, times: str) -> str:
    """``f₁ · f₂ + g₁ · g₂``: sums inside a product, and in a sum of several terms, in
    parentheses."""
    terms = []
    for fs in factors:
        parts = []
        for f in fs:
            text = write(f)
            if f.is_Add and (len(fs) > 1 or len(factors) > 1):
                text = f"({text})" if times == " · " else rf"\left({text}\right)"
            parts.append(text)
        terms.append(times.join(parts))
    joined = " + ".join(terms)
    return joined.replace("+ −", "− ").replace("+ -", "- ")


def _run_node(node: Any, grad: np.ndarray) -> tuple[Any, ...] | None:
    """A backward node applied to one gradient, as arrays (no hooks, nothing recorded)."""
    if getattr(node, "_n_out", 1) != 1 or is_released(getattr(node, "_saved", None)):
        return None
    try:
        with no_grad():
            result = node(wrap(np.asarray(grad)))
    except (RuntimeError, TypeError, ValueError):
        return None
    result = result if isinstance(result, tuple) else (result,)
    return tuple(None if r is None else np.asarray(r._data if isinstance(r, Tensor) else r)
                 for r in result)


def _close(a: float, b: float) -> bool:
    return bool(np.isclose(a, b, rtol=RTOL, atol=1e-6, equal_nan=True))


def _matches(derived: np.ndarray | None, backward: np.ndarray | None) -> bool | None:
    if derived is None or backward is None:
        return None
    derived = np.asarray(derived, dtype=np.float64)
    backward = np.asarray(backward, dtype=np.float64)
    if derived.size != backward.size:
        return False
    return bool(np.allclose(derived.reshape(-1), backward.reshape(-1), rtol=RTOL, atol=1e-5,
                            equal_nan=True))
