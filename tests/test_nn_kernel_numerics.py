"""Layer and loss kernels computed in PyTorch's order of operations, bit for bit.

The op sweeps allow a few ulps; these compare exactly where PyTorch's kernel has a defined
order that a plain NumPy reduction would not follow (float16 sums rounded at every step, ...).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _both(fn, *arrays):
    ours = fn(chainrule, *[chainrule.from_numpy(a.copy()) for a in arrays])
    theirs = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays])
    return ours.detach().numpy(), theirs.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", [(300, 3), (5, 3, 7, 9), (4, 3, 50)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_nll_loss_sums_as_pytorchs_cascade(dtype, shape, weighted, reduction) -> None:
    """PyTorch's nll_loss kernels sum in the input's dtype with a cascade of partial sums (an
    ignored target skips its step): float16 results differ from a float32-accumulated sum."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 40).astype(dtype)
    target = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    target[rng.random(target.shape) < 0.2] = 1  # ignored
    w = rng.uniform(0.2, 3.0, shape[1]).astype(dtype)

    def run(lib, x, target, w):
        return lib.nn.functional.nll_loss(x, target, weight=w if weighted else None,
                                          ignore_index=1, reduction=reduction)

    ours, theirs = _both(run, x, target, w)
    assert ours.dtype == theirs.dtype
    assert ours.tobytes() == theirs.tobytes(), (ours, theirs)
