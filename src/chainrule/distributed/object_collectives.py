"""Collectives of picklable Python objects (``all_gather_object``, ``broadcast_object_list``,
``gather_object``, ``scatter_object_list``), as PyTorch's: blocking, through pickle, so only
for objects from trusted ranks (metrics, configurations, small state)."""

from __future__ import annotations

from typing import Any

from .collectives import _group_rank
from .process_group import GroupMember, ProcessGroup, resolve, warn_not_in_group

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]


def _root(group: ProcessGroup, rank: int | None, group_rank: int | None, name: str) -> int:
    if rank is None and group_rank is None:
        rank = group.ranks[0]
    return _group_rank(group, rank, group_rank, "root", name)


def all_gather_object(object_list: list[Any], obj: Any, group: ProcessGroup | None = None) -> None:
    """``object_list[i]`` receives rank i's ``obj`` (``object_list`` has ``world_size``
    entries)."""
    if group == GroupMember.NON_GROUP_MEMBER:
        warn_not_in_group("all_gather_object")
        return
    pg = resolve(group)
    for i, value in enumerate(pg._comm.allgather(obj)):
        object_list[i] = value


def broadcast_object_list(
    object_list: list[Any],
    src: int | None = None,
    group: ProcessGroup | None = None,
    device: Any = None,
    group_src: int | None = None,
) -> None:
    """Replace the entries of ``object_list`` by the source rank's, in place."""
    if group == GroupMember.NON_GROUP_MEMBER:
        warn_not_in_group("broadcast_object_list")
        return
    pg = resolve(group)
    root = _root(pg, src, group_src, "broadcast")
    received = pg._comm.bcast(list(object_list) if pg.rank() == root else None, root=root)
    object_list[:] = received[: len(object_list)]


def gather_object(
    obj: Any,
    object_gather_list: list[Any] | None = None,
    dst: int | None = None,
    group: ProcessGroup | None = None,
    group_dst: int | None = None,
) -> None:
    """The destination rank's ``object_gather_list[i]`` receives rank i's ``obj``."""
    if group == GroupMember.NON_GROUP_MEMBER:
        warn_not_in_group("gather_object")
        return
    pg = resolve(group)
    root = _root(pg, dst, group_dst, "gather")
    mine = pg.rank() == root
    if mine and not object_gather_list:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    if not mine and object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    gathered = pg._comm.gather(obj, root=root)
    if mine and object_gather_list is not None:
        for i, value in enumerate(gathered):
            object_gather_list[i] = value


def scatter_object_list(
    scatter_object_output_list: list[Any],
    scatter_object_input_list: list[Any] | None = None,
    src: int | None = None,
    group: ProcessGroup | None = None,
    group_src: int | None = None,
) -> None:
    """``scatter_object_output_list[0]`` on rank i receives the source rank's
    ``scatter_object_input_list[i]``."""
    if group == GroupMember.NON_GROUP_MEMBER:
        warn_not_in_group("scatter_object_list")
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    pg = resolve(group)
    root = _root(pg, src, group_src, "scatter")
    if pg.rank() == root:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        values = list(scatter_object_input_list)
    else:
        values = None
    scatter_object_output_list[0] = pg._comm.scatter(values, root=root)
