"""cdist against PyTorch: errors (type and message, in PyTorch's order), half precision (the
direct kernel refuses it, the matrix-product path does not), empty inputs, the choice of node,
and the second derivative PyTorch does not implement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _t(lib: Any, shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.standard_normal(shape).astype(dtype))


def _cdist(s1: tuple[int, ...], s2: tuple[int, ...], *args: Any, dtype: str = "float32",
           **kw: Any) -> Any:
    return lambda lib: lib.cdist(_t(lib, s1, dtype), _t(lib, s2, dtype, 1), *args, **kw)


CASES = {
    "x1_1d": _cdist((3,), (2, 3)),
    "x2_1d": _cdist((2, 3), (3,)),
    "columns": _cdist((2, 3), (2, 4)),
    "negative_p": _cdist((2, 3), (2, 3), -1.0),
    "mode": _cdist((2, 3), (2, 3), compute_mode="foo"),
    "batch_mismatch": _cdist((2, 2, 3), (3, 2, 3)),
    "empty_rows": _cdist((0, 3), (2, 3)),
    "empty_columns": _cdist((2, 0), (3, 0)),
    "empty_batch": _cdist((0, 2, 3), (2, 3)),
    "half": _cdist((2, 3), (2, 3), dtype="float16"),
    "half_empty": _cdist((0, 3), (2, 3), dtype="float16"),
    "half_mm": _cdist((2, 3), (2, 3), compute_mode="use_mm_for_euclid_dist", dtype="float16"),
    "half_p1": _cdist((2, 3), (2, 3), 1.0, dtype="float16"),
    "ints": lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.int64), lib.ones(2, 3)),
    "ints_x2": lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.float64),
                                     lib.ones(2, 3, dtype=lib.int64)),
    "complex": lambda lib: lib.cdist(lib.ones(2, 3, dtype=lib.complex64), lib.ones(2, 3)),
    "dtypes": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64)),
    "dtypes_negative_p": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.float64),
                                               -1.0),
    "noncontiguous": lambda lib: lib.cdist(_t(lib, (3, 2)).t(), _t(lib, (3, 4), seed=1)[:, ::2]),
    "same_points": lambda lib: lib.cdist(lib.ones(2, 3), lib.ones(3, 3), 0.5),
    "integer_p": _cdist((2, 3), (4, 3), 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name: str) -> None:
    same_outcome(CASES[name])


@pytest.mark.parametrize(("rows", "mode", "expected"), [
    (25, "use_mm_for_euclid_dist_if_necessary", "CdistBackward0"),
    (26, "use_mm_for_euclid_dist_if_necessary", "ViewBackward0"),
    (3, "use_mm_for_euclid_dist", "ViewBackward0"),
    (30, "donot_use_mm_for_euclid_dist", "CdistBackward0"),
])
def test_node_follows_torch(rows: int, mode: str, expected: str) -> None:
    names = []
    for lib in (chainrule, torch):
        x = _t(lib, (rows, 3)).requires_grad_()
        names.append(lib.cdist(x, _t(lib, (4, 3), seed=1), compute_mode=mode).grad_fn.name())
    assert names == [expected, expected]


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_second_derivative_is_not_implemented(p: float) -> None:
    """The gradient is a ``CdistBackwardBackward0`` node (edges to x1, x2 and the forward's
    node); differentiating it raises PyTorch's NotImplementedError."""
    seen = []
    for lib in (chainrule, torch):
        x = _t(lib, (4, 3), "float64").requires_grad_()
        y = _t(lib, (5, 3), "float64", 1).requires_grad_()
        (g,) = lib.autograd.grad(lib.cdist(x, y, p).sum(), [x], create_graph=True)
        edges = [None if f is None else f.name().split("::")[-1]
                 for f, _ in g.grad_fn.next_functions]
        with pytest.raises(NotImplementedError) as error:
            lib.autograd.grad(g.sum(), [x, y])
        seen.append((g.grad_fn.name(), edges, str(error.value)))
    assert seen[0] == seen[1]
