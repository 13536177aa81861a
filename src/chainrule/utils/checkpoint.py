"""Activation checkpointing: ``torch.utils.checkpoint``.

``checkpoint(function, *args)`` runs ``function`` without keeping what its operations save for
backward; backward runs ``function`` again to get those tensors back. Memory for compute.

Two implementations, as in PyTorch:

* ``use_reentrant=True`` (:class:`CheckpointFunction`): a custom ``autograd.Function`` whose
  forward runs ``function`` under ``no_grad`` (no graph is recorded inside) and whose backward
  reruns it with grad enabled on detached copies of the inputs, then runs a second backward
  pass, inside the first one, through that fresh graph (hence "reentrant"). It needs the whole
  graph to run: ``autograd.grad`` and ``backward(inputs=...)`` are refused.
* ``use_reentrant=False``: the graph is recorded as usual, but under ``saved_tensors_hooks``
  whose pack hook keeps a small holder instead of each saved tensor. The first unpack in a
  backward pass runs ``function`` again under hooks that put the recomputed tensors in the
  holders (stopping as soon as all of them are filled), so any way of running backward works,
  ``create_graph=True`` included. Checkpoints nest: the inputs of an inner checkpoint are
  saved through the outer one's hooks, so recomputing the inner one recomputes the outer one
  first (PyTorch's "Nestable Checkpoint" rules).

Both restore the random number generator's state for the recomputation (``preserve_rng_state``),
so dropout draws the same mask twice, and leave the generator where it was afterwards.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import uuid
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from .._tensor import Tensor
from ..autograd.engine import backward as _autograd_backward
from ..autograd.engine import current_graph_task_id, is_checkpoint_valid
from ..autograd.function import Function
from ..autograd.grad_mode import GRAD, SAVED_HOOKS, enable_grad, mode_get, no_grad
from ..autograd.graph import (
    SavedTensor,
    current_saved_tensors_hooks,
    pack_tensor,
    saved_tensors_hooks,
)
from ..autograd.inplace import modified_error
from ..ops._dispatch_modes import (
    OpOverload,
    OpOverloadPacket,
    TorchDispatchModeBase,
    aten,
    dispatch_modes_active,
)
from ..ops.creation import get_rng_state, set_rng_state

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "get_device_states",
    "set_device_states",
    "noop_context_fn",
    "set_checkpoint_early_stop",
    "DefaultDeviceType",
    "set_checkpoint_debug_enabled",
    "GraphExecGroup",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]

_DEFAULT_DETERMINISM_MODE = "default"

#: ``context_fn``: returns the contexts entered around the forward and the recomputation.
ContextFn = Callable[[], tuple[AbstractContextManager[Any], AbstractContextManager[Any]]]

USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
SEQUENTIAL_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
    "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)
NO_INPUT_REQUIRES_GRAD_WARNING = (
    "None of the inputs have requires_grad=True. Gradients will be None"
)
REENTRANT_GRAD_MESSAGE = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
    "`inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument."
)
NO_OUTPUT_REQUIRES_GRAD_MESSAGE = (
    "none of output has requires_grad=True, this checkpoint() is not necessary"
)
SUPPRESSED_EXCEPTION_MESSAGE = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
    "raised during the checkpointed forward. This is not supported because checkpoint cannot "
    "return a value for a failed forward."
)
INTERNAL_ERROR_MESSAGE = (
    "Something went unexpectedly wrong in activation checkpoint. Please report this bug by "
    "filing an issue to PyTorch."
)

# (PyTorch's text, word for word: its advice about torch.compile does not apply to chainrule.)
_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


class CheckpointError(RuntimeError):
    """What non-reentrant checkpoint raises when the recomputation differs from the forward."""


# ----------------------------------------------------------------------------------------------
# Global switches (module-level, as PyTorch's)

_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Override the ``debug`` argument of every checkpoint inside the block (None: defer to
    it)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant checkpoints made in the block stop recomputing as soon as every
    tensor they need is back (default True; it only needs to be active during forward).

    Example:
        >>> import chainrule as torch
        >>> from chainrule.utils.checkpoint import checkpoint, set_checkpoint_early_stop
        >>> x = torch.ones(2, requires_grad=True)
        >>> with set_checkpoint_early_stop(False):
        ...     y = checkpoint(torch.sin, x, use_reentrant=False)
        >>> y.sum().backward()
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


# ----------------------------------------------------------------------------------------------
# Helpers shared by both implementations


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Each tensor of ``inputs`` detached, keeping its ``requires_grad`` (other values as
    they are)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn when no tensor of ``inputs`` requires grad (a reentrant checkpoint then records
    nothing)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn(NO_INPUT_REQUIRES_GRAD_WARNING, stacklevel=2)


class DefaultDeviceType:
    """The device type whose random state checkpoint saves besides the CPU's. chainrule has
    only the CPU: the type is kept for the API, and no device state is ever saved."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default device type."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default device type: ``"cpu"`` unless set."""
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"
        return DefaultDeviceType._default_device_type


def get_device_states(*args: Any) -> tuple[list[int], list[Tensor]]:
    """The random states of the non-CPU devices of the tensor arguments: none in chainrule."""
    return [], []


def set_device_states(
    devices: list[int], states: list[Tensor], *, device_type: str | None = None
) -> None:
    """Restore device random states saved by :func:`get_device_states` (there are none: the
    CPU's state is restored by checkpoint itself)."""


@contextlib.contextmanager
def _fork_rng(enabled: bool) -> Iterator[None]:
    """Restore the random generator's state on exit (``torch.random.fork_rng`` on the CPU)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


# ----------------------------------------------------------------------------------------------
# use_reentrant=True


class CheckpointFunction(Function):
    """The reentrant checkpoint: ``CheckpointFunction.apply(function, preserve_rng_state,
    *args)``. Its node is ``CheckpointFunctionBackward``, with one edge per tensor argument."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        """Run ``run_function(*args)`` under ``no_grad``; save the tensor arguments and the
        random state."""
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        # Non-tensor inputs are kept on ctx, with None placeholders for the tensors, which are
        # saved for backward (version-checked).
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx: Any, *args: Any) -> tuple[Any, ...]:
        """Rerun the function with grad enabled on detached inputs (random state as in
        forward), backpropagate ``args`` through it, and return the inputs' gradients."""
        if not is_checkpoint_valid():
            raise RuntimeError(REENTRANT_GRAD_MESSAGE)
        inputs = list(ctx.inputs)
        tensors = ctx.saved_tensors
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = tensors[i]
        with _fork_rng(ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        # Backpropagate only through the outputs that require grad.
        outputs_with_grad = []
        args_with_grad = []
        for i in range(len(outputs)):
            if isinstance(outputs[i], Tensor) and outputs[i].requires_grad:
                outputs_with_grad.append(outputs[i])
                args_with_grad.append(args[i])
        if len(outputs_with_grad) == 0:
            raise RuntimeError(NO_OUTPUT_REQUIRES_GRAD_MESSAGE)
        _autograd_backward(outputs_with_grad, args_with_grad)
        grads = tuple(
            inp.grad if isinstance(inp, Tensor) else None for inp in detached_inputs
        )
        return (None, None) + grads


# ----------------------------------------------------------------------------------------------
# The public functions


def noop_context_fn() -> tuple[AbstractContextManager[Any], AbstractContextManager[Any]]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: ContextFn = noop_context_fn,
    determinism_check: str = _DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its intermediate tensors for backward;
    backward recomputes them by running ``function`` again.

    Args:
        function: what to run; it receives ``args`` (and, non-reentrant only, ``kwargs``).
        use_reentrant: pass it: ``False`` (recommended) or ``True`` (see the module
            docstring). None warns, as PyTorch 2.13 does, and means ``True``.
        context_fn: (non-reentrant only) returns two context managers, entered around the
            forward and around the recomputation.
        determinism_check: (non-reentrant only) ``"default"`` checks that recomputed tensors
            have the shape, dtype and device of the original ones; ``"none"`` does not.
        debug: (non-reentrant only) in PyTorch, errors then carry a log of the operators
            run; chainrule checks the argument but its errors carry no log.
        early_stop: (non-reentrant only) stop recomputing once every needed tensor is back
            (overridden by :func:`set_checkpoint_early_stop`).
        preserve_rng_state: keyword (default True): run the recomputation from the random
            state the forward started from.

    Returns:
        What ``function`` returns.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.utils.checkpoint import checkpoint
        >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
        >>> y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False)
        >>> y.backward()
        >>> x.grad
        tensor([1.0000, 2.7183])
    """
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True

    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(
        function, preserve, context_fn, determinism_check, debug, early_stop, *args, **kwargs
    )
    next(gen)  # before the forward: checks, random state, hooks on
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError(SUPPRESSED_EXCEPTION_MESSAGE) from stop
        raise
    try:
        next(gen)  # after the forward: hooks off
    except StopIteration:
        return ret
    raise AssertionError(
        "torch.utils.checkpoint: expected context_fn generator to yield exactly twice, but it "
        "yielded more than twice."
    )


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run ``functions`` (a ``Sequential``, or a list of modules or functions) one after
    another on ``input``, in ``segments`` chunks: each chunk but the last is checkpointed.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.utils.checkpoint import checkpoint_sequential
        >>> model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
        >>> y = checkpoint_sequential(model, 2, torch.ones(1, 2), use_reentrant=False)
        >>> y.shape
        chainrule.Size([1, 2])
    """
    if use_reentrant is None:
        warnings.warn(SEQUENTIAL_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True

    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions: Any) -> Callable[[Any], Any]:
        def forward(input: Any) -> Any:
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    from ..nn.modules.container import Sequential  # (same layer; only needed here)

    if isinstance(functions, Sequential):
        functions = list(functions.children())  # (as PyTorch: a module listed twice runs once)

    segment_size = len(functions) // segments
    end = -1  # the last chunk is not checkpointed
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions),
            input,
            use_reentrant=use_reentrant,
            preserve_rng_state=preserve,
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ----------------------------------------------------------------------------------------------
# use_reentrant=False (PyTorch's NOTE [ Nestable Checkpoint ] gives the rules)


def _internal_assert(cond: bool) -> None:
    if not cond:
        raise AssertionError(INTERNAL_ERROR_MESSAGE)


class _Handle:
    """The key of one recomputed tensor (in a weak dictionary, so it dies with its holder)."""


class _Holder:
    """What the pack hook saves instead of a tensor: per backward pass, the handle of its
    recomputed value (None once unpacked)."""

    def __init__(self) -> None:
        self.handles: dict[Any, _Handle | None] = {}


class _SavedArgument:
    """A checkpoint input saved while no ``saved_tensors_hooks`` are active: the tensor and its
    version (PyTorch's SavedVariable of a non-output)."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor
        self.version = tensor._vc[0]

    def unpack(self, owner: Any) -> Tensor:
        t = self.tensor
        if t._vc[0] != self.version:
            raise modified_error(t, owner, t._vc[0], self.version)
        return t


def _save_argument(t: Tensor) -> Any:
    """Save a checkpoint input as autograd saves a tensor: through the active
    ``saved_tensors_hooks`` (an enclosing checkpoint's, which then recomputes it), else as is."""
    if mode_get() & SAVED_HOOKS:
        hooks = current_saved_tensors_hooks()
        if hooks is not None:
            return pack_tensor(t, hooks, False)
    return _SavedArgument(t)


class _CheckpointFrame:
    """One non-reentrant checkpoint: its saved inputs, a weak reference to each holder its pack
    hook made (in order), the metadata of the tensors they stand for, and per backward pass
    (``gid``) what was recomputed."""

    def __init__(self, recompute_fn: Callable[..., None], early_stop: bool,
                 metadata_fn: Callable[[Tensor], Any]) -> None:
        self.recompute_fn = recompute_fn
        self.saved_args: list[Any] = []
        self.weak_holders: list[weakref.ReferenceType[_Holder]] = []
        # Weak keys: with a partial backward, entries die with their holders.
        self.recomputed: defaultdict[Any, weakref.WeakKeyDictionary[_Handle, Tensor]] = (
            defaultdict(weakref.WeakKeyDictionary)
        )
        self.recomp_counter: defaultdict[Any, int] = defaultdict(int)
        self.is_recomputed: defaultdict[Any, bool] = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas: list[Any] = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args: Any) -> None:
        self.saved_args = [_save_argument(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list[Any]:
        return [
            a.unpack(None) if isinstance(a, _SavedArgument | SavedTensor) else a
            for a in self.saved_args
        ]

    def check_recomputed_tensors_match(self, gid: Any) -> None:
        """PyTorch's checks after a recomputation: as many tensors saved as in forward (unless
        it stopped early), with the same metadata."""
        if self.ignore_saved_mismatch:
            return
        if not len(self.weak_holders) == self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}"
            )
        nb_meta_different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(gid in holder.handles)
            handle = holder.handles[gid]
            _internal_assert(handle is not None)
            _internal_assert(handle in self.recomputed[gid])
            x_meta = self.x_metadatas[idx]
            recomputed_x = self.recomputed[gid][handle]  # type: ignore[index]
            if x_meta != self.metadata_fn(recomputed_x):
                nb_meta_different.append((idx, x_meta, self.metadata_fn(recomputed_x)))
        if nb_meta_different:
            mismatched_tensors = ""
            for idx, x_meta, recomputed_meta in nb_meta_different:
                mismatched_tensors += (
                    f"tensor at position {idx}:\n"
                    f"saved metadata: {x_meta}\n"
                    f"recomputed metadata: {recomputed_meta}\n"
                )
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n"
                f"{mismatched_tensors}.\n"
                f"{_debug_tip_msg}"
            )


def _default_meta_extractor(x: Tensor) -> dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns: dict[str, Callable[[Tensor], Any]] = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _StopRecomputationError(Exception):
    """Raised by the recomputation's pack hook once every needed tensor is back."""


class _recomputation_hook(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """The hooks during recomputation: each saved tensor fills the next holder of the frame."""

    def __init__(self, target_frame_ref: weakref.ReferenceType[_CheckpointFrame],
                 gid: Any) -> None:
        def pack_hook(x: Tensor) -> Tensor:
            if x.requires_grad:
                # (a detach that dispatch modes entered by the recomputation see, as PyTorch's)
                x = aten.detach.default(x) if dispatch_modes_active() else x.detach()
            target_frame = target_frame_ref()
            if target_frame is None:
                raise AssertionError("Internal error: target_frame reference is None")
            recomp_idx = target_frame.recomp_counter[gid]
            target_frame.recomp_counter[gid] += 1

            if recomp_idx >= len(target_frame.weak_holders):
                if target_frame.early_stop:
                    raise AssertionError("Unexpected state: target_frame.early_stop is set")
                if not target_frame.forward_completed:
                    # Backward inside the checkpointed function, without early stop: the
                    # counts will not match, and need not.
                    target_frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass.\n"
                    f"{_debug_tip_msg}"
                )

            holder = target_frame.weak_holders[recomp_idx]()
            # (A holder freed by a backward run inside the forward needs nothing.)
            if holder is not None:
                _internal_assert(holder.handles.get(gid, None) is None)
                handle = _Handle()
                holder.handles[gid] = handle
                target_frame.recomputed[gid][handle] = x

            if target_frame.early_stop and target_frame.recomp_counter[gid] == len(
                target_frame.weak_holders
            ):
                raise _StopRecomputationError
            # The recomputed graph keeps the tensor: a backward may run through it.
            return x

        def unpack_hook(x: Tensor) -> Tensor:
            return x

        super().__init__(pack_hook, unpack_hook)


class _checkpoint_hook(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """The hooks during the checkpointed forward: a holder in place of each saved tensor; the
    first unpack in a backward pass recomputes the frame."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x: Tensor) -> _Holder:
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder: _Holder) -> Tensor:
            gid: Any = GraphExecGroup._get_current_group()
            if gid is None:
                gid = current_graph_task_id()
                if gid == -1:
                    # Unpacked outside backward (``grad_fn._saved_self``): a pass of its own.
                    gid = int(uuid.uuid4())

            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)

            _internal_assert(gid in holder.handles)

            if holder.handles[gid] is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = (
                        "Performing two backward calls that overlap (i.e. require the same "
                        "saved activation in order to compute gradients) is not allowed while "
                        "under the torch.utils.checkpoint.GraphExecGroup context. "
                    )
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                    "backward, make sure to do so only once. Otherwise please open an issue with "
                    "details on your use case."
                )
            handle = holder.handles[gid]
            _internal_assert(handle in frame.recomputed[gid])
            ret = frame.recomputed[gid][handle]  # type: ignore[index]
            holder.handles[gid] = None
            return ret

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant_generator(
    fn: Callable[..., Any],
    preserve_rng_state: bool = True,
    context_fn: ContextFn = noop_context_fn,
    determinism_check: str = _DEFAULT_DETERMINISM_MODE,
    debug: bool = False,
    early_stop: bool = True,
    *args: Any,
    **kwargs: Any,
) -> Generator[None, None, None]:
    """Non-reentrant checkpoint around the forward: yields once before it runs (hooks on)
    and once after (hooks off)."""
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        # PyTorch logs every operator of the forward and the recomputation here (with a
        # dispatch mode chainrule does not have) and adds the logs to its errors; chainrule
        # only checks the arguments and raises its errors without logs.
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")

    if determinism_check in _allowed_determinism_checks_to_fns:
        metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    else:
        raise ValueError(
            "determinism_check should be one of "
            f"{list(_allowed_determinism_checks_to_fns.keys())}, but got {determinism_check}"
        )

    forward_context, recompute_context = context_fn()
    fwd_cpu_state = get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs: Any) -> None:
        # Run later, in backward, from the state captured now.
        with _fork_rng(preserve_rng_state):
            if fwd_cpu_state is not None:
                set_rng_state(fwd_cpu_state)
            with recompute_context:
                fn(*inputs, **kwargs)

    new_frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        metadata_fn,
    )

    if not mode_get() & GRAD:
        yield
        return

    new_frame.save_inputs(*args)

    forward_context_suppressed_exc = False
    with _checkpoint_hook(new_frame), forward_context:
        try:
            yield
        except BaseException:
            forward_context_suppressed_exc = True
            raise
    if forward_context_suppressed_exc:
        raise RuntimeError(SUPPRESSED_EXCEPTION_MESSAGE)
    new_frame.forward_completed = True


# ----------------------------------------------------------------------------------------------
# GraphExecGroup

_GRAPH_EXEC_GROUP: contextvars.ContextVar[GraphExecGroup | None] = contextvars.ContextVar(
    "chainrule_graph_exec_group", default=None
)


class GraphExecGroup:
    """Backward passes run inside the same instance of this context manager recompute each
    non-reentrant checkpoint at most once (they must then use disjoint saved activations)."""

    def __enter__(self) -> GraphExecGroup:
        current = _GRAPH_EXEC_GROUP.get()
        if current is not None:
            raise RuntimeError(
                f"GraphExecGroup contexts cannot be nested. Already inside group {current}"
            )
        _GRAPH_EXEC_GROUP.set(self)
        return self

    def __exit__(self, *args: object) -> None:
        _GRAPH_EXEC_GROUP.set(None)

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return _GRAPH_EXEC_GROUP.get()



# ----------------------------------------------------------------------------------------------
# Selective activation checkpointing. The two contexts are dispatch modes (ops/_dispatch_modes):
# in forward the caching mode sees every op of the op table, asks the policy and keeps a
# detached output of the ops to save; in the recomputation the cached mode hands those outputs
# back (once: a second backward through the region is refused) and runs the others again.
# What is seen is chainrule's op table (see ops/_dispatch_modes): composite ops are one op, and
# in-place methods are always recomputed.

class CheckpointPolicy(enum.Enum):
    """Whether selective checkpointing saves an op's output in forward or recomputes it.

    ``{MUST,PREFER}_SAVE``: saved in forward, not recomputed; ``{MUST,PREFER}_RECOMPUTE``: not
    saved, recomputed in backward; ``{MUST,PREFER}_CPU_OFFLOAD``: saved and offloaded to the
    CPU. ``MUST_*`` may not be overridden by other subsystems, ``PREFER_*`` may.
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What the policy function of selective checkpointing is given with the op: called in
    forward only, ``is_recompute`` is always False (deprecated, as in PyTorch); ``op_output``
    the op's output when known."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


# Ops the caching never keeps (checkpoint runs a different number of detaches in forward and
# in the recomputation).
SAC_IGNORED_OPS: set[Any] = {aten.detach.default}
_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = (
    "This can happen if the operations in the checkpointed region are nondeterministic or "
    "depend on global state that changed between forward and backward."
)


class _VersionWrapper:
    """A cached output and its version when cached: handing back a mutated one is an error."""

    def __init__(self, val: Any) -> None:
        self.val = val
        self.version: int | None = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation: bool) -> Any:
        if self.version is not None and not allow_cache_entry_mutation:
            if self.val._version != self.version:
                raise RuntimeError(
                    "Tensor cached during selective activation checkpoint has been mutated"
                )
        return self.val


def _tree_map(fn: Callable[[Any], Any], out: Any) -> Any:
    if isinstance(out, tuple | list):
        return type(out)(_tree_map(fn, o) for o in out)
    return fn(out)


def _detach_helper(x: Any) -> Any:
    return x.detach() if isinstance(x, Tensor) else x


class _CachingTorchDispatchMode(TorchDispatchModeBase):
    """The forward context of selective checkpointing: asks the policy about each op (after
    running it) and caches the outputs it says to save, by op and call index."""

    def __init__(self, policy_fn: Callable[..., Any], storage: dict[Any, dict[int, Any]],
                 ac_graph_id: Any = None) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.ac_graph_id = ac_graph_id
        self.func_counter: dict[Any, int] = defaultdict(int)

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = {} if kwargs is None else kwargs
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            self.storage[func][idx] = _tree_map(
                lambda x: _VersionWrapper(_detach_helper(x)), out
            )
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchModeBase):
    """The recomputation context of selective checkpointing: hands back the cached outputs
    (by op and call index, each once) and runs the other ops again."""

    def __init__(self, policy_fn: Any, storage: dict[Any, dict[int, Any]],
                 allow_cache_entry_mutation: bool = False) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: dict[Any, int] = defaultdict(int)

    def __enter__(self) -> _CachedTorchDispatchMode:
        # (counted afresh: a second backward finds consumed entries, PyTorch's error)
        self.func_counter.clear()
        return super().__enter__()

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = {} if kwargs is None else kwargs
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(
                f"{func} encountered during backward but not found in storage. "
                f"{_SAC_MISMATCH_MSG}"
            )
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(
                f"{func} invocation index {idx} encountered during backward but not found in "
                f"storage. {_SAC_MISMATCH_MSG}"
            )
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once on "
                "any region computed under selective activation checkpoint."
            )
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        func_storage[idx] = _CONSUMED
        return _tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)


def create_selective_checkpoint_contexts(
    policy_fn_or_list: Callable[..., CheckpointPolicy] | list[Any],
    allow_cache_entry_mutation: bool = False,
) -> tuple[AbstractContextManager[Any], AbstractContextManager[Any]]:
    """The two contexts of selective activation checkpointing, for ``checkpoint(fn, *args,
    use_reentrant=False, context_fn=functools.partial(create_selective_checkpoint_contexts,
    policy))``: ``policy`` is a function ``(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or
    a bool: True saves) called in forward with each op (``torch.ops.aten.sin.default``), or a
    list of such ops to save (the others recomputed). ``allow_cache_entry_mutation``: hand back
    a cached output even if it was modified in place since (an error otherwise).
    """
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = (
                    "Please update the OpOverloadPacket to a specific OpOverload.For example, "
                    "if you have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                ) if isinstance(op, OpOverloadPacket) else ""
                raise ValueError(
                    f"Expected op in `op_list` to be an OpOverload but got: {op} of type "
                    f"{type(op)}. {extra}"
                )
        ops = list(policy_fn_or_list)

        def policy_fn(ctx: SelectiveCheckpointContext, op: Any, *args: Any,
                      **kwargs: Any) -> CheckpointPolicy:
            if op in ops:
                return CheckpointPolicy.MUST_SAVE
            return CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict[Any, dict[int, Any]] = defaultdict(dict)
    return (
        _CachingTorchDispatchMode(policy_fn, storage),
        _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation),
    )
