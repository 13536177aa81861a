"""Counting and binning (no gradients): unique and unique_consecutive (flat and along a dim,
with inverse and counts), bincount (with weights), histc, bucketize and searchsorted. The
inputs are multiples of 0.5, so there are ties to collapse and values on bin edges; NaN, empty
and error cases are in tests/test_counting.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import OpInfo


def _halves(rng: Any, shapes: Any, dtype: Any) -> list[np.ndarray]:
    return [(rng.integers(-4, 5, s) / 2).astype(dtype) for s in shapes]


def _counts(x: Any) -> Any:
    return (x * 2 + 4).long().reshape(-1)


BOUNDARIES = [-1.5, -0.5, 0.0, 1.0, 1.5]
V = [((3, 4),), ((7,),), ((0,),)]
SEARCH = [((3, 4),), ((7,),)]

OPS = [OpInfo(name, fn, shapes, grad=False, make_inputs=_halves) for name, fn, shapes in [
    ("unique", lambda lib, x: lib.unique(x, return_inverse=True, return_counts=True), V),
    ("unique_plain", lambda lib, x: lib.unique(x), V[:1]),
    ("unique_method", lambda lib, x: x.unique(sorted=False, return_counts=True), V[:1]),
    ("unique_dim", lambda lib, x: lib.unique((x > 0).to(x.dtype), dim=1, return_inverse=True,
                                             return_counts=True), [((2, 6),)]),
    ("unique_consecutive", lambda lib, x: lib.unique_consecutive(
        x.sort().values, return_inverse=True, return_counts=True), V),
    ("unique_consecutive_method", lambda lib, x: x.unique_consecutive(), V[:1]),
    ("unique_consecutive_dim", lambda lib, x: lib.unique_consecutive(
        (x > 0).to(x.dtype), dim=0, return_counts=True), [((6, 2),)]),
    ("bincount", lambda lib, x: lib.bincount(_counts(x)), V),
    ("bincount_weights", lambda lib, x: lib.bincount(_counts(x), x.reshape(-1), 12), V),
    ("bincount_method", lambda lib, x: _counts(x).bincount(minlength=3), V[:1]),
    ("histc", lambda lib, x: lib.histc(x, 5), V[:2]),
    ("histc_range", lambda lib, x: x.histc(bins=3, min=-1, max=1.5), V[:2]),
    ("bucketize", lambda lib, x: lib.bucketize(x, lib.tensor(BOUNDARIES, dtype=x.dtype)),
     SEARCH),
    ("bucketize_right", lambda lib, x: lib.bucketize(
        x, lib.tensor(BOUNDARIES, dtype=x.dtype), right=True, out_int32=True), SEARCH),
    ("searchsorted", lambda lib, x: lib.searchsorted(lib.tensor(BOUNDARIES, dtype=x.dtype), x),
     SEARCH),
    ("searchsorted_rows", lambda lib, x: lib.searchsorted(x.sort().values, x, side="right"),
     SEARCH[:1]),
]]
