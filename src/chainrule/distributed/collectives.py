"""The collectives and point-to-point operations, as ``torch.distributed``'s, on MPI.

Each one checks its arguments (PyTorch's errors), starts a non-blocking MPI operation on the
tensors' own memory and returns a ``Work`` with ``async_op=True``, or waits for it. Ranks named
by ``src``/``dst`` are global ranks; ``group_src``/``group_dst`` are ranks within ``group``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from .process_group import (
    GroupMember,
    ProcessGroup,
    _mpi,
    get_group_rank,
    resolve,
    warn_not_in_group,
)
from .reduce_op import RedOpType, ReduceOp
from .tensor_buffers import byte_message, check_reduction, contiguous_array, reduction_message
from .work import Work

__all__ = [
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "gather",
    "irecv",
    "isend",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]


def _type_of(value: Any) -> str:
    """``type(value)`` as PyTorch's messages show it (``<class 'chainrule.Tensor'>``)."""
    return "<class 'chainrule.Tensor'>" if isinstance(value, Tensor) else str(type(value))


def _tensor_list(values: Any, name: str) -> list[Tensor]:
    if not isinstance(values, list):
        raise TypeError(
            "Invalid function argument. Expected parameter "
            f"`{name}` of type List[torch.Tensor]\n"
            f"             but got {_type_of(values)} instead."
        )
    if not all(isinstance(v, Tensor) for v in values):
        raise TypeError(
            "Invalid function argument. Expected parameter "
            f"`{name}` of type List[torch.Tensor]\n"
            f"             but got {_type_of(values)} with elements of type "
            f"[{', '.join(_type_of(v) for v in values)}]."
        )
    return values


def _single(value: Any, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(
            "Invalid function argument. Expected parameter "
            f"`{name}` of type torch.Tensor\n"
            f"             but got {_type_of(value)} instead."
        )
    return value


def _same_dtype(*tensors: Tensor | list[Tensor]) -> None:
    """PyTorch's check: one dtype (a complex type mixes with its real type)."""
    last = None
    for item in tensors:
        for t in item if isinstance(item, list) else [item]:
            dtype = t.dtype
            if dtype.is_complex:
                dtype = t.real.dtype
            if last is None:
                last = dtype
            elif last != dtype:
                raise ValueError(
                    f"Invalid usage of tensors with different dtypesFound {last} and  {t.dtype}"
                )


def _group_rank(
    group: ProcessGroup, rank: int | None, group_rank: int | None, kind: str, op_name: str
) -> int:
    """The rank within ``group`` named by a global ``rank`` or by ``group_rank``."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        found = group_rank
    elif rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    else:
        found = get_group_rank(group, rank)
    if not 0 <= found < group.size():
        raise RuntimeError(f"ProcessGroupMPI::{op_name}: invalid {kind} rank: {found}")
    return found


def _group_or_none(group: ProcessGroup | None, name: str) -> ProcessGroup | None:
    """The process group collective ``name`` runs on; None, after PyTorch's warning, on a rank
    that is not a member of ``group``."""
    if group == GroupMember.NON_GROUP_MEMBER:
        warn_not_in_group(name)
        return None
    return resolve(group)


def _finish(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _same_size_and_type(reference: Tensor, tensors: list[Tensor]) -> None:
    for t in tensors:
        if t.numel() != reference.numel() or t.dtype != reference.dtype:
            raise RuntimeError("Tensors are not equal in size or data type")
        contiguous_array(t, writes=False)


def _average(array: np.ndarray, size: int) -> Any:
    def divide() -> None:
        np.divide(array, size, out=array)

    return divide


def all_reduce(
    tensor: Tensor,
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``tensor`` over the group, in place on every rank.

    Example:
        >>> t = torch.tensor([float(dist.get_rank())])  # doctest: +SKIP
        >>> dist.all_reduce(t)  # doctest: +SKIP
        >>> t  # with 2 ranks  # doctest: +SKIP
        tensor([1.])
    """
    _single(tensor, "tensor")
    pg = _group_or_none(group, "all_reduce")
    if pg is None:
        return None
    array = contiguous_array(tensor, writes=True)
    op = check_reduction(op, array.dtype, "all_reduce")
    message, mpi_op = reduction_message(array, op)
    request = pg._comm.Iallreduce(_mpi().IN_PLACE, message, mpi_op)
    finish = _average(array, pg.size()) if op == RedOpType.AVG else None
    return _finish(Work([request], "all_reduce", pg.timeout, finish, [tensor]), async_op)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """Reduce ``tensor`` over the group into the destination rank's ``tensor``."""
    _single(tensor, "tensor")
    pg = _group_or_none(group, "reduce")
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst, "root", "reduce")
    array = contiguous_array(tensor, writes=True)
    op = check_reduction(op, array.dtype, "reduce")
    message, mpi_op = reduction_message(array, op)
    if pg.rank() == root:
        request = pg._comm.Ireduce(_mpi().IN_PLACE, message, mpi_op, root=root)
        finish = _average(array, pg.size()) if op == RedOpType.AVG else None
    else:
        request = pg._comm.Ireduce(message, None, mpi_op, root=root)
        finish = None
    return _finish(Work([request], "reduce", pg.timeout, finish, [tensor]), async_op)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Copy ``tensor`` of the source rank into ``tensor`` on every other rank."""
    _single(tensor, "tensor")
    pg = _group_or_none(group, "broadcast")
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src, "root", "broadcast")
    array = contiguous_array(tensor, writes=pg.rank() != root)
    request = pg._comm.Ibcast(byte_message(array), root=root)
    return _finish(Work([request], "broadcast", pg.timeout, None, [tensor]), async_op)


def _copy_rows(flat: np.ndarray, outputs: list[Tensor]) -> Any:
    """Copy row i of ``flat`` into ``outputs[i]`` (what a gather does once MPI is done)."""

    def copy() -> None:
        for row, out in zip(flat, outputs, strict=True):
            contiguous_array(out, writes=True)[...] = row

    return copy


def _stacked(tensors: list[Tensor]) -> np.ndarray:
    return np.stack([contiguous_array(t, writes=False) for t in tensors])


def all_gather(
    tensor_list: list[Tensor],
    tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``tensor_list[i]`` receives rank i's ``tensor``, on every rank."""
    _tensor_list(tensor_list, "tensor_list")
    _single(tensor, "tensor")
    _same_dtype(tensor_list, tensor)
    pg = _group_or_none(group, "all_gather")
    if pg is None:
        return None
    array = contiguous_array(tensor, writes=False)
    if len(tensor_list) != pg.size():
        raise RuntimeError("All gather: number of output tensors should equal to the world size")
    _same_size_and_type(tensor, tensor_list)
    flat = np.empty((pg.size(), array.size), dtype=array.dtype)
    request = pg._comm.Iallgather(byte_message(array), byte_message(flat))
    work = Work([request], "all_gather", pg.timeout, _copy_rows(flat, tensor_list), tensor_list)
    return _finish(work, async_op)


def all_gather_into_tensor(
    output_tensor: Tensor,
    input_tensor: Tensor,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's ``input_tensor`` concatenated (rank order) into ``output_tensor``, which
    has ``world_size`` times as many elements."""
    _single(output_tensor, "output_tensor")
    _single(input_tensor, "input_tensor")
    _same_dtype(output_tensor, input_tensor)
    pg = _group_or_none(group, "all_gather_into_tensor")
    if pg is None:
        return None
    array = contiguous_array(input_tensor, writes=False)
    out = contiguous_array(output_tensor, writes=True)
    if out.size != array.size * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    request = pg._comm.Iallgather(byte_message(array), byte_message(out))
    work = Work([request], "all_gather_into_tensor", pg.timeout, None, [output_tensor])
    return _finish(work, async_op)


def reduce_scatter(
    output: Tensor,
    input_list: list[Tensor],
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``output`` on rank i receives the reduction over ranks of their ``input_list[i]``."""
    _single(output, "output")
    _tensor_list(input_list, "input_list")
    _same_dtype(output, input_list)
    pg = _group_or_none(group, "reduce_scatter")
    if pg is None:
        return None
    out = contiguous_array(output, writes=True)
    if len(input_list) != pg.size():
        raise RuntimeError("Reduce scatter: number of input tensors should equal to the world size")
    _same_size_and_type(output, input_list)
    op = check_reduction(op, out.dtype, "reduce_scatter")
    flat = _stacked(input_list).reshape(-1)
    send, mpi_op = reduction_message(flat, op)
    receive, _ = reduction_message(out, op)
    request = pg._comm.Ireduce_scatter_block(send, receive, mpi_op)
    finish = _average(out, pg.size()) if op == RedOpType.AVG else None
    return _finish(Work([request], "reduce_scatter", pg.timeout, finish, [output]), async_op)


def reduce_scatter_tensor(
    output: Tensor,
    input: Tensor,
    op: Any = ReduceOp.SUM,
    group: ProcessGroup | None = None,
    async_op: bool = False,
) -> Work | None:
    """``reduce_scatter`` with the inputs as one tensor, split along its first dimension."""
    _single(output, "output")
    _single(input, "input")
    _same_dtype(output, input)
    pg = _group_or_none(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    out = contiguous_array(output, writes=True)
    source = contiguous_array(input, writes=False)
    if source.size != out.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    op = check_reduction(op, out.dtype, "reduce_scatter_tensor")
    send, mpi_op = reduction_message(source, op)
    receive, _ = reduction_message(out, op)
    request = pg._comm.Ireduce_scatter_block(send, receive, mpi_op)
    finish = _average(out, pg.size()) if op == RedOpType.AVG else None
    work = Work([request], "reduce_scatter_tensor", pg.timeout, finish, [output])
    return _finish(work, async_op)


def _rooted(
    name: str,
    tensor: Tensor,
    tensors: list[Tensor],
    list_name: str,
    group: ProcessGroup | None,
    rank: int | None,
    group_rank: int | None,
) -> tuple[ProcessGroup, int] | None:
    """gather's and scatter's checks, in PyTorch's order: the tensor, the list (given on the
    root rank only), their dtypes, the group (None outside it); the group and the root's rank
    in it (rank 0 when neither ``rank`` nor ``group_rank`` is given)."""
    _single(tensor, "tensor")
    if tensors:
        _tensor_list(tensors, list_name)
    _same_dtype(tensor, tensors)
    pg = _group_or_none(group, name)
    if pg is None:
        return None
    if rank is None and group_rank is None:
        rank = 0
    root = _group_rank(pg, rank, group_rank, "root", name)
    side = "destination" if name == "gather" else "source"
    mine = pg.rank() == root
    if mine and not tensors:
        raise ValueError(f"Argument ``{list_name}`` must be specified on {side} rank.")
    if not mine and tensors:
        raise ValueError(f"Argument ``{list_name}`` must NOT be specified on non-{side} ranks.")
    return pg, root


def gather(
    tensor: Tensor,
    gather_list: list[Tensor] | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    """The destination rank's ``gather_list[i]`` receives rank i's ``tensor``."""
    gather_list = gather_list or []
    rooted = _rooted("gather", tensor, gather_list, "gather_list", group, dst, group_dst)
    if rooted is None:
        return None
    pg, root = rooted
    mine = pg.rank() == root
    array = contiguous_array(tensor, writes=False)
    if not mine:
        request = pg._comm.Igather(byte_message(array), None, root=root)
        return _finish(Work([request], "gather", pg.timeout), async_op)
    if len(gather_list) != pg.size():
        raise RuntimeError("Gather: number of output tensors should equal to the world size")
    _same_size_and_type(tensor, gather_list)
    flat = np.empty((pg.size(), array.size), dtype=array.dtype)
    request = pg._comm.Igather(byte_message(array), byte_message(flat), root=root)
    work = Work([request], "gather", pg.timeout, _copy_rows(flat, gather_list), gather_list)
    return _finish(work, async_op)


def scatter(
    tensor: Tensor,
    scatter_list: list[Tensor] | None = None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    """Rank i's ``tensor`` receives the source rank's ``scatter_list[i]``."""
    scatter_list = scatter_list or []
    rooted = _rooted("scatter", tensor, scatter_list, "scatter_list", group, src, group_src)
    if rooted is None:
        return None
    pg, root = rooted
    mine = pg.rank() == root
    array = contiguous_array(tensor, writes=True)
    if not mine:
        request = pg._comm.Iscatter(None, byte_message(array), root=root)
        return _finish(Work([request], "scatter", pg.timeout, None, [tensor]), async_op)
    if len(scatter_list) != pg.size():
        raise RuntimeError("Scatter: number of input tensors should equal to the world size")
    _same_size_and_type(tensor, scatter_list)
    flat = _stacked(scatter_list)
    request = pg._comm.Iscatter(byte_message(flat), byte_message(array), root=root)
    return _finish(Work([request], "scatter", pg.timeout, None, [tensor]), async_op)


def barrier(
    group: ProcessGroup | None = None,
    async_op: bool = False,
    device_ids: Any = None,
    timeout: Any = None,
) -> Work | None:
    """Wait until every rank of the group has called ``barrier``."""
    pg = _group_or_none(group, "barrier")
    if pg is None:
        return None
    work = Work([pg._comm.Ibarrier()], "barrier", timeout or pg.timeout)
    return _finish(work, async_op)


def _peer(group: ProcessGroup, rank: int | None, group_rank: int | None, kind: str) -> int:
    found = _group_rank(group, rank, group_rank, kind, "send" if kind == "destination" else "recv")
    if found == group.rank():
        raise ValueError(
            f"Invalid {kind} rank: {kind} rank should not be the same as the rank of the "
            "current process."
        )
    return found


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work | None:
    """Start sending ``tensor`` to ``dst``; the returned ``Work`` completes once sent."""
    _single(tensor, "tensor")
    pg = _group_or_none(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "destination")
    array = contiguous_array(tensor, writes=False)
    request = pg._comm.Isend(byte_message(array), dest=peer, tag=tag)
    return Work([request], "send", pg.timeout, None, [tensor])


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work | None:
    """Start receiving into ``tensor`` from ``src`` (any rank when None)."""
    _single(tensor, "tensor")
    pg = _group_or_none(group, "irecv")
    if pg is None:
        return None
    array = contiguous_array(tensor, writes=True)
    if src is None and group_src is None:
        peer = _mpi().ANY_SOURCE
    else:
        peer = _peer(pg, src, group_src, "source")
    request = pg._comm.Irecv(byte_message(array), source=peer, tag=tag)
    return Work([request], "recv", pg.timeout, None, [tensor])


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send ``tensor`` to rank ``dst`` (blocking)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: ProcessGroup | None = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); the sender's global
    rank, or -1 outside ``group``."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = resolve(group)
    return pg.ranks[work.source_rank()]
