"""``autograd.graph``: hooks on what the graph saves for backward, gradient edges, hooks on
several tensors, and the Node type.

``saved_tensors_hooks(pack_hook, unpack_hook)`` makes every tensor an op saves for backward go
through ``pack_hook`` when it is saved and ``unpack_hook`` when backward needs it (to offload,
compress or inspect saved activations), as in PyTorch; ``save_on_cpu`` and
``allow_mutation_on_saved_tensors`` are built on it. ``get_gradient_edge`` names where a
tensor's gradient is computed (a ``GradientEdge`` can stand for the tensor in
``autograd.grad``/``backward``), ``register_multi_grad_hook`` calls one hook for the gradients
of several tensors, ``increment_version`` counts an in-place write autograd did not see.

This module is in the core layer: what needs the engine (which graph task is running, which
nodes it will execute) it reads from :data:`CURRENT_GRAPH_TASK`, which the engine sets while it
runs a backward pass.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import functools
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator, MutableMapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol, cast

import numpy as np

from .._tensor import Tensor, grad_accumulator, is_inference_tensor, wrap
from .grad_mode import GRAD, MODE, SAVED_HOOKS, enable_grad, is_multithreading_enabled
from .inplace import bump_version
from .node import OUTPUT_META, AccumulateGrad, RemovableHandle, remember_output, type_name
from .node import Node as _NodeImpl

__all__ = [
    "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
    "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node", "GradientEdge",
    "get_gradient_edge", "increment_version", "current_saved_tensors_hooks", "SavedTensor",
    "pack_tensor",
]

class Node(abc.ABC):
    """``torch.autograd.graph.Node``: the abstract type of the backward graph's nodes
    (``grad_fn`` and its ``next_functions``, ``AccumulateGrad``, a custom Function's backward
    node and its ``ctx``). Every node chainrule makes is an instance, yet, as in PyTorch, this
    class is not among their bases: it is a virtual base (``isinstance(y.grad_fn, Node)`` and
    ``issubclass(type(y.grad_fn), Node)`` hold, ``Node not in type(y.grad_fn).mro()``)."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (``'MulBackward0'``)."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        """The edges to the nodes of the inputs: ``(node, input_nr)`` pairs."""

    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict for the user's own data about the node."""

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Call ``fn(grad_inputs, grad_outputs)`` after the node ran."""

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """Call ``fn(grad_outputs)`` before the node runs."""

    @abc.abstractmethod
    def _register_hook_dict(self, tensor: Tensor) -> None:
        """Attach ``tensor``'s hooks to the node (PyTorch's internal)."""

    @abc.abstractmethod
    def _sequence_nr(self) -> int:
        """The node's creation order (later nodes run first in backward)."""

    @property
    @abc.abstractmethod
    def _input_metadata(self) -> list[Any]:
        """Shape and dtype of each input of the node (each output of its forward)."""


Node.register(_NodeImpl)


def preorder(roots: Iterable[_NodeImpl]) -> Iterator[_NodeImpl]:
    """Every node reachable from ``roots``, once each, depth first in the order a recursive
    walk would visit them (a node's first next function before its second), with an explicit
    stack. The one graph walk of the engine's helpers, gradcheck, ``func`` and ``viz``."""
    seen: set[_NodeImpl] = set()
    stack = list(roots)
    stack.reverse()
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        children = node._next_fns
        for k in range(len(children) - 1, -1, -1):
            child = children[k]
            if child is not None and child not in seen:
                push(child)


PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook."
)

PackHook = Callable[[Any], Any]
UnpackHook = Callable[[Any], Any]

_STACK: contextvars.ContextVar[tuple[tuple[PackHook, UnpackHook], ...]] = contextvars.ContextVar(
    "chainrule_saved_tensors_hooks", default=()
)


# The message of the innermost disable_saved_tensors_hooks block (None outside any).
_DISABLED: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "chainrule_saved_tensors_hooks_disabled", default=None
)


def saved_tensors_hooks_disabled_message() -> str | None:
    """The message of the innermost ``disable_saved_tensors_hooks`` block, None outside any."""
    return _DISABLED.get()


def current_saved_tensors_hooks() -> tuple[PackHook, UnpackHook] | None:
    """The innermost active ``(pack_hook, unpack_hook)`` pair, or None."""
    stack = _STACK.get()
    return stack[-1] if stack else None


class saved_tensors_hooks:  # noqa: N801 - PyTorch's public name
    """Context manager: pack/unpack every tensor saved for backward inside the block.

    Example:
        >>> import chainrule as torch
        >>> seen = []
        >>> x = torch.ones(2, requires_grad=True)
        >>> hooks = torch.autograd.graph.saved_tensors_hooks
        >>> with hooks(lambda t: seen.append(t) or t, lambda t: t):
        ...     y = (x * x).sum()
        >>> len(seen)
        2
    """

    def __init__(self, pack_hook: PackHook, unpack_hook: UnpackHook) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    # Entering pushes this pair on the thread's stack and exiting pops the top one, whichever
    # it is, as PyTorch's do: an extra enter or exit inside a backward pass (unsupported) is
    # undone when the pass ends (restore_saved_tensors_hooks), and changes nothing else.
    def __enter__(self) -> None:
        disabled = _DISABLED.get()
        if disabled is not None:
            raise RuntimeError(disabled)
        restore_saved_tensors_hooks(_STACK.get() + ((self.pack_hook, self.unpack_hook),))

    def __exit__(self, *exc: object) -> None:
        restore_saved_tensors_hooks(_STACK.get()[:-1])


SavedTensorsHooksStack = tuple[tuple[PackHook, UnpackHook], ...]


def saved_tensors_hooks_stack() -> SavedTensorsHooksStack:
    """The thread's stack of ``(pack_hook, unpack_hook)`` pairs, innermost last."""
    return _STACK.get()


def restore_saved_tensors_hooks(stack: SavedTensorsHooksStack) -> None:
    """Make ``stack`` the thread's stack of saved-tensor hooks: the engine restores the one a
    backward pass started with when it ends, as PyTorch restores its thread-local state."""
    _STACK.set(stack)
    mode = MODE.get()
    wanted = mode | SAVED_HOOKS if stack else mode & ~SAVED_HOOKS
    if wanted != mode:
        MODE.set(wanted)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Generator[None, None, None]:
    """Context manager under which saved tensors hooks may not be used: entering a
    ``saved_tensors_hooks`` block (``save_on_cpu`` ...) inside it raises
    ``RuntimeError(error_message)``, and so does entering it while such hooks are active.
    Blocks nest; the outer message is in force again after an inner block.

    Example:
        >>> import chainrule as torch
        >>> graph = torch.autograd.graph
        >>> with graph.disable_saved_tensors_hooks("no hooks here"):
        ...     try:
        ...         with graph.save_on_cpu():
        ...             pass
        ...     except RuntimeError as error:
        ...         print(error)
        no hooks here
    """
    token = _DISABLED.set(error_message)
    try:
        if _STACK.get():
            raise RuntimeError(error_message)
        yield
    finally:
        _DISABLED.reset(token)


class SavedTensor:
    """A tensor saved for backward through a ``saved_tensors_hooks`` pair (PyTorch's
    SavedVariable with hooks): what the pack hook returned, and the autograd identity of the
    saved tensor, given back to what the unpack hook returns.

    The saved tensor itself is not kept (an output would point back at its node). Unpacking
    gives a new tensor with the unpacked data (and its version counter) and the saved
    tensor's history: its ``grad_fn`` (the owning node for an output), or for a leaf its
    ``requires_grad`` and AccumulateGrad, so a gradient through it reaches the leaf.
    """

    __slots__ = (
        "packed", "unpack_hook", "grad_fn", "output_nr", "requires_grad", "accumulator",
        "is_output",
    )

    def unpack(self, owner: _NodeImpl | None) -> Tensor:
        """Call the unpack hook; ``owner`` is the node that saved the tensor (None for one saved
        outside any node, not as an output: checkpoint's inputs)."""
        data = self.unpack_hook(self.packed)
        if not isinstance(data, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type_name(data)}"
            )
        fn = owner if self.is_output else self.grad_fn
        if fn is None and not self.requires_grad and not data._requires_grad:
            return data  # nothing to give back: PyTorch returns what unpack returned
        t = wrap(data._data)
        t._vc = data._vc
        if fn is not None:
            t._grad_node = fn
            t._output_nr = self.output_nr
            t._requires_grad = True
        elif self.requires_grad:
            t._requires_grad = True
            t._acc = self.accumulator
        return t


def pack_tensor(t: Tensor, hooks: tuple[PackHook, UnpackHook], is_output: bool) -> SavedTensor:
    """Save ``t`` through ``hooks``: the pack hook sees ``t`` itself, in no_grad mode, and may
    not modify it in place (PyTorch's error, raised after the hook ran)."""
    version = t._vc[0]
    token = MODE.set(MODE.get() & ~GRAD)
    try:
        packed = hooks[0](t)
    finally:
        MODE.reset(token)
    if t._vc[0] != version:
        raise RuntimeError(PACK_INPLACE_MESSAGE)
    saved = SavedTensor()
    saved.packed = packed
    saved.unpack_hook = hooks[1]
    saved.is_output = is_output
    saved.output_nr = t._output_nr
    saved.grad_fn = None if is_output else t._grad_node
    saved.requires_grad = t._requires_grad
    saved.accumulator = t._acc
    return saved


# ----------------------------------------------------------------------------------------------
# save_on_cpu


#: PyTorch's error for pinned memory on a machine without an accelerator.
PIN_MEMORY_MESSAGE = (
    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is "
    "available on this system."
)


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's public name
    """Context manager under which tensors saved by the forward pass are stored on the CPU and
    brought back to their device for backward.

    Everything here is on the CPU already, so as in PyTorch on a CPU tensor the pack hook keeps
    ``tensor.cpu()`` (the tensor itself, no copy) and the unpack hook returns it; with
    ``pin_memory=True`` the pack hook saves a new contiguous copy (PyTorch's ``empty`` +
    ``copy_``; pinning itself is refused, with PyTorch's error, only for
    ``device_type="cpu"``, the one device type that is available here). Values and gradients
    are those without the context.

    Example:
        >>> import chainrule as torch
        >>> a = torch.tensor([1., 2.], requires_grad=True)
        >>> with torch.autograd.graph.save_on_cpu(pin_memory=True):
        ...     y = (a * a).sum()
        >>> y.backward()
        >>> a.grad
        tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        # PyTorch asks ``getattr(torch, device_type, torch.cuda).is_available()``: only the
        # CPU is available on this machine.
        available = device_type == "cpu"

        def pack_to_cpu(tensor: Tensor) -> tuple[Any, Tensor]:
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            if available and not tensor.is_sparse:
                raise RuntimeError(PIN_MEMORY_MESSAGE)
            data = tensor._data
            packed = wrap(np.empty(data.shape, data.dtype))
            packed.copy_(tensor, non_blocking=False)
            return (tensor.device, packed)

        def unpack_from_cpu(packed: tuple[Any, Tensor]) -> Tensor:
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


# ----------------------------------------------------------------------------------------------
# Gradient edges


class GradientEdge(NamedTuple):
    """Object representing a given gradient edge within the autograd graph.

    To get the gradient edge where a given Tensor gradient will be computed,
    you can do ``edge = autograd.graph.get_gradient_edge(tensor)``.
    """

    node: _NodeImpl
    output_nr: int
    # This token can be used to ensure the graph stays alive when it cannot be
    # done via the node field
    ownership_token: _NodeImpl | None = None


def edge_output_meta(node: _NodeImpl, output_nr: int) -> tuple[tuple[int, ...], np.dtype] | None:
    """``(shape, numpy dtype)`` of output ``output_nr`` of ``node`` (the tensor a gradient
    flowing into that edge has the shape of), or None if this package cannot tell: the edge was
    made by hand to a single-output op node reached without its tensor (through
    ``next_functions``)."""
    if type(node) is AccumulateGrad:
        data = node.variable._data
        return (data.shape, data.dtype)
    known = OUTPUT_META.get(node)
    if known is not None and output_nr in known:
        return known[output_nr]
    out_meta = getattr(node, "_out_meta", None)
    if out_meta and 0 <= output_nr < len(out_meta) and out_meta[output_nr] is not None:
        shape, dtype = out_meta[output_nr][:2]
        return (shape, dtype)
    return None


def _get_grad_fn_or_grad_acc(t: Tensor | GradientEdge) -> _NodeImpl:
    """The node a gradient for ``t`` flows into: its ``grad_fn``, or a leaf's AccumulateGrad."""
    if isinstance(t, GradientEdge):
        return t.node
    node: _NodeImpl | None
    if t.requires_grad and t.grad_fn is None:
        node = grad_accumulator(t)
    else:
        node = t.grad_fn
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """Get the gradient edge for computing the gradient of the given Tensor.

    In particular, it is equivalent to call
    ``g = autograd.grad(loss, input)`` and ``g = autograd.grad(loss, get_gradient_edge(input))``.

    Example:
        >>> import chainrule as torch
        >>> x = torch.tensor([1., 2.], requires_grad=True)
        >>> y = x * 3
        >>> edge = torch.autograd.graph.get_gradient_edge(y)
        >>> edge.node.name(), edge.output_nr
        ('MulBackward0', 0)
        >>> torch.autograd.grad((y * y).sum(), edge)
        (tensor([ 6., 12.]),)
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor "
            "that does not require gradients",
        )
    grad_fn = _get_grad_fn_or_grad_acc(tensor)
    # As PyTorch: a custom Function's node gets an ownership token, a view of the tensor made
    # with grad mode on (its ViewBackward0 node). (Nodes here keep their graph alive without
    # one; the token is there because PyTorch's edge has it.)
    token = None
    if getattr(type(grad_fn), "_forward_cls", None) is not None:
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    output_nr = tensor.output_nr
    if type(grad_fn) is not AccumulateGrad:
        remember_output(grad_fn, output_nr, tensor._data)
    return GradientEdge(grad_fn, output_nr, ownership_token=token)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Update autograd metadata tracking whether the given Tensor was modified in place.

    Autograd bumps the version of every tensor an in-place op writes; call this after writing
    into a tensor's memory in a way autograd does not see (through ``tensor.numpy()``, say), so
    that a node which saved it refuses to use the changed values. Takes a tensor or an
    iterable of tensors; an inference tensor has no version counter and is skipped.

    Example:
        >>> import chainrule as torch
        >>> x = torch.ones(2)
        >>> torch.autograd.graph.increment_version(x)
        >>> x._version
        1
    """
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        tensors = iter(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in tensors:  # (as PyTorch: the tensors before a non-tensor are bumped)
        if not isinstance(t, Tensor):
            raise RuntimeError(
                "increment_version expects each element of the iterable to be a tensor"
            )
        if not is_inference_tensor(t):
            bump_version(t)


# ----------------------------------------------------------------------------------------------
# register_multi_grad_hook: what it needs from the engine


class GraphTaskView(Protocol):
    """What this module reads of the engine's running graph task."""

    id: int

    def will_execute(self, node: _NodeImpl) -> bool:
        """PyTorch's ``_will_engine_execute_node``."""
        ...

    def execution_order(self) -> list[_NodeImpl]:
        """The nodes the pass will run, in order, predicted from its start."""
        ...


#: The graph task whose nodes the engine is running in this thread (set by the engine: its
#: GraphTask, a :class:`GraphTaskView`).
CURRENT_GRAPH_TASK: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "chainrule_graph_task", default=None
)


def _current_graph_task_id() -> int:
    """The id of the backward pass running in this thread, -1 outside one (PyTorch's
    ``torch._C._current_graph_task_id``)."""
    task = CURRENT_GRAPH_TASK.get()
    return -1 if task is None else task.id


_EXECUTION_ORDER_THREADS_MESSAGE = (
    "get_current_graph_task_execution_order expects the current backward to be executed with "
    "multithreading disabled, e.g. by running:\n\n>>> with "
    "torch.autograd.set_multithreading_enabled(False):\n...     torch.autograd.grad(...)\n"
)


def _current_graph_task_execution_order() -> list[_NodeImpl]:
    """The nodes the running backward pass will execute, in order (PyTorch's
    ``torch._C._current_graph_task_execution_order``; to be called at the start of the pass,
    e.g. from a hook on the output, with multithreading disabled)."""
    task: GraphTaskView | None = CURRENT_GRAPH_TASK.get()
    if task is None:
        raise RuntimeError(
            "_current_graph_task_execution_order should only be called during the backward pass"
        )
    if is_multithreading_enabled():
        raise RuntimeError(_EXECUTION_ORDER_THREADS_MESSAGE)
    return task.execution_order()


def _will_engine_execute_node(node: _NodeImpl) -> bool:
    """Whether the running backward pass will execute ``node``: it is reachable from the
    pass's roots (a single root itself is not), and, for ``autograd.grad`` or
    ``backward(inputs=...)``, lies on a path to an input or is one (PyTorch's
    ``torch._C._will_engine_execute_node``)."""
    if not isinstance(node, _NodeImpl):
        raise RuntimeError(
            f"_will_engine_execute_node expects an grad_fn, but got {type_name(node)}"
        )
    task: GraphTaskView | None = CURRENT_GRAPH_TASK.get()
    if task is None:
        raise RuntimeError(
            "_get_should_execute_nodes should only be called during the backward pass"
        )
    return task.will_execute(node)


class _MultiHandle(RemovableHandle):
    """The handle ``register_multi_grad_hook`` returns: removes the hook from every tensor."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        """Remove the hook from every tensor."""
        for handle in self.handles:
            handle.remove()

    def __getstate__(self) -> tuple[RemovableHandle, ...]:
        return self.handles

    def __setstate__(self, state: tuple[RemovableHandle, ...]) -> None:
        self.handles = state


def register_multi_grad_hook(
    tensors: Sequence[Tensor],
    fn: Callable[[Sequence[Tensor | None]], None] | Callable[[Tensor], None],
    *,
    mode: Literal["all", "any"] = "all",
) -> RemovableHandle:
    r"""Register a multi-grad backward hook.

    There are two supported modes: ``"all"`` and ``"any"``.

    Under the ``"all"`` mode, the hook will be called after gradients with respect to every
    tensor in :attr:`tensors` have been computed. If a tensor is in :attr:`tensors` but is not
    part of the graph, or if a tensor is not needed to compute the gradients for any ``inputs``
    specified for the current ``.backward()`` or ``.grad()`` call, this tensor will be ignored
    and the hook will not wait for its gradient to be computed.

    After every non-ignored tensor's gradient has been computed, :attr:`fn` will be called with
    those gradients. ``None`` will be passed for tensors that did not have their gradients
    computed.

    Under the ``"any"`` mode, the hook will be called after the first gradient with respect to a
    tensor in :attr:`tensors` has been computed. The hook will be called with that gradient as
    its argument.

    The hook should not modify its arguments. Returns a handle whose ``remove()`` removes the
    hook.

    As PyTorch's, it counts per backward pass (graph task): in ``"all"`` mode the number of
    gradients to wait for is fixed at the first call in a pass, from the nodes the pass will
    execute (a tensor whose node is the pass's single root counts as not in the graph).

    Example:
        >>> import chainrule as torch
        >>> a = torch.rand(2, 3, requires_grad=True)
        >>> b = torch.rand(2, 3, requires_grad=True)
        >>> c = a * b
        >>> d = a * b
        >>> def fn(grads):
        ...     print([g is not None for g in grads])
        >>> handle = torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
        >>> c.sum().backward(inputs=(a,), retain_graph=True)
        [True, False, True, False]
    """
    supported_modes = ("all", "any")
    lock = threading.Lock()

    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")

    if mode == "all":
        count: dict[int, int] = {}
        nb_calls = None
        buffer: dict[int, list[Tensor | None]] = {}

        grad_fns = list(map(_get_grad_fn_or_grad_acc, tensors))
        len_tensors = len(tensors)

        def get_inner_hook(idx: int) -> Callable[[Tensor], None]:
            def inner_hook(grad: Tensor) -> None:
                nonlocal nb_calls
                id = _current_graph_task_id()  # noqa: A001 - PyTorch's code, line for line
                if id == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                count[id] = count.get(id, 0)
                buffer[id] = buffer.get(id, [None] * len_tensors)

                with lock:
                    curr_count, count[id] = count[id], count[id] + 1

                    if curr_count == 0:
                        # On the first call, compute the actual nb_calls and buffer
                        nb_calls = sum(map(_will_engine_execute_node, grad_fns))

                buffer[id][idx] = grad

                if nb_calls is None:
                    raise AssertionError("Expected nb_calls to be set")
                if curr_count == nb_calls - 1:
                    all_fn = cast(Callable[[Sequence[Tensor | None]], None], fn)
                    all_fn(buffer[id])
                    del count[id]
                    del buffer[id]

            return inner_hook

        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        any_fn = cast(Callable[[Tensor], None], fn)
        ran_hook: dict[int, bool] = defaultdict(bool)

        @functools.wraps(any_fn)
        def wrapped_fn(grad: Tensor) -> None:
            id = _current_graph_task_id()  # noqa: A001 - PyTorch's code, line for line
            if id == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            with lock:
                prev, ran_hook[id] = ran_hook[id], True
            if prev:
                return
            any_fn(grad)

        handles = tuple(
            tensor.register_hook(wrapped_fn) for tensor in tensors if tensor.requires_grad
        )

    return _MultiHandle(handles)


# ----------------------------------------------------------------------------------------------
# allow_mutation_on_saved_tensors
#
# As PyTorch's (NOTE [Allow mutation on tensors saved for backward]):
# 1. Tensor gets saved for backward
#    - remember the python object id and the version of the tensor
#    - remember aliasing information (data_ptr of base + version)
#    - save the original so we control its lifetime
# 2. Any time a tensor gets in-placed
#    - for each tensor aliased to it:
#      - check using its object id and version to see if it has been saved
#      - if it has been saved, clone it
#      - delete the reference to the original
# 3. during backward
#    - if the clone exists, the tensor must've been modified in-place
#
# Step 2 is PyTorch's dispatch mode, which sees every op that writes a tensor; here every place
# that writes a tensor's memory (in-place ops, ``x[i] = v``, optimizers, ``nn.init``, gradient
# accumulation ...) calls :func:`clone_saved_before_write` first, when MUTATION_WATCH is not
# empty (it is empty outside the context: the check costs one truth test).

_allow_mutation_on_saved_tensors_enabled: bool = False

#: The active contexts' clone-before-write modes, innermost last (empty outside any context).
MUTATION_WATCH: list[_CloneArgBeforeMutateMode] = []

_TID = tuple[int, int, int]
_SID = tuple[int, int]


def _data_ptr(data: np.ndarray) -> int:
    return int(data.__array_interface__["data"][0])


def _get_tid(tensor: Tensor) -> _TID:
    return (id(tensor), tensor.data_ptr(), tensor._version)


def _get_sid(tensor: Tensor, data: np.ndarray | None = None) -> _SID:
    return (tensor.data_ptr() if data is None else _data_ptr(data), tensor._version)


class _Handle:
    """What the pack hook returns for a saved tensor (the key to it in the context)."""


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (cleared when it exits)."""

    def __init__(self) -> None:
        self.cloned: MutableMapping[_Handle, Tensor] = weakref.WeakKeyDictionary()
        self.original: MutableMapping[_Handle, Tensor] = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: MutableMapping[_TID, _Handle] = weakref.WeakValueDictionary()
        self.sid_to_tid: dict[_SID, set[_TID]] = defaultdict(set)

    def clear(self) -> None:
        """Forget every saved tensor."""
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


class _swap_with_cloned(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """The hooks of ``allow_mutation_on_saved_tensors``: save the tensor itself (under a
    handle), give back its clone if it was modified in place since."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack_hook(tensor: Tensor) -> _Handle:
            tid = _get_tid(tensor)
            sid = _get_sid(tensor)
            # Tensors saved for backward have an entry in _tid_to_weakhandle
            handle: _Handle | None = None

            # Save aliasing information
            ctx.sid_to_tid[sid].add(tid)

            # NB: The same tensor (of the same version) can be saved multiple times
            if tid not in ctx.tid_to_weakhandle:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = tensor
            else:
                # Store an additional strong reference to the handle
                handle = ctx.tid_to_weakhandle[tid]
            return handle

        def unpack_hook(handle: _Handle) -> Tensor:
            error_msg = (
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                "in which the graph was originally recorded."
            )
            if not _allow_mutation_on_saved_tensors_enabled:
                raise AssertionError(error_msg)
            if handle in ctx.cloned:
                res = ctx.cloned[handle]
            else:
                if handle not in ctx.original:
                    raise AssertionError(error_msg)
                res = ctx.original[handle]
            return res

        super().__init__(pack_hook, unpack_hook)


class _CloneArgBeforeMutateMode:
    """PyTorch's dispatch mode of the same name: before a tensor of this thread is written, the
    saved tensors it aliases (same data pointer and version) are cloned."""

    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        self.ctx = ctx
        self.thread = threading.get_ident()

    def __enter__(self) -> _CloneArgBeforeMutateMode:
        self.thread = threading.get_ident()
        MUTATION_WATCH.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        MUTATION_WATCH.remove(self)

    def maybe_clone(self, t: Tensor, data: np.ndarray | None) -> None:
        """Clone what was saved of ``t`` (or of the part of it at ``data``) before a write."""
        sid = _get_sid(t, data)
        ctx = self.ctx
        if sid in ctx.sid_to_tid:
            for tid in ctx.sid_to_tid[sid]:
                if tid not in ctx.tid_to_weakhandle:
                    # Saved, then freed by a backward pass before this write.
                    continue
                handle = ctx.tid_to_weakhandle[tid]
                if handle in ctx.cloned:
                    # The same exact tensor has been cloned already
                    continue
                ctx.cloned[handle] = _clone_unrecorded(ctx.original[handle])
                del ctx.original[handle]


def _clone_unrecorded(t: Tensor) -> Tensor:
    """``t.clone()`` not recorded by autograd (PyTorch clones below the autograd layer)."""
    token = MODE.set(MODE.get() & ~(GRAD | SAVED_HOOKS))
    try:
        return t.clone()
    finally:
        MODE.reset(token)


def clone_saved_before_write(t: Tensor, data: np.ndarray | None = None) -> None:
    """Called before ``t`` (or its part ``data``, e.g. the region ``t[i] = v`` writes) is
    written in place, when :data:`MUTATION_WATCH` is not empty: the active
    ``allow_mutation_on_saved_tensors`` contexts of this thread clone what they saved of it."""
    thread = threading.get_ident()
    for mode in reversed(MUTATION_WATCH):
        if mode.thread == thread:
            mode.maybe_clone(t, data)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Generator[_AllowMutationOnSavedContext, None, None]:
    """Context manager under which mutating tensors saved for backward is allowed.

    Under this context manager, tensors saved for backward are cloned on mutation, so the
    original version can still be used during backward. Normally, mutating a tensor saved for
    backward will result in an error raised when it's used during backward.

    To ensure the correct behavior, both the forward and backward should be run under the same
    context manager.

    Returns an ``_AllowMutationOnSavedContext`` object storing the state managed by this context
    manager (useful for debugging); the state is cleared upon exiting. Blocks cannot be nested.

    Example:
        >>> import chainrule as torch
        >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
        ...     a = torch.ones(2, 3, requires_grad=True)
        ...     b = a.clone()
        ...     out = (b**2).sum()
        ...     _ = b.sin_()
        ...     out.sum().backward()
        >>> a.grad
        tensor([[2., 2., 2.],
                [2., 2., 2.]])
    """
    global _allow_mutation_on_saved_tensors_enabled

    ctx = _AllowMutationOnSavedContext()

    with _swap_with_cloned(ctx), _CloneArgBeforeMutateMode(ctx):
        try:
            if _allow_mutation_on_saved_tensors_enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _allow_mutation_on_saved_tensors_enabled = True
            yield ctx
        finally:
            ctx.clear()
            _allow_mutation_on_saved_tensors_enabled = False

