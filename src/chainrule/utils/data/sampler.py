"""Samplers: which indices, in which order, and how they are batched."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from ... import _dtype
from ...ops import random_streams
from ...ops.creation import Generator, as_tensor, randint, randperm
from ...ops.distribution_sampling import multinomial

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]


class Sampler:
    """Base class: iterating a sampler yields dataset indices."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _seeded_generator(generator: Generator | None) -> Generator:
    """``generator``, or (as PyTorch's RandomSampler) a new generator seeded with an int64
    drawn from the default one, so the default stream advances by one 64-bit draw."""
    if generator is not None:
        return generator
    from ...ops.creation import default_generator

    seed = int(random_streams.random64(default_generator.rng, 1)[0] % np.uint64(2**63))
    return Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """A random permutation of the indices each epoch (or ``num_samples`` drawn with
    replacement)."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        # PyTorch's draws: randint in chunks of 32 with replacement, else whole permutations
        # (the last one drawn even when none of it is used).
        n = len(self.data_source)
        generator = _seeded_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(n, (32,), generator=generator).tolist()
            yield from randint(n, (self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with
    replacement unless ``replacement=False``), as ``torch.multinomial`` draws them (chainrule's
    random stream, not PyTorch's)."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        weights_tensor = as_tensor(weights, dtype=_dtype.float64)
        if weights_tensor.dim() != 1:
            raise ValueError(
                "weights should be a 1d sequence but given weights have shape "
                f"{tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
