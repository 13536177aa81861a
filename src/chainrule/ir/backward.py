"""The backward graph, derived from the op table's derivative formulas.

``gradients(graph, ys, xs)`` adds to ``graph`` the nodes computing the gradients of ``ys``
(summed) with respect to ``xs``, and returns them as values of the same graph: forward and
backward become one joint graph that the interpreter (or a compiler) runs without the eager
engine.

Each derivative of the op table is a formula written with operators and ``ops.<name>``
helpers, which runs on arrays (the eager fast path) and on Tensors (``create_graph=True``).
Here it runs a third way: on symbolic values (:class:`_Symbol`) whose operators and ``ops``
helpers add nodes to the graph. A formula that needs more than the graph knows (a data-dependent
branch, an unknown shape, a NumPy-only helper), or whose array path computes otherwise than its
formula on tensors (``ops._registry.exact_on_arrays``), becomes one opaque node instead, which
runs the formula on the values when the graph runs. The engine's plumbing follows each derivative as
nodes of its own: the gradient summed to its input's shape (``sum_to``) and cast to its dtype,
several contributions to one value added (``AddN``).

The walk is over the graph's node list in reverse, with no recursion.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor
from ..ops import _opnode, creation, linalg, pointwise
from .graph import Graph, Node, Value
from .helpers import cast, expand_like, identity, sum_to, sum_to_like

__all__ = ["gradients", "DerivativeRunner", "NOT_DIFFERENTIABLE", "not_differentiable"]

#: Functions whose outputs pass no gradient back (their value does not depend on their
#: inputs' values, only on shapes, or is random): TensorFlow's ``NotDifferentiable``.
NOT_DIFFERENTIABLE: set[Callable[..., Any]] = {creation.zeros_like, creation.ones_like}


def not_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare that nodes applying ``fn`` pass no gradient back (a decorator)."""
    NOT_DIFFERENTIABLE.add(fn)
    return fn


# Helpers that return their input unchanged for a real value (no node for them then).
_REAL_IDENTITIES = frozenset({"conj", "resolve_conj", "contiguous", "real"})


class _Untraceable(Exception):
    """The formula needs something the graph does not know before it runs."""


class _Symbol:
    """A graph value as a derivative formula sees it: operators and methods add nodes."""

    __slots__ = ("value",)
    __hash__ = object.__hash__
    # NumPy functions given a symbol fail (a formula's array-only branch is not traced).
    __array_ufunc__ = None

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise _Untraceable("a NumPy function on a graph value")

    def __init__(self, value: Value) -> None:
        self.value = value

    @property
    def shape(self) -> tuple[int, ...]:
        if not self.value.known_shape:
            raise _Untraceable("shape known only when the graph runs")
        return self.value.shape  # type: ignore[return-value]

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def ndim(self) -> int:
        if self.value.shape is None:
            raise _Untraceable("rank known only when the graph runs")
        return len(self.value.shape)

    def dim(self) -> int:
        return self.ndim

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def is_complex(self) -> bool:
        return bool(self.value.dtype.is_complex)

    def __bool__(self) -> bool:
        raise _Untraceable("a branch on a value")

    def __getattr__(self, name: str) -> Any:
        method = getattr(Tensor, name, None)
        if method is None or name.startswith("_"):
            raise AttributeError(name)
        return functools.partial(_record, method)

    # Operators, as chainrule's Tensor computes them.
    def __add__(self, other: Any) -> Any:
        return _record(pointwise._add, self, other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return _record(pointwise._sub, self, other)

    def __rsub__(self, other: Any) -> Any:  # other - self == -self + other, exactly
        return _record(pointwise._add, _record(pointwise.neg, self), other)

    def __mul__(self, other: Any) -> Any:
        return _record(pointwise.mul, self, other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        return _record(pointwise._div, self, other)

    def __rtruediv__(self, other: Any) -> Any:  # PyTorch: self.reciprocal() * other
        return _record(pointwise.mul, _record(pointwise.reciprocal, self), other)

    def __neg__(self) -> Any:
        return _record(pointwise.neg, self)

    def __pow__(self, other: Any) -> Any:
        if isinstance(other, _Symbol):
            return _record(pointwise._pow_tensor, self, other)
        return _record(pointwise._pow_scalar, self, other)

    def __rpow__(self, other: Any) -> Any:
        return _record(pointwise._pow_scalar_base, other, self)

    def __matmul__(self, other: Any) -> Any:
        if self.ndim == 2 and getattr(other, "ndim", 0) == 2:
            return _record(linalg.mm, self, other)
        return _record(linalg.matmul, self, other)

    def __abs__(self) -> Any:
        return _record(pointwise.abs, self)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _record(pointwise.eq, self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _record(pointwise.ne, self, other)

    def __lt__(self, other: Any) -> Any:
        return _record(pointwise.lt, self, other)

    def __le__(self, other: Any) -> Any:
        return _record(pointwise.le, self, other)

    def __gt__(self, other: Any) -> Any:
        return _record(pointwise.gt, self, other)

    def __ge__(self, other: Any) -> Any:
        return _record(pointwise.ge, self, other)

    def __and__(self, other: Any) -> Any:
        return _record(pointwise.logical_and, self, other)

    def __or__(self, other: Any) -> Any:
        return _record(pointwise.logical_or, self, other)

    def __invert__(self) -> Any:
        return _record(pointwise.logical_not, self)


def _unwrap(arg: Any) -> Any:
    if isinstance(arg, _Symbol):
        return arg.value
    if isinstance(arg, tuple | list):
        return type(arg)(a.value if isinstance(a, _Symbol) else a for a in arg)
    return arg


def _graph_of(args: Sequence[Any]) -> Graph:
    for arg in args:
        for item in arg if isinstance(arg, tuple | list) else (arg,):
            if isinstance(item, _Symbol):
                return item.value.node.graph
    raise _Untraceable("no graph value among the arguments")


def _record(target: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Add a node applying ``target``; its outputs as symbols."""
    graph = _graph_of((*args, *kwargs.values()))
    node = graph.call(
        target, tuple(_unwrap(a) for a in args), {k: _unwrap(v) for k, v in kwargs.items()}
    )
    outputs = tuple(_Symbol(v) for v in node.outputs)
    return outputs[0] if len(outputs) == 1 else outputs


class _SymbolicOps:
    """The ``ops`` namespace of a derivative traced into the graph: each helper adds a node
    applying the same helper of the Tensor namespace (``create_graph``'s)."""

    def __getattr__(self, name: str) -> Any:
        fn = getattr(_opnode.TENSOR_NS, name)
        if name in _REAL_IDENTITIES:
            return functools.partial(_real_identity, fn)
        return functools.partial(_record, fn)


def _real_identity(fn: Callable[..., Any], x: Any) -> Any:
    if isinstance(x, _Symbol) and not x.value.dtype.is_complex:
        return x
    if not isinstance(x, _Symbol):
        return fn(x) if isinstance(x, Tensor) else x
    return _record(fn, x)


_SYMBOLIC_OPS = _SymbolicOps()


class DerivativeRunner:
    """A node function running one derivative formula of the op table on the values when the
    graph runs: ``runner(grad, result, *arguments)``, the arguments as the forward took
    them."""

    def __init__(self, op: Any, index: int) -> None:
        # (not ``op``: a node applying the runner is no application of the forward op)
        self.forward_op = op
        self.index = index
        self.derivative = op.derivatives[index]
        self.__name__ = self.__qualname__ = f"{op.node_name}_{op.input_names[index]}"
        self.__module__ = __name__

    def __call__(self, grad: Any, result: Any, *bound: Any) -> Any:
        op = self.forward_op
        env = list(bound) + [result]
        env += [tuple(getattr(bound[p], "shape", ())) for p in op.input_pos]
        env += [_array_strides(bound[p]) for p in op.input_pos]
        derivative = self.derivative
        return derivative.fn(_opnode.TENSOR_NS, grad, *(env[i] for i in derivative.arg_index))


def _environment(op: Any, bound: tuple, result: Value) -> list[Any]:
    """What a derivative may read, as the op's node unpacks it: arguments, result, shapes."""
    env: list[Any] = [_as_symbol(a) for a in bound]
    env.append(_Symbol(result))
    for p in op.input_pos:
        value = bound[p]
        if isinstance(value, Value):
            if not value.known_shape:
                env.append(_UnknownShape())
                continue
            env.append(value.shape)
        else:
            env.append(())
    # Strides: those of the value's example (a view node's example is laid out as the view
    # of a row-major input: ``t(weight)`` column-major, so that mm's and addmm's formulas
    # compute a weight's gradient in its layout as eagerly); None when the shape is unknown.
    env.extend(_strides(bound[p]) for p in op.input_pos)
    return env


def _strides(value: Any) -> tuple[int, ...] | None:
    """The byte strides of a value's example array, as an eager node records its input's
    (None for a non-Value or a value of unknown shape)."""
    if isinstance(value, Value) and value.known_shape:
        return value.example.strides
    return None


def _array_strides(arg: Any) -> tuple[int, ...] | None:
    """The byte strides of a tensor's or an array's data (None for anything else)."""
    if isinstance(arg, Tensor):
        return arg._data.strides
    return getattr(arg, "strides", None)


class _UnknownShape:
    """An environment entry the graph cannot give before it runs."""


def _as_symbol(arg: Any) -> Any:
    if isinstance(arg, Value):
        return _Symbol(arg)
    if isinstance(arg, tuple | list):
        return type(arg)(_Symbol(a) if isinstance(a, Value) else a for a in arg)
    return arg


def _derive(node: Node, index: int, grad: Value) -> Value:
    """One input's gradient contribution: the formula traced, or an opaque node."""
    op = node.op
    graph = node.graph
    bound = op.bind(node.args, node.kwargs)
    derivative = op.derivatives[index]
    env = _environment(op, bound, node.outputs[0])
    arguments = [env[i] for i in derivative.arg_index]
    mark = len(graph.nodes)
    traceable = not getattr(derivative.fn, "exact_on_arrays", False)
    if traceable and not any(isinstance(a, _UnknownShape) for a in arguments):
        try:
            out = derivative.fn(_SYMBOLIC_OPS, _Symbol(grad), *arguments)
            if isinstance(out, _Symbol):
                return out.value
        except Exception:  # noqa: BLE001 - any formula the symbols cannot run: opaque node
            pass
    graph.truncate(mark)  # (what a failed trace added)
    runner = DerivativeRunner(op, index)
    return graph.call(runner, (grad, node.outputs[0], *bound)).outputs[0]


def _fit(contribution: Value, x: Value) -> Value:
    """The engine's plumbing: summed to ``x``'s shape, cast to its dtype."""
    graph = x.node.graph
    if contribution.shape != x.shape or not x.known_shape:
        if x.known_shape:
            contribution = graph.call(sum_to, (contribution, x.shape), type="SumTo").outputs[0]
        else:  # (known when the graph runs: a no-op when nothing was broadcast)
            contribution = graph.call(sum_to_like, (contribution, x), type="SumTo").outputs[0]
    if contribution.dtype != x.dtype:
        contribution = graph.call(cast, (contribution, x.dtype), type="Cast").outputs[0]
    return contribution


def _total(graph: Graph, parts: list[tuple[int, Value]]) -> Value:
    """The contributions to one value added up, in the order of the nodes they come from
    (the forward order, as TensorFlow's ``AddN`` lists them)."""
    ordered = [value for _, value in sorted(parts, key=lambda part: part[0])]
    total = ordered[0]
    for part in ordered[1:]:
        total = graph.call(
            pointwise._add, (total, part), name=graph.unique_name("AddN"), type="AddN"
        ).outputs[0]
    return total


def _downstream_of(graph: Graph, xs: Sequence[Value]) -> set[int]:
    """Ids of the values that depend on ``xs`` (and ``xs`` themselves)."""
    ids = {id(x) for x in xs}
    for node in graph.nodes:
        if any(id(v) in ids for v in node.inputs):
            ids.update(id(v) for v in node.outputs)
    return ids


def _upstream_of(ys: Sequence[Value]) -> set[int]:
    """Ids of the nodes ``ys`` depend on (an explicit stack)."""
    seen: set[int] = set()
    stack = [y.node for y in ys]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(v.node for v in node.inputs if id(v.node) not in seen)
    return seen


def _differentiable(value: Any) -> bool:
    return isinstance(value, Value) and (value.dtype.is_floating_point or value.dtype.is_complex)


def gradients(
    graph: Graph,
    ys: Sequence[Value],
    xs: Sequence[Value],
    grad_ys: Sequence[Value | None] | None = None,
    scope: str = "gradients",
) -> list[Value | None]:
    """Add to ``graph`` the gradient of ``sum(ys)`` with respect to each of ``xs`` (each
    ``y`` weighted by its ``grad_ys`` value, ones by default); None for an ``x`` the ``ys`` do
    not depend on. Raises ``LookupError`` for a node on the way that has no derivative."""
    downstream = _downstream_of(graph, xs)
    upstream = _upstream_of(ys)
    # Per value, its gradient's contributions with the position of the node each comes from.
    parts: dict[Value, list[tuple[int, Value]]] = {}
    end = len(graph.nodes)
    with graph.name_scope(scope):
        for i, y in enumerate(ys):
            given = grad_ys[i] if grad_ys is not None else None
            if given is None:
                given = graph.call(
                    creation.ones_like, (y,), name=graph.unique_name(f"grad_ys_{i}"), type="Fill"
                ).outputs[0]
            parts.setdefault(y, []).append((end + i, given))
        for position in range(end - 1, -1, -1):
            node = graph.nodes[position]
            if node.kind != "call" or id(node) not in upstream or _stops_gradient(node):
                continue
            outputs = [v for v in node.outputs if v in parts and id(v) in downstream]
            if not outputs:
                continue
            targets = [
                (i, a)
                for i, a in enumerate(_differentiable_inputs(node))
                if a is not None and id(a) in downstream
            ]
            if not targets:
                continue
            grad = _total(graph, parts[outputs[0]])
            _name_gradient(grad, outputs[0], end)
            parts[outputs[0]] = [(position, grad)]
            with graph.name_scope(f"{node.name}_grad"):
                for index, x in targets:
                    contribution = _node_gradient(node, index, grad)
                    parts.setdefault(x, []).append((position, _fit(contribution, x)))
        totals = [_total(graph, parts[x]) if x in parts else None for x in xs]
        for x, total in zip(xs, totals, strict=True):
            if total is not None:
                _name_gradient(total, x, end)
        return totals


def _name_gradient(grad: Value, of: Value, end: int) -> None:
    """Note on ``grad``'s node (when this call of :func:`gradients` made it) that it
    computes the gradient of ``of``: ``node.attrs["grad_of"]``, for readable generated code."""
    node = grad.node
    graph = node.graph
    if "grad_of" in node.attrs or node.kind != "call" or len(node.outputs) != 1:
        return
    if graph.nodes.index(node) >= end:
        node.attrs["grad_of"] = of


def _stops_gradient(node: Node) -> bool:
    op = node.op
    if op is not None:
        return not op.differentiable
    return node.target in NOT_DIFFERENTIABLE


def _differentiable_inputs(node: Node) -> list[Value | None]:
    """The node's differentiable inputs in the op's input order (None where an input is a
    number or not of a floating type)."""
    op = node.op
    if op is None:
        return [v if _differentiable(v) else None for v in node.inputs[:1]]
    bound = op.bind(node.args, node.kwargs)
    return [bound[p] if _differentiable(bound[p]) else None for p in op.input_pos]


def _node_gradient(node: Node, index: int, grad: Value) -> Value:
    op = node.op
    if op is None:
        return _plumbing_gradient(node, grad)
    if len(node.outputs) != 1 or op.derivatives[index] is None or not op.differentiable:
        raise LookupError(f"No gradient defined for operation '{node.name}' (op type: {node.type})")
    return _derive(node, index, grad)


def _plumbing_gradient(node: Node, grad: Value) -> Value:
    """The gradient through one of the engine's plumbing nodes (``ir.helpers``): summing to
    a shape and broadcasting back are each other's gradients, a cast casts back."""
    graph = node.graph
    source = node.inputs[0]
    if node.target is identity:
        return grad
    if node.target is sum_to or node.target is sum_to_like:
        return graph.call(expand_like, (grad, source), type="ExpandLike").outputs[0]
    if node.target is expand_like:
        return graph.call(sum_to_like, (grad, source), type="SumTo").outputs[0]
    if node.target is cast:
        return graph.call(cast, (grad, source.dtype), type="Cast").outputs[0]
    raise LookupError(f"No gradient defined for operation '{node.name}' (op type: {node.type})")
