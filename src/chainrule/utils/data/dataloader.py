"""``DataLoader``: iterate a dataset in (shuffled) batches."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..._tensor import Tensor, wrap
from ...ops import random_streams
from ...ops.creation import Generator, default_generator
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]


class DataLoader:
    """Batches of samples from ``dataset``.

    ``shuffle=True`` draws a new permutation every epoch (from ``generator`` when given, so a
    seeded ``chainrule.Generator`` makes the order reproducible); ``drop_last`` drops a last
    incomplete batch; ``collate_fn`` (default :func:`default_collate`) builds a batch from a list
    of samples. ``batch_size=None`` yields single samples (converted by ``default_convert``).

    Loading happens in the calling process: ``num_workers`` and the other worker options are
    accepted for compatibility and change nothing.

    Example:
        >>> import chainrule as torch
        >>> from chainrule.utils.data import DataLoader, TensorDataset
        >>> loader = DataLoader(TensorDataset(torch.arange(5)), batch_size=2, drop_last=True)
        >>> [batch for batch in loader]
        [[tensor([0, 1])], [tensor([2, 3])]]
    """

    def __init__(self, dataset: Dataset[Any], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable[Any] | None = None,
                 batch_sampler: Sampler | Iterable[list[Any]] | None = None,
                 num_workers: int = 0, collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but "
                    f"got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but "
                    f"got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle  # type: ignore[arg-type]
                       else SequentialSampler(dataset))  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation or (
                self._iterable and batch_size is not None) else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    def __iter__(self) -> Iterator[Any]:
        # As PyTorch's iterator, which draws its workers' base seed (an int64 ``random_()``)
        # from ``generator`` or the default generator when it is made, so that the random
        # numbers drawn after a pass over the data are PyTorch's, shuffled or not.
        if self.pin_memory and self.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{self.pin_memory_device}'.",
                stacklevel=2,
            )
        if self.pin_memory:  # (PyTorch's warning without an accelerator; nothing is pinned)
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, then device "
                "pinned memory won't be used.",
                stacklevel=2,
            )
        rng = (self.generator or default_generator).rng
        self._base_seed = int(random_streams.random64(rng, 1)[0] % np.uint64(2**63))
        return self._batches()

    def _batches(self) -> Iterator[Any]:
        if self._iterable:
            yield from self._iter_stream()
            return
        if self._auto_collation:
            source = self._tensor_source()
            for indices in self.batch_sampler:  # type: ignore[union-attr]
                if source is not None:
                    yield _gather_rows(source, indices)
                    continue
                fetch = getattr(self.dataset, "__getitems__", None)
                samples = fetch(indices) if fetch is not None else [
                    self.dataset[i] for i in indices
                ]
                yield self.collate_fn(samples)
        else:
            for index in self.sampler:  # type: ignore[union-attr]
                yield self.collate_fn(self.dataset[index])

    def _tensor_source(self) -> tuple[list[Tensor], list[np.ndarray]] | None:
        """For a ``TensorDataset`` (possibly inside ``Subset``s) collated by
        ``default_collate``: its tensors and the index maps of the subsets, outermost first.

        A batch is then one row gather per tensor, the same batch ``default_collate`` would
        stack from the single samples (which costs a tensor op per sample and field).
        """
        if self.collate_fn is not default_collate:
            return None
        maps: list[np.ndarray] = []
        dataset: Any = self.dataset
        while type(dataset) is Subset:
            maps.append(np.asarray(dataset.indices, dtype=np.int64))
            dataset = dataset.dataset
        if type(dataset) is not TensorDataset:
            return None
        if any(t._requires_grad for t in dataset.tensors):
            return None
        return list(dataset.tensors), maps

    def _iter_stream(self) -> Iterator[Any]:
        if self.batch_size is None:
            for sample in self.dataset:  # type: ignore[attr-defined]
                yield self.collate_fn(sample)
            return
        batch: list[Any] = []
        for sample in self.dataset:  # type: ignore[attr-defined]
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self._auto_collation:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]


def _gather_rows(source: tuple[list[Tensor], list[np.ndarray]], indices: list[int]
                 ) -> list[Tensor]:
    tensors, maps = source
    idx = np.asarray(indices, dtype=np.int64)
    for mapping in maps:
        idx = mapping[idx]
    return [wrap(t._data[idx]) for t in tensors]


def get_worker_info() -> None:
    """Information about the loading worker this code runs in: None, as in PyTorch's main
    process (chainrule's DataLoader loads in the calling process)."""
    return None
