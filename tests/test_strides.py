"""clone() keeps its input's memory order as PyTorch's preserve_format does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda lib: lib.arange(24.0).reshape(2, 3, 4),
    "transposed": lambda lib: lib.arange(12.0).reshape(4, 3).t(),
    "permuted": lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "size-one dim": lambda lib: lib.arange(12.0).reshape(3, 1, 4).permute(2, 0, 1),
    "expanded": lambda lib: lib.arange(4.0).reshape(4, 1).expand(4, 3),
    "expanded then transposed": lambda lib: lib.arange(4.0).reshape(4, 1).expand(4, 3).t(),
    "step-sliced": lambda lib: lib.arange(24.0).reshape(8, 3).t()[:, ::2],
    "sliced rows": lambda lib: lib.arange(24.0).reshape(6, 4)[1:4],
    "equal strides": lambda lib: lib.arange(3.0).reshape(1, 3).expand(2, 3).unsqueeze(0),
    "empty": lambda lib: lib.zeros(0, 3).t(),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_clone_layout_matches_torch(layout: str) -> None:
    ours, theirs = LAYOUTS[layout](chainrule), LAYOUTS[layout](torch)
    if theirs.numel():
        assert ours.stride() == theirs.stride()  # the input itself is built the same way
    for fn in (lambda t: t.clone(), lambda t: t.clone(memory_format=_lib(t).preserve_format)):
        a, b = fn(ours), fn(theirs)
        assert np.array_equal(a.numpy(), b.numpy())
        if not b.numel():
            continue
        kept = [(n, s) for n, s in zip(a.shape, a.stride(), strict=True) if n > 1]
        expected = [(n, s) for n, s in zip(b.shape, b.stride(), strict=True) if n > 1]
        assert kept == expected, f"{layout}: {a.stride()} != {b.stride()}"
    flat = ours.clone(memory_format=chainrule.contiguous_format)
    assert flat.is_contiguous()
    assert theirs.clone(memory_format=torch.contiguous_format).is_contiguous()


def _lib(t: Any) -> Any:
    return chainrule if isinstance(t, chainrule.Tensor) else torch


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_contiguous_and_reshape_copies_are_row_major(layout: str) -> None:
    ours, theirs = LAYOUTS[layout](chainrule), LAYOUTS[layout](torch)
    assert ours.contiguous().is_contiguous() and theirs.contiguous().is_contiguous()
    a, b = ours.reshape(-1), theirs.reshape(-1)
    assert a.is_contiguous() and b.is_contiguous()
    assert np.array_equal(a.numpy(), b.numpy())
