"""``utils.data``: datasets, samplers and the ``DataLoader``.

Example:
    >>> import chainrule as torch
    >>> from chainrule.utils.data import DataLoader, TensorDataset
    >>> data = TensorDataset(torch.arange(6.0).view(3, 2), torch.tensor([0, 1, 0]))
    >>> [x.shape for x, y in DataLoader(data, batch_size=2)]
    [chainrule.Size([2, 2]), chainrule.Size([1, 2])]
"""

from __future__ import annotations

from .collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
