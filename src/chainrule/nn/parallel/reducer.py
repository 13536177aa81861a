"""DDP's gradient reducer: parameters in buckets, each bucket's gradients averaged over the
ranks by one non-blocking all-reduce, started as soon as the bucket's last gradient has been
accumulated, so that communication overlaps the rest of backward (PyTorch's Reducer, in
Python on the public hooks: ``register_post_accumulate_grad_hook`` and the engine's
``queue_callback``).

One iteration: ``prepare_for_backward`` (called by DDP's forward) resets the state; each
parameter's post-accumulate-grad hook marks it ready; a bucket whose parameters are all
ready is copied into its flat buffer (each gradient times ``1 / world_size``, as PyTorch) and
its all-reduce started, buckets strictly in order so that every rank issues the same
collectives in the same order; the callback queued at the first hook waits for the
all-reduces and writes the averages back into ``.grad`` when the backward pass ends.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..._tensor import Tensor, make_tensor
from ...autograd.engine import ExecutionEngine
from ...autograd.graph import MUTATION_WATCH, clone_saved_before_write
from ...distributed import ProcessGroup, ReduceOp, Work, all_reduce
from ...utils.hooks import RemovableHandle

__all__ = ["Bucket", "Reducer", "assign_buckets", "find_used_parameters"]

#: PyTorch's first bucket is small (1 MiB) so that communication starts early in backward.
FIRST_BUCKET_BYTES = 1024 * 1024

UNFINISHED_REDUCTION = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}"
)


class Bucket:
    """Parameters (indices into the reducer's list) whose gradients travel together in one flat
    buffer of their common dtype."""

    def __init__(self, indices: list[int], params: list[Tensor]) -> None:
        self.indices = indices
        sizes = [params[i].numel() for i in indices]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.buffer = np.zeros(int(self.offsets[-1]), dtype=params[indices[0]]._data.dtype)
        self.tensor = make_tensor(self.buffer)
        self.pending = len(indices)
        self.work: Work | None = None

    def view(self, position: int) -> np.ndarray:
        """The part of the flat buffer holding the ``position``-th parameter's gradient."""
        return self.buffer[self.offsets[position] : self.offsets[position + 1]]


def assign_buckets(
    params: list[Tensor], cap_bytes: int, first_cap_bytes: int = FIRST_BUCKET_BYTES
) -> list[list[int]]:
    """Parameter indices grouped into buckets: in reverse order of ``params`` (roughly the
    order backward produces their gradients), one dtype per bucket, a new bucket once
    ``first_cap_bytes`` (the first one) or ``cap_bytes`` is reached."""
    buckets: list[list[int]] = []
    open_buckets: dict[Any, tuple[list[int], int]] = {}
    for index in reversed(range(len(params))):
        p = params[index]
        dtype = p._data.dtype
        members, size = open_buckets.get(dtype, ([], 0))
        members.append(index)
        size += p._data.nbytes
        limit = first_cap_bytes if not buckets else cap_bytes
        if size >= limit:
            buckets.append(members)
            open_buckets.pop(dtype, None)
        else:
            open_buckets[dtype] = (members, size)
    buckets.extend(members for members, _ in open_buckets.values())
    return buckets


def find_used_parameters(outputs: Any, params: list[Tensor]) -> set[int]:
    """Indices of the parameters the autograd graph of ``outputs`` reaches (a walk with an
    explicit stack over ``next_functions``, down to the ``AccumulateGrad`` nodes)."""
    position = {id(p): i for i, p in enumerate(params)}
    found: set[int] = set()
    stack: list[Any] = []
    values = [outputs]
    while values:
        value = values.pop()
        if isinstance(value, Tensor):
            if value.grad_fn is not None:
                stack.append(value.grad_fn)
            elif value.requires_grad and id(value) in position:
                found.add(position[id(value)])
        elif isinstance(value, dict):
            values.extend(value.values())
        elif isinstance(value, list | tuple):
            values.extend(value)
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, Tensor) and id(variable) in position:
            found.add(position[id(variable)])
        for next_node, _ in node.next_functions:
            if next_node is not None:
                stack.append(next_node)
    return found


class Reducer:
    """Average the gradients of ``params`` over ``group`` during backward."""

    def __init__(
        self,
        params: list[Tensor],
        group: ProcessGroup,
        cap_bytes: int,
        first_cap_bytes: int,
        find_unused_parameters: bool,
        gradient_as_bucket_view: bool = False,
    ) -> None:
        self.params = params
        self.group = group
        self.world_size = group.size()
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        assignment = assign_buckets(params, cap_bytes, first_cap_bytes)
        self.buckets = [Bucket(indices, params) for indices in assignment]
        self.locate: dict[int, tuple[int, int]] = {}
        for b, bucket in enumerate(self.buckets):
            for position, index in enumerate(bucket.indices):
                self.locate[index] = (b, position)
        self.handles: list[RemovableHandle] = [
            p.register_post_accumulate_grad_hook(self._hook_for(i)) for i, p in enumerate(params)
        ]
        self.expect_hooks = False
        self.ready = [False] * len(params)
        self.used = np.ones(len(params), dtype=np.int32)
        self.next_bucket = 0
        self.callback_queued = False
        self.unused_marked = True
        #: Seconds the last backward pass waited at its end for all-reduces still running:
        #: the communication backward did not hide (benchmarks/ddp.py reports the overlap).
        self.exposed_seconds = 0.0

    def _hook_for(self, index: int) -> Any:
        def hook(param: Tensor) -> None:
            self.mark_ready(index)

        return hook

    def check_finished(self) -> None:
        """Before a new iteration: a backward pass that left buckets unreduced (parameters
        that got no gradient) is PyTorch's error."""
        if self.callback_queued and self.next_bucket < len(self.buckets):
            missing = [i for i, done in enumerate(self.ready) if not done]
            raise RuntimeError(UNFINISHED_REDUCTION.format(rank=self.group.rank(), indices=missing))

    def prepare_for_backward(self, outputs: Any) -> None:
        """Start an iteration (DDP's forward); with ``find_unused_parameters``, mark the
        parameters ``outputs`` do not depend on, to be reduced as zeros."""
        self.expect_hooks = True
        self.ready = [False] * len(self.params)
        self.next_bucket = 0
        self.callback_queued = False
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
            bucket.work = None
        self.used = np.ones(len(self.params), dtype=np.int32)
        self.unused_marked = True
        if self.find_unused_parameters:
            reached = find_used_parameters(outputs, self.params)
            self.used = np.zeros(len(self.params), dtype=np.int32)
            self.used[list(reached)] = 1
            self.unused_marked = bool(self.used.all())

    def mark_ready(self, index: int) -> None:
        """A parameter's gradient has been accumulated: copy it into its bucket and start the
        buckets that are now complete, in order."""
        if not self.expect_hooks:
            return
        if not self.callback_queued:
            self.callback_queued = True
            ExecutionEngine().queue_callback(self.finalize)
        if not self.unused_marked:
            self.unused_marked = True
            for unused in np.flatnonzero(self.used == 0).tolist():
                self._ready(unused)
        if self.ready[index]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {index} has been marked as ready twice."
            )
        self.used[index] = 1
        self._ready(index)

    def _ready(self, index: int) -> None:
        self.ready[index] = True
        b, position = self.locate[index]
        bucket = self.buckets[b]
        view = bucket.view(position)
        grad = self.params[index].grad
        if grad is None:
            view[...] = 0
        else:
            np.multiply(
                grad._data.reshape(-1), 1.0 / self.world_size, out=view, casting="same_kind"
            )
        bucket.pending -= 1
        self._launch_ready_buckets()

    def _launch_ready_buckets(self) -> None:
        while self.next_bucket < len(self.buckets):
            bucket = self.buckets[self.next_bucket]
            if bucket.pending:
                break
            bucket.work = all_reduce(bucket.tensor, ReduceOp.SUM, self.group, async_op=True)
            self.next_bucket += 1
        # Give MPI a chance to progress the all-reduces already started.
        for started in self.buckets[: self.next_bucket]:
            if started.work is not None:
                started.work.is_completed()

    def finalize(self) -> None:
        """End of backward: wait for every bucket and write the averages into ``.grad``."""
        if self.next_bucket < len(self.buckets):
            return  # parameters without a gradient: the next forward reports them
        self.expect_hooks = False
        self.callback_queued = False
        globally_used = None
        if self.find_unused_parameters:
            usage = make_tensor(self.used.copy())
            all_reduce(usage, ReduceOp.SUM, self.group)
            globally_used = usage._data
        start = time.perf_counter()
        for bucket in self.buckets:
            if bucket.work is not None:
                bucket.work.wait()
        self.exposed_seconds = time.perf_counter() - start
        for bucket in self.buckets:
            for position, index in enumerate(bucket.indices):
                self._write_grad(index, bucket.view(position), globally_used)

    def _write_grad(
        self, index: int, averaged: np.ndarray, globally_used: np.ndarray | None
    ) -> None:
        param = self.params[index]
        grad = param.grad
        if grad is None and globally_used is not None and globally_used[index] == 0:
            return
        if self.gradient_as_bucket_view:
            # .grad becomes (or already is) its part of the bucket: no copy back, and the next
            # backward accumulates straight into the bucket.
            if grad is None or not np.shares_memory(grad._data, averaged):
                param.grad = make_tensor(averaged.reshape(param._data.shape))
            return
        if grad is None:
            param.grad = make_tensor(averaged.reshape(param._data.shape).copy())
            return
        if MUTATION_WATCH:
            clone_saved_before_write(grad)
        grad._data[...] = averaged.reshape(grad._data.shape)

    def remove_hooks(self) -> None:
        """Take the hooks off the parameters."""
        for handle in self.handles:
            handle.remove()
        self.handles = []
