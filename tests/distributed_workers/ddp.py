"""Run on N ranks by tests/test_distributed.py: DistributedDataParallel against one process.

N ranks, each on its share of a batch, must end with the parameters one process gets by
training on the whole batch (K steps of SGD with momentum, float64); plus no_sync,
find_unused_parameters, broadcast_buffers, the overlap of the all-reduces with backward, and
the errors for mismatched models. A failed check raises, which aborts the job.
"""

from __future__ import annotations

import numpy as np

import chainrule as torch
import chainrule.distributed as dist
from chainrule.nn.parallel import DistributedDataParallel as DDP

PER_RANK = 4
STEPS = 3


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(f"rank {dist.get_rank()}: {message}")


def close(a: torch.Tensor, b: torch.Tensor, label: str, tol: float = 1e-12) -> None:
    check(
        a.shape == b.shape and np.allclose(a._data, b._data, rtol=tol, atol=tol),
        f"{label}: {a} != {b}",
    )


class Scaled(torch.nn.Module):
    """An MLP with a buffer the forward reads (scale), so that buffer broadcasts matter."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.first = torch.nn.Linear(5, width)
        self.second = torch.nn.Linear(width, 3)
        self.register_buffer("scale", torch.ones(1, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(torch.tanh(self.first(x))) * self.scale


def model(seed: int, width: int = 8) -> Scaled:
    torch.manual_seed(seed)
    return Scaled(width).double()


def batch(step: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The global batch of a step, the same on every rank."""
    generator = np.random.default_rng(1000 + step)
    x = generator.standard_normal((PER_RANK * size, 5))
    y = generator.standard_normal((PER_RANK * size, 3))
    return torch.tensor(x), torch.tensor(y)


def shard(t: torch.Tensor, rank: int) -> torch.Tensor:
    return t[rank * PER_RANK : (rank + 1) * PER_RANK]


def equivalence(rank: int, size: int, bucket_cap_mb: float | None, as_view: bool = False) -> None:
    """N ranks on N shards == one process on the whole batch."""
    reference = model(100)
    reference.scale.fill_(1.5)
    local = model(100 + rank)  # different on every rank: DDP broadcasts rank 0's
    if rank == 0:
        local.scale.fill_(1.5)
    ddp = DDP(local, bucket_cap_mb=bucket_cap_mb, gradient_as_bucket_view=as_view)
    for (_, a), (_, b) in zip(
        ddp.module.named_parameters(), reference.named_parameters(), strict=True
    ):
        close(a.detach(), b.detach(), "broadcast from rank 0 at construction", 0.0)
    close(ddp.module.scale, reference.scale, "buffer broadcast at construction", 0.0)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        x, y = batch(step, size)
        optimizer.zero_grad(set_to_none=not as_view)  # as_view: zeroed in the bucket
        torch.nn.functional.mse_loss(ddp(shard(x, rank)), shard(y, rank)).backward()
        optimizer.step()
        reference_optimizer.zero_grad()
        torch.nn.functional.mse_loss(reference(x), y).backward()
        reference_optimizer.step()
    for (name, a), (_, b) in zip(
        ddp.module.named_parameters(), reference.named_parameters(), strict=True
    ):
        close(a.detach(), b.detach(), f"{name} after {STEPS} steps (bucket_cap_mb={bucket_cap_mb})")
    if bucket_cap_mb is not None:
        check(len(ddp.reducer.buckets) > 1, "small buckets: several")
    if as_view:
        buffers = [bucket.buffer for bucket in ddp.reducer.buckets]
        for p in ddp.parameters():
            check(any(np.shares_memory(p.grad._data, b) for b in buffers), "grad in a bucket")


def overlap(rank: int, size: int) -> None:
    """With small buckets, the last layer's all-reduce has started before backward reaches
    the first layer (an identity Function in front records the buckets' state)."""
    seen: list[list[bool]] = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
            return x.clone()

        @staticmethod
        def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
            seen.append([bucket.work is not None for bucket in ddp.reducer.buckets])
            return grad

    net = model(7)
    ddp = DDP(net, bucket_cap_mb=0.0001)
    x, y = batch(0, size)
    x = shard(x, rank).requires_grad_()

    def forward(inp: torch.Tensor) -> torch.Tensor:
        return net.second(torch.tanh(net.first(Probe.apply(inp))))

    ddp.module.forward = forward  # type: ignore[method-assign]
    ddp(x).sum().backward()
    buckets = ddp.reducer.buckets
    last_layer = [i for i, b in enumerate(buckets) if 2 in b.indices or 3 in b.indices]
    check(
        bool(seen) and all(seen[0][i] for i in last_layer),
        f"the second layer's buckets started during backward: {seen}",
    )


def accumulation(rank: int, size: int) -> None:
    """no_sync: local gradients; the next synchronised backward averages the sum."""
    ddp = DDP(model(3))
    reference = model(3)
    x1, y1 = batch(10, size)
    x2, y2 = batch(11, size)
    with ddp.no_sync():
        torch.nn.functional.mse_loss(ddp(shard(x1, rank)), shard(y1, rank)).backward()
    local = model(3)
    torch.nn.functional.mse_loss(local(shard(x1, rank)), shard(y1, rank)).backward()
    close(ddp.module.first.weight.grad, local.first.weight.grad, "no_sync keeps local grads")
    torch.nn.functional.mse_loss(ddp(shard(x2, rank)), shard(y2, rank)).backward()
    (
        torch.nn.functional.mse_loss(reference(x1), y1)
        + torch.nn.functional.mse_loss(reference(x2), y2)
    ).backward()
    for (name, a), (_, b) in zip(
        ddp.module.named_parameters(), reference.named_parameters(), strict=True
    ):
        close(a.grad, b.grad, f"accumulated {name}.grad")


class TwoBranches(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(5, 3)
        self.b = torch.nn.Linear(5, 3)
        self.never = torch.nn.Linear(5, 3)

    def forward(self, x: torch.Tensor, use_b: bool) -> torch.Tensor:
        return self.a(x) + self.b(x) if use_b else self.a(x)


def unused_parameters(rank: int, size: int) -> None:
    """Branch b used on rank 0 only, ``never`` nowhere: b's gradient is rank 0's divided by
    the world size on every rank; never's stays None."""
    torch.manual_seed(5)
    net = TwoBranches().double()
    ddp = DDP(net, find_unused_parameters=True)
    x, _ = batch(20, size)
    ddp(shard(x, rank), rank == 0).sum().backward()
    torch.manual_seed(5)
    reference = TwoBranches().double()
    (reference(shard(x, 0), True).sum() / size).backward()
    close(net.b.weight.grad, reference.b.weight.grad, "unused here, used on rank 0")
    check(net.never.weight.grad is None, "unused everywhere: grad stays None")
    expected_a = sum(TwoBranches.forward(reference, shard(x, r), False).sum() for r in range(size))
    reference.zero_grad()
    (expected_a / size).backward()
    close(net.a.weight.grad, reference.a.weight.grad, "used everywhere")
    # Without find_unused_parameters, a parameter without gradient is reported next forward.
    strict = DDP(TwoBranches().double())
    strict(shard(x, rank), False).sum().backward()
    try:
        strict(shard(x, rank), False)
    except RuntimeError as error:
        check(
            str(error).startswith(
                "Expected to have finished reduction in the prior "
                "iteration before starting a new one."
            ),
            str(error),
        )
        check(
            str(error).endswith(
                f"Parameter indices which did not receive grad for rank {rank}: [2, 3, 4, 5]"
            ),
            str(error),
        )
    else:
        raise AssertionError("an unused parameter must be reported")


def buffers(rank: int, size: int) -> None:
    """broadcast_buffers: rank 0's buffer before each forward; off: each rank keeps its own."""
    for broadcast in (True, False):
        ddp = DDP(model(1), broadcast_buffers=broadcast)
        ddp.module.scale.fill_(float(rank + 2))
        ddp(batch(0, size)[0][:1])
        expected = 2.0 if broadcast else float(rank + 2)
        check(ddp.module.scale.item() == expected, f"broadcast_buffers={broadcast}")
    keys = list(DDP(model(1)).state_dict())
    check(
        keys
        == [
            "module.scale",
            "module.first.weight",
            "module.first.bias",
            "module.second.weight",
            "module.second.bias",
        ]
        or keys
        == [
            "module.first.weight",
            "module.first.bias",
            "module.second.weight",
            "module.second.bias",
            "module.scale",
        ],
        f"state_dict keys {keys}",
    )


def mismatched_models(rank: int, size: int) -> None:
    try:
        DDP(model(1, width=8 if rank == 0 else 9))
    except RuntimeError as error:
        expected = (
            f"[{rank}]: params[0] in this process with sizes "
            f"{[8 if rank == 0 else 9, 5]} appears not to match sizes of the same "
            f"param in process {1 if rank == 0 else 0}."
        )
        check(str(error) == expected, str(error))
    else:
        raise AssertionError("mismatched shapes must be refused")
    net = model(1)
    if rank == 1:
        net.extra = torch.nn.Linear(1, 1).double()
    try:
        DDP(net)
    except RuntimeError as error:
        check(
            str(error).startswith(f"DDP expects same model across all ranks, but Rank {rank} has"),
            str(error),
        )
    else:
        raise AssertionError("a different parameter count must be refused")


def half_precision(rank: int, size: int) -> None:
    """float16 and bfloat16 parameters: the gradients are the mean of the ranks' (reduced by
    the MPI operation on 2-byte values), to half-precision tolerance."""
    x, _ = batch(30, size)
    for dtype, tol in ((torch.float16, 2e-3), (torch.bfloat16, 2e-2)):
        torch.manual_seed(9)
        ddp = DDP(torch.nn.Linear(5, 3).to(dtype))
        ddp(shard(x, rank).to(dtype)).pow(2).sum().backward()
        expected = torch.zeros(3, 5, dtype=torch.float64)
        for r in range(size):
            torch.manual_seed(9)
            local = torch.nn.Linear(5, 3).to(dtype)
            local(shard(x, r).to(dtype)).pow(2).sum().backward()
            expected += local.weight.grad.double() / size
        got = ddp.module.weight.grad
        check(got.dtype == dtype, f"{dtype} gradient keeps its dtype")
        check(
            np.allclose(got.double()._data, expected._data, rtol=tol, atol=tol),
            f"{dtype}: {got} != {expected}",
        )


def main() -> None:
    dist.init_process_group()
    rank, size = dist.get_rank(), dist.get_world_size()
    equivalence(rank, size, None)
    equivalence(rank, size, 0.0001)
    equivalence(rank, size, 0.0001, as_view=True)
    overlap(rank, size)
    accumulation(rank, size)
    unused_parameters(rank, size)
    buffers(rank, size)
    mismatched_models(rank, size)
    half_precision(rank, size)
    dist.destroy_process_group()
    print(f"ddp ok on rank {rank} of {size}", flush=True)


if __name__ == "__main__":
    main()
