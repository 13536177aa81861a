"""Run by tests/test_distributed.py as ``python single_process.py chainrule|torch [port]``:
one process, world size 1 (chainrule on MPI's singleton, PyTorch on gloo), printing as JSON
what each step of the torch.distributed API returns or raises, for the test to compare."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from typing import Any


def outcome(call: Any) -> list[Any]:
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the outcome is the exception
        return [type(error).__name__, str(error).replace("chainrule.", "torch.")]
    return ["ok", describe(value)]


def describe(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [describe(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return [str(value.dtype).replace("chainrule.", "torch."), value.tolist()]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return type(value).__name__


def steps(torch: Any, init: Any) -> dict[str, Any]:
    dist = torch.distributed
    results: dict[str, Any] = {}

    def record(label: str, call: Any) -> None:
        results[label] = outcome(call)

    for name in (
        "get_rank",
        "get_world_size",
        "get_backend",
        "barrier",
        "new_group",
        "destroy_process_group",
        "is_initialized",
    ):
        record(f"before init: {name}", getattr(dist, name))
    record("before init: all_reduce", lambda: dist.all_reduce(torch.ones(2)))
    record("before init: broadcast", lambda: dist.broadcast(torch.ones(2), 0))
    record("before init: sampler", lambda: torch.utils.data.DistributedSampler(range(4)))
    record("timeout not a timedelta", lambda: init(timeout=5))
    record("init", lambda: init())
    record("init twice", lambda: init())
    record("after init", lambda: (dist.is_initialized(), dist.get_rank(), dist.get_world_size()))
    record(
        "ReduceOp",
        lambda: [
            repr(dist.ReduceOp.SUM),
            str(dist.ReduceOp.AVG),
            dist.ReduceOp.MAX == dist.ReduceOp.MAX,
        ],
    )
    record(
        "sampler from the group",
        lambda: list(torch.utils.data.DistributedSampler(range(5), shuffle=False)),
    )
    for dtype in ("float32", "float64", "int64", "bool", "float16", "bfloat16", "complex64"):
        record(
            f"all_reduce {dtype}",
            lambda d=dtype: (lambda t: (dist.all_reduce(t), t)[1])(
                torch.ones(3, dtype=getattr(torch, d))
            ),
        )
    record(
        "all_reduce MIN",
        lambda: (lambda t: (dist.all_reduce(t, op=dist.ReduceOp.MIN), t)[1])(torch.arange(3.0)),
    )
    record("all_reduce a list", lambda: dist.all_reduce([torch.ones(2)]))
    record(
        "all_reduce complex MAX",
        lambda: dist.all_reduce(torch.ones(2, dtype=torch.complex64), op=dist.ReduceOp.MAX),
    )

    def asynchronous() -> Any:
        t = torch.arange(3.0)
        work = dist.all_reduce(t, async_op=True)
        return [work.wait(), work.is_completed(), work.result()]

    record("async all_reduce", asynchronous)
    record("all_gather a tensor", lambda: dist.all_gather(torch.ones(2), torch.ones(2)))
    record(
        "all_gather dtypes",
        lambda: dist.all_gather([torch.ones(2, dtype=torch.float64)], torch.ones(2)),
    )

    def gathered() -> Any:
        out = [torch.zeros(2, dtype=torch.int32)]
        dist.all_gather(out, torch.tensor([4, 5], dtype=torch.int32))
        return out

    record("all_gather", gathered)
    record("gather without list", lambda: dist.gather(torch.ones(2), None, dst=0))

    def gather_to_0() -> Any:
        out = [torch.zeros(2)]
        dist.gather(torch.tensor([1.0, 2.0]), out, dst=0)
        return out

    record("gather", gather_to_0)
    record("scatter without list", lambda: dist.scatter(torch.ones(2), None, src=0))

    def scattered() -> Any:
        out = torch.zeros(2)
        dist.scatter(out, [torch.tensor([3.0, 4.0])], src=0)
        return out

    record("scatter", scattered)

    def reduce_scattered() -> Any:
        out = torch.zeros(2)
        dist.reduce_scatter(out, [torch.tensor([3.0, 4.0])])
        return out

    record("reduce_scatter", reduce_scattered)
    record("broadcast", lambda: (lambda t: (dist.broadcast(t, 0), t)[1])(torch.arange(2)))
    record("send to self", lambda: dist.send(torch.ones(1), 0))
    record("send both ranks", lambda: dist.send(torch.ones(1), 0, group_dst=0))
    record("barrier", lambda: dist.barrier())

    def objects() -> Any:
        gathered: list[Any] = [None]
        dist.all_gather_object(gathered, {"a": 1})
        items: list[Any] = [1, "x"]
        dist.broadcast_object_list(items, src=0)
        collected: list[Any] = [None]
        dist.gather_object(5, collected, dst=0)
        scattered: list[Any] = [None]
        dist.scatter_object_list(scattered, [7], src=0)
        return [gathered, items, collected, scattered]

    record("object collectives", objects)
    record("all_gather_object short", lambda: dist.all_gather_object([], 1))
    record("gather_object without list", lambda: dist.gather_object(5, None, dst=0))
    record("scatter_object_list without input", lambda: dist.scatter_object_list([None], None))
    record("scatter_object_list empty output", lambda: dist.scatter_object_list([], [7]))
    record("scatter_object_list int input", lambda: dist.scatter_object_list([None], 7))
    sub = dist.new_group([0])
    record(
        "new_group",
        lambda: [dist.get_rank(sub), dist.get_world_size(sub), dist.get_process_group_ranks(sub)],
    )
    record("new_group too big", lambda: dist.new_group([0, 1]))
    nn = torch.nn
    torch.manual_seed(0)
    inner = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    ddp = nn.parallel.DistributedDataParallel(inner)
    record("DDP state_dict keys", lambda: list(ddp.state_dict()))
    record("DDP named_parameters", lambda: [n for n, _ in ddp.named_parameters()])
    record("DDP repr", lambda: repr(ddp))
    record("DDP module", lambda: ddp.module is inner)
    record("DDP without parameters", lambda: nn.parallel.DistributedDataParallel(nn.ReLU()))
    record(
        "DDP device_ids",
        lambda: nn.parallel.DistributedDataParallel(nn.Linear(1, 1), device_ids=[0, 1]),
    )

    def ddp_grads() -> Any:
        x = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
        ddp(x).sum().backward()
        return [p.grad.shape == p.shape for p in inner.parameters()]

    record("DDP backward", ddp_grads)
    record("destroy", lambda: dist.destroy_process_group())
    record("destroyed", lambda: dist.is_initialized())
    record("destroy twice", lambda: dist.destroy_process_group())
    record("after destroy", lambda: dist.get_rank())
    return results


def main() -> None:
    which = sys.argv[1]
    if which == "torch":
        import torch
        import torch.distributed

        def init(timeout: Any = None) -> None:
            torch.distributed.init_process_group(
                "gloo",
                init_method=f"tcp://127.0.0.1:{sys.argv[2]}",
                rank=0,
                world_size=1,
                timeout=timeout if timeout is not None else timedelta(seconds=60),
            )
    else:
        import chainrule as torch

        def init(timeout: Any = None) -> None:
            torch.distributed.init_process_group("mpi", timeout=timeout)

    print(json.dumps(steps(torch, init), default=repr))


if __name__ == "__main__":
    main()
