"""One compiled graph: the generated NumPy forward and backward of a lowered program, and
the single autograd node that joins them to eager autograd.

The joint graph is the lowered forward plus its gradient (``ir.gradients``, from the op
table's derivative formulas) with respect to the inputs that require grad, fed with one
placeholder per differentiable output (``grad_<output>``). It is cut in two as
AOTAutograd's default partition cuts it: the nodes that depend on a gradient placeholder
are the backward, the rest the forward, which also returns what the backward reads of it
(the saved values). Both halves become generated NumPy functions (``ir.numpy_codegen``).

A call runs the forward on the arguments' arrays and gives every differentiable output
the same node, ``CompiledFunctionBackward`` (PyTorch's name), whose edges lead to the
inputs that require grad and whose ``apply`` runs the generated backward on the saved
arrays: ``loss.backward()`` then fills leaves' ``.grad`` as eager autograd does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chainrule._tensor import Tensor, grad_accumulator, wrap
from chainrule.autograd.inplace import modified_error
from chainrule.autograd.node import SECOND_BACKWARD_MESSAGE, Node, next_sequence_nr
from chainrule.ir import Value, gradients, passes
from chainrule.ir.numpy_codegen import NumpyFunction, numpy_function
from chainrule.ops import copying

from .lowering import Lowered

__all__ = ["CompiledGraph", "CompiledFunctionBackward", "DOUBLE_BACKWARD_MESSAGE"]

DOUBLE_BACKWARD_MESSAGE = (
    "torch.compile with aot_autograd does not currently support double backward"
)


class CompiledFunctionBackwardBackward(Node):
    """The node of a compiled backward's results under ``create_graph=True``: PyTorch's
    compiled functions do not differentiate their backward, nor does this one."""

    __slots__ = ()

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        raise RuntimeError(DOUBLE_BACKWARD_MESSAGE)


class CompiledFunctionBackward(Node):
    """The one node of a compiled call's differentiable outputs: runs the generated
    backward on what the forward saved."""

    __slots__ = ("_compiled", "_saved", "_n_out", "_out_meta", "_watched")

    _fresh_outputs = True  # (the generated backward returns new arrays: see _fresh_outputs)

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        saved = self._saved
        if saved is None:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        for tensor, counter, version in self._watched:
            if counter[0] != version:
                raise _modified(tensor, self, counter[0], version)
        if self._n_out == 1:
            grads = [grads]
        arrays = []
        for g, (shape, dtype) in zip(grads, self._out_meta, strict=True):
            if g is None:
                arrays.append(np.zeros(shape, dtype))
            elif isinstance(g, Tensor):
                arrays.append(g._data)
            else:
                arrays.append(g)
        compiled = self._compiled
        results = compiled.backward.fn(*saved, *arrays)
        if not compiled.all_grads:
            results = tuple(None if s is None else results[s] for s in compiled.grad_slots)
        if not create_graph:
            return results
        return tuple(None if r is None else _non_differentiable(r) for r in results)

    def release(self) -> None:
        self._saved = None

    def run_without_grad(self, grads: Any, create_graph: bool, release: bool) -> Any:
        if release:
            self.release()
        return (None,) * len(self._next_fns)


def _modified(tensor: Tensor, node: Node, now: int, expected: int) -> RuntimeError:
    """PyTorch's error for a saved tensor changed in place before the backward: an input
    named with its producer, an output of the compiled call without (as PyTorch's)."""
    if tensor._grad_node is node:
        tensor = wrap(tensor._data)
    return modified_error(tensor, node, now, expected)


def _non_differentiable(array: np.ndarray) -> Tensor:
    result = wrap(array)
    node = object.__new__(CompiledFunctionBackwardBackward)
    node._next_fns = node._next_nrs = ()
    node._in_meta = ()
    node._seq = next_sequence_nr()
    node._hooks = None
    result._requires_grad = True
    result._grad_node = node
    return result


def _differentiable(value: Value) -> bool:
    return value.dtype.is_floating_point or value.dtype.is_complex


def _depends_on(nodes: Sequence[Any], sources: Sequence[Value]) -> set[int]:
    """Ids of the values computed from ``sources`` (and the sources)."""
    ids = {id(v) for v in sources}
    for node in nodes:
        if any(id(v) in ids for v in node.inputs):
            ids.update(id(v) for v in node.outputs)
    return ids


class CompiledGraph:
    """The generated forward (and backward, when some input requires grad) of one lowered
    program, and how to call them on tensors."""

    def __init__(self, lowered: Lowered, requires_grad: Sequence[bool], optimize: bool = True):
        graph = lowered.graph
        self.lowered = lowered
        self.structure = lowered.structure
        self.leaves = lowered.leaves
        self.arg_positions = lowered.arg_positions
        self.captured = lowered.captured
        inputs = lowered.inputs
        outputs: list[Value] = []
        for leaf in lowered.leaves:
            if isinstance(leaf, Value) and not any(leaf is o for o in outputs):
                outputs.append(leaf)
        self.leaf_slots = [
            next(i for i, o in enumerate(outputs) if o is leaf) if isinstance(leaf, Value) else -1
            for leaf in lowered.leaves
        ]
        self.pass_report: dict[str, int] = {}
        if optimize:
            self.pass_report.update(passes.optimize(graph, outputs))
        diff_inputs = [
            (i, v)
            for i, (v, rg) in enumerate(zip(inputs, requires_grad, strict=True))
            if rg and _differentiable(v)
        ]
        reachable = _depends_on(graph.nodes, [v for _, v in diff_inputs])
        ys = [o for o in outputs if _differentiable(o) and id(o) in reachable]
        names = dict(lowered.names)
        comments: dict[Value, str] = {}
        self.needs_grad = bool(ys)
        self.backward: NumpyFunction | None = None
        self.diff_input_index = [i for i, _ in diff_inputs]
        self.diff_output_slots = [next(k for k, o in enumerate(outputs) if o is y) for y in ys]
        self.out_meta = [(y.shape, y.dtype.np) for y in ys]
        saved: list[Value] = []
        if self.needs_grad:
            grad_ys = []
            for y in ys:
                name = lowered.unique(f"grad_{names.get(y, 'out')}")
                placeholder = graph.placeholder(y.shape, y.dtype, name=name)
                names[placeholder] = name
                grad_ys.append(placeholder)
            start = len(graph.nodes)
            grads = gradients(graph, ys, [v for _, v in diff_inputs], grad_ys)
            _name_backward(graph.nodes[start:], names, lowered)
            live = [g for g in grads if g is not None]
            if optimize:
                roots = outputs + live
                for key, count in passes.optimize(graph, roots).items():
                    self.pass_report[key] = self.pass_report.get(key, 0) + count
                replaced = dict(zip(map(id, live), roots[len(outputs) :], strict=True))
                outputs[:] = roots[: len(outputs)]
                ys = [outputs[k] for k in self.diff_output_slots]
                grads = [None if g is None else replaced[id(g)] for g in grads]
                live = roots[len(outputs) :]
            backward_ids = _depends_on(graph.nodes, grad_ys)
            for node in passes.needed(graph, live, grad_ys + inputs):
                if not node.outputs or id(node.outputs[0]) not in backward_ids:
                    continue  # (a forward node: the forward computes it)
                for value in node.inputs:
                    if id(value) not in backward_ids and not any(value is s for s in saved):
                        saved.append(value)
            for g in live:
                if id(g) not in backward_ids and not any(g is s for s in saved):
                    saved.append(g)
            results = _fresh(graph, live, saved, grad_ys)
            self.grad_slots = tuple(
                None if g is None else next(k for k, v in enumerate(live) if v is g) for g in grads
            )
            self.all_grads = all(s is not None for s in self.grad_slots)
            if optimize:
                saved, results = self._fuse(outputs, saved, results, grad_ys + inputs, names)
            self.backward = numpy_function(graph, saved + grad_ys, results, "backward", names)
        elif optimize:
            self._fuse(outputs, [], [], inputs, names)
        self.n_outputs = len(outputs)
        self.forward = numpy_function(graph, inputs, outputs + saved, "forward", names, comments)
        # The saved values that are arguments or outputs (tensors a caller may change in
        # place before the backward): (True for an input, its index).
        self.watched = []
        for value in saved:
            index = next((i for i, v in enumerate(inputs) if v is value), None)
            if index is not None:
                self.watched.append((True, index))
                continue
            index = next((k for k, v in enumerate(outputs) if v is value), None)
            if index is not None:
                self.watched.append((False, index))
        self.graph = graph

    def _fuse(
        self,
        outputs: list[Value],
        saved: list[Value],
        results: list[Value],
        keep: list[Value],
        names: dict[Value, str],
    ) -> tuple[list[Value], list[Value]]:
        """Fuse element-wise chains (``ir.passes.fuse_elementwise``), the fused values named
        as the chains' last ones; the saved values and the backward's results after it."""
        graph = self.lowered.graph
        roots = outputs + saved + results
        removed = passes.fuse_elementwise(graph, roots, keep)
        self.pass_report["fuse_elementwise"] = removed
        for node in graph.nodes:
            target = node.target
            if isinstance(target, passes.FusedElementwise) and node.outputs[0] not in names:
                last = target.origins.get(target.output)
                if last is not None and last in names:
                    names[node.outputs[0]] = names[last]
        n, m = len(outputs), len(saved)
        outputs[:] = roots[:n]
        return roots[n : n + m], roots[n + m :]

    @property
    def code(self) -> str:
        """The generated forward and backward."""
        if self.backward is None:
            return self.forward.source
        return self.forward.source + "\n" + self.backward.source

    def __call__(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        tensors = [args[p] if type(p) is int else kwargs[p] for p in self.arg_positions]
        tensors += self.captured
        results = self.forward.fn(*[t._data for t in tensors])
        n = self.n_outputs
        outs = [wrap(r) for r in results[:n]]
        if self.needs_grad:
            node = object.__new__(CompiledFunctionBackward)
            fns = []
            nrs = []
            metas = []
            for i in self.diff_input_index:
                t = tensors[i]
                fn = t._grad_node
                if fn is None:
                    fns.append(grad_accumulator(t))
                    nrs.append(0)
                else:
                    fns.append(fn)
                    nrs.append(t._output_nr)
                metas.append((t._data.shape, t._data.dtype))
            node._next_fns = tuple(fns)
            node._next_nrs = tuple(nrs)
            node._in_meta = tuple(metas)
            node._seq = next_sequence_nr()
            node._hooks = None
            node._compiled = self
            node._saved = results[n:]
            node._watched = tuple(
                (t, t._vc, t._vc[0])
                for t in (tensors[i] if is_input else outs[i] for is_input, i in self.watched)
            )
            node._n_out = len(self.diff_output_slots)
            node._out_meta = self.out_meta
            for nr, slot in enumerate(self.diff_output_slots):
                t = outs[slot]
                t._requires_grad = True
                t._grad_node = node
                t._output_nr = nr
        leaves = [
            outs[s] if s >= 0 else leaf
            for s, leaf in zip(self.leaf_slots, self.leaves, strict=True)
        ]
        return _rebuild(self.structure, leaves)


def _view_source(value: Value) -> Value:
    """The value ``value`` is a view of (through view ops), or ``value`` itself."""
    node = value.node
    while node.kind == "call" and node.op is not None and node.op.view:
        source = node.op.bind(node.args, node.kwargs)[node.op.input_pos[0]]
        if not isinstance(source, Value):
            break
        value, node = source, source.node
    return value


def _fresh(graph: Any, live: list[Value], saved: list[Value], grad_ys: list[Value]) -> list[Value]:
    """The backward's results as the engine may own them (CONTRIBUTING: a new array or the
    incoming gradient, or a view of either; never a saved value, never one array for two
    inputs): a result that is not is copied by a ``clone`` node."""
    fresh: list[Value] = []
    for value in live:
        source = _view_source(value)
        shared = (
            any(value is f for f in fresh)
            or any(source is s for s in saved)
            or (len(grad_ys) > 1 and any(source is g for g in grad_ys))
        )
        if shared:
            value = graph.call(copying.clone, (value,), name=graph.unique_name("clone")).outputs[0]
        fresh.append(value)
    return fresh


def _name_backward(nodes: Sequence[Any], names: dict[Value, str], lowered: Lowered) -> None:
    """Readable names for the backward's values: ``grad_<value>`` for a value's gradient,
    ``<node>_<k>`` (from the forward node whose derivative made it) for the rest."""
    for node in nodes:
        for value in node.outputs:
            of = node.attrs.get("grad_of")
            if of is not None and len(node.outputs) == 1:
                base = f"grad_{names.get(of, 'value')}"
            else:
                parts = value.name.split("/")
                scope = parts[1] if len(parts) > 2 else parts[-1]
                base = scope.removesuffix("_grad").lower() + "_" + parts[-1].lower()
            names[value] = lowered.unique(base)


def _rebuild(structure: Any, leaves: list[Any]) -> Any:
    if type(structure) is int:
        return leaves[structure]
    return type(structure)(_rebuild(s, leaves) for s in structure)
