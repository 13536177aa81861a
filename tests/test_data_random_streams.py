"""The DataLoader's samplers and ``Tensor.random_`` draw PyTorch's numbers after the same
``manual_seed``: shuffled orders, samples with replacement, ``random_split``, and the default
generator's state after a pass over the data (PyTorch's iterator draws an int64 base seed for
its workers each time it is made, shuffled or not, and RandomSampler seeds its own generator
with another). Before, the samplers used NumPy's permutation on a generator of their own and
``random_`` NumPy's integers.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import chainrule


def _epochs(lib, options, dataset_kind, batch_size=3, epochs=2):
    lib.manual_seed(0)
    data = (
        list(range(10)) if dataset_kind == "list" else lib.utils.data.TensorDataset(lib.arange(10))
    )
    options = dict(options)
    if "seed" in options:
        options["generator"] = lib.Generator().manual_seed(options.pop("seed"))
    sampler = options.pop("sampler", None)
    if sampler == "subset":
        options["sampler"] = lib.utils.data.SubsetRandomSampler([1, 4, 5, 7, 9])
    elif sampler == "replacement":
        options["sampler"] = lib.utils.data.RandomSampler(data, replacement=True, num_samples=70)
    elif sampler == "more":
        options["sampler"] = lib.utils.data.RandomSampler(data, num_samples=25)
    loader = lib.utils.data.DataLoader(data, batch_size=batch_size, **options)
    out = []
    for _ in range(epochs):
        out.append(
            [repr(batch.tolist() if hasattr(batch, "tolist") else batch) for batch in loader]
        )
    out.append(lib.rand(2).tolist())
    parts = lib.utils.data.random_split(range(10), [0.3, 0.7])
    out.append([list(part) for part in parts])
    out.append(lib.rand(1).tolist())
    return out


@pytest.mark.parametrize("dataset_kind", ["list", "tensor"])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"shuffle": True},
        {"shuffle": True, "seed": 5},
        {"shuffle": True, "drop_last": True},
        {"sampler": "subset"},
        {"sampler": "replacement"},
        {"sampler": "more"},
    ],
)
def test_loader_orders_and_generator_state(options, dataset_kind):
    assert _epochs(chainrule, options, dataset_kind) == _epochs(torch, options, dataset_kind)


def test_iterator_draws_its_seed_when_made():
    def run(lib):
        lib.manual_seed(0)
        iterator = iter(lib.utils.data.DataLoader(list(range(4)), batch_size=2))
        drawn = lib.rand(1).tolist()
        return drawn, [b.tolist() for b in iterator]

    assert run(chainrule) == run(torch)


DTYPES = ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64", "float16"]


@pytest.mark.parametrize("dtype", DTYPES + ["bfloat16"])
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((), {}), ((5,), {}), ((3, 10), {}), ((-7, 100), {}), ((2,), {"to": None})],
)
def test_random_(dtype, args, kwargs):
    def run(lib):
        lib.manual_seed(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = lib.empty(6, dtype=getattr(lib, dtype)).random_(*args, **kwargs)
            except RuntimeError as error:
                return str(error)
        return out.float().tolist(), lib.rand(2).tolist()

    assert run(chainrule) == run(torch)


@pytest.mark.parametrize(
    ("dtype", "low", "high"),
    [
        ("int64", 0, 2**40),
        ("int64", -(2**40), 2**40),
        ("int64", -(2**62), 2**62),
        ("float64", 0, 2**40),
        ("float64", -(2**40), 2**40),
    ],
)
def test_random_over_wide_ranges(dtype, low, high):
    def run(lib):
        lib.manual_seed(1)
        out = lib.empty(6, dtype=getattr(lib, dtype)).random_(low, high)
        return out.tolist(), lib.rand(2).tolist()

    assert run(chainrule) == run(torch)
