"""``utils.data``: datasets, ``random_split``, samplers, ``DataLoader`` and collation, against
``torch.utils.data`` where the result does not depend on the random stream."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import chainrule
from chainrule.utils.data import (
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

from .conftest import torch


def _as_lists(batch):
    if isinstance(batch, dict):
        return {k: _as_lists(v) for k, v in batch.items()}
    if isinstance(batch, list | tuple):
        return type(batch)(_as_lists(b) for b in batch) if not hasattr(batch, "_fields") else [
            _as_lists(b) for b in batch]
    if hasattr(batch, "numpy"):
        return (str(batch.dtype).split(".")[-1], batch.detach().numpy().tolist())
    return batch


def _loader_batches(lib, dataset_factory, **kwargs):
    loader = lib.utils.data.DataLoader(dataset_factory(lib), **kwargs)
    return len(loader), [_as_lists(b) for b in loader]


def _tensor_dataset(lib):
    x = lib.arange(20.0).view(10, 2)
    y = lib.arange(10) % 3
    return lib.utils.data.TensorDataset(x, y)


@pytest.mark.parametrize("options", [
    {"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": 10},
    {"batch_size": 4, "collate_fn": lambda batch: batch}, {"batch_size": None},
    {"batch_size": 1},
])
def test_sequential_loader_matches_torch(options) -> None:
    assert _loader_batches(chainrule, _tensor_dataset, **options) == _loader_batches(
        torch, _tensor_dataset, **options)


def test_loader_on_subsets_matches_torch() -> None:
    def subset(lib):
        return lib.utils.data.Subset(lib.utils.data.Subset(_tensor_dataset(lib), [9, 1, 3, 5, 7]),
                                     [4, 0, 2])

    assert _loader_batches(chainrule, subset, batch_size=2) == _loader_batches(
        torch, subset, batch_size=2)


class _Samples:
    """A map-style dataset of mixed Python structures."""

    Point = namedtuple("Point", "x y")

    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 5

    def __getitem__(self, i):
        lib = self.lib
        return {
            "image": lib.ones(2, 2) * i,
            "array": np.full(3, i, dtype=np.float32),
            "label": i % 2,
            "weight": i / 2,
            "flag": i > 2,
            "name": f"sample{i}",
            "pair": (i, lib.tensor([i, -i])),
            "point": _Samples.Point(i, float(i)),
            "scalar": np.float64(i),
        }


def test_default_collate_structures_match_torch() -> None:
    def build(lib):
        return type("Samples", (lib.utils.data.Dataset,), {
            "__init__": lambda self: _Samples.__init__(self, lib),
            "__len__": _Samples.__len__, "__getitem__": _Samples.__getitem__,
        })()

    ours = _loader_batches(chainrule, build, batch_size=3)
    theirs = _loader_batches(torch, build, batch_size=3)
    assert ours == theirs
    batch = next(iter(DataLoader(build(chainrule), batch_size=2)))
    assert isinstance(batch["point"], _Samples.Point)
    assert batch["weight"].dtype == chainrule.float64 and batch["label"].dtype == chainrule.int64
    assert batch["flag"].dtype == chainrule.bool and batch["name"] == ["sample0", "sample1"]


def test_collate_errors_like_torch() -> None:
    for lib in (chainrule, torch):
        with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy "
                                            "arrays, numbers, dicts or lists; found"):
            lib.utils.data.default_collate([object(), object()])
        with pytest.raises(RuntimeError, match="each element in list of batch should be of "
                                               "equal size"):
            lib.utils.data.default_collate([[1, 2], [3]])


def test_shuffle_with_generator_is_reproducible_and_a_permutation() -> None:
    def epoch_orders(seed):
        g = chainrule.Generator().manual_seed(seed)
        loader = DataLoader(TensorDataset(chainrule.arange(50)), batch_size=8, shuffle=True,
                            generator=g)
        return [[int(v) for b in loader for v in b[0].tolist()] for _ in range(2)]

    first = epoch_orders(3)
    assert first == epoch_orders(3)
    assert first != epoch_orders(4)
    assert sorted(first[0]) == list(range(50)) and first[0] != first[1]
    chainrule.manual_seed(0)
    a = [b[0].tolist() for b in DataLoader(TensorDataset(chainrule.arange(10)), 5, shuffle=True)]
    chainrule.manual_seed(0)
    b = [b[0].tolist() for b in DataLoader(TensorDataset(chainrule.arange(10)), 5, shuffle=True)]
    assert a == b


def test_random_split_lengths_fractions_and_errors() -> None:
    data = TensorDataset(chainrule.arange(10))
    parts = random_split(data, [3, 7], generator=chainrule.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [3, 7]
    values = sorted(int(v[0]) for p in parts for v in p)
    assert values == list(range(10))
    for lib in (chainrule, torch):
        d = lib.utils.data.TensorDataset(lib.arange(10))
        assert [len(p) for p in lib.utils.data.random_split(d, [0.5, 0.3, 0.2])] == [5, 3, 2]
        assert [len(p) for p in lib.utils.data.random_split(d, [0.33, 0.33, 0.34])] == [4, 3, 3]
        with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of "
                                             "the input dataset!"):
            lib.utils.data.random_split(d, [3, 3])
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            lib.utils.data.random_split(lib.utils.data.TensorDataset(lib.arange(2)),
                                        [0.9, 0.1])
    again = random_split(data, [3, 7], generator=chainrule.Generator().manual_seed(0))
    assert [list(p.indices) for p in again] == [list(p.indices) for p in parts]


def test_datasets() -> None:
    x = chainrule.arange(6.0).view(3, 2)
    y = chainrule.tensor([1, 0, 1])
    data = TensorDataset(x, y)
    assert len(data) == 3
    sample = data[1]
    assert isinstance(sample, tuple) and sample[0].tolist() == [2.0, 3.0] and int(sample[1]) == 0
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, chainrule.ones(4))
    sub = Subset(data, [2, 0])
    assert len(sub) == 2 and sub[0][0].tolist() == [4.0, 5.0]
    both = data + sub
    assert isinstance(both, ConcatDataset) and len(both) == 5
    assert both[3][0].tolist() == [4.0, 5.0] and both[-1][0].tolist() == [0.0, 1.0]
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_iterable_dataset() -> None:
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    batches = [b.tolist() for b in DataLoader(Stream(), batch_size=3)]
    assert batches == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


def test_loader_option_errors_like_torch() -> None:
    for lib in (chainrule, torch):
        d = lib.utils.data.TensorDataset(lib.arange(4))
        with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
            lib.utils.data.DataLoader(d, shuffle=True, sampler=[0, 1])
        with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
            lib.utils.data.DataLoader(d, batch_size=0)
        with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
            lib.utils.data.DataLoader(d, batch_size=2, batch_sampler=[[0, 1]])


def test_default_collate_numpy_and_numbers() -> None:
    out = default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert out.dtype == chainrule.float64 and out.tolist() == [[1, 2], [3, 4]]
    ref = torch.utils.data.default_collate([(1, 2.5), (3, 4.5)])
    ours = default_collate([(1, 2.5), (3, 4.5)])
    assert isinstance(ours, list) and [t.tolist() for t in ours] == [t.tolist() for t in ref]


def test_fast_tensor_path_equals_sample_by_sample() -> None:
    data = TensorDataset(chainrule.randn(30, 3), chainrule.arange(30))
    split = Subset(data, list(range(29, -1, -2)))
    fast = [[t.numpy().copy() for t in b] for b in DataLoader(split, batch_size=4)]
    slow = [[t.numpy().copy() for t in b] for b in DataLoader(
        split, batch_size=4, collate_fn=lambda samples: default_collate(samples))]
    assert len(fast) == len(slow) == 4
    for a, b in zip(fast, slow, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)
            assert x.dtype == y.dtype
