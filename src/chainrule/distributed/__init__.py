"""``chainrule.distributed``: ``torch.distributed``'s API on MPI (``mpi4py``).

Start one process per rank with ``python -m chainrule.distributed.run -n 4 train.py`` (it wraps
the ``mpiexec`` of the ``mpich`` wheel, ``pip install 'chainrule[dist]'``), then in the script:

Example:
    >>> import chainrule as torch
    >>> import chainrule.distributed as dist
    >>> dist.init_process_group("mpi")  # doctest: +SKIP
    >>> t = torch.ones(3) * dist.get_rank()  # doctest: +SKIP
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)  # doctest: +SKIP
"""

from __future__ import annotations

from .collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)
from .reduce_op import ReduceOp
from .work import Work

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_object",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
]
