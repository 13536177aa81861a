"""``utils.data``'s remaining names (issue 16): ChainDataset, StackDataset,
WeightedRandomSampler, DistributedSampler and get_worker_info, against PyTorch. Random draws
come from chainrule's stream (not PyTorch's): their properties are checked, and everything
deterministic is compared."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import chainrule

from .conftest import torch

LIBS = {"chainrule": chainrule, "torch": torch}


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        value = call()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return type(error).__name__, str(error).replace("torch.", "chainrule.")
    if hasattr(value, "tolist"):
        return "tensor", value.dtype.__repr__().split(".")[-1], value.tolist()
    return "value", value


def _iterable(lib: ModuleType, n: int, sized: bool = True) -> Any:
    class Counting(lib.utils.data.IterableDataset):
        def __iter__(self):  # noqa: ANN204
            return iter(range(n))

    class Sized(Counting):
        def __len__(self) -> int:
            return n

    return (Sized if sized else Counting)()


SCENARIOS: dict[str, Callable[[ModuleType], Any]] = {
    "chain": lambda lib: list(lib.utils.data.ChainDataset([_iterable(lib, 2), _iterable(lib, 3)])),
    "chain len": lambda lib: len(lib.utils.data.ChainDataset([_iterable(lib, 2),
                                                               _iterable(lib, 3)])),
    "chain of a list": lambda lib: list(lib.utils.data.ChainDataset([_iterable(lib, 2), [1]])),
    "chain len unsized": lambda lib: len(lib.utils.data.ChainDataset(
        [_iterable(lib, 2), _iterable(lib, 2, sized=False)])),
    "stack tuple": lambda lib: lib.utils.data.StackDataset([1, 2], [3, 4])[1],
    "stack dict": lambda lib: lib.utils.data.StackDataset(a=[1, 2], b=[3, 4])[0],
    "stack len": lambda lib: len(lib.utils.data.StackDataset([1, 2], [3, 4])),
    "stack getitems": lambda lib: lib.utils.data.StackDataset(a=[1, 2], b=[3, 4]).__getitems__(
        [1, 0]),
    "stack mismatch": lambda lib: lib.utils.data.StackDataset([1, 2], [3]),
    "stack both": lambda lib: lib.utils.data.StackDataset([1], b=[2]),
    "stack none": lambda lib: lib.utils.data.StackDataset(),
    "stack tensors": lambda lib: lib.utils.data.StackDataset(
        lib.utils.data.TensorDataset(lib.arange(3)), [5, 6, 7])[2][0][0].item(),
    "weighted zero samples": lambda lib: lib.utils.data.WeightedRandomSampler([0.1, 0.9], 0),
    "weighted float samples": lambda lib: lib.utils.data.WeightedRandomSampler([0.1, 0.9], 2.5),
    "weighted bool samples": lambda lib: lib.utils.data.WeightedRandomSampler([0.1, 0.9], True),
    "weighted replacement 1": lambda lib: lib.utils.data.WeightedRandomSampler(
        [0.1, 0.9], 3, replacement=1),
    "weighted 2d": lambda lib: lib.utils.data.WeightedRandomSampler([[0.1, 0.9]], 3),
    "weighted len": lambda lib: len(lib.utils.data.WeightedRandomSampler([0.1, 0.9], 5)),
    "weighted weights": lambda lib: lib.utils.data.WeightedRandomSampler([0.1, 0.9], 3).weights,
    "weighted certain": lambda lib: list(lib.utils.data.WeightedRandomSampler([0.0, 1.0], 3)),
    "weighted too many": lambda lib: list(lib.utils.data.WeightedRandomSampler(
        [1.0, 1.0], 3, replacement=False)),
    "weighted negative": lambda lib: list(lib.utils.data.WeightedRandomSampler([-1.0, 1.0], 3)),
    "worker info": lambda lib: lib.utils.data.get_worker_info(),
    "distributed no group": lambda lib: lib.utils.data.DistributedSampler(range(10)),
    "distributed bad rank": lambda lib: lib.utils.data.DistributedSampler(
        range(10), num_replicas=3, rank=3),
    "distributed negative rank": lambda lib: lib.utils.data.DistributedSampler(
        range(10), num_replicas=3, rank=-1),
}
# torch.multinomial's checks, which WeightedRandomSampler reaches (NumPy's ValueErrors before)
for _label, _probs, _count, _replace in (
    ("too many", [1.0, 1.0], 3, False), ("negative", [-1.0, 1.0], 1, False),
    ("nan", [float("nan"), 1.0], 1, True), ("inf", [float("inf"), 1.0], 1, False),
    ("nan, several draws", [1.0, float("nan")], 2, True),
    ("inf, several draws", [1.0, float("inf")], 3, True),
    ("negative, several draws", [[1.0, 1.0], [1.0, -2.0]], 2, True),
    ("zero sum", [0.0, 0.0], 1, True), ("zero row", [[1.0, 1.0], [0.0, 0.0]], 1, False),
    ("no samples", [1.0, 1.0], 0, False), ("negative samples", [1.0, 1.0], -1, True),
    ("empty", [], 1, False), ("integers", [1, 1], 1, False), ("0-d", 1.0, 1, False),
    ("zero probabilities last", [0.0, 1.0, 0.0], 1, False), ("certain", [0.0, 0.0, 2.0], 4, True),
):
    SCENARIOS[f"multinomial {_label}"] = (
        lambda lib, p=_probs, k=_count, r=_replace: lib.multinomial(lib.tensor(p), k, r))
for _replicas, _n in ((3, 10), (3, 2), (4, 8), (2, 1)):
    for _rank in range(_replicas):
        for _drop in (False, True):
            SCENARIOS[f"distributed n={_n} {_rank}/{_replicas} drop={_drop}"] = (
                lambda lib, n=_n, r=_rank, k=_replicas, d=_drop: (
                    list(lib.utils.data.DistributedSampler(range(n), num_replicas=k, rank=r,
                                                           shuffle=False, drop_last=d)),
                    len(lib.utils.data.DistributedSampler(range(n), num_replicas=k, rank=r,
                                                          drop_last=d)),
                    lib.utils.data.DistributedSampler(range(n), num_replicas=k, rank=r,
                                                      drop_last=d).total_size))


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_against_pytorch(scenario: str) -> None:
    assert _outcome(lambda: SCENARIOS[scenario](chainrule)) == _outcome(
        lambda: SCENARIOS[scenario](torch))


def test_weighted_sampler_draws_by_weight() -> None:
    chainrule.manual_seed(0)
    drawn = list(chainrule.utils.data.WeightedRandomSampler([1.0, 0.0, 3.0], 4000))
    assert set(drawn) == {0, 2}
    assert 0.7 < drawn.count(2) / len(drawn) < 0.8
    unique = list(chainrule.utils.data.WeightedRandomSampler([1.0, 2.0, 3.0], 3,
                                                             replacement=False))
    assert sorted(unique) == [0, 1, 2]
    # without replacement, a zero-probability category comes only after all the others
    firsts = [chainrule.multinomial(chainrule.tensor([0.0, 1.0, 3.0]), 3).tolist()
              for _ in range(50)]
    assert all(draw[2] == 0 for draw in firsts)
    assert 25 < sum(draw[0] == 2 for draw in firsts) < 50


def test_distributed_shuffle_partitions_the_dataset() -> None:
    """Shuffled, every rank takes the same permutation (seed + epoch), so the ranks together
    read each index once (plus padding); a new epoch gives a new order, the same epoch the
    same one."""
    def shares(epoch: int) -> list[list[int]]:
        samplers = [chainrule.utils.data.DistributedSampler(range(10), num_replicas=3, rank=r)
                    for r in range(3)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    first = shares(0)
    assert {i for share in first for i in share} == set(range(10))
    assert [len(s) for s in first] == [4, 4, 4]
    assert shares(0) == first
    assert shares(1) != first
