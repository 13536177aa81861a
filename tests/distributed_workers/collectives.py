"""Run on N ranks by tests/test_distributed.py (python -m chainrule.distributed.run -n N):
every collective of chainrule.distributed against its NumPy meaning, on every rank.

Each rank builds every rank's input (they are a function of the rank), so it knows the
expected result; a failed check raises, which aborts the job with a non-zero status.
"""

from __future__ import annotations

import os
import warnings
from datetime import timedelta

import ml_dtypes
import numpy as np

import chainrule as torch
import chainrule.distributed as dist
from chainrule._tensor import make_tensor

DTYPES = {
    "float32": (torch.float32, np.float32),
    "float64": (torch.float64, np.float64),
    "float16": (torch.float16, np.float16),
    "bfloat16": (torch.bfloat16, ml_dtypes.bfloat16),
    "int64": (torch.int64, np.int64),
    "int32": (torch.int32, np.int32),
    "int8": (torch.int8, np.int8),
    "uint8": (torch.uint8, np.uint8),
    "complex64": (torch.complex64, np.complex64),
    "bool": (torch.bool, np.bool_),
}


def values(rank: int, np_dtype: type, shape: tuple[int, ...] = (2, 3)) -> np.ndarray:
    """Rank ``rank``'s input: small integers, exact in every dtype."""
    count = int(np.prod(shape))
    base = (np.arange(count) % 4 + rank + 1).reshape(shape)
    if np_dtype is np.bool_:
        return (np.arange(count).reshape(shape) + rank) % 3 == 0
    if np.dtype(np_dtype).kind == "c":
        return (base + 1j * (rank - np.arange(count).reshape(shape))).astype(np_dtype)
    return base.astype(np_dtype)


def tensor(array: np.ndarray) -> torch.Tensor:
    """A tensor owning a copy of ``array`` (bfloat16 included, which from_numpy refuses)."""
    return make_tensor(np.array(array, copy=True, order="C"))


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(f"rank {dist.get_rank()}: {message}")


def same(result: torch.Tensor, expected: np.ndarray, label: str, tol: float = 0.0) -> None:
    got = result._data
    check(got.dtype == np.dtype(expected.dtype), f"{label}: dtype {got.dtype} != {expected.dtype}")
    check(got.shape == expected.shape, f"{label}: shape {got.shape} != {expected.shape}")
    if tol:
        ok = np.allclose(
            got.astype(np.complex128), expected.astype(np.complex128), rtol=tol, atol=0
        )
    else:
        ok = np.array_equal(got, expected)
    check(ok, f"{label}: {got} != {expected}")


def raises(kind: type[Exception], text: str, call: object) -> None:
    try:
        call()  # type: ignore[operator]
    except kind as error:
        check(str(error) == text, f"message {str(error)!r} != {text!r}")
        return
    raise AssertionError(f"rank {dist.get_rank()}: expected {kind.__name__}: {text}")


def all_reduce_checks(rank: int, size: int) -> None:
    every = {
        name: np.stack([values(r, np_t) for r in range(size)]) for name, (_, np_t) in DTYPES.items()
    }
    numpy_ops = {
        dist.ReduceOp.SUM: lambda a: a.sum(axis=0, dtype=a.dtype),
        dist.ReduceOp.PRODUCT: lambda a: a.prod(axis=0, dtype=a.dtype),
        dist.ReduceOp.MAX: lambda a: a.max(axis=0),
        dist.ReduceOp.MIN: lambda a: a.min(axis=0),
    }
    for name, (_, np_t) in DTYPES.items():
        stacked = every[name]
        for op, reduce in numpy_ops.items():
            if name == "complex64" and op != dist.ReduceOp.SUM:
                continue
            if name == "bool":
                expected = (
                    stacked.any(axis=0)
                    if op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX)
                    else stacked.all(axis=0)
                )
            else:
                expected = reduce(stacked).astype(np_t)
            t = tensor(values(rank, np_t))
            dist.all_reduce(t, op=op)
            same(t, expected, f"all_reduce {op} {name}")
        if np.dtype(np_t).kind in "fcV":
            t = tensor(values(rank, np_t))
            dist.all_reduce(t, op=dist.ReduceOp.AVG)
            wide = np.complex128 if np.dtype(np_t).kind == "c" else np.float64
            expected = (stacked.astype(wide).sum(axis=0) / size).astype(np_t)
            tol = {"float16": 1e-3, "bfloat16": 1e-2}.get(name, 1e-6)
            same(t, expected, f"all_reduce AVG {name}", tol)
    # Asynchronous: the Work handle.
    t = tensor(values(rank, np.float32))
    work = dist.all_reduce(t, async_op=True)
    check(isinstance(work, dist.Work), "async_op returns a Work")
    check(work.wait() is True and work.is_completed(), "Work.wait")
    check(work.result()[0] is t, "Work.result")
    same(t, every["float32"].sum(axis=0), "async all_reduce")
    # In the tensor's own memory: a contiguous row of a bigger tensor, a 0-d tensor.
    big = tensor(np.stack([values(rank, np.float64)[0]] * 3))
    row = big[1]
    pointer = row.data_ptr()
    dist.all_reduce(row)
    check(row.data_ptr() == pointer, "no copy")
    same(big[1], every["float64"][:, 0].sum(axis=0), "all_reduce into a view")
    same(big[0], values(rank, np.float64)[0], "the rest untouched")
    scalar = torch.tensor(float(rank))
    dist.all_reduce(scalar, op=dist.ReduceOp.MAX)
    check(scalar.item() == size - 1 and scalar.dim() == 0, "0-d all_reduce")
    leaf = torch.ones(2, requires_grad=True)
    dist.all_reduce(leaf)
    check(leaf.tolist() == [size, size] and leaf.grad_fn is None, "leaf requiring grad")


def moving_checks(rank: int, size: int) -> None:
    last = size - 1
    for name, (_, np_t) in DTYPES.items():
        t = tensor(values(rank, np_t))
        dist.broadcast(t, src=last)
        same(t, values(last, np_t), f"broadcast {name}")
        outputs = [torch.zeros(2, 3, dtype=DTYPES[name][0]) for _ in range(size)]
        dist.all_gather(outputs, tensor(values(rank, np_t)))
        for r in range(size):
            same(outputs[r], values(r, np_t), f"all_gather {name} [{r}]")
    joined = torch.zeros(size * 2, 3, dtype=torch.bfloat16)
    dist.all_gather_into_tensor(joined, tensor(values(rank, ml_dtypes.bfloat16)))
    expected = np.concatenate([values(r, ml_dtypes.bfloat16) for r in range(size)])
    same(joined, expected, "all_gather_into_tensor")
    # gather / scatter to and from the last rank, by global and by group rank.
    gathered = [torch.zeros(2, 3) for _ in range(size)] if rank == last else None
    dist.gather(tensor(values(rank, np.float32)), gathered, dst=last)
    if rank == last:
        for r in range(size):
            same(gathered[r], values(r, np.float32), f"gather [{r}]")
    piece = torch.zeros(2, 3, dtype=torch.int64)
    pieces = [tensor(values(r, np.int64) * 10) for r in range(size)] if rank == 0 else None
    dist.scatter(piece, pieces, group_src=0)
    same(piece, values(rank, np.int64) * 10, "scatter")
    total = tensor(values(rank, np.float64))
    dist.reduce(total, dst=last, op=dist.ReduceOp.SUM)
    if rank == last:
        same(total, np.stack([values(r, np.float64) for r in range(size)]).sum(axis=0), "reduce")
    # reduce_scatter: rank i receives the reduction of everyone's input_list[i].
    inputs = [tensor(values(rank, np.float32) + 100 * i) for i in range(size)]
    out = torch.zeros(2, 3)
    dist.reduce_scatter(out, inputs, op=dist.ReduceOp.MAX)
    expected = np.stack([values(r, np.float32) + 100 * rank for r in range(size)]).max(axis=0)
    same(out, expected, "reduce_scatter MAX")
    dist.reduce_scatter(out, inputs, op=dist.ReduceOp.AVG)
    expected = np.stack([values(r, np.float32) + 100 * rank for r in range(size)]).mean(axis=0)
    same(out, expected.astype(np.float32), "reduce_scatter AVG", 1e-6)
    whole = tensor(np.concatenate([values(rank, np.float16) + i for i in range(size)]))
    part = torch.zeros(2, 3, dtype=torch.float16)
    dist.reduce_scatter_tensor(part, whole)
    expected = np.stack([values(r, np.float16) + rank for r in range(size)]).sum(axis=0)
    same(part, expected.astype(np.float16), "reduce_scatter_tensor")
    dist.barrier()
    check(dist.barrier(async_op=True).wait(), "async barrier")


def point_to_point_checks(rank: int, size: int) -> None:
    right, left = (rank + 1) % size, (rank - 1) % size
    received = torch.zeros(4, dtype=torch.bfloat16)
    if rank % 2 == 0:
        dist.send(tensor(np.full(4, rank, dtype=ml_dtypes.bfloat16)), dst=right, tag=3)
        sender = dist.recv(received, src=left, tag=3)
    else:
        sender = dist.recv(received, tag=3)
        dist.send(tensor(np.full(4, rank, dtype=ml_dtypes.bfloat16)), dst=right, tag=3)
    check(sender == left, f"recv returns the sender {sender}")
    same(received, np.full(4, left, dtype=ml_dtypes.bfloat16), "send/recv")
    incoming = torch.zeros(3, dtype=torch.complex128)
    receiving = dist.irecv(incoming, src=left)
    sending = dist.isend(torch.full((3,), rank + 0.5j, dtype=torch.complex128), dst=right)
    check(receiving.wait() and sending.wait(), "isend/irecv")
    same(incoming, np.full(3, left + 0.5j), "isend/irecv values")
    # A receive whose message has not come times out with a clear error, then completes.
    if rank == 0:
        late = torch.zeros(1)
        work = dist.irecv(late, src=1, tag=99)
        try:
            work.wait(timeout=timedelta(seconds=0.2))
        except RuntimeError as error:
            check("Timed out after 0.2 s waiting for recv" in str(error), str(error))
        else:
            raise AssertionError("the receive should have timed out")
        dist.barrier()
        check(work.wait(), "the late receive completes")
        check(late.item() == 7.0, "late value")
    else:
        dist.barrier()
        if rank == 1:
            dist.send(torch.tensor([7.0]), dst=0, tag=99)


def group_checks(rank: int, size: int) -> None:
    members = [0, size - 1]
    sub = dist.new_group(members)
    if rank in members:
        check(dist.get_rank(sub) == members.index(rank), "rank in the group")
        check(dist.get_world_size(sub) == 2, "group size")
        check(dist.get_process_group_ranks(sub) == members, "group ranks")
        t = torch.tensor([float(rank)])
        dist.all_reduce(t, group=sub)
        check(t.item() == float(sum(members)), "all_reduce in a group")
        t = torch.tensor([float(rank)])
        dist.broadcast(t, src=size - 1, group=sub)
        check(t.item() == size - 1, "broadcast in a group by global rank")
    else:
        check(sub == dist.GroupMember.NON_GROUP_MEMBER, "non-members")
        check(dist.get_rank(sub) == -1 and dist.get_world_size(sub) == -1, "outside")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check(dist.all_reduce(torch.ones(1), group=sub) is None, "no-op outside")
        check(
            str(caught[0].message) == f"Running all_reduce on global rank {rank} which does "
            "not belong to the given group.",
            "warning outside the group",
        )
    dist.barrier()


def object_checks(rank: int, size: int) -> None:
    everyone: list[object] = [None] * size
    dist.all_gather_object(everyone, {"rank": rank, "t": torch.tensor([rank])})
    check([o["rank"] for o in everyone] == list(range(size)), "all_gather_object")
    check(everyone[size - 1]["t"].tolist() == [size - 1], "a tensor inside an object")
    items: list[object] = [rank, f"from {rank}"] if rank == size - 1 else [None, None]
    dist.broadcast_object_list(items, src=size - 1)
    check(items == [size - 1, f"from {size - 1}"], f"broadcast_object_list {items}")
    collected = [None] * size if rank == 0 else None
    dist.gather_object(rank * 10, collected, dst=0)
    if rank == 0:
        check(collected == [r * 10 for r in range(size)], "gather_object")
    out: list[object] = [None]
    dist.scatter_object_list(out, [f"to {r}" for r in range(size)] if rank == 0 else None, src=0)
    check(out == [f"to {rank}"], "scatter_object_list")


def error_checks(rank: int, size: int) -> None:
    raises(
        RuntimeError,
        "input tensor has to be contiguous",
        lambda: dist.all_reduce(torch.ones(3, 4).t()),
    )
    raises(
        ValueError,
        "all_reduce does not support RedOpType.MAX on complex tensors",
        lambda: dist.all_reduce(torch.ones(2, dtype=torch.complex64), op=dist.ReduceOp.MAX),
    )
    raises(
        RuntimeError,
        "All gather: number of output tensors should equal to the world size",
        lambda: dist.all_gather([torch.ones(2)], torch.ones(2)),
    )
    raises(
        RuntimeError,
        "Tensors are not equal in size or data type",
        lambda: dist.all_gather([torch.ones(3)] * size, torch.ones(2)),
    )
    raises(
        ValueError,
        "Invalid usage of tensors with different dtypesFound chainrule.float32 "
        "and  chainrule.float64",
        lambda: dist.all_gather([torch.ones(2)] * size, torch.ones(2, dtype=torch.float64)),
    )
    if rank != 0:
        raises(
            ValueError,
            "Argument ``gather_list`` must NOT be specified on non-destination ranks.",
            lambda: dist.gather(torch.ones(1), [torch.ones(1)] * size, dst=0),
        )
    else:
        raises(
            ValueError,
            "Argument ``gather_list`` must be specified on destination rank.",
            lambda: dist.gather(torch.ones(1), None, dst=0),
        )
    raises(
        ValueError,
        "Invalid destination rank: destination rank should not be the same as "
        "the rank of the current process.",
        lambda: dist.send(torch.ones(1), dst=rank),
    )
    raises(
        ValueError, "trying to initialize the default process group twice!", dist.init_process_group
    )


def main() -> None:
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    check(
        int(os.environ["RANK"]) == rank and int(os.environ["WORLD_SIZE"]) == size,
        "the launcher's RANK / WORLD_SIZE",
    )
    check(int(os.environ["LOCAL_RANK"]) == rank, "LOCAL_RANK on one machine")
    all_reduce_checks(rank, size)
    moving_checks(rank, size)
    point_to_point_checks(rank, size)
    group_checks(rank, size)
    object_checks(rank, size)
    error_checks(rank, size)
    dist.barrier()
    dist.destroy_process_group()
    check(not dist.is_initialized(), "destroyed")
    print(f"collectives ok on rank {rank} of {size}", flush=True)


if __name__ == "__main__":
    main()
