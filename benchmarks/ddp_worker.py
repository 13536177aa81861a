"""One rank of the DDP benchmark (``python -m benchmarks.ddp`` starts it through mpiexec).

Measures, per rank, with the same per-rank batch on every rank count (weak scaling):

* ``local_step``: one SGD step of the model without DDP (forward, loss, backward, update),
  and its ``forward`` (with the loss) and ``update`` alone;
* ``ddp_step``: the same step through ``DistributedDataParallel``;
* ``exposed``: how long the end of backward waited for all-reduces still running
  (``Reducer.exposed_seconds``);
* ``comm_alone``: the all-reduces of the same buckets, back to back, without computation;
* ``allreduce``: all-reduce times of single float32 messages from 1 KiB to 16 MiB, to fit
  the alpha-beta model ``t = alpha + beta * bytes`` of this machine's MPI.

Rank 0 prints one JSON line with the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import numpy as np

import chainrule as torch
import chainrule.distributed as dist
from chainrule._tensor import make_tensor
from chainrule.nn.parallel import DistributedDataParallel

WIDTHS = (784, 1024, 1024, 1024, 10)


def build(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = []
    for i in range(len(WIDTHS) - 1):
        layers.append(torch.nn.Linear(WIDTHS[i], WIDTHS[i + 1]))
        if i < len(WIDTHS) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def median_time(call: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--bucket-cap-mb", type=float, default=1.0)
    options = parser.parse_args()
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    # One BLAS thread per rank whatever the rank count, so that a rank computes alike on 1
    # and 2 ranks (weak scaling) and 2 ranks do not oversubscribe this machine's 2 cores.
    threads = 1
    torch.set_num_threads(threads)
    generator = np.random.default_rng(rank)
    x = torch.tensor(generator.standard_normal((options.batch, WIDTHS[0]), dtype=np.float32))
    y = torch.tensor(generator.integers(0, WIDTHS[-1], options.batch))
    loss_fn = torch.nn.CrossEntropyLoss()

    local = build(0)
    local_opt = torch.optim.SGD(local.parameters(), lr=0.01)

    def local_step() -> None:
        local_opt.zero_grad()
        loss_fn(local(x), y).backward()
        local_opt.step()

    ddp = DistributedDataParallel(build(0), bucket_cap_mb=options.bucket_cap_mb)
    ddp_opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    exposed: list[float] = []

    def ddp_step() -> None:
        ddp_opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        exposed.append(ddp.reducer.exposed_seconds)
        ddp_opt.step()

    buffers = [make_tensor(bucket.buffer.copy()) for bucket in ddp.reducer.buckets]

    def comm_alone() -> None:
        works = [dist.all_reduce(b, async_op=True) for b in buffers]
        for work in works:
            if work is not None:
                work.wait()

    for _ in range(3):  # warm up: first-touch memory, MPI connections
        local_step()
        ddp_step()
    # Interleaved (local, DDP, forward, update, communication alone) so that a change of
    # load on the machine during the run affects all of them alike.
    samples: dict[str, list[float]] = {
        "local_step": [],
        "ddp_step": [],
        "forward": [],
        "update": [],
        "comm_alone": [],
    }
    calls = {
        "local_step": local_step,
        "ddp_step": ddp_step,
        "forward": lambda: loss_fn(local(x), y),
        "update": local_opt.step,
        "comm_alone": comm_alone,
    }
    exposed.clear()
    for _ in range(options.steps):
        for name, call in calls.items():
            samples[name].append(median_time(call, 1))
    result: dict[str, Any] = {
        "ranks": size,
        "threads_per_rank": threads,
        "batch_per_rank": options.batch,
        "parameters": sum(p.numel() for p in ddp.parameters()),
        "gradient_bytes": sum(b.buffer.nbytes for b in ddp.reducer.buckets),
        "buckets": [int(b.buffer.nbytes) for b in ddp.reducer.buckets],
        "bucket_cap_mb": options.bucket_cap_mb,
        "exposed": statistics.median(exposed),
    }
    for name, values in samples.items():
        result[name] = statistics.median(values)
    sizes = [2**k for k in range(10, 25, 2)]  # bytes: 1 KiB .. 16 MiB
    allreduce = []
    for nbytes in sizes:
        message = make_tensor(np.ones(nbytes // 4, dtype=np.float32))
        allreduce.append(median_time(lambda m=message: dist.all_reduce(m), 7))
    result["allreduce_bytes"] = sizes
    result["allreduce_seconds"] = allreduce
    if rank == 0:
        print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
