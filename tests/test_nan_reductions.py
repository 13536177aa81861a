"""nansum and nanmean against PyTorch: all-NaN and empty inputs, integer and complex inputs,
dtype=, the nodes (nanmean is nansum divided by the count) and the gradient at NaN."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

nan, inf = float("nan"), float("inf")
X = [[1.0, nan, inf], [nan, nan, nan]]

CASES = {
    "nansum": lambda lib: lib.nansum(lib.tensor(X)),
    "nansum_dim": lambda lib: lib.nansum(lib.tensor(X), 1),
    "nansum_keepdim": lambda lib: lib.nansum(lib.tensor(X), (0, 1), keepdim=True),
    "nansum_empty_dims": lambda lib: lib.nansum(lib.tensor(X), ()),
    "nansum_empty": lambda lib: lib.nansum(lib.tensor([])),
    "nansum_ints": lambda lib: lib.nansum(lib.tensor([1, 2])),
    "nansum_bool": lambda lib: lib.nansum(lib.tensor([True, True])),
    "nansum_dtype": lambda lib: lib.nansum(lib.tensor(X), dtype=lib.float64),
    "nansum_complex": lambda lib: lib.nansum(lib.tensor([1j])),
    "nansum_dim_range": lambda lib: lib.nansum(lib.tensor(X), 2),
    "nansum_noncontiguous": lambda lib: lib.nansum(lib.tensor(X).t(), 1),
    "nansum_half": lambda lib: lib.nansum(lib.tensor([1.5, nan, 2.25], dtype=lib.float16)),
    "nanmean": lambda lib: lib.nanmean(lib.tensor(X)),
    "nanmean_dim": lambda lib: lib.nanmean(lib.tensor(X), 1),
    "nanmean_all_nan_row": lambda lib: lib.nanmean(lib.tensor(X), 1, keepdim=True),
    "nanmean_empty": lambda lib: lib.nanmean(lib.tensor([])),
    "nanmean_ints": lambda lib: lib.nanmean(lib.tensor([1, 2])),
    "nanmean_method": lambda lib: lib.tensor(X).nanmean(dim=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    same_outcome(CASES[name])


@pytest.mark.parametrize("name", ["nansum", "nanmean"])
def test_nodes_and_gradients_match_torch(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor([[1.0, nan, 2.0], [nan, 3.0, -1.0]], requires_grad=True)
        out = getattr(lib, name)(x, 1)
        edges = [None if f is None else f.name().split("::")[-1]
                 for f, _ in out.grad_fn.next_functions]
        (g,) = lib.autograd.grad(out, [x], lib.tensor([inf, 2.0]))
        seen.append((out.grad_fn.name(), edges, g.numpy()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_array_equal(seen[0][2], seen[1][2])
