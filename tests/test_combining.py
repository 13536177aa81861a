"""broadcast_tensors, meshgrid, cartesian_prod and block_diag against PyTorch: errors (type
and message), the indexing warning, dtypes, empty inputs and what is returned unchanged."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _t(lib: Any, shape: tuple[int, ...], dtype: str = "float32") -> Any:
    return lib.tensor(np.arange(np.prod(shape, dtype=int), dtype=dtype).reshape(shape) + 1)


CASES = {
    "broadcast_mismatch": lambda lib: lib.broadcast_tensors(_t(lib, (2,)), _t(lib, (3,))),
    "broadcast_third": lambda lib: lib.broadcast_tensors(_t(lib, (2, 1)), _t(lib, (3,)),
                                                         _t(lib, (4,))),
    "broadcast_none": lambda lib: lib.broadcast_tensors(),
    "broadcast_list": lambda lib: lib.broadcast_tensors([_t(lib, (2,))]),
    "broadcast_dtypes": lambda lib: lib.broadcast_tensors(lib.arange(3), _t(lib, (2, 1))),
    "meshgrid_dtypes": lambda lib: lib.meshgrid(_t(lib, (2,)), _t(lib, (3,), "float64"),
                                                indexing="ij"),
    "meshgrid_indexing": lambda lib: lib.meshgrid(_t(lib, (2,)), indexing="foo"),
    "meshgrid_empty": lambda lib: lib.meshgrid(indexing="ij"),
    "meshgrid_one_xy": lambda lib: lib.meshgrid(_t(lib, (3,)), indexing="xy"),
    "meshgrid_ints": lambda lib: lib.meshgrid(lib.arange(2), lib.arange(3), indexing="xy"),
    "cartesian_2d": lambda lib: lib.cartesian_prod(_t(lib, (2, 2)), _t(lib, (3,))),
    "cartesian_0d": lambda lib: lib.cartesian_prod(lib.tensor(1.0)),
    "cartesian_none": lambda lib: lib.cartesian_prod(),
    "cartesian_dtypes": lambda lib: lib.cartesian_prod(_t(lib, (2,)), lib.arange(3)),
    "cartesian_ints": lambda lib: lib.cartesian_prod(lib.arange(2), lib.arange(3)),
    "cartesian_empty": lambda lib: lib.cartesian_prod(_t(lib, (0,)), _t(lib, (2,))),
    "block_diag_3d": lambda lib: lib.block_diag(_t(lib, (2, 2, 2))),
    "block_diag_second_3d": lambda lib: lib.block_diag(_t(lib, (2,)), _t(lib, (1, 1, 1))),
    "block_diag_none": lambda lib: lib.block_diag(),
    "block_diag_mixed": lambda lib: lib.block_diag(lib.arange(2), _t(lib, (1, 2))),
    "block_diag_bool": lambda lib: lib.block_diag(lib.tensor([True]), lib.tensor([[False]])),
    "block_diag_list": lambda lib: lib.block_diag([_t(lib, (2,))]),
    "block_diag_scalar": lambda lib: lib.block_diag(lib.tensor(3.0), _t(lib, (2,))),
    "block_diag_empty": lambda lib: lib.block_diag(_t(lib, (0, 2)), _t(lib, (2, 0))),
    "block_diag_noncontiguous": lambda lib: lib.block_diag(_t(lib, (3, 2)).t()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    same_outcome(CASES[name])


def test_unchanged_tensors_are_returned() -> None:
    """broadcast_tensors returns a tensor already of the broadcast shape itself, as PyTorch;
    cartesian_prod of one tensor returns it."""
    for lib in (chainrule, torch):
        a, b = _t(lib, (2, 3)), _t(lib, (3,))
        out = lib.broadcast_tensors(a, b)
        assert out[0] is a and out[1] is not b
        assert lib.cartesian_prod(b) is b


def test_meshgrid_warns_without_indexing() -> None:
    seen = []
    for lib in (chainrule, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = lib.meshgrid(_t(lib, (2,)), _t(lib, (3,)))
        seen.append(([(w.category, str(w.message)) for w in caught],
                     [tuple(g.shape) for g in grids]))
    assert seen[0] == seen[1] and seen[0][0]


def test_meshgrid_rejects_matrices() -> None:
    """PyTorch's message ends with the tensor in ATen's legacy print format, which chainrule
    does not reproduce; the type and the sentence before the tensor are PyTorch's."""
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError, match=r"^torch\.meshgrid: Expected 0D or 1D tensor in "
                           r"the tensor list but got: "):
            lib.meshgrid(_t(lib, (2, 2)), _t(lib, (3,)), indexing="ij")
