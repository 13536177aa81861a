"""The backward graph as plain data: one iterative walk shared by every view.

:func:`walk` visits ``grad_fn.next_functions`` from the outputs with an explicit stack and numbers
the nodes in depth-first preorder (the order a recursive printer would meet them), so the same
program always gives the same ids, drawing and text. The walk keeps only names and edges, which is
cheap enough for a graph of a million nodes; the details of one node (saved values, the leaf it
feeds, input shapes) are read on demand by :func:`node_details`.

Example:
    >>> import chainrule as torch
    >>> from chainrule.viz.graph import walk
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> g = walk((w + x) * (w + 1))
    >>> g.names
    ['MulBackward0', 'AddBackward0', 'AccumulateGrad', 'AccumulateGrad', 'AddBackward0']
    >>> g.children[4]
    ((2, 0), (-1, 0))
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ..autograd.graph import preorder
from ..autograd.node import ACCUMULATE_GRAD_SEQ, AccumulateGrad, Node, short_name

__all__ = [
    "BackwardGraph",
    "Output",
    "walk",
    "node_details",
    "tensor_summary",
    "dtype_name",
    "shape_text",
    "as_outputs",
    "no_gc",
]

NO_CHILD = -1  # a next_functions slot holding None


@dataclass(frozen=True)
class Output:
    """A tensor the graph was drawn from: where its gradient enters the graph."""

    label: str
    node: int  # id of its grad_fn (or of its AccumulateGrad, for a leaf that requires grad)
    output_nr: int
    shape: tuple[int, ...]
    dtype: str


@dataclass
class BackwardGraph:
    """The nodes reachable from some outputs, numbered in depth-first preorder.

    ``nodes[i]`` is the node object, ``names[i]`` its ``name()``, ``children[i]`` one
    ``(child id or -1, input_nr)`` pair per ``next_functions`` slot, in slot order.
    ``params`` names leaf tensors by ``id`` (from ``named_parameters()``); ``tensor_names``
    names the other tensors given in ``params`` by ``(node id, output_nr)`` of their ``grad_fn``.
    """

    nodes: list[Node]
    names: list[str]
    children: list[tuple[tuple[int, int], ...]]
    outputs: list[Output]
    params: dict[int, str] = field(default_factory=dict)
    tensor_names: dict[tuple[int, int], str] = field(default_factory=dict)
    _index: dict[Node, int] | None = None
    _parents: list[list[int]] | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def index(self) -> dict[Node, int]:
        """Node object -> id."""
        if self._index is None:
            self._index = {node: i for i, node in enumerate(self.nodes)}
        return self._index

    @property
    def parents(self) -> list[list[int]]:
        """For each node, the ids of the nodes whose ``next_functions`` point at it (in order)."""
        if self._parents is None:
            parents: list[list[int]] = [[] for _ in self.nodes]
            for i, edges in enumerate(self.children):
                for child, _ in edges:
                    if child != NO_CHILD and (not parents[child] or parents[child][-1] != i):
                        parents[child].append(i)
            self._parents = parents
        return self._parents

    def is_leaf(self, i: int) -> bool:
        """Whether node ``i`` is an ``AccumulateGrad`` (it feeds a leaf tensor)."""
        return type(self.nodes[i]) is AccumulateGrad

    def leaf_label(self, i: int) -> str:
        """The parameter name of the leaf behind ``AccumulateGrad`` node ``i`` ('' if unnamed)."""
        node = self.nodes[i]
        if type(node) is not AccumulateGrad:
            return ""
        return self.params.get(id(node.variable), "")

    def tensor_label(self, i: int) -> str:
        """The names (from ``params``) of the non-leaf tensors node ``i`` produced ('' if none),
        in output order: ``a`` for the ``AddBackward0`` that made ``a``."""
        if not self.tensor_names:
            return ""
        n_out = getattr(self.nodes[i], "_n_out", 1) or 1
        names = [self.tensor_names.get((i, nr), "") for nr in range(n_out)]
        return ", ".join(name for name in names if name)

    def edges(self) -> list[tuple[int, int]]:
        """Every ``(node, child)`` edge, in walk order (a repeated edge appears once per slot)."""
        return [(i, c) for i, slots in enumerate(self.children) for c, _ in slots if c != NO_CHILD]


def as_outputs(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
) -> list[tuple[str, Tensor]]:
    """``(label, tensor)`` for each output; labels are '' unless given by a mapping."""
    if isinstance(output, Tensor):
        return [("", output)]
    if isinstance(output, Mapping):
        return [(str(k), v) for k, v in output.items()]
    return [("", t) for t in output]


def walk(
    output: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    params: Mapping[str, Tensor] | None = None,
) -> BackwardGraph:
    """Collect the backward graph below ``output`` (a tensor, a sequence or a name -> tensor map).

    ``params`` names tensors: leaves (their ``AccumulateGrad``) and any other tensor of the graph
    (the node that produced it), e.g. ``{"w": w, "a": a}``.

    Raises ``ValueError`` if no output has a ``grad_fn`` or requires grad.
    """
    from .._tensor import gradient_edge

    param_names = {id(t): name for name, t in (params or {}).items()}
    outs = as_outputs(output)
    roots: list[tuple[Node, int, str, Tensor]] = []
    for k, (label, t) in enumerate(outs):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor to draw, got {type(t).__name__}")
        node, nr = gradient_edge(t)
        if node is None:
            continue
        if not label:
            label = param_names.get(id(t)) or ("output" if len(outs) == 1 else f"output {k}")
        roots.append((node, nr, label, t))
    if not roots:
        raise ValueError(
            "nothing to draw: the output does not require grad and has no grad_fn "
            "(was it computed under no_grad(), or from tensors without requires_grad=True?)"
        )

    with no_gc():
        nodes, index = _preorder([node for node, _, _, _ in roots])
        get = index.get
        children = [
            tuple([(NO_CHILD if c is None else get(c, NO_CHILD), nr) for c, nr in nf])
            for nf in [node.next_functions for node in nodes]
        ]
        names = _names(nodes)
    outputs = [
        Output(label, index[node], nr, tuple(t.shape), dtype_name(t._data.dtype))
        for node, nr, label, t in roots
    ]
    tensor_names: dict[tuple[int, int], str] = {}
    for name, t in (params or {}).items():
        fn = t.grad_fn if isinstance(t, Tensor) else None
        i = index.get(fn) if fn is not None else None
        if i is not None:
            tensor_names.setdefault((i, t.output_nr), name)
    return BackwardGraph(nodes, names, children, outputs, param_names, tensor_names, index)


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building large acyclic structures.

    Walking a million nodes creates millions of tuples; each allocation burst would otherwise
    trigger collections that traverse every object alive (the graph itself included).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _preorder(roots: list[Node]) -> tuple[list[Node], dict[Node, int]]:
    """The nodes in depth-first preorder (autograd.graph.preorder), and each one's number."""
    nodes = list(preorder(roots))
    return nodes, {node: n for n, node in enumerate(nodes)}


def _names(nodes: list[Node]) -> list[str]:
    """Display name of every node: ``name()`` without the ``chainrule::autograd::`` prefix that
    ``AccumulateGrad`` and ``CopySlices`` carry (torchviz shows those by class name too).
    Asked once per node class when the class does not override ``name()``."""
    by_type: dict[type, str] = {}
    names = []
    add = names.append
    default = Node.name
    for node in nodes:
        cls = type(node)
        name = by_type.get(cls)
        if name is None:
            name = short_name(node)
            if cls.name is default:
                by_type[cls] = name
        add(name)
    return names


# ----------------------------------------------------------------------------------------------
# Details of one node, read on demand


def dtype_name(np_dtype: Any) -> str:
    """``'float32'`` for a NumPy dtype (PyTorch's name, without the module prefix)."""
    return str(from_numpy_dtype(np.dtype(np_dtype))).rsplit(".", 1)[-1]


def shape_text(shape: Sequence[int]) -> str:
    """``(2, 3)`` as torchviz writes sizes; ``()`` for a scalar."""
    return "(" + ", ".join(str(int(s)) for s in shape) + ")"


def _array(value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        return value._data
    return np.asarray(value)


def tensor_summary(value: Any, n_values: int = 6) -> dict[str, Any]:
    """Shape, dtype, bytes and the first few values of a tensor or array, JSON-ready."""
    data = _array(value)
    flat = data.reshape(-1)[:n_values]
    if data.dtype.kind == "c":
        values = [str(v) for v in flat]
    elif data.dtype.kind == "b":
        values = [bool(v) for v in flat]
    else:
        values = [_number(v) for v in flat.tolist()]
    return {
        "shape": [int(s) for s in data.shape],
        "dtype": dtype_name(data.dtype),
        "bytes": int(data.nbytes),
        "values": values,
        "more": bool(data.size > n_values),
    }


def _number(v: float | int) -> float | int | str:
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return str(v)  # JSON has no NaN or infinity
        return float(f"{v:.6g}")
    return v


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value) if not isinstance(value, Tensor) else "tensor"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def saved_value_rows(node: Node) -> tuple[list[dict[str, Any]], bool]:
    """The values ``node`` saved for backward, one JSON-ready row each; and whether released.

    A tensor row has shape, dtype, bytes, the version it was saved at and its version now; a
    number or other argument has its ``repr``.
    """
    saved_values = getattr(node, "saved_values", None)
    if saved_values is None:
        return [], False
    from ..autograd.node import is_released

    released = is_released(getattr(node, "_saved", None))
    values = saved_values()
    op = getattr(node, "_op", None)
    saved_versions: dict[str, int | None] = {}
    if op is not None:
        for pos, version in getattr(node, "_versions", ()):
            saved_versions[op.param_names[pos]] = version
        result = getattr(node, "_result", None)
        if result is not None:
            saved_versions["result"] = result[2]
    rows: list[dict[str, Any]] = []
    for name, value in values.items():
        row: dict[str, Any] = {"name": name}
        if isinstance(value, Tensor | np.ndarray):
            data = _array(value)
            row.update(
                kind="tensor",
                shape=[int(s) for s in data.shape],
                dtype=dtype_name(data.dtype),
                bytes=int(data.nbytes),
                version=saved_versions.get(name),
            )
            result = getattr(node, "_result", None)
            if isinstance(value, Tensor):
                row["version_now"] = value._version
            elif result is not None:
                row["version_now"] = result[1][0]
        else:
            row.update(kind="value", repr=_short_repr(value))
        rows.append(row)
    return rows, released


def node_details(graph: BackwardGraph, i: int) -> dict[str, Any]:
    """Everything the explorer shows about node ``i``, JSON-ready (no gradients)."""
    node = graph.nodes[i]
    seq = getattr(node, "_seq", None)
    in_meta = getattr(node, "_in_meta", ()) or ()
    inputs = []
    for k, (child, nr) in enumerate(graph.children[i]):
        meta = in_meta[k] if k < len(in_meta) else None
        entry: dict[str, Any] = {"to": None if child == NO_CHILD else child, "nr": nr}
        if meta is not None:
            entry["shape"] = [int(s) for s in meta[0]]
            entry["dtype"] = dtype_name(meta[1])
        inputs.append(entry)
    saved, released = saved_value_rows(node)
    details: dict[str, Any] = {
        "id": i,
        "name": graph.names[i],
        "seq": None if seq is None or seq == ACCUMULATE_GRAD_SEQ else int(seq),
        "inputs": inputs,
        "parents": graph.parents[i],
        "saved": saved,
        "released": released,
    }
    if type(node) is AccumulateGrad:
        var = node.variable
        details["leaf"] = {
            "name": graph.leaf_label(i),
            "shape": [int(s) for s in var._data.shape],
            "dtype": dtype_name(var._data.dtype),
            "bytes": int(var._data.nbytes),
            "has_grad": var._grad is not None,
        }
    outputs = [k for k, out in enumerate(graph.outputs) if out.node == i]
    if outputs:
        details["outputs"] = outputs
    return details


def iter_saved_tensors(node: Node) -> Iterable[tuple[str, Any]]:
    """``(name, tensor or array)`` for each tensor ``node`` saved (none once released)."""
    saved_values = getattr(node, "saved_values", None)
    if saved_values is None:
        return ()
    return [(k, v) for k, v in saved_values().items() if isinstance(v, Tensor | np.ndarray)]
