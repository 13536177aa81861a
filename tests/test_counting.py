"""unique, unique_consecutive, bincount, histc, bucketize and searchsorted against PyTorch:
values, dtypes, the nodes PyTorch records (and their backward's error), ties, NaN, empty and
non-contiguous inputs, and errors (type and message)."""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

nan, inf = float("nan"), float("inf")
TIES = [3.0, 1.0, 2.0, 1.0, nan, 3.0, nan, -0.0, 0.0, 2.0]
MATRIX = [[1, 2], [1, 2], [0, 5], [1, 2], [0, 5]]


def _f(lib: Any, values: Any = TIES, **kw: Any) -> Any:
    return lib.tensor(values, **kw)


CASES = {
    "unique": lambda lib: lib.unique(_f(lib)),
    "unique_all": lambda lib: lib.unique(_f(lib), return_inverse=True, return_counts=True),
    "unique_inverse": lambda lib: lib.unique(_f(lib), return_inverse=True),
    "unique_counts": lambda lib: lib.unique(_f(lib), return_counts=True),
    "unique_unsorted": lambda lib: lib.unique(lib.tensor([5, 1, 2, 9, 1, 5]), sorted=False,
                                              return_inverse=True),
    "unique_ints_2d": lambda lib: lib.unique(lib.tensor(MATRIX), return_inverse=True,
                                             return_counts=True),
    "unique_bool": lambda lib: lib.unique(lib.tensor([True, False, True])),
    "unique_0d": lambda lib: lib.unique(lib.tensor(3.0), return_inverse=True),
    "unique_empty": lambda lib: lib.unique(lib.tensor([]), return_inverse=True,
                                           return_counts=True),
    "unique_dim0": lambda lib: lib.unique(lib.tensor(MATRIX), dim=0, return_inverse=True,
                                          return_counts=True),
    "unique_dim1": lambda lib: lib.unique(lib.tensor(MATRIX).t(), dim=1, return_inverse=True),
    "unique_dim_negative": lambda lib: lib.unique(lib.tensor(MATRIX), dim=-2),
    "unique_dim_range": lambda lib: lib.unique(lib.ones(2, 3), dim=2),
    "unique_dim_zero_sized": lambda lib: lib.unique(lib.zeros(2, 0, 3), dim=0),
    "unique_noncontiguous": lambda lib: lib.unique(lib.tensor(MATRIX).t(), return_inverse=True),
    "unique_method": lambda lib: _f(lib).unique(return_counts=True),
    "consecutive": lambda lib: lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1, 1, 2]),
                                                      return_inverse=True, return_counts=True),
    "consecutive_nan": lambda lib: lib.unique_consecutive(_f(lib, [nan, nan, 1.0, 1.0]),
                                                          return_counts=True),
    "consecutive_dim": lambda lib: lib.unique_consecutive(lib.tensor(MATRIX), dim=0,
                                                          return_inverse=True,
                                                          return_counts=True),
    "consecutive_empty": lambda lib: lib.unique_consecutive(lib.tensor([]), return_inverse=True),
    "consecutive_2d": lambda lib: lib.unique_consecutive(lib.tensor(MATRIX), return_inverse=True),
    "consecutive_method": lambda lib: lib.tensor([1, 1, 2]).unique_consecutive(),
    "bincount": lambda lib: lib.bincount(lib.tensor([1, 3, 1])),
    "bincount_minlength": lambda lib: lib.bincount(lib.tensor([1, 3, 1]), minlength=6),
    "bincount_weights": lambda lib: lib.bincount(lib.tensor([1, 3, 1]),
                                                 lib.tensor([0.5, 1.0, 2.0])),
    "bincount_double_weights": lambda lib: lib.bincount(
        lib.tensor([1, 3, 1]), lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)),
    "bincount_int_weights": lambda lib: lib.bincount(lib.tensor([1, 3, 1]),
                                                     lib.tensor([1, 2, 3])),
    "bincount_empty": lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64)),
    "bincount_empty_minlength": lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64),
                                                         minlength=3),
    "bincount_uint8": lambda lib: lib.bincount(lib.tensor([1, 0], dtype=lib.uint8)),
    "bincount_negative": lambda lib: lib.bincount(lib.tensor([-1])),
    "bincount_2d": lambda lib: lib.bincount(lib.tensor([[1]])),
    "bincount_float": lambda lib: lib.bincount(lib.tensor([1.0])),
    "bincount_minlength_negative": lambda lib: lib.bincount(lib.tensor([1]), minlength=-1),
    "bincount_weights_length": lambda lib: lib.bincount(lib.tensor([1, 2]), lib.tensor([1.0])),
    "bincount_method": lambda lib: lib.tensor([0, 2]).bincount(),
    "histc": lambda lib: lib.histc(lib.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]), 4, 1, 4),
    "histc_data_range": lambda lib: lib.histc(lib.tensor([1.0, 2.0, 2.5, 7.0]), bins=3),
    "histc_nan_ignored": lambda lib: lib.histc(_f(lib, [1.0, nan, 3.0]), bins=3, min=0, max=4),
    "histc_double": lambda lib: lib.histc(_f(lib, [1.0, 2.0], dtype=lib.float64), bins=3),
    "histc_equal": lambda lib: lib.histc(lib.tensor([1.0, 1.0]), bins=3),
    "histc_empty": lambda lib: lib.histc(lib.tensor([]), bins=3),
    "histc_ints": lambda lib: lib.histc(lib.tensor([1, 2]), bins=3),
    "histc_bins": lambda lib: lib.histc(lib.tensor([1.0, 2.0]), bins=0),
    "histc_min_max": lambda lib: lib.histc(lib.tensor([1.0, 2.0]), bins=3, min=2, max=1),
    "histc_inf": lambda lib: lib.histc(lib.tensor([1.0, inf]), bins=3),
    "histc_noncontiguous": lambda lib: lib.histc(lib.tensor([[0.0, 1.0], [2.0, 3.0]]).t(), 2),
    "histc_method": lambda lib: lib.tensor([0.0, 1.0, 1.5]).histc(2),
    "bucketize": lambda lib: lib.bucketize(_f(lib), lib.tensor([0.0, 1.0, 2.0, 3.0])),
    "bucketize_right": lambda lib: lib.bucketize(_f(lib), lib.tensor([0.0, 1.0, 2.0, 3.0]),
                                                 right=True),
    "bucketize_int32": lambda lib: lib.bucketize(lib.tensor([[1, 5], [2, 0]]),
                                                 lib.tensor([1, 3]), out_int32=True),
    "bucketize_scalar": lambda lib: lib.bucketize(2, lib.tensor([1, 3])),
    "bucketize_2d_boundaries": lambda lib: lib.bucketize(lib.tensor([1]), lib.ones(2, 2)),
    "searchsorted": lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0, 2.0, 3.0]), _f(lib)),
    "searchsorted_right": lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0, 2.0, 3.0]), _f(lib),
                                                       right=True),
    "searchsorted_side": lambda lib: lib.searchsorted(lib.tensor([1.0, 2.0, 2.0]),
                                                      lib.tensor([2.0]), side="right"),
    "searchsorted_rows": lambda lib: lib.searchsorted(lib.tensor([[1, 3, 5], [2, 4, 6]]),
                                                      lib.tensor([[3, 6], [1, 4]])),
    "searchsorted_sorter": lambda lib: lib.searchsorted(lib.tensor([3.0, 1.0, 2.0]),
                                                        lib.tensor([2.5, 0.0]),
                                                        sorter=lib.tensor([1, 2, 0])),
    "searchsorted_empty": lambda lib: lib.searchsorted(lib.tensor([]), lib.tensor([1.0])),
    "searchsorted_bad_side": lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1.0]),
                                                          side="middle"),
    "searchsorted_opposites": lambda lib: lib.searchsorted(lib.tensor([1.0]), lib.tensor([1.0]),
                                                           right=True, side="left"),
    "searchsorted_shapes": lambda lib: lib.searchsorted(lib.ones(2, 3), lib.ones(3, 1)),
    "searchsorted_nan_sequence": lambda lib: lib.searchsorted(_f(lib, [1.0, nan]),
                                                              _f(lib, [0.0, 2.0, nan])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    same_outcome(CASES[name])


@pytest.mark.parametrize(("name", "call"), [
    ("unique", lambda lib, x: lib.unique(x, return_inverse=True)[0]),
    ("unique_dim", lambda lib, x: lib.unique(x, dim=0)),
    ("unique_consecutive", lambda lib, x: lib.unique_consecutive(x)),
    ("unique_consecutive_dim", lambda lib, x: lib.unique_consecutive(x, dim=0)),
    ("histc", lambda lib, x: lib.histc(x, 3)),
])
def test_nodes_and_backward_match_torch(name: str, call: Any) -> None:
    """unique's nodes raise PyTorch's NotImplementedError; histc records nothing."""
    seen = []
    for lib in (chainrule, torch):
        x = lib.tensor([3.0, 1.0, 2.0, 1.0], requires_grad=True)
        out = call(lib, x)
        node = None if out.grad_fn is None else out.grad_fn.name()
        try:
            out.sum().backward()
            error = None
        except (NotImplementedError, RuntimeError) as caught:
            error = (type(caught).__name__, str(caught))
        seen.append((node, out.requires_grad, error))
    assert seen[0] == seen[1]


def test_bincount_weights_node() -> None:
    seen = []
    for lib in (chainrule, torch):
        w = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        out = lib.bincount(lib.tensor([1, 3, 1]), w)
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        seen.append((out.grad_fn.name().split("::")[-1], len(out.grad_fn.next_functions),
                     str(error.value)))
    assert seen[0] == seen[1]


def test_histc_nan_range_message() -> None:
    """NaN in the data with no range given: PyTorch's message prints the NaN range."""
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError, match=r"^torch\.histc: range of \[-nan, -nan\] is not "
                           r"finite$"):
            lib.histc(lib.tensor([1.0, nan]), bins=3)
