""":func:`.explain` per element, for small tensors: each element a variable of its own
(``w₁``, ``W₁₂``), so the derivation of ``∂L/∂w₂`` is written as for one-element tensors.

The graph of tensors becomes a graph of elements: an element-wise op joins each output element
to the input elements broadcasting reads it from, a reduction or view to the elements it reads
(the coefficients from the node's own vector-Jacobian products on unit gradients), a matrix
product ``c₁₂ = a₁₁·b₁₂ + a₁₂·b₂₂`` to the rows and columns it multiplies. Element-wise ops use
the op table's formulas exactly as for one-element tensors; the others are checked against the
node's numbers too. Any op outside these, a tensor of more than :data:`MAX_ELEMENTS` elements,
a freed graph, or a derivation with too many paths: no per-element derivation (None), and
:func:`.explain` derives by vector-Jacobian products instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .explain import Explanation, _Explainer, _run_node, _stem
from .forward import DataNode, OpEdge, _sum_to

__all__ = ["element_explanation", "MAX_ELEMENTS"]

#: Tensors up to this many elements are explained element by element.
MAX_ELEMENTS = 6
#: ... and graphs up to this many elements in all.
MAX_TOTAL = 60

_LINEAR = ("Sum", "Mean", "View", "Reshape", "UnsafeView", "Expand", "T", "Transpose",
           "Permute", "Squeeze", "Unsqueeze", "Select", "Slice", "Clone", "Alias")
_PRODUCTS = ("Mm", "Mv", "Dot")
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


class _NotElementwise(Exception):
    """The graph cannot be explained element by element."""


def element_explanation(ex: _Explainer) -> Explanation | None:
    """The per-element explanation of what ``ex`` explains, or None (see the module)."""
    try:
        return _ElementExplainer(ex).run()
    except _NotElementwise:
        return None


def _element_label(label: str, shape: tuple[int, ...], flat: int) -> str:
    if len(shape) == 0 or int(np.prod(shape)) == 1:
        return label
    index = np.unravel_index(flat, shape)
    if all(i < 9 for i in index):
        return label + "".join(str(i + 1) for i in index).translate(_SUBSCRIPT)
    return f"{label}[{','.join(str(i + 1) for i in index)}]"


class _ElementExplainer(_Explainer):
    """:class:`_Explainer` over the graph of elements built from ``base``'s graph."""

    def __init__(self, base: _Explainer) -> None:
        sizes = [int(np.prod(d.shape)) for d in base.data]
        if max(sizes) > MAX_ELEMENTS or sum(sizes) > MAX_TOTAL or base.out.value is None \
                or base.out.value.size != 1:
            raise _NotElementwise
        self.base = base
        self.named = base.named
        self.fg = base.fg
        self.graph = base.graph
        self.sym = base.sym
        self.sp = base.sp
        self.notes = base.notes
        self.G = base.G
        self.unused = base.unused
        self.elements: dict[tuple[int, int], DataNode] = {}  # (tensor id, flat) -> element
        self.data: list[DataNode] = []
        for d, size in zip(base.data, sizes, strict=True):
            if d.value is None:
                raise _NotElementwise
            for flat in range(size):
                label = _element_label(d.label, d.shape, flat)
                grad = None if d.grad is None else np.asarray(d.grad).reshape(-1)[flat]
                element = DataNode(len(self.data), d.key, label if (d.name or d.kind !=
                                   "intermediate") else "", d.kind, (), d.dtype, d.node_name,
                                   np.asarray(d.value).reshape(-1)[flat], grad)
                self.elements[(d.id, flat)] = element
                self.data.append(element)
        self.structural: dict[int, Any] = {}  # id(edge) -> local derivative of a non-element-
        self.sums: dict[int, list[tuple[OpEdge, ...]]] = {}  # wise op; element -> its terms
        self.edges: list[OpEdge] = []
        self._build_edges(base)
        self.into = {}
        for e in self.edges:
            self.into.setdefault(e.target, []).append(e)
        self.out = self.elements[(base.out.id, 0)]
        # The inputs' elements, each with (position among the used inputs, flat index).
        self.inputs = [self.elements[(x.id, k)] for x in base.inputs
                       for k in range(int(np.prod(x.shape)))]
        self.input_elements = [(n, k) for n, x in enumerate(base.inputs)
                               for k in range(int(np.prod(x.shape)))]

    # ----------------------------------------------------------------- the element graph
    def _build_edges(self, base: _Explainer) -> None:
        for t in base.data:
            incoming = base.into.get(t.id, [])
            if not incoming:
                continue
            stem = _stem(t.node_name)
            node = base.graph.nodes[incoming[0].node]
            if getattr(node, "_n_out", 1) != 1:
                raise _NotElementwise
            jacobians = self._jacobians(node, t, incoming)
            if self.sym.is_elementwise(stem):
                self._elementwise_edges(t, incoming, jacobians)
            elif stem in _LINEAR:
                self._linear_edges(t, incoming, jacobians)
            elif stem in _PRODUCTS:
                self._product_edges(t, incoming, jacobians)
            else:
                raise _NotElementwise

    def _jacobians(self, node: Any, t: DataNode, incoming: list[OpEdge]) -> dict[int, np.ndarray]:
        """``{slot: J}`` with ``J[j, i] = ∂t_j/∂source_i``, from the node run on unit
        gradients (None on a freed graph: no per-element derivation)."""
        size = int(np.prod(t.shape))
        rows: dict[int, list[np.ndarray]] = {e.slot: [] for e in incoming}
        for j in range(size):
            unit = np.zeros(t.shape, dtype=np.asarray(t.value).dtype)
            unit.reshape(-1)[j] = 1
            out = _run_node(node, unit)
            if out is None:
                raise _NotElementwise
            for e in incoming:
                source = self.base.data[e.source]
                part = out[e.slot] if e.slot < len(out) else None
                if part is None:
                    raise _NotElementwise
                rows[e.slot].append(_sum_to(np.asarray(part), source.shape).reshape(-1))
        return {slot: np.array(r, dtype=np.float64) for slot, r in rows.items()}

    def _add(self, source: DataNode, target: DataNode, e: OpEdge, value: float) -> OpEdge:
        edge = OpEdge(source.id, target.id, e.op, e.node, e.slot, np.asarray([value]))
        self.edges.append(edge)
        return edge

    def _elementwise_edges(self, t: DataNode, incoming: list[OpEdge],
                           jacobians: dict[int, np.ndarray]) -> None:
        for e in incoming:
            s = self.base.data[e.source]
            index = np.broadcast_to(np.arange(int(np.prod(s.shape))).reshape(s.shape), t.shape)
            for j, i in enumerate(index.reshape(-1).tolist()):
                self._add(self.elements[(s.id, i)], self.elements[(t.id, j)], e,
                          jacobians[e.slot][j, i])

    def _linear_edges(self, t: DataNode, incoming: list[OpEdge],
                      jacobians: dict[int, np.ndarray]) -> None:
        for e in incoming:
            s = self.base.data[e.source]
            jacobian = jacobians[e.slot]
            for j in range(jacobian.shape[0]):
                for i in np.flatnonzero(jacobian[j]).tolist():
                    edge = self._add(self.elements[(s.id, i)], self.elements[(t.id, j)], e,
                                     jacobian[j, i])
                    self.structural[id(edge)] = self.sp.nsimplify(jacobian[j, i],
                                                                  rational=True)

    def _product_edges(self, t: DataNode, incoming: list[OpEdge],
                       jacobians: dict[int, np.ndarray]) -> None:
        """``mm``/``mv``/``dot``: ``t[i, j] = Σ_k a[i, k] · b[k, j]``, each term's local
        derivative the other factor's element."""
        if len(incoming) != 2 or any(e.slot not in (0, 1) for e in incoming):
            raise _NotElementwise
        a, b = (self.base.data[e.source] for e in sorted(incoming, key=lambda e: e.slot))
        edge_a, edge_b = sorted(incoming, key=lambda e: e.slot)
        a_shape = a.shape if len(a.shape) == 2 else (1, *a.shape)
        b_shape = b.shape if len(b.shape) == 2 else (*b.shape, 1)
        rows, inner = a_shape
        cols = b_shape[1]
        for i in range(rows):
            for j in range(cols):
                out_flat = i * cols + j
                target = self.elements[(t.id, out_flat)]
                for k in range(inner):
                    a_flat = i * inner + k
                    b_flat = k * cols + j
                    ea = self._add(self.elements[(a.id, a_flat)], target, edge_a,
                                   jacobians[0][out_flat, a_flat])
                    eb = self._add(self.elements[(b.id, b_flat)], target, edge_b,
                                   jacobians[1][out_flat, b_flat])
                    self.structural[id(ea)] = ("factor", eb)
                    self.structural[id(eb)] = ("factor", ea)

    # ----------------------------------------------------------------- formulas
    def _forward(self, d: DataNode) -> Any:
        edges = self.into.get(d.id, [])
        if not edges or id(edges[0]) not in self.structural:
            return super()._forward(d)
        first = self.structural[id(edges[0])]
        if isinstance(first, tuple):  # a matrix product's element: Σ a·b
            pairs = [e for e in edges if e.slot == 0]
            return self.sp.Add(*[self.symbols[e.source] * self.symbols[self.structural[id(e)][1]
                                 .source] for e in pairs])
        return self.sp.Add(*[self.structural[id(e)] * self.symbols[e.source] for e in edges])

    def _local(self, e: OpEdge) -> Any | None:
        structural = self.structural.get(id(e))
        if structural is None:
            return super()._local(e)
        if isinstance(structural, tuple):
            local = self.symbols[structural[1].source]
            got = self.sym.numeric_value(local, self.values)
            if got is None or not np.isclose(got, float(e.derivative[0]), rtol=1e-4, atol=1e-6):
                return None
            return local
        return structural

    def _is_variable(self, d: DataNode) -> bool:
        return bool(d.name) or d.kind != "intermediate" or d in self.inputs

    def run(self) -> Explanation:
        self.scalar = True
        self.fold = True
        self.constants = {}
        self.solved = {}
        self._assign_symbols()
        if self.constants and self._solve_constants():
            self._assign_symbols()
        if any(self.sp.count_ops(self.symbols[d.id]) > 24 for d in self.data
               if not self._is_variable(d)):
            raise _NotElementwise
        self.locals = {id(e): self._local(e) for e in self.edges}
        definitions = self._definitions()
        self.segment_nodes = {}
        self.segments = {d.id: self._segment(d) for d in self.data
                         if self._is_variable(d) and d.id in self.into}
        unused = {k for k, _ in self.unused}
        used = [k for k in range(len(self.base.input_shapes)) if k not in unused]
        derivations = []
        for x, (n, element) in zip(self.inputs, self.input_elements, strict=True):
            paths = self._paths(x)
            if paths is None or not self._symbolic(paths):
                raise _NotElementwise
            derivation = self._derive_paths(x, paths, x.grad)
            derivation.index, derivation.element = used[n], element
            derivations.append(derivation)
        for k, t in self.unused:
            derivation = self._unused(t)
            derivation.index = k
            derivations.append(derivation)
        derivations.sort(key=lambda d: (d.index, d.element or 0))
        return Explanation(self.out.label, derivations, self.notes, definitions,
                           self.base.input_shapes)

