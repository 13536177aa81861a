"""Process groups on MPI: the default group ``init_process_group`` makes, ``new_group``'s
subgroups, and the rank and size queries.

MPI (``mpi4py`` over the MPICH or Open MPI wheel, ``pip install 'chainrule[dist]'``) is imported
only when a group is made, so ``import chainrule`` never needs it.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from datetime import timedelta
from types import TracebackType
from typing import Any

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "new_group",
]

#: PyTorch's default collective timeout for the CPU backends (30 minutes).
DEFAULT_TIMEOUT = timedelta(minutes=30)

NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


def _mpi() -> Any:
    """``mpi4py.MPI`` (imported on first use: it starts MPI)."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise RuntimeError(
            "chainrule.distributed needs MPI: install it with pip install 'chainrule[dist]' "
            "(mpi4py and the mpich wheel)"
        ) from error
    return MPI


def is_available() -> bool:
    """True: the distributed package exists (its MPI backend needs ``mpi4py``)."""
    return True


def is_mpi_available() -> bool:
    """Whether ``mpi4py`` can be imported (without starting MPI)."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_gloo_available() -> bool:
    """False: chainrule's only backend is MPI (``backend="gloo"`` runs on it too)."""
    return False


def is_nccl_available() -> bool:
    """False: no GPUs."""
    return False


class Backend(str):
    """Backend names, as PyTorch's: lower-case strings (``Backend.MPI == "mpi"``)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        """Parse a backend name (case-insensitive)."""
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {name}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


class ProcessGroup:
    """A set of ranks and the MPI communicator their collectives run on.

    ``rank()`` and ``size()`` are this process's rank in the group and the group's size;
    ``ranks`` lists the members' global ranks in group order.
    """

    def __init__(self, comm: Any, ranks: list[int], backend: str, timeout: timedelta) -> None:
        self._comm = comm
        self.ranks = ranks
        self._backend = backend
        self.timeout = timeout

    def rank(self) -> int:
        """This process's rank in the group."""
        return int(self._comm.Get_rank())

    def size(self) -> int:
        """How many processes the group has."""
        return int(self._comm.Get_size())

    def name(self) -> str:
        """The backend's name, as PyTorch's ``ProcessGroup.name()``."""
        return self._backend

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, ranks={self.ranks})"


class _WorldMeta(type):
    """``GroupMember.WORLD`` / ``group.WORLD``: the default group, or None before init."""

    @property
    def WORLD(cls) -> ProcessGroup | None:  # noqa: N802 (PyTorch's name)
        return _STATE.world


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` (the default group) and ``NON_GROUP_MEMBER``, what ``new_group``
    returns on ranks outside the new group."""

    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):  # noqa: N801 (PyTorch's name)
    """``group.WORLD``: the default process group."""


class _State:
    """The distributed package's global state: the default group and the others made."""

    def __init__(self) -> None:
        self.world: ProcessGroup | None = None
        self.groups: list[ProcessGroup] = []
        self.previous_excepthook: Any = None


_STATE = _State()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has made the default group."""
    return _STATE.world is not None


def default_group() -> ProcessGroup:
    """The default group, or PyTorch's ValueError before ``init_process_group``."""
    if _STATE.world is None:
        raise ValueError(NOT_INITIALIZED)
    return _STATE.world


def _backend_name(backend: str | None) -> str:
    if backend is None:
        return Backend.MPI
    name = Backend(backend)
    if name in (Backend.MPI, Backend.GLOO):
        return str(name)
    if name == Backend.NCCL:
        raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    raise ValueError(f"Invalid backend: '{backend}'; chainrule's backend is 'mpi' (MPI)")


def _check_environment(rank: int, world_size: int, mpi_rank: int, mpi_size: int) -> None:
    """The rank and world size given or in ``RANK`` / ``WORLD_SIZE`` must be MPI's."""
    for name, given, actual in (
        ("WORLD_SIZE", world_size, mpi_size),
        ("RANK", rank, mpi_rank),
    ):
        if given == -1 and os.environ.get(name, "") != "":
            given = int(os.environ[name])
            source = f"environment variable {name}={given}"
        else:
            source = f"{name.lower()}={given}"
        if given != -1 and given != actual:
            raise ValueError(
                f"{source} does not match MPI's ({actual}): start the processes with "
                "mpiexec (python -m chainrule.distributed.run -n N script.py)"
            )


def _abort_on_uncaught(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    """A rank that dies of an exception aborts the whole job, so the other ranks fail at once
    instead of waiting in a collective for it."""
    traceback.print_exception(kind, value, tb)
    sys.stderr.flush()
    world = _STATE.world
    if world is not None and world.size() > 1:
        _mpi().COMM_WORLD.Abort(1)


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Make the default process group of all processes ``mpiexec`` started.

    Rank and world size are MPI's; ``rank``/``world_size`` or the ``RANK``/``WORLD_SIZE``
    environment variables, when given, must agree with them. ``backend`` is ``"mpi"`` (the
    default; ``"gloo"`` is accepted and runs on MPI too). A rank that then dies of an uncaught
    exception aborts the job, so that the others do not hang.

    Example (in a script started with ``python -m chainrule.distributed.run -n 2 train.py``):
        >>> import chainrule.distributed as dist
        >>> dist.init_process_group("mpi")  # doctest: +SKIP
        >>> dist.get_rank(), dist.get_world_size()  # doctest: +SKIP
        (0, 2)
    """
    if _STATE.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    MPI = _mpi()  # noqa: N806 (the module's own name)
    comm = MPI.COMM_WORLD
    _check_environment(rank, world_size, comm.Get_rank(), comm.Get_size())
    world = ProcessGroup(comm.Dup(), list(range(comm.Get_size())), name, timeout or DEFAULT_TIMEOUT)
    _STATE.world = world
    _STATE.groups = [world]
    if sys.excepthook is not _abort_on_uncaught:
        _STATE.previous_excepthook = sys.excepthook
        sys.excepthook = _abort_on_uncaught


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free a group's communicator; without an argument (or with the default group), all
    groups, after which ``is_initialized()`` is False again."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return
    target = _STATE.world if group is None else group
    if target is None:
        raise AssertionError("Process group cannot be None")
    if target is not _STATE.world:
        if target in _STATE.groups:
            _STATE.groups.remove(target)
            target._comm.Free()
        return
    for member in _STATE.groups:
        member._comm.Free()
    _STATE.groups = []
    _STATE.world = None
    if sys.excepthook is _abort_on_uncaught:
        sys.excepthook = _STATE.previous_excepthook or sys.__excepthook__


def resolve(group: ProcessGroup | None) -> ProcessGroup:
    """``group`` or, for None / ``group.WORLD``, the default group (ValueError before init)."""
    world = default_group()
    return world if group is None else group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group), -1 outside it."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """How many processes ``group`` (the default group) has; -1 outside it."""
    if group == GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend name of ``group`` (the default group)."""
    if group == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend(resolve(group).name())


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group order."""
    return list(resolve(group).ranks)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """The rank in ``group`` of the process whose global rank is ``global_rank``."""
    if group is _STATE.world:
        return global_rank
    if group not in _STATE.groups:
        raise ValueError(
            f"Group {group} is not registered, please create group with "
            "torch.distributed.new_group API"
        )
    if global_rank not in group.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return group.ranks.index(global_rank)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of the process whose rank in ``group`` is ``group_rank``."""
    if group is _STATE.world:
        return group_rank
    if group not in _STATE.groups:
        raise ValueError(
            f"Group {group} is not registered, please create group with "
            "torch.distributed.new_group API"
        )
    if not 0 <= group_rank < len(group.ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return group.ranks[group_rank]


def new_group(
    ranks: list[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id: Any = None,
) -> ProcessGroup | int:
    """A group of the given global ranks (all ranks when None). Every process must call it,
    members or not; non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    world = default_group()
    size = world.size()
    members = sorted(ranks) if ranks is not None else list(range(size))
    if len(members) > size:
        raise ValueError(
            "the new group's world size should be less or equal to the world size set by "
            "init_process_group"
        )
    for member in members:
        if member < 0 or member >= size:
            raise ValueError(
                "The new group's rank should be within the world_size set by init_process_group"
            )
    MPI = _mpi()  # noqa: N806
    world_group = world._comm.Get_group()
    subset = world_group.Incl(members)
    comm = world._comm.Create(subset)
    subset.Free()
    world_group.Free()
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    made = ProcessGroup(
        comm, members, _backend_name(backend or world.name()), timeout or world.timeout
    )
    _STATE.groups.append(made)
    return made


def warn_not_in_group(op_name: str) -> None:
    """PyTorch's warning for a collective called on a rank outside its group."""
    world = _STATE.world
    global_rank = -1 if world is None else world.rank()
    warnings.warn(
        f"Running {op_name} on global rank {global_rank} which does not belong to the given group.",
        stacklevel=3,
    )
