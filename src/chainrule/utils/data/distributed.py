"""``DistributedSampler``: the share of a dataset one rank of a data-parallel job reads."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

import numpy as np

from ... import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler"]

# PyTorch's CPU randperm draws one 32-bit number per position below this size (above, it
# switches to another method, which this module does not reproduce).
_PERMUTATION_LIMIT = (2**32 - 1) // 20


def torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``: a
    Fisher-Yates shuffle driven by the 32-bit outputs of an MT19937 seeded with the low 32
    bits of ``seed``, as PyTorch's CPU generator and kernel, so that a shuffled
    ``DistributedSampler`` yields PyTorch's indices."""
    if n >= _PERMUTATION_LIMIT:
        raise NotImplementedError(
            f"DistributedSampler shuffles at most {_PERMUTATION_LIMIT - 1} indices"
        )
    generator = np.random.MT19937()
    generator._legacy_seeding(seed & 0xFFFFFFFF)
    draws = generator.random_raw(max(n - 1, 0)).tolist()
    indices = list(range(n))
    for i, draw in enumerate(draws):
        j = i + draw % (n - i)
        indices[i], indices[j] = indices[j], indices[i]
    return indices


class DistributedSampler(Sampler):
    """The indices rank ``rank`` of ``num_replicas`` reads: all indices (shuffled with
    ``seed + epoch``, the same order on every rank, PyTorch's order), padded by repeating the
    first ones to a multiple of ``num_replicas`` (or cut to one with ``drop_last``), then every
    ``num_replicas``-th from ``rank``. ``num_replicas`` and ``rank`` default to the default
    process group's (PyTorch's error before ``init_process_group``).

    Example:
        >>> from chainrule.utils.data.distributed import DistributedSampler
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices = torch_randperm(n, self.seed + self.epoch)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order the next pass takes (call it before each epoch to shuffle
        differently)."""
        self.epoch = epoch
