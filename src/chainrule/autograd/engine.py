"""The backward engine: dependency counting, a ready queue ordered as PyTorch orders it, and the
single place where gradients are reduced to their input's shape and cast to its dtype.

Everything here is iterative. A :class:`GraphTask` is one backward pass; :meth:`GraphTask.step`
runs exactly one node, so the same engine serves ``backward()``, ``autograd.grad()`` and the
step-by-step API (:func:`chainrule.autograd.stepping.backward_steps`).

Gradients flowing through the engine are plain ndarrays when ``create_graph`` is False (the fast
path: no Tensor objects, no graph recording) and Tensors when it is True (so the backward pass is
itself recorded and can be differentiated again).
"""

from __future__ import annotations

import contextvars
import heapq
import itertools
import operator
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .._dtype import REDUCED_FLOATS as _REDUCED_FLOATS
from .._dtype import from_numpy_dtype
from .._size import Size
from .._strides import contiguous_format, copy_obeying_contract, obeys_layout_contract
from .._tensor import Tensor, gradient_edge, wrap
from .forward_grad import tangents_alive
from .grad_mode import ANOMALY_STATE, GRAD, GRAD_LAYOUT_ENFORCED, MODE, mode_get
from .grad_mode import state as _state
from .graph import (
    CURRENT_GRAPH_TASK,
    MUTATION_WATCH,
    GradientEdge,
    clone_saved_before_write,
    edge_output_meta,
    preorder,
    restore_saved_tensors_hooks,
    saved_tensors_hooks_stack,
)
from .graph import (
    _current_graph_task_id as current_graph_task_id,
)
from .node import AccumulateGrad, Node, type_name

__all__ = [
    "backward", "grad", "GraphTask", "accumulate_grad", "sum_to_shape", "StepRecord",
    "current_graph_task_id", "is_checkpoint_valid",
]

_ndarray = np.ndarray
_getrefcount = sys.getrefcount

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


# ----------------------------------------------------------------------------------------------
# Shape reduction and casting: the one place where broadcasting is undone.

def sum_to_shape(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """Sum ``g`` over broadcast dimensions so it has ``shape`` (a new array); None if it cannot
    be done."""
    ndim = len(shape)
    lead = g.ndim - ndim
    if lead < 0:
        return None
    gshape = g.shape
    inner = []
    for i in range(ndim):
        size = shape[i]
        if gshape[lead + i] != size:
            if size != 1:
                return None
            inner.append(lead + i)
    if g.dtype in _REDUCED_FLOATS:
        # PyTorch sums float16 and bfloat16 in float32 and rounds once; NumPy would round
        # after every add when the summed axis is not the innermost one (ml_dtypes' bfloat16,
        # always).
        axes = tuple(range(lead)) + tuple(inner)
        if not axes:
            return g.copy()
        return np.add.reduce(g, axis=axes, dtype=np.float32).reshape(shape).astype(g.dtype)
    if inner:
        g = np.add.reduce(g, axis=tuple(inner), keepdims=True)
    if lead:
        g = np.add.reduce(g, axis=tuple(range(lead)))
    elif not inner:
        g = g.copy()
    return g


def _fix_grad(node: Node, index: int, g: Any, meta: tuple, create_graph: bool) -> Any:
    """Reduce and cast the gradient a node returned for one input to that input's metadata
    (called only when something may differ; returns ``g`` itself when nothing does)."""
    shape, np_dtype = meta[0], meta[1]
    if create_graph:
        if g.shape != shape:
            if _reduced_shape_ok(g.shape, shape):
                g = g.sum_to_size(shape)
            else:
                _raise_invalid_gradient(node, index, g.shape, shape)
        if g._data.dtype != np_dtype:
            if g._data.dtype.kind == "c" and np_dtype.kind != "c":
                g = g.real  # (recorded: PyTorch's handle_r_to_c is at::real(grad))
            g = g.to(from_numpy_dtype(np_dtype))
        return g
    if type(g) is not _ndarray:
        g = np.asarray(g)
    if g.shape != shape:
        reduced = sum_to_shape(g, shape)
        if reduced is None:
            _raise_invalid_gradient(node, index, g.shape, shape)
        g = reduced
    if g.dtype != np_dtype:
        if g.dtype.kind == "c" and np_dtype.kind != "c":
            # A complex gradient reaching a real input: its real part, as PyTorch's formulas
            # take it (handle_r_to_c), here once for every op.
            g = g.real
        g = g.astype(np_dtype)
    return g


def _validated(node: Node, outputs: Sequence[Any], create_graph: bool) -> Sequence[Any]:
    """The gradients ``node`` returned, each reduced and cast to its input's metadata where it
    differs (what routing does later; done before post hooks, which see the result)."""
    fixed: list[Any] | None = None
    for i, meta in enumerate(node._in_meta):
        g = outputs[i] if i < len(outputs) else None
        if g is None or meta is None:
            continue
        if create_graph:
            differs = g.shape != meta[0] or g._data.dtype != meta[1]
        else:
            differs = type(g) is not np.ndarray or g.shape != meta[0] or g.dtype != meta[1]
        if differs:
            if fixed is None:
                fixed = list(outputs)
            fixed[i] = _fix_grad(node, i, g, meta, create_graph)
    return outputs if fixed is None else tuple(fixed)


def _reduced_shape_ok(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    lead = len(shape) - len(target)
    if lead < 0:
        return False
    return all(t == s or t == 1 for s, t in zip(shape[lead:], target, strict=True))


def _raise_invalid_gradient(node: Node, index: int, got: tuple, expected: tuple) -> None:
    raise RuntimeError(
        f"Function {node.name()} returned an invalid gradient at index {index} - got "
        f"{list(got)} but expected shape compatible with {list(expected)}"
    )


# ----------------------------------------------------------------------------------------------
# Accumulation into leaves

def _check_grad_sum_shape(grad: np.ndarray, g: np.ndarray) -> None:
    """PyTorch's errors for ``grad += g`` when ``set_`` changed a leaf's shape since ``.grad``
    was made: shapes that do not broadcast, or whose broadcast is not ``.grad``'s shape."""
    if grad.shape == g.shape:
        return
    from ..ops._dispatch import broadcast_error

    error = broadcast_error(grad, g)
    if error is not None:
        raise error
    shape = np.broadcast_shapes(grad.shape, g.shape)
    if shape != grad.shape:
        raise RuntimeError(
            f"output with shape {list(grad.shape)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )


def accumulate_grad(var: Tensor, g: Any, create_graph: bool, owned: bool = False) -> None:
    """Add ``g`` into ``var.grad`` (creating it if needed), then run post-accumulate hooks.

    As PyTorch's AccumulateGrad: a first gradient becomes ``.grad`` as is when ``owned`` (a new
    array nobody else holds) and laid out as the leaf (the "gradient layout contract", see
    ``_strides.obeys_layout_contract``), else a copy laid out so; later ones are added in
    place (a new sum under ``create_graph``). A leaf that no longer requires grad
    (``detach_()``, ``requires_grad = False`` after the graph was built) gets nothing (its
    post-accumulate hooks still run), as in PyTorch.
    """
    old = var._grad
    if not var._requires_grad:
        pass
    elif not create_graph:
        if type(g) is not _ndarray:
            g = np.array(g)
            owned = True
        if old is None:
            data = var._data
            if (
                owned
                and g.flags.writeable
                and (obeys_layout_contract(g, data) or not GRAD_LAYOUT_ENFORCED.get())
            ):
                var._grad = wrap(g)
            else:
                if g.shape != data.shape:  # the leaf got another shape after the graph was made
                    _check_grad_sum_shape(data, g)
                var._grad = wrap(copy_obeying_contract(g, data))
        else:
            data = old._data
            if data.flags.writeable and data.shape == g.shape:
                # In place, as PyTorch's ``variable_grad += new_grad`` (also when .grad has a
                # history from an earlier create_graph pass: it keeps it, with a new version).
                if MUTATION_WATCH:
                    clone_saved_before_write(old)
                np.add(data, g, out=data, casting="unsafe")
                old._vc[0] += 1
                if not _LAYOUT_WARNED[0] and data.strides != var._data.strides:
                    if GRAD_LAYOUT_ENFORCED.get():
                        _check_layout(data, var._data, 0)
            else:
                _check_grad_sum_shape(data, g)
                var._grad = wrap(data + g)
    else:
        from ..ops.copying import copy_for_grad

        if old is None:
            var._grad = copy_for_grad(g, var._data)
        else:
            total = old + g
            if not _LAYOUT_WARNED[1] and GRAD_LAYOUT_ENFORCED.get():
                _check_layout(total._data, var._data, 1)
            var._grad = total
    hooks = var._hooks
    if hooks is not None and hooks.post_accumulate:
        _call_post_accumulate_hooks(var, tuple(hooks.post_accumulate.values()))


# PyTorch warns once per place in AccumulateGrad (in-place sum, recorded sum) when the summed
# .grad does not follow the leaf's layout (e.g. a row-major .grad set by hand on a transposed
# leaf).
_LAYOUT_WARNED = [False, False]


def _check_layout(grad: np.ndarray, variable: np.ndarray, site: int) -> None:
    if obeys_layout_contract(grad, variable):
        return
    _LAYOUT_WARNED[site] = True
    size = variable.itemsize
    warnings.warn(
        "grad and param do not obey the gradient layout contract. This is not an error, but "
        f"may impair performance.\ngrad.sizes() = {list(grad.shape)}, strides() = "
        f"{[s // size for s in grad.strides]}\nparam.sizes() = {list(variable.shape)}, "
        f"strides() = {[s // size for s in variable.strides]}",
        UserWarning,
        stacklevel=4,
    )


# ----------------------------------------------------------------------------------------------
# The pass running in this thread (PyTorch's current graph task)

# (The variable lives in autograd.graph, the core layer, which reads it for
# register_multi_grad_hook.)
_CURRENT_TASK: contextvars.ContextVar[GraphTask | None] = CURRENT_GRAPH_TASK
_TASK_IDS = itertools.count()


def is_checkpoint_valid() -> bool:
    """Whether a reentrant checkpoint may run its backward here
    (``torch.autograd._is_checkpoint_valid``): False inside a pass that runs only part of the
    graph (``autograd.grad``, ``backward(inputs=...)``) or inside a pass started within one."""
    task = _CURRENT_TASK.get()
    return True if task is None else task.checkpoint_valid


# ----------------------------------------------------------------------------------------------
# One backward pass

class StepRecord:
    """What one engine step did (filled only when stepping is requested)."""

    __slots__ = ("node", "grad_outputs", "grad_inputs", "index")

    def __init__(self, node: Node, grad_outputs: tuple, grad_inputs: tuple, index: int) -> None:
        self.node = node
        self.grad_outputs = grad_outputs  # gradients flowing into the node (w.r.t. its outputs)
        self.grad_inputs = grad_inputs  # gradients it sends, one per next_functions entry
        self.index = index

    def __repr__(self) -> str:
        return f"StepRecord(index={self.index}, node={self.node.name()})"


class GraphTask:
    """State of one backward pass over the graph below ``roots``.

    ``captures`` maps ``(node, input_nr)`` to indices in :attr:`captured` (for
    ``autograd.grad``); ``accumulate_into`` restricts accumulation to those leaves/tensors
    (``backward(inputs=...)``). Without either, every reachable node runs.

    :meth:`steps` is the engine loop itself, one node per iteration; :meth:`run` drains it.
    """

    __slots__ = (
        "keep_graph", "create_graph", "deps", "buffers", "heap", "ready", "captures",
        "captured", "captured_owned", "executes", "accumulate_into", "_loop", "anomaly", "plain",
        "owned",
        "callbacks", "id", "checkpoint_valid", "root_edges", "_in_graph", "record_graph",
    )

    def __init__(
        self,
        roots: Sequence[tuple[Node, int]],
        root_grads: Sequence[Any],
        keep_graph: bool,
        create_graph: bool,
        captures: dict[tuple[Node, int], list[int]] | None = None,
        accumulate_into: dict[tuple[Node, int], Tensor | None] | None = None,
        record_graph: bool | None = None,
    ) -> None:
        self.id = next(_TASK_IDS)
        # Whether the pass is recorded (grad mode on while it runs): ``create_graph`` unless a
        # pass runs on Tensors only to carry tangents (forward-over-reverse, see grad()).
        self.record_graph = create_graph if record_graph is None else record_graph
        self.checkpoint_valid = True
        self.root_edges = roots
        self._in_graph: set[Node] | None = None
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.captures = captures
        self.accumulate_into = accumulate_into
        self.captured: list[Any] = (
            [None] * (1 + max(i for ids in captures.values() for i in ids)) if captures else []
        )
        self.buffers: dict[Node, Any] = {}
        self.heap: list[tuple[int, Node]] = []
        self.ready: deque[AccumulateGrad] = deque()
        self._loop: Any = None
        self.anomaly = ANOMALY_STATE.enabled
        # No captures, no restriction, no anomaly checks: only hooks leave the plain path.
        self.plain = captures is None and accumulate_into is None and not self.anomaly
        # AccumulateGrad nodes whose buffered gradient the engine owns (see _route).
        # Indices of captured gradients the engine owns: autograd.grad returns them uncopied.
        self.captured_owned: set[int] = set()
        self.owned: set[Node] = set()  # leaves' and view nodes' buffers the engine owns
        # Functions queued by Variable._execution_engine.queue_callback during this pass.
        self.callbacks: list[Callable[[], Any]] = []
        root_nodes = [roots[0][0]] if len(roots) == 1 else [node for node, _ in roots]
        self.deps = _count_dependencies(root_nodes)
        self.executes: set[Node] | None = None
        if captures is not None or accumulate_into is not None:
            targets = {node for node, _ in (captures or {})}
            targets.update(node for node, _ in (accumulate_into or {}))
            self.executes = _nodes_to_execute(root_nodes, self.deps, targets)
            # backward(inputs=[non_leaf]): its node runs (hooks, derivative, release), as in
            # PyTorch; its gradient reaches .grad through retain_grad.
            self.executes.update(
                node for node, _ in (accumulate_into or {}) if type(node) is not AccumulateGrad
            )
            self.deps = _restricted_dependencies(root_nodes, self.executes, targets)
        if len(roots) == 1 and len(root_grads) == 1:  # backward() of one tensor
            node, nr = roots[0]
            if node._n_out == 1:
                self.buffers[node] = root_grads[0]
            else:
                self._add_root_grad(node, nr, root_grads[0])
            if self.deps.get(node, 0) == 0:
                self._push(node)
            return
        for (node, nr), g in zip(roots, root_grads, strict=True):
            self._add_root_grad(node, nr, g)
        for node in dict.fromkeys(root_nodes):
            if self.deps.get(node, 0) == 0:
                self._push(node)

    def _push(self, node: Node) -> None:
        """Queue a ready node. Op nodes have unique sequence numbers and go on a heap, largest
        first; AccumulateGrad nodes all share the largest number, so they run before any op
        node, the one ready first first: a FIFO queue of their own gives that order."""
        if type(node) is AccumulateGrad:
            self.ready.append(node)
        else:
            heapq.heappush(self.heap, (-node._seq, node))

    def execution_order(self) -> list[Node]:
        """The nodes this pass will run, in the order it runs them, predicted from its start
        (``torch._C._current_graph_task_execution_order``): AccumulateGrad nodes first, the one
        ready first first, then the other nodes most recently created first."""
        targets = {node for node, _ in (self.captures or {})}
        targets.update(node for node, _ in (self.accumulate_into or {}))
        executes = self.executes
        deps = dict(self.deps)
        ready: deque[Node] = deque()
        heap: list[tuple[int, Node]] = []

        def push(node: Node) -> None:
            if type(node) is AccumulateGrad:
                ready.append(node)
            else:
                heapq.heappush(heap, (-node._seq, node))

        for node in dict.fromkeys(node for node, _ in self.root_edges):
            push(node)
        order: list[Node] = []
        while ready or heap:
            node = ready.popleft() if ready else heapq.heappop(heap)[1]
            order.append(node)
            for child in node._next_fns:
                if child is None:
                    continue
                if executes is not None and child not in executes and child not in targets:
                    continue
                left = deps.get(child, 0) - 1
                if left <= 0:
                    deps.pop(child, None)
                    push(child)
                else:
                    deps[child] = left
        return order

    def pending(self) -> bool:
        """Whether a node is ready to run."""
        return bool(self.ready or self.heap)

    def _add_root_grad(self, node: Node, nr: int, g: Any) -> None:
        n_out = node._n_out
        if n_out == 1:
            old = self.buffers.get(node)
            self.buffers[node] = g if old is None else old + g
            return
        slots = self.buffers.setdefault(node, [None] * n_out)
        slots[nr] = g if slots[nr] is None else slots[nr] + g

    def run(self) -> None:
        """Run every remaining node. A pass started inside another (a backward called from a
        custom Function's backward or a hook) runs on a fresh thread once the Python stack is
        half used, as PyTorch runs deep reentrant backward on a new thread's stack: reentrancy
        to any depth, no RecursionError. The thread runs in this context (grad mode, the
        enclosing pass) and the caller waits for it; its exception is raised here."""
        if _CURRENT_TASK.get() is not None and _stack_depth() > sys.getrecursionlimit() // 2:
            _run_in_fresh_thread(self._run)
        else:
            self._run()

    def _run(self) -> None:
        token = self._enter()
        hooks = saved_tensors_hooks_stack()
        prev = mode_get()
        wanted = prev | GRAD if self.record_graph else prev & ~GRAD
        if wanted != prev:
            MODE.set(wanted)
        try:
            _drain(self.steps(False))
            callbacks = self.callbacks
            i = 0
            while i < len(callbacks):  # (a callback may queue more: they run too)
                callbacks[i]()
                i += 1
        finally:
            now = mode_get()
            restored = now | GRAD if prev & GRAD else now & ~GRAD
            if restored != now:
                MODE.set(restored)
            if saved_tensors_hooks_stack() is not hooks:
                restore_saved_tensors_hooks(hooks)
            _CURRENT_TASK.reset(token)

    def step(self, record: bool) -> StepRecord | None:
        """Run the next ready node; None when none is left (or when not recording)."""
        if self._loop is None:
            self._loop = self.steps(record)
        token = self._enter()
        try:
            return next(self._loop, None)
        finally:
            _CURRENT_TASK.reset(token)

    def _enter(self) -> contextvars.Token[GraphTask | None]:
        """Make this the pass running in this thread (until the token is reset). A reentrant
        checkpoint is valid in it when it runs the whole graph and the pass it started in (if
        any) allows one too, as PyTorch's CheckpointValidGuard."""
        parent = _CURRENT_TASK.get()
        self.checkpoint_valid = self.executes is None and (
            parent is None or parent.checkpoint_valid
        )
        return _CURRENT_TASK.set(self)

    def will_execute(self, node: Node) -> bool:
        """Whether this pass executes ``node`` (PyTorch's ``_will_engine_execute_node``, which
        ``register_multi_grad_hook`` asks): it is in the graph, i.e. reached along an edge from
        the root (the root itself is not, when there is one root edge: PyTorch then makes no
        dummy root above it), and when the pass has inputs (``autograd.grad``,
        ``backward(inputs=...)``) it is needed to reach one, or is one."""
        in_graph = self._in_graph
        if in_graph is None:
            in_graph = self._in_graph = _nodes_in_graph(self.root_edges)
        if node not in in_graph:
            return False
        if self.executes is None:
            return True
        captured = self.captures is not None and any(
            target is node for target, _ in self.captures)
        needed = node in self.executes or self.accumulate_into is not None and any(
            target is node for target, _ in self.accumulate_into)
        if not (captured or needed):
            return False
        if captured and all(child is None for child in node._next_fns):
            raise RuntimeError(
                "A leaf node was passed to _will_engine_execute_node but we are currently "
                "running autograd.grad(). This is currently not supported."
            )
        return True

    def steps(self, record: bool) -> Iterator[StepRecord | None]:
        """The engine loop: run ready nodes, most recently created first, one per iteration.

        Yields a :class:`StepRecord` per node when ``record`` is true (None otherwise); the
        caller sets grad mode (``create_graph``) around iterations. The plain path: pop a ready
        node, run it on its buffered gradient, route what it returns (:meth:`_route`). Leaves
        accumulate in :meth:`_accumulate`; hooks, captures, restricted passes and anomaly mode
        are handled in :meth:`_run_with_extras`, off the plain path.
        """
        heap = self.heap
        ready = self.ready
        popleft = ready.popleft
        heappop = heapq.heappop
        buffers = self.buffers
        create_graph = self.create_graph
        release = not self.keep_graph
        plain = self.plain
        route = self._route
        owned = self.owned
        index = -1
        while ready or heap:
            node = popleft() if ready else heappop(heap)[1]
            index += 1
            grads = buffers.pop(node, None)
            if type(node) is AccumulateGrad:
                self._accumulate(node, grads)
                yield StepRecord(node, (grads,), (), index) if record else None
                continue
            if plain and node._hooks is None and grads is not None:
                outputs = node.run_backward(grads, create_graph, release)
                fresh = node._fresh_outputs and not record
                if fresh and node._passes_grad_view and node in owned:
                    owned.discard(node)
                    fresh = _TOOK  # its incoming gradient was the engine's alone
            else:
                outputs = self._run_with_extras(node, grads)
                if outputs is None:  # only reached, to capture its gradient
                    yield StepRecord(node, _as_tuple(grads, node), (), index) if record else None
                    continue
                hooks = node._hooks
                # A node with hooks: not fresh. A pre-hook may have replaced the incoming
                # gradient, so ``grads`` is not what the node ran on and _route could not tell
                # the gradient it returned for two inputs (AddBackward0's) from a new array;
                # a post hook's results may be held by the user.
                fresh = node._fresh_outputs and not record and hooks is None
                if fresh and node._passes_grad_view and node in owned:
                    owned.discard(node)
                    if not self.anomaly and not self._captures_node(node):
                        fresh = _TOOK  # (no hook, capture or anomaly check saw its gradient)
            sent = route(node, grads, outputs, fresh, record)
            yield StepRecord(node, _as_tuple(grads, node), sent, index) if record else None

    def _route(self, node: Node, grads: Any, outputs: Sequence[Any], fresh: bool,
               record: bool) -> tuple:
        """Send each gradient ``node`` returned along its edge: reduced and cast to the input's
        metadata, added to the next node's buffer; a node whose last gradient arrived becomes
        ready. Returns the gradients sent when ``record``.

        Ownership: a leaf's ``.grad`` may take a gradient array without a copy only when the
        engine owns it. The engine owns what it made (a sum in a buffer, a reduction or cast
        here) and, when ``fresh`` (an op-table node; no step record or post hook holds its
        results), what the node returned that shares no memory with its incoming gradient or
        its other results: the op table's derivatives return new arrays (or views of them), or
        the incoming gradient or a view of it (CONTRIBUTING.md). A view node's incoming
        gradient is tracked too (``Node._passes_grad_view``): when the engine owned it
        (``fresh == _TOOK``), the view the node returns of it is owned as well, so a weight's
        gradient through ``w.t()`` becomes ``.grad`` uncopied (:func:`_owned_result`).
        Anything else (a user's gradient, a custom Function's result) may be
        held elsewhere and is copied into ``.grad``; a leaf hook's result is owned when nothing
        else refers to it (:func:`_sole_owner`, as PyTorch's use count).
        """
        buffers = self.buffers
        deps = self.deps
        executes = self.executes
        create_graph = self.create_graph
        heappush = heapq.heappush
        in_meta = node._in_meta
        sent: list[Any] | None = [] if record else None
        i = -1
        for child in node._next_fns:
            i += 1
            if child is None or (executes is not None and child not in deps):
                if sent is not None:
                    sent.append(None)
                continue
            g = outputs[i]
            if g is not None:
                owned = False
                meta = in_meta[i]
                if meta is not None and (
                    create_graph or g.dtype is not meta[1] or g.shape != meta[0]
                ):
                    fixed = _fix_grad(node, i, g, meta, create_graph)
                    owned = fixed is not g
                    g = fixed
                if type(child) is AccumulateGrad or child._passes_grad_view:
                    old = buffers.get(child)
                    if old is not None:
                        buffers[child] = old + g
                        self.owned.add(child)
                    else:
                        buffers[child] = g
                        if not create_graph and (owned or fresh and (
                            g is not grads and g.base is None and type(grads) is not list
                            or (g is not grads or fresh == _TOOK)
                            and _owned_result(g, grads, outputs, fresh == _TOOK)
                        )):
                            self.owned.add(child)
                elif child._n_out == 1:
                    old = buffers.get(child)
                    buffers[child] = g if old is None else old + g
                else:
                    slots = buffers.get(child)
                    if slots is None:
                        slots = buffers[child] = [None] * child._n_out
                    nr = node._next_nrs[i]
                    slots[nr] = g if slots[nr] is None else slots[nr] + g
            if sent is not None:
                sent.append(g)
            remaining = deps[child] - 1
            deps[child] = remaining
            if remaining == 0:  # ready (as _push, inline: this runs once per edge)
                if type(child) is AccumulateGrad:
                    self.ready.append(child)
                else:
                    heappush(self.heap, (-child._seq, child))
        return tuple(sent) if sent is not None else ()

    def _accumulate(self, node: AccumulateGrad, grads: Any) -> None:
        """Run a leaf's AccumulateGrad node: its hooks, then the sum into ``.grad``."""
        owned = self.owned
        is_owned = node in owned
        if is_owned:
            owned.discard(node)
        if grads is None:
            self._accumulate_nothing(node)
            return
        variable = node.variable
        hooks = node._hooks
        if not (self.plain and hooks is None and variable._hooks is None):
            before = grads
            runs, grads = self._before_accumulate(node, grads)
            if not runs:
                if is_owned and hooks is None and variable._hooks is None:
                    self._hand_over_capture(node, grads)
                return
            if grads is not before:  # a hook's result: owned unless the user kept it
                is_owned = not self.create_graph and _sole_owner(grads)
        if grads is not None:  # (a pre-hook may have dropped it)
            accumulate_grad(variable, self._leaf_grad(grads), self.record_graph, is_owned)
        if hooks is not None and hooks.post:
            _call_post_hooks(node, (), (grads,), self.create_graph)

    def _leaf_grad(self, grads: Any) -> Any:
        """What goes into a leaf's ``.grad``: the array of a Tensor gradient that flows only
        to carry tangents (PyTorch's ``.grad`` has no tangent, and is summed in place)."""
        if self.create_graph and not self.record_graph and isinstance(grads, Tensor):
            return grads._data
        return grads

    def _accumulate_nothing(self, node: AccumulateGrad) -> None:
        """A leaf's AccumulateGrad reached without a gradient (a node returned None for it):
        as in PyTorch it still runs: its hooks see None, ``.grad`` stays as it is, and its
        post-accumulate hooks are called."""
        variable = node.variable
        hooks = node._hooks
        if hooks is None and variable._hooks is None:
            return
        runs, grads = self._before_accumulate(node, None)
        if not runs:
            return
        if grads is not None:  # (no hook can replace None: they raise)
            accumulate_grad(variable, self._leaf_grad(grads), self.record_graph)
        elif variable._hooks is not None and variable._hooks.post_accumulate:
            _call_post_accumulate_hooks(variable, tuple(variable._hooks.post_accumulate.values()))
        if hooks is not None and hooks.post:
            _call_post_hooks(node, (), (grads,), self.create_graph)

    def _run_with_extras(self, node: Node, grads: Any) -> Sequence[Any] | None:
        """Run an op node off the plain path: captures and restricted passes, tensor and node
        hooks, anomaly mode, no incoming gradient. Returns the gradients for its inputs, or
        None for a node the pass only reaches to capture its gradient (``autograd.grad``).

        A node that received no gradient at all still runs, as in PyTorch: its hooks see None,
        and :meth:`Node.run_without_grad` runs it (an op node checks and frees what it saved, a
        custom Function's backward gets zeros)."""
        hooks = node._hooks
        create_graph = self.create_graph
        if grads is None and node._n_out != 1:
            grads = [None] * node._n_out
        if self.executes is not None and node not in self.executes:
            # Only captured (autograd.grad) or accumulated (backward(inputs=...)): as in
            # PyTorch, its tensor hooks run (not its node hooks), then the capture.
            self._reach(node, grads)
            return None
        if self.captures is not None:
            # A node that also runs is captured before its hooks, as in PyTorch.
            self._capture(node, grads)
        if hooks is not None:
            grads = _call_tensor_pre_hooks(node, grads, create_graph)
            if hooks.pre:
                grads = _call_node_pre_hooks(node, grads, create_graph)
        empty = grads is None or (node._n_out != 1 and all(g is None for g in grads))
        if self.anomaly:
            outputs = self._apply_checked(node, grads, empty)
            if not self.keep_graph:
                node.release()
        elif empty:
            outputs = node.run_without_grad(grads, create_graph, not self.keep_graph)
        else:
            outputs = node.run_backward(grads, create_graph, not self.keep_graph)
        if hooks is not None and hooks.post:
            # As PyTorch's engine, post hooks see the gradients already reduced and cast to
            # their inputs' metadata (validate_outputs runs first).
            outputs = _call_post_hooks(node, _validated(node, outputs, create_graph),
                                       _as_tuple(grads, node), create_graph)
        return outputs

    def _before_accumulate(self, node: AccumulateGrad, grads: Any) -> tuple[bool, Any]:
        """What comes before an AccumulateGrad node accumulates: the leaf's hooks, or for a
        leaf only captured by ``autograd.grad`` its tensor hooks and the capture. Returns
        whether the node runs, and the gradient after the hooks."""
        create_graph = self.create_graph
        if self.executes is not None and (node, 0) not in (self.accumulate_into or ()):
            if node.variable._hooks is not None:
                grads = _call_leaf_pre_hooks(node, grads, create_graph, node_hooks=False)
            if self.captures is not None:
                self._capture(node, grads)
            return False, grads
        if node._hooks is not None or node.variable._hooks is not None:
            grads = _call_leaf_pre_hooks(node, grads, create_graph)
        return True, grads

    def _reach(self, node: Node, grads: Any) -> None:
        """A node the pass does not run, reached to capture its gradient (``autograd.grad``):
        its tensor hooks, then the capture."""
        if node._hooks is not None:
            grads = _call_tensor_pre_hooks(node, grads, self.create_graph)
        if self.captures is not None:
            self._capture(node, grads)

    def _apply_checked(self, node: Node, grads: Any, empty: bool) -> Sequence[Any]:
        """``node.apply`` (``run_without_grad`` when ``empty``) in anomaly mode: NaN check,
        and the forward traceback on error."""
        from .anomaly import running

        try:
            with running(node):  # (nodes made by its backward get it as anomaly parent)
                if empty:
                    outputs = node.run_without_grad(grads, self.create_graph, False)
                else:
                    outputs = node.apply(grads, self.create_graph)
            _check_anomaly(node, outputs, self.create_graph)
        except Exception:
            from .anomaly import warn_error_in

            warn_error_in(node)
            raise
        return outputs

    def _captures_node(self, node: Node) -> bool:
        """Whether ``autograd.grad`` captures a gradient flowing into ``node``."""
        captures = self.captures
        return captures is not None and any((node, nr) in captures for nr in range(node._n_out))

    def _hand_over_capture(self, node: AccumulateGrad, g: Any) -> None:
        """A leaf's gradient that ``autograd.grad`` captured and the engine owns (no hook saw
        it): its result may take the array without a copy, unless the leaf is asked for twice
        (the two results must not share memory)."""
        ids = self.captures.get((node, 0)) if self.captures is not None else None
        if ids is not None and len(ids) == 1 and type(g) is np.ndarray and g.flags.writeable:
            self.captured_owned.add(ids[0])

    def _capture(self, node: Node, grads: Any) -> None:
        captures = self.captures
        assert captures is not None
        for nr in range(node._n_out):
            ids = captures.get((node, nr))
            if ids is not None:
                g = grads if node._n_out == 1 or grads is None else grads[nr]
                for i in ids:
                    self.captured[i] = g


_drain = deque(maxlen=0).extend  # consume an iterator at C speed


def _nodes_in_graph(root_edges: Sequence[tuple[Node, int]]) -> set[Node]:
    """PyTorch's ``nodes_in_graph``: the nodes reached along an edge from the graph root. With
    one root edge the root is that edge's node, which is then not in the set; with several,
    PyTorch adds a dummy root whose edges are the root edges, so their nodes are in it."""
    roots = [node for node, _ in root_edges]
    nodes = set(preorder(roots))
    if len(root_edges) == 1:
        nodes.discard(roots[0])
    return nodes

class ExecutionEngine:
    """``Variable._execution_engine``: what PyTorch's engine object offers Python code."""

    def queue_callback(self, callback: Callable[[], Any]) -> None:
        """Run ``callback()`` once the current backward pass has run its last node (callbacks
        run in the order queued)."""
        task = _CURRENT_TASK.get()
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        task.callbacks.append(callback)


def _sole_owner(g: Any) -> bool:
    """Whether the caller's local variable is the only reference to the gradient array ``g``
    and to the memory under it: for a gradient a hook returned, which a leaf's ``.grad`` may
    take without a copy only if the user kept no reference to it (PyTorch's rule there: the
    tensor's use count). The engine's own gradients follow :meth:`GraphTask._route`'s rule.
    The counts a sole owner produces depend on the interpreter (its frames and stack), so they
    are measured once, on import, by :func:`_sole_owner_counts`.
    """
    if type(g) is not _ndarray or _getrefcount(g) > _SOLE_COUNT:
        return False
    base = g.base
    return base is None or (
        type(base) is _ndarray and base.base is None and _getrefcount(base) <= _SOLE_BASE_COUNT
    )


def _probe_counts(g: Any) -> tuple[int, int]:
    """The reference counts :func:`_sole_owner` reads, from a frame shaped like its own."""
    base = g.base
    return _getrefcount(g), _getrefcount(base)


def _sole_owner_counts() -> tuple[int, int]:
    """What :func:`_sole_owner` sees for a view held by one local variable only, whose base
    only that view holds (CPython 3.11: 3 and 3)."""
    g = np.empty(2)[:1]
    return _probe_counts(g)


_SOLE_COUNT, _SOLE_BASE_COUNT = _sole_owner_counts()


#: ``fresh`` when an op-table node ran on an incoming gradient the engine owned (see _route).
_TOOK = 2


def _root(array: Any) -> Any:
    """The array owning ``array``'s memory (NumPy points a view's ``base`` at it)."""
    base = array.base
    return array if base is None else base


def _owned_result(g: Any, grads: Any, outputs: Sequence[Any], took: bool) -> bool:
    """Whether gradient ``g``, returned by an op-table node that ran on ``grads``, is the
    engine's alone, so it may become ``.grad`` without a copy (the engine's ownership rule).

    The op table's derivatives return new arrays, or the incoming gradient or a view of it
    (CONTRIBUTING.md). So ``g`` is the engine's when its memory is not the incoming
    gradient's, or when it is but the engine owned that incoming gradient (``took``: a view
    node's, e.g. ``TBackward0``'s, sent along by an earlier node as a new array) -- and in both
    cases no other gradient the node returned shares that memory.
    """
    root = _root(g)
    incoming = grads if type(grads) is list else (grads,)
    if any(x is not None and _root(x) is root for x in incoming) and not took:
        return False
    shared = 0
    for other in outputs:
        if other is not None and _root(other) is root:
            shared += 1
    return shared == 1


def _as_tuple(grads: Any, node: Node) -> tuple:
    if node._n_out == 1:
        return (grads,)
    return tuple(grads) if grads is not None else (None,) * node._n_out


def _stack_depth() -> int:
    """How many Python frames this thread's stack holds (counted, not recursed)."""
    depth = 0
    frame = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _run_in_fresh_thread(run: Callable[[], None]) -> None:
    """``run()`` on a new thread (a fresh stack) in a copy of this context; waits for it and
    raises its exception here."""
    context = contextvars.copy_context()
    failure: list[BaseException] = []

    def target() -> None:
        try:
            context.run(run)
        except BaseException as error:  # noqa: BLE001 - handed to the waiting caller
            failure.append(error)

    worker = threading.Thread(target=target, name="chainrule-reentrant-backward")
    worker.start()
    worker.join()
    if failure:
        raise failure[0]


# ----------------------------------------------------------------------------------------------
# Graph walks (explicit stacks, never recursion)

def _count_dependencies(roots: list[Node]) -> dict[Node, int]:
    """For every node reachable from ``roots``, how many edges point at it."""
    deps: dict[Node, int] = {}
    get = deps.get
    # Roots start on the stack, so one that another root reaches is not pushed again. A single
    # root cannot be reached from itself (the graph is acyclic): it needs no such check.
    root_set: set[Node] | tuple[()] = set(roots) if len(roots) > 1 else ()
    stack = list(root_set or roots)
    push = stack.append
    pop = stack.pop
    while stack:
        for child in pop()._next_fns:
            if child is not None:
                count = get(child)
                if count is None:
                    deps[child] = 1
                    # Sinks (AccumulateGrad) have nothing to expand.
                    if child._next_fns and child not in root_set:
                        push(child)
                else:
                    deps[child] = count + 1
    return deps


def _topological_order(roots: list[Node], deps: dict[Node, int]) -> list[Node]:
    """Nodes ordered so every node comes before the nodes it sends gradients to."""
    remaining = dict(deps)
    order: list[Node] = []
    stack = [n for n in dict.fromkeys(roots) if remaining.get(n, 0) == 0]
    while stack:
        node = stack.pop()
        order.append(node)
        for child in node._next_fns:
            if child is None:
                continue
            remaining[child] -= 1
            if remaining[child] == 0:
                stack.append(child)
    return order


def _nodes_to_execute(roots: list[Node], deps: dict[Node, int], targets: set[Node]) -> set[Node]:
    """Nodes that lie on a path from a root to a target (the targets' own nodes excluded)."""
    needed: set[Node] = set()
    for node in reversed(_topological_order(roots, deps)):
        for child in node._next_fns:
            if child is not None and (child in targets or child in needed):
                needed.add(node)
                break
    return needed


def _restricted_dependencies(
    roots: list[Node], executes: set[Node], targets: set[Node]
) -> dict[Node, int]:
    """Dependency counts over edges from executing nodes to executing or target nodes."""
    deps: dict[Node, int] = {}
    for node in executes:
        for child in node._next_fns:
            if child is not None and (child in executes or child in targets):
                deps[child] = deps.get(child, 0) + 1
    for root in roots:
        deps.setdefault(root, 0)
    return deps


# ----------------------------------------------------------------------------------------------
# Hooks

def _wrap_grad(g: Any, create_graph: bool) -> Any:
    if g is None or create_graph:
        return g
    return wrap(np.asarray(g))


def _unwrap_grad(t: Any, create_graph: bool) -> Any:
    if t is None or create_graph:
        return t
    return t._data


def _hook_name(hook: Any) -> str:
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _legacy_type_name(t: Tensor) -> str:
    """PyTorch's ``Tensor.toString()``: the legacy type name, ``chainrule.FloatTensor``."""
    from .._tensor import LEGACY_TYPE_NAMES

    return "chainrule." + LEGACY_TYPE_NAMES[from_numpy_dtype(t._data.dtype)]


def _check_hook_result(original: Tensor | None, result: Any, hook: Any) -> None:
    """PyTorch's checks of a gradient a hook returned in place of ``original`` (not None)."""
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type_name(result)}'")
    if result._data.dtype != original._data.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has changed the type of value (was "
            f"{_legacy_type_name(original)} got {_legacy_type_name(result)})"
        )
    if result._data.shape != original._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")


def _check_hook_results(original: tuple, result: Any, hook: Any) -> None:
    """The checks for hooks that take and return a tuple of gradients (node hooks)."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type_name(result)}'")
    if len(result) != len(original):
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
            f"{len(result)}, but expected {len(original)})"
        )
    for before, after in zip(original, result, strict=True):
        if after is not None:
            _check_hook_result(before, after, hook)


def _run_tensor_hooks(hooks: Any, grad: Any) -> Any:
    """Call tensor hooks ``fn(grad)`` in registration order, each on what the previous one
    returned; returns the final gradient (a Tensor or None)."""
    for fn in hooks:
        result = fn(grad)
        if result is not None and result is not grad:
            _check_hook_result(grad, result, fn)
            grad = result
    return grad


def _run_node_hooks(hooks: Any, grads: tuple, *extra: tuple) -> tuple:
    """Call node hooks ``fn(grads, *extra)``, each on what the previous one returned."""
    for fn in hooks:
        result = fn(grads, *extra)
        if result is not None and result is not grads:
            _check_hook_results(grads, result, fn)
            grads = result
    return grads


def _retain(t: Tensor, g: Any, create_graph: bool) -> None:
    """``retain_grad``: store (or add) the gradient of ``t`` in ``t.grad``: a row-major copy,
    as PyTorch's ``grad.clone(at::MemoryFormat::Contiguous)``, recorded (``CloneBackward0``)
    under ``create_graph``."""
    if t._grad is None:
        if create_graph:
            t._grad = g.clone(memory_format=contiguous_format)
        else:
            t._grad = wrap(np.array(g, order="C"))
    else:
        t._grad = t._grad + _wrap_grad(g, create_graph)


def _call_tensor_pre_hooks(node: Node, grads: Any, create_graph: bool) -> Any:
    """Hooks registered on the node's output tensors, then their retain_grad (PyTorch's order).
    Tensor hooks of an output that got no gradient are called with None, as in PyTorch."""
    hooks = node._hooks
    assert hooks is not None
    single = node._n_out == 1
    slots = [grads] if single else list(grads)
    if hooks.tensor_pre:
        for nr, fn in tuple(hooks.tensor_pre.values()):
            before = _wrap_grad(slots[nr], create_graph)
            after = _run_tensor_hooks((fn,), before)
            if after is not before:
                slots[nr] = _unwrap_grad(after, create_graph)
    for nr, ref in tuple(hooks.retains.items()):
        t = ref()
        g = slots[nr]
        if t is not None and g is not None:
            _retain(t, g, create_graph)
    return slots[0] if single else slots


def _call_node_pre_hooks(node: Node, grads: Any, create_graph: bool) -> Any:
    """Pre-hooks registered on the node itself: ``fn(grad_outputs)``."""
    hooks = node._hooks
    assert hooks is not None
    single = node._n_out == 1
    before = (_wrap_grad(grads, create_graph),) if single else tuple(
        _wrap_grad(g, create_graph) for g in grads
    )
    after = _run_node_hooks(tuple(hooks.pre.values()), before)
    if after is before:
        return grads
    if single:
        return _unwrap_grad(after[0], create_graph)
    return [_unwrap_grad(g, create_graph) for g in after]


def _call_leaf_pre_hooks(
    node: AccumulateGrad, grads: Any, create_graph: bool, node_hooks: bool = True
) -> Any:
    """Hooks registered on the leaf tensor, then pre-hooks on its AccumulateGrad node."""
    var = node.variable
    if var._hooks is not None and var._hooks.pre:
        before = _wrap_grad(grads, create_graph)
        after = _run_tensor_hooks(tuple(var._hooks.pre.values()), before)
        if after is not before:
            grads = _unwrap_grad(after, create_graph)
    if node_hooks and node._hooks is not None and node._hooks.pre:
        before = (_wrap_grad(grads, create_graph),)
        after = _run_node_hooks(tuple(node._hooks.pre.values()), before)
        if after is not before:
            grads = _unwrap_grad(after[0], create_graph)
    return grads


def _call_post_hooks(node: Node, outputs: tuple, grads_in: tuple, create_graph: bool) -> tuple:
    """Node hooks ``fn(grad_inputs, grad_outputs)``; they may replace ``grad_inputs``."""
    hooks = node._hooks
    assert hooks is not None
    wrapped_out = tuple(_wrap_grad(g, create_graph) for g in outputs)
    wrapped_in = tuple(_wrap_grad(g, create_graph) for g in grads_in)
    result = _run_node_hooks(tuple(hooks.post.values()), wrapped_out, wrapped_in)
    if result is wrapped_out:
        return outputs
    return tuple(_unwrap_grad(g, create_graph) for g in result)


def _call_post_accumulate_hooks(var: Tensor, hooks: Any) -> None:
    """``fn(tensor)`` after accumulation into a leaf. They must return None (or the tensor
    itself); PyTorch checks what they return like a gradient, then refuses it."""
    if _run_tensor_hooks(hooks, var) is not var:
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _check_anomaly(node: Node, outputs: tuple, create_graph: bool) -> None:
    if not _state.anomaly_check_nan:
        return
    for i, g in enumerate(outputs):
        if g is None:
            continue
        data = g._data if create_graph else np.asarray(g)
        if data.dtype.kind in "fcV" and np.isnan(data).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


# ----------------------------------------------------------------------------------------------
# Public entry points (used by Tensor.backward, autograd.backward and autograd.grad)

def _as_tensor_tuple(x: Any, what: str) -> tuple:
    """``outputs``/``inputs`` as a tuple: one Tensor or GradientEdge, or a sequence of them."""
    if x is None:
        return ()
    if isinstance(x, Tensor | GradientEdge):
        return (x,)
    return tuple(x)


def _edge_of(edge: GradientEdge) -> tuple[Node, int]:
    """A GradientEdge given as an output or input, checked as PyTorch's engine checks it."""
    node = edge[0]
    if not isinstance(node, Node):
        raise RuntimeError(
            f"GradientEdge's first object must be an autograd.graph.Node but got "
            f"{type_name(node)}"
        )
    return (node, operator.index(edge[1]))


def _edge_metadata(edge: GradientEdge) -> tuple[tuple[int, ...], np.dtype] | None:
    """The shape and dtype of the tensor a GradientEdge output stands for (PyTorch reads
    ``edge.node._input_metadata[edge.output_nr]``, and fails as that expression does); None
    when this package cannot tell (see :func:`~.graph.edge_output_meta`)."""
    node, nr = edge[0], edge[1]
    if not isinstance(node, Node):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_input_metadata'")
    if not isinstance(nr, int):
        raise TypeError(f"tuple indices must be integers or slices, not {type(nr).__name__}")
    if not 0 <= nr < node._n_out:
        raise IndexError("tuple index out of range")
    return edge_output_meta(node, nr)


def _unknown_edge_metadata(node: Node) -> RuntimeError:
    """Beyond PyTorch: the implicit gradient of a GradientEdge output whose tensor this package
    never saw (an edge made by hand to a node reached through ``next_functions``)."""
    return RuntimeError(
        f"cannot make the gradient of a GradientEdge output of {node.name()}: its shape is not "
        "known (get the edge with get_gradient_edge(tensor), or pass its gradient in "
        "grad_outputs)"
    )


def _check_implicit_grad(shape: tuple[int, ...], np_dtype: np.dtype) -> None:
    """PyTorch makes the gradient of an output itself (ones) only for a real scalar."""
    if any(size != 1 for size in shape):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if np_dtype.kind not in "fV":
        raise RuntimeError(
            "grad can be implicitly created only for real scalar outputs but got "
            f"{from_numpy_dtype(np_dtype)}"
        )


def _make_root_grads(
    outputs: tuple, grad_outputs: tuple, create_graph: bool, is_grads_batched: bool = False
) -> list[Any]:
    """Check each given output gradient (or make the implicit one) like PyTorch does. An output
    may be a GradientEdge: its gradient has the shape and dtype of the tensor it stands for."""
    result: list[Any] = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs, strict=True)):
        if isinstance(out, GradientEdge):
            meta = _edge_metadata(out)
            needs_grad = True
        elif isinstance(out, Tensor):
            meta = (out._data.shape, out._data.dtype)
            needs_grad = out._requires_grad
        else:
            raise AssertionError("Expected output to be a torch.Tensor")
        if g is None:
            if meta is None:
                raise _unknown_edge_metadata(out[0])
            shape, np_dtype = meta
            if needs_grad:
                _check_implicit_grad(shape, np_dtype)
            ones = _ones(shape, np_dtype)
            result.append(wrap(ones) if create_graph else ones)
            continue
        if isinstance(g, Tensor):
            if meta is None:  # (a GradientEdge to a node whose output is not known)
                result.append(g if create_graph else g._data)
                continue
            shape, want = meta
            if g._data.shape != shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} "
                    f"and output[{i}] has a shape of {Size(shape)}."
                )
            if (g._data.dtype.kind == "c") != (want.kind == "c"):
                raise RuntimeError(
                    f"For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{from_numpy_dtype(g._data.dtype)} and output[{i}] has a dtype of "
                    f"{from_numpy_dtype(want)}."
                )
            if g._data.dtype != want:
                # As PyTorch's engine (validate_outputs on the root edges): a gradient of
                # another dtype is cast to the output's before anything sees it, so a float64
                # cotangent of a float16 output is rounded through float16.
                g = g.to(from_numpy_dtype(want)) if create_graph else wrap(
                    g._data.astype(want))
            result.append(g if create_graph else g._data)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}"
            )
    return result


_ONES_CACHE: dict[tuple, np.ndarray] = {}


def _ones(shape: tuple[int, ...], np_dtype: np.dtype) -> np.ndarray:
    """A read-only array of ones (cached for single-element shapes: seeding is per backward)."""
    key = (shape, np_dtype)
    ones = _ONES_CACHE.get(key)
    if ones is None:
        ones = np.ones(shape, np_dtype)
        ones.flags.writeable = False
        if ones.size == 1:
            _ONES_CACHE[key] = ones
    return ones


def _root_edges(outputs: tuple) -> list[tuple[Node, int]]:
    edges = []
    for i, out in enumerate(outputs):
        if isinstance(out, GradientEdge):
            edges.append(_edge_of(out))
            continue
        edge = gradient_edge(out)
        if edge[0] is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(edge)
    return edges


def _pair_gradients(outputs: tuple, gradients: tuple) -> tuple:
    """PyTorch pairs outputs with gradients: too few is an error, extra ones are ignored."""
    if len(gradients) < len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(gradients)} gradients")
    return gradients[: len(outputs)]


def tensor_backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate the gradient of this tensor into the ``.grad`` of the graph's leaves.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([1., 2.], requires_grad=True)
        >>> (x * x).backward(gradient=torch.tensor([1., 0.]))
        >>> x.grad
        tensor([2., 0.])
    """
    if gradient is None and inputs is None and retain_graph is None and not create_graph:
        backward_scalar(self)
    else:
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def backward_scalar(tensor: Tensor) -> None:
    """``tensor.backward()`` with no arguments: the common case, without argument handling."""
    if tangents_alive():  # (forward mode: the pass carries tangents, see backward())
        backward(tensor)
        return
    if not tensor._requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn"
        )
    data = tensor._data
    _check_implicit_grad(data.shape, data.dtype)
    edge = gradient_edge(tensor)
    if edge[0] is None:  # a no-grad view that requires grad: gradients to it go nowhere
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn"
        )
    node = edge[0]
    if node._runs_alone and _run_alone(node, edge[1], _ones(data.shape, data.dtype)):
        return
    GraphTask([edge], [_ones(data.shape, data.dtype)], False, False).run()


def _run_alone(node: Node, nr: int, grad: np.ndarray) -> bool:
    """``backward()`` from a node whose edges all lead to leaves (a compiled call's one
    node, ``Node._runs_alone``), without a GraphTask: the node runs, then each leaf
    accumulates, in the order the engine would run them. Only when nothing could observe the
    difference: no hooks on the node or the leaves, no anomaly mode, no enclosing pass, no
    leaf reached twice; returns False (nothing done) otherwise. (The seed example's
    ``loss.backward()`` costs a few microseconds this way instead of the engine's ~20.)"""
    if node._hooks is not None or ANOMALY_STATE.enabled or _CURRENT_TASK.get() is not None:
        return False
    children = node._next_fns
    for child in children:
        if child is not None and (
            type(child) is not AccumulateGrad
            or child._hooks is not None
            or child.variable._hooks is not None
        ):
            return False
    if len(children) > 1 and len(set(children)) != len(children):
        return False
    if node._n_out != 1:  # (the gradient of output ``nr``; None for the others)
        grads: Any = [None] * node._n_out
        grads[nr] = grad
        grad = grads
    outputs = node.run_backward(grad, False, True)
    in_meta = node._in_meta
    for i, child in enumerate(children):
        g = outputs[i]
        if child is None or g is None:
            continue
        meta = in_meta[i]
        if meta is not None and (g.dtype is not meta[1] or g.shape != meta[0]):
            g = _fix_grad(node, i, g, meta, False)
        accumulate_grad(child.variable, g, False, True)  # (the node's results are fresh)
    return True


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the leaves' ``.grad`` (autograd.backward)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tensor_tuple(tensors, "tensors")
    if grad_tensors is None:
        grads_given: tuple = (None,) * len(outputs)
    elif isinstance(grad_tensors, Tensor):
        grads_given = (grad_tensors,)
    else:
        grads_given = tuple(grad_tensors)
    grads_given = _pair_gradients(outputs, grads_given)
    input_tensors = _as_tensor_tuple(inputs, "inputs")
    if inputs is not None and not input_tensors:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=3)
    # In a dual level with tangents about, the pass runs its formulas on Tensors (recorded only
    # with create_graph), so that the gradients carry tangents as PyTorch's (forward mode through
    # the backward pass): hooks see them; ``.grad`` gets none, as PyTorch's.
    on_tensors = create_graph or tangents_alive()
    root_grads = _make_root_grads(outputs, grads_given, on_tensors)
    roots = _root_edges(outputs)
    accumulate_into = None
    if input_tensors:
        accumulate_into = {}
        for t in input_tensors:
            if isinstance(t, GradientEdge):
                # Its node runs (a leaf's AccumulateGrad accumulates); no tensor to retain.
                accumulate_into[_edge_of(t)] = None
                continue
            if not isinstance(t, Tensor):
                raise RuntimeError(
                    f"all inputs have to be Tensors or GradientEdges, but got {type_name(t)}"
                )
            edge = gradient_edge(t)
            if edge[0] is None:
                if not t._requires_grad:
                    raise RuntimeError(
                        "can't retain_grad on Tensor that has requires_grad=False"
                    )
                continue  # a no-grad view: it requires grad, but nothing accumulates into it
            accumulate_into[edge] = t
            if t._grad_node is not None:
                # As PyTorch: a non-leaf input keeps its gradient by retain_grad (for good).
                t.retain_grad()
    GraphTask(roots, root_grads, retain_graph, on_tensors, accumulate_into=accumulate_into,
              record_graph=create_graph).run()


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (``torch.autograd.grad``).

    Annotated as PyTorch annotates it, ``tuple[Tensor, ...]``, although an entry is None for an
    unused input with ``allow_unused=True`` (so ``x - lr * grad(y, x)[0]`` type-checks).
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tensor_tuple(outputs, "outputs")
    ins = _as_tensor_tuple(inputs, "inputs")
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if grad_outputs is None:
        grads_given: tuple = (None,) * len(outs)
    elif isinstance(grad_outputs, Tensor):
        grads_given = (grad_outputs,)
    else:
        grads_given = tuple(grad_outputs)
    grads_given = _pair_gradients(outs, grads_given)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outs, ins, grads_given, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    # (in a dual level with tangents about: on Tensors, so that the gradients carry tangents,
    # forward-over-reverse; recorded only with create_graph)
    on_tensors = create_graph or tangents_alive()
    root_grads = _make_root_grads(outs, grads_given, on_tensors)
    roots = _root_edges(outs)
    captures: dict[tuple[Node, int], list[int]] = {}
    for i, t in enumerate(ins):
        if isinstance(t, Tensor):
            if not t._requires_grad:
                raise RuntimeError(
                    "One of the differentiated Tensors does not require grad"
                )
            edge = gradient_edge(t)
        elif isinstance(t, GradientEdge):
            edge = _edge_of(t)  # the gradient flowing into that edge
        else:
            raise RuntimeError(
                f"all inputs have to be Tensors or GradientEdges, but got {type_name(t)}"
            )
        captures.setdefault(edge, []).append(i)
    task = GraphTask(roots, root_grads, retain_graph, on_tensors, captures=captures,
                     record_graph=create_graph)
    task.run()
    captured = task.captured + [None] * (len(ins) - len(task.captured))
    if not allow_unused:
        for i, g in enumerate(captured):
            if g is None:
                raise _unused_input_error(i)
    if materialize_grads and any(
        g is None and not isinstance(t, Tensor) for g, t in zip(captured, ins, strict=True)
    ):
        raise RuntimeError(
            "materialize_grads cannot be used when the given input is a GradientEdge"
        )
    result: list[Any] = []  # (Tensor, or None for an unused input: see the docstring)
    for i, g in enumerate(captured):
        if g is None:
            if materialize_grads:
                from ..ops.creation import zeros_like

                result.append(zeros_like(ins[i], requires_grad=create_graph))
            else:
                result.append(None)
            continue
        if on_tensors:
            result.append(g)
        else:
            result.append(wrap(g if i in task.captured_owned else np.array(g)))
    return tuple(result)


# ----------------------------------------------------------------------------------------------
# What the core classes do through the engine, installed from this layer (the core imports
# nothing above it): ``Tensor.backward`` and ``AccumulateGrad.apply``.

tensor_backward.__name__ = tensor_backward.__qualname__ = "backward"
Tensor.backward = tensor_backward  # type: ignore[method-assign]


def _accumulate_grad_apply(self: AccumulateGrad, grads: Any, create_graph: bool) -> tuple[()]:
    """Add ``grads`` into the leaf's ``.grad`` (as the engine does when it runs this node)."""
    accumulate_grad(self.variable, grads, create_graph)
    return ()


_accumulate_grad_apply.__name__ = _accumulate_grad_apply.__qualname__ = "apply"
AccumulateGrad.apply = _accumulate_grad_apply  # type: ignore[method-assign,assignment]


def _unused_input_error(index: int) -> RuntimeError:
    return RuntimeError(
        f"The differentiated Tensor at index {index} appears to not have been used in the "
        "graph. Set allow_unused=True if this is the desired behavior."
    )


#: ``grad(..., is_grads_batched=True)`` as one backward pass under vmap, installed by
#: ``chainrule.func`` (a higher layer): ``run(outs, ins, grads, retain_graph, create_graph)``
#: returns the batched gradients (None for an unused input), or None where the backward
#: formulas cannot be batched (then one pass per batch entry runs here).
VMAPPED_BACKWARD: list[Callable[..., Any]] = []


def _batched_grad(outs: tuple, ins: tuple, grads_given: tuple, retain_graph: bool,
                  create_graph: bool, allow_unused: bool, materialize_grads: bool) -> tuple:
    """``grad(..., is_grads_batched=True)``: the first dimension of each ``grad_output`` is a
    batch of cotangents. As PyTorch, one backward pass under vmap (``VMAPPED_BACKWARD``);
    where that cannot run, one vector-Jacobian product per batch entry, stacked (the graph
    kept until the last)."""
    from ..ops.creation import zeros_like
    from ..ops.shape import stack

    sizes = []
    for i, (out, g) in enumerate(zip(outs, grads_given, strict=True)):
        if not isinstance(g, Tensor) or g._data.shape[1:] != out._data.shape:
            # (PyTorch slices the first entry's shape once more: it shows shape[2:])
            got = Size(g._data.shape[2:]) if isinstance(g, Tensor) else None
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {got} and output[{i}] has a shape "
                f"of {Size(out._data.shape)}. If you only want some tensors in `grad_output` to "
                "be considered batched, consider using vmap."
            )
        sizes.append(g._data.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    batch = sizes[0] if sizes else 0
    if batch == 0:  # (PyTorch's vmap indexes the first entry)
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    vmapped = None
    if VMAPPED_BACKWARD:
        vmapped = VMAPPED_BACKWARD[0](outs, ins, grads_given, retain_graph, create_graph)
    if vmapped is not None:
        result = []
        for i, (t, g) in enumerate(zip(ins, vmapped, strict=True)):
            if g is None:
                if not allow_unused:
                    raise _unused_input_error(i)
                g = zeros_like(t, requires_grad=create_graph) if materialize_grads else None
            result.append(g)
        return tuple(result)
    per_entry = [
        grad(outs, ins, [g[b] for g in grads_given],
             retain_graph=retain_graph if b == batch - 1 else True, create_graph=create_graph,
             allow_unused=True)
        for b in range(batch)
    ]
    result: list[Any] = []
    for i, t in enumerate(ins):
        column = [entry[i] for entry in per_entry]
        if all(g is None for g in column):
            if not allow_unused:
                raise _unused_input_error(i)
            result.append(zeros_like(t, requires_grad=create_graph) if materialize_grads else None)
            continue
        result.append(stack([zeros_like(t) if g is None else g for g in column]))
    return tuple(result)


def _install_execution_engine() -> None:
    from .variable import Variable

    Variable._execution_engine = ExecutionEngine()  # type: ignore[attr-defined]


_install_execution_engine()
