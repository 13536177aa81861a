"""``vmap`` of ``index_add``/``index_copy``/``index_fill`` (out of place), against PyTorch.

Their batching rule materialised the index vector like ``gather``'s index (which has the
tensor's shape), so every call with an unbatched index failed: "index_add_(): Index is supposed
to be a vector, but got dim: 2", "index_copy_(): Index should have dimension 1 or 0 (got 2)",
"Index has to be a vector/scalar". The index vector now stays as it is (a batched index or fill
value runs per example), ``self`` and ``source`` are batched, ``dim`` shifted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

CASES: dict[str, Callable[[Any], Any]] = {
    "index_add": lambda lib: lib.func.vmap(
        lambda x: x.index_add(0, lib.tensor([0, 2]), lib.ones(2))
    )(lib.ones(2, 3)),
    "index_add_dim1_alpha": lambda lib: lib.func.vmap(
        lambda x: x.index_add(1, lib.tensor([0, 2]), lib.ones(3, 2), alpha=2)
    )(lib.ones(2, 3, 3)),
    "index_add_negative_dim": lambda lib: lib.func.vmap(
        lambda x: x.index_add(-1, lib.tensor([2, 0]), lib.arange(6.0).reshape(3, 2))
    )(lib.ones(2, 3, 3)),
    "index_add_batched_source": lambda lib: lib.func.vmap(
        lambda x, s: x.index_add(0, lib.tensor([0, 2]), s)
    )(lib.ones(2, 3), lib.arange(4.0).reshape(2, 2)),
    "index_add_unbatched_self": lambda lib: lib.func.vmap(
        lambda s: lib.ones(3).index_add(0, lib.tensor([0, 2]), s)
    )(lib.arange(4.0).reshape(2, 2)),
    "index_add_batched_index": lambda lib: lib.func.vmap(
        lambda x, i: x.index_add(0, i, lib.ones(2))
    )(lib.ones(2, 3), lib.tensor([[0, 1], [1, 2]])),
    "index_add_0d": lambda lib: lib.func.vmap(
        lambda x: x.index_add(0, lib.tensor([0]), lib.tensor(2.0))
    )(lib.ones(2)),
    "index_copy": lambda lib: lib.func.vmap(
        lambda x: x.index_copy(0, lib.tensor([0, 2]), lib.zeros(2))
    )(lib.ones(2, 3)),
    "index_copy_batched_source": lambda lib: lib.func.vmap(
        lambda x, s: x.index_copy(1, lib.tensor([1]), s)
    )(lib.ones(2, 2, 3), lib.arange(4.0).reshape(2, 2, 1)),
    "index_fill": lambda lib: lib.func.vmap(
        lambda x: x.index_fill(0, lib.tensor([0, 2]), 5.0)
    )(lib.ones(2, 3)),
    "index_fill_tensor_value": lambda lib: lib.func.vmap(
        lambda x: x.index_fill(0, lib.tensor([0, 2]), lib.tensor(5.0))
    )(lib.ones(2, 3)),
    "index_fill_batched_value": lambda lib: lib.func.vmap(
        lambda x, v: x.index_fill(0, lib.tensor([0, 2]), v)
    )(lib.ones(2, 3), lib.tensor([5.0, 6.0])),
    "vmap_grad_index_add": lambda lib: lib.func.vmap(
        lib.func.grad(lambda x: (x.index_add(0, lib.tensor([0, 2]), x[:2] * 3) ** 2).sum())
    )(lib.arange(6.0).reshape(2, 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_as_pytorch(name: str) -> None:
    ours = CASES[name](chainrule)
    theirs = CASES[name](torch)
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_mismatched_source_raises_pytorchs_error() -> None:
    def run(lib: Any) -> Any:
        f = lambda x: x.index_add(0, lib.tensor([0, 1]), lib.ones(3))  # noqa: E731
        return lib.func.vmap(f)(lib.ones(2, 3))

    messages = []
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError) as info:
            run(lib)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
