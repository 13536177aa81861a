"""The engine runs leaves' AccumulateGrad nodes in PyTorch's order: before any op node, the one
that became ready first first (several can become ready from one node, or wait for later ones)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _random_program(lib, seed: int, log: list[str]) -> None:
    """Random ops over several leaves (some used once, some many times); records the order in
    which the leaves' gradients are accumulated and runs backward."""
    rng = np.random.default_rng(seed)
    n_leaves = int(rng.integers(3, 7))
    leaves = [lib.tensor(rng.standard_normal(2), requires_grad=True) for _ in range(n_leaves)]
    for i, leaf in enumerate(leaves):
        leaf.register_post_accumulate_grad_hook(lambda t, i=i: log.append(f"leaf{i}"))
    values = list(leaves)
    for _ in range(int(rng.integers(3, 10))):
        a, b = (values[int(k)] for k in rng.integers(0, len(values), size=2))
        kind = int(rng.integers(0, 4))
        if kind == 0:
            values.append(a + b)
        elif kind == 1:
            values.append(a * b)
        elif kind == 2:
            values.append(lib.stack([a, b, values[int(rng.integers(0, len(values)))]]).sum(0))
        else:
            values.append(a.sin() - b)
    total = values[-1].sum()
    for v in values[n_leaves:-1:2]:
        total = total + v.sum()
    total.backward()


@pytest.mark.parametrize("seed", range(30))
def test_leaf_accumulation_order_matches_pytorch(seed: int) -> None:
    ours: list[str] = []
    theirs: list[str] = []
    _random_program(chainrule, seed, ours)
    _random_program(torch, seed, theirs)
    assert ours == theirs
