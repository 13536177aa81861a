"""Dropout's output layout against PyTorch: the result of dropout (and alpha dropout) on a
permuted, sliced, expanded or channels-last input has PyTorch's strides and contiguity (the
mask was always row-major, so the product came out row-major)."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

INPUTS = {
    "transposed": lambda lib: lib.ones(3, 4).t(),
    "permuted": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
    "sliced": lambda lib: lib.ones(4, 6)[:, ::2],
    "sliced_transposed": lambda lib: lib.ones(4, 6)[:, ::2].t(),
    "permuted_sliced": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1)[:, :, ::2],
    "expanded": lambda lib: lib.ones(3, 1, 4).expand(3, 5, 4),
    "channels_last": lambda lib: lib.ones(2, 4, 5, 3).permute(0, 3, 1, 2),
    "contiguous": lambda lib: lib.ones(2, 3),
}

CALLS = {
    "dropout": lambda F, x, p: F.dropout(x, p),
    "alpha_dropout": lambda F, x, p: F.alpha_dropout(x, p, training=True),
    "module": lambda F, x, p: (chainrule if F is chainrule.nn.functional else torch).nn.Dropout(
        p)(x),
}


def _layout(t):
    return tuple(t.shape), tuple(t.stride()), t.is_contiguous()


@pytest.mark.parametrize("p", (0.3, 1.0))
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_dropout_output_layout_like_torch(name: str, call: str, p: float) -> None:
    layouts = []
    for lib in (chainrule, torch):
        out = CALLS[call](lib.nn.functional, INPUTS[name](lib), p)
        layouts.append(_layout(out))
        if call != "alpha_dropout" and p < 1:  # inputs of ones: kept values are 1 / (1 - p)
            assert set(np.unique(out.numpy())) <= {0.0, np.float32(1 / (1 - p))}
    assert layouts[0] == layouts[1]
