"""``DistributedDataParallel``: data-parallel training of one module over the ranks of a
process group (``chainrule.distributed`` on MPI)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..._tensor import Tensor, make_tensor
from ...autograd.grad_mode import is_grad_enabled
from ...distributed import ProcessGroup, all_gather, all_reduce, broadcast
from ...distributed.process_group import resolve
from ...distributed.reduce_op import ReduceOp
from ..modules.module import Module
from .reducer import FIRST_BUCKET_BYTES, Reducer

__all__ = ["DistributedDataParallel"]

_MB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25


def _shape_signature(params: list[Tensor]) -> np.ndarray:
    """``[count, ndim, dims..., ndim, dims...]`` of the parameters, as int64."""
    values = [len(params)]
    for p in params:
        values.append(p.dim())
        values.extend(p.shape)
    return np.asarray(values, dtype=np.int64)


def _verify_same_model(params: list[Tensor], group: ProcessGroup) -> None:
    """Every rank must have the same number of parameters with the same shapes (PyTorch's
    messages otherwise), checked with two small collectives."""
    mine = _shape_signature(params)
    length = make_tensor(np.asarray([mine.size], dtype=np.int64))
    all_reduce(length, ReduceOp.MAX, group)
    padded = np.full(int(length._data[0]), -1, dtype=np.int64)
    padded[: mine.size] = mine
    gathered = [make_tensor(np.empty_like(padded)) for _ in range(group.size())]
    all_gather(gathered, make_tensor(padded), group)
    rank = group.rank()
    for other, theirs in enumerate(t._data for t in gathered):
        if theirs[0] != len(params):
            raise RuntimeError(
                f"DDP expects same model across all ranks, but Rank {rank} has {len(params)} "
                f"params, while rank {other} has inconsistent {int(theirs[0])} params."
            )
    for other, theirs in enumerate(t._data for t in gathered):
        cursor = 1
        for index, p in enumerate(params):
            ndim = int(theirs[cursor])
            shape = [int(d) for d in theirs[cursor + 1 : cursor + 1 + ndim]]
            cursor += 1 + ndim
            if shape != list(p.shape):
                raise RuntimeError(
                    f"[{rank}]: params[{index}] in this process with sizes {list(p.shape)} "
                    f"appears not to match sizes of the same param in process {other}."
                )


class DistributedDataParallel(Module):
    """Data-parallel training: each rank runs ``module`` on its share of the batch, and
    backward averages the gradients over the ranks, so that every rank's optimizer step is
    the same and the replicas stay identical.

    At construction the parameters and buffers of rank 0 are broadcast to the others (after
    checking that every rank has the same parameter shapes). During backward the gradients
    are averaged in buckets of ``bucket_cap_mb`` MiB (the first 1 MiB by default), each
    bucket's all-reduce started as soon as its gradients are ready, overlapping the rest of
    backward. ``no_sync()`` skips the averaging (gradient accumulation);
    ``find_unused_parameters=True`` lets a forward leave parameters out of the graph;
    ``broadcast_buffers`` copies rank 0's buffers before each forward;
    ``gradient_as_bucket_view=True`` makes each ``.grad`` a view of its bucket (no copy back).
    The wrapped module is ``.module`` (state_dict keys start with ``module.``).

    Example (in a script started with ``python -m chainrule.distributed.run -n 2``):
        >>> dist.init_process_group("mpi")  # doctest: +SKIP
        >>> model = DistributedDataParallel(torch.nn.Linear(4, 2))  # doctest: +SKIP
        >>> model(x).sum().backward()  # .grad: the average over the ranks  # doctest: +SKIP
    """

    def __init__(
        self,
        module: Module,
        device_ids: list[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group: ProcessGroup | None = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        group = resolve(process_group)
        params: list[Tensor] = []
        seen: set[int] = set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:
            devices = {p.device for p in params}
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters {devices}."
            )
        self.module = module
        self.process_group = group
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap_mb = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _MB)
        first_cap = FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        _verify_same_model(params, group)
        if init_sync:
            self._broadcast_from_rank0(list(module.parameters()) + self._module_buffers())
        self._params = params
        self.reducer = Reducer(
            params,
            group,
            self.bucket_bytes_cap,
            first_cap,
            find_unused_parameters,
            gradient_as_bucket_view,
        )

    def _module_buffers(self) -> list[Tensor]:
        return [b for b in self.module.buffers() if b is not None]

    def _broadcast_from_rank0(self, tensors: list[Tensor]) -> None:
        source = self.process_group.ranks[0]
        works = [broadcast(t.detach(), source, self.process_group, async_op=True) for t in tensors]
        for work in works:
            if work is not None:
                work.wait()

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run the module (after broadcasting rank 0's buffers) and prepare the gradient
        averaging of the backward pass that follows."""
        syncing = is_grad_enabled() and self.require_backward_grad_sync
        self.require_forward_param_sync = syncing
        if syncing and self.broadcast_buffers:
            buffers = self._module_buffers()
            if buffers:
                self._broadcast_from_rank0(buffers)
        if syncing:
            self.reducer.check_finished()
        output = self.module(*inputs, **kwargs)
        if syncing:
            self.reducer.prepare_for_backward(output)
        return output

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward accumulates gradients locally without averaging them; the first
        synchronised backward after it averages what was accumulated."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous
