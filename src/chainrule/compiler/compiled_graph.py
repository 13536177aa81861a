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

from chainrule._tensor import Tensor, grad_accumulator, mark_if_inference, wrap
from chainrule.autograd.grad_mode import INFERENCE_BLOCKS
from chainrule.autograd.inplace import modified_error
from chainrule.autograd.node import SECOND_BACKWARD_MESSAGE, Node, next_sequence_nr
from chainrule.ir import Value, gradients, passes
from chainrule.ir.numpy_codegen import NumpyFunction, numpy_function
from chainrule.ops import copying

from .fused_losses import fuse_cross_entropy_backward
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
    _runs_alone = True  # (and never one array for two inputs: see _fresh)

    def apply(self, grads: Any, create_graph: bool) -> tuple[Any, ...]:
        saved = self._saved
        if saved is None:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        for tensor, counter, version in self._watched:
            if counter[0] != version:
                raise _modified(tensor, self, counter[0], version)
        compiled = self._compiled
        if self._n_out == 1 and type(grads) is np.ndarray:  # (backward() of one output)
            results = compiled.backward.fn(*saved, grads)
        else:
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
                fused = fuse_cross_entropy_backward(graph, roots)
                if fused:
                    for old, new in fused:
                        if old in names:
                            names[new] = names[old]
                    passes.eliminate_dead_code(graph, roots)
                    self.pass_report["fuse_cross_entropy_backward"] = len(fused)
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
        # (a random draw nothing reads still runs, as eager draws it: the generator advances)
        drawn = passes.effects(graph)
        self.forward = numpy_function(
            graph, inputs, outputs + saved, "forward", names, comments, effects=drawn
        )
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
        # The inputs' metadata the node records (their shapes and dtypes are guarded).
        self.in_meta = tuple(
            (tuple(inputs[i].shape), inputs[i].dtype.np) for i in self.diff_input_index
        )
        self.call: Any = None
        self._call_source = ""
        self._write_call()

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
        """Run the generated forward on the arguments' (and captured tensors') arrays: the
        result's structure with new tensors, the differentiable ones sharing one
        ``CompiledFunctionBackward`` node."""
        return self.call(args, kwargs)

    @property
    def call_source(self) -> str:
        """The source of :attr:`call`, the glue around the generated forward."""
        return self._call_source

    def _write_call(self) -> None:
        """Generate :attr:`call`: the glue is straight-line code written for this graph
        (which arguments are tensors, which outputs are differentiable, the inputs' shapes
        and dtypes, fixed by the guards), so a call costs little more than the forward."""
        lines = ["def call(args, kwargs):"]
        tensors = []
        for p in self.arg_positions:
            name = f"a{len(tensors)}"
            where = f"args[{p}]" if type(p) is int else f"kwargs[{p!r}]"
            lines.append(f"    {name} = {where}")
            tensors.append(name)
        for k in range(len(self.captured)):
            name = f"a{len(tensors)}"
            lines.append(f"    {name} = captured[{k}]")
            tensors.append(name)
        arrays = ", ".join(f"{t}._data" for t in tensors)
        lines.append(f"    r = forward({arrays})")
        outs = []
        for k in range(self.n_outputs):
            o = f"o{k}"
            lines += [
                f"    {o} = _new(Tensor)",
                f"    {o}._data = r[{k}]",
                f"    {o}._requires_grad = False",
                f"    {o}._grad_node = None",
                f"    {o}._output_nr = 0",
                f"    {o}._grad = None",
                f"    {o}._vc = [0]",
                f"    {o}._base = None",
                f"    {o}._acc = None",
                f"    {o}._hooks = None",
                f"    {o}._retains_grad = False",
            ]
            outs.append(o)
        if self.n_outputs:
            lines += ["    if INFERENCE_BLOCKS[0]:"]
            lines += [f"        mark_if_inference({o})" for o in outs]
        namespace: dict[str, Any] = {
            "forward": self.forward.fn,
            "captured": self.captured,
            "_new": object.__new__,
            "Tensor": Tensor,
            "INFERENCE_BLOCKS": INFERENCE_BLOCKS,
            "mark_if_inference": mark_if_inference,
        }
        if self.needs_grad:
            fns, nrs = [], []
            for i in self.diff_input_index:
                t = tensors[i]
                lines += [
                    f"    f{i} = {t}._grad_node",
                    f"    if f{i} is None:",
                    f"        f{i} = grad_accumulator({t})",
                    f"        n{i} = 0",
                    "    else:",
                    f"        n{i} = {t}._output_nr",
                ]
                fns.append(f"f{i}")
                nrs.append(f"n{i}")
            watched = [tensors[i] if is_input else outs[i] for is_input, i in self.watched]
            # (the inputs' shapes and dtypes are guarded: one metadata tuple for every call)
            namespace.update(
                Node=CompiledFunctionBackward,
                grad_accumulator=grad_accumulator,
                next_sequence_nr=next_sequence_nr,
                graph=self,
                in_meta=self.in_meta,
                out_meta=self.out_meta,
            )
            lines += [
                "    node = _new(Node)",
                f"    node._next_fns = {_tuple_text(fns)}",
                f"    node._next_nrs = {_tuple_text(nrs)}",
                "    node._in_meta = in_meta",
                "    node._seq = next_sequence_nr()",
                "    node._hooks = None",
                "    node._compiled = graph",
                f"    node._saved = r[{self.n_outputs}:]",
                "    node._watched = "
                + _tuple_text([f"({t}, {t}._vc, {t}._vc[0])" for t in watched]),
                f"    node._n_out = {len(self.diff_output_slots)}",
                "    node._out_meta = out_meta",
            ]
            for nr, slot in enumerate(self.diff_output_slots):
                o = outs[slot]
                lines += [
                    f"    {o}._requires_grad = True",
                    f"    {o}._grad_node = node",
                    f"    {o}._output_nr = {nr}",
                ]
        leaves = []
        for k, (slot, leaf) in enumerate(zip(self.leaf_slots, self.leaves, strict=True)):
            if slot >= 0:
                leaves.append(outs[slot])
            else:
                namespace[f"leaf{k}"] = leaf
                leaves.append(f"leaf{k}")
        lines.append(f"    return {_structure_text(self.structure, leaves, namespace)}")
        source = "\n".join(lines) + "\n"
        exec(compile(source, "<chainrule.compile call>", "exec"), namespace)
        self.call = namespace["call"]
        self._call_source = source


def _tuple_text(items: list[str]) -> str:
    if not items:
        return "()"
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _structure_text(structure: Any, leaves: list[str], namespace: dict[str, Any]) -> str:
    """The expression rebuilding the result: tuples and lists written out, any other
    sequence type called on a tuple of its items (an explicit stack, no recursion)."""
    texts: dict[int, str] = {}
    stack: list[tuple[Any, bool]] = [(structure, False)]
    while stack:
        item, done = stack.pop()
        if type(item) is int:
            texts[id(item)] = leaves[item]
            continue
        if not done:
            stack.append((item, True))
            stack.extend((s, False) for s in item if type(s) is not int)
            continue
        parts = [leaves[s] if type(s) is int else texts[id(s)] for s in item]
        if type(item) is list:
            texts[id(item)] = f"[{', '.join(parts)}]"
        elif type(item) is tuple:
            texts[id(item)] = _tuple_text(parts)
        else:
            name = f"type{len(namespace)}"
            namespace[name] = type(item)
            texts[id(item)] = f"{name}({_tuple_text(parts)})"
    return texts[id(structure)]


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
