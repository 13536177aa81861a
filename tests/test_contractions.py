"""einsum, tensordot and kron against PyTorch: errors (type and message), integer and mixed
dtypes, empty and non-contiguous operands, and the nodes of their graphs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _t(lib: Any, shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.standard_normal(shape).astype(dtype))


def _walk(t: Any) -> list[str]:
    names, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        names.append(node.name().split("::")[-1])
        stack.extend(fn for fn, _ in node.next_functions)
    return names


def _einsum(equation: str, *shapes: tuple[int, ...]) -> Callable[[Any], Any]:
    return lambda lib: lib.einsum(equation, *(_t(lib, s, seed=i) for i, s in enumerate(shapes)))


EINSUM_ERRORS = {
    "size_mismatch": _einsum("ij,jk->ik", (2, 3), (4, 4)),
    "output_repeated": _einsum("ij,jk->ii", (2, 3), (3, 4)),
    "output_unknown": _einsum("ij,jk->iz", (2, 3), (3, 4)),
    "stray_dot": _einsum("i.j", (2, 3)),
    "two_ellipses": _einsum("......", (2, 3)),
    "output_two_ellipses": _einsum("...->......", (2, 3)),
    "output_stray_dot": _einsum("...->.", (2, 3)),
    "too_many_subscripts": _einsum("ij", (2,)),
    "ellipsis_too_many": _einsum("...ijk", (2, 3)),
    "fewer_operands": _einsum("ij,jk", (2, 3)),
    "more_operands": _einsum("i", (2,), (2,)),
    "diagonal_sizes": _einsum("ii->i", (2, 3)),
    "bad_subscript": _einsum("i1", (2, 3)),
    "bad_output_subscript": _einsum("ij->i1", (2, 3)),
    "ellipsis_broadcast": _einsum("...i,...i->...", (2, 3), (4, 3)),
    "no_operand": lambda lib: lib.einsum("i"),
    "empty_list": lambda lib: lib.einsum("i", []),
    "mixed_dtypes": lambda lib: lib.einsum("ij,jk", _t(lib, (2, 3)), _t(lib, (3, 4), "float64")),
    "sublist_range": lambda lib: lib.einsum(_t(lib, (2, 3)), [0, 60]),
}


@pytest.mark.parametrize("name", sorted(EINSUM_ERRORS))
def test_einsum_errors_match_torch(name: str) -> None:
    same_outcome(EINSUM_ERRORS[name])


VALUES = {
    "integers": lambda lib: lib.einsum("ij,jk->ik", lib.arange(6).view(2, 3),
                                       lib.arange(12).view(3, 4)),
    "int_trace": lambda lib: lib.einsum("ii", lib.arange(9).view(3, 3)),
    "bool_outer": lambda lib: lib.einsum("i,j->ij", lib.tensor([True, False]),
                                         lib.tensor([True, True])),
    "empty_contraction": _einsum("ij,jk->ik", (2, 0), (0, 3)),
    "empty_batch": _einsum("bij,bjk->bik", (0, 2, 3), (0, 3, 4)),
    "spaces": _einsum(" i j , j k -> i k ", (2, 3), (3, 4)),
    "upper_case": _einsum("Ab,bC->AC", (2, 3), (3, 4)),
    "implicit_order": _einsum("ba", (2, 3)),
    "noncontiguous": lambda lib: lib.einsum("ij,jk->ik", _t(lib, (3, 2)).t(),
                                            _t(lib, (4, 3), seed=1).t()),
    "sublist_ellipsis": lambda lib: lib.einsum(_t(lib, (2, 2, 3)), [..., 0, 1],
                                               _t(lib, (3, 4), seed=1), [1, 2], [..., 0, 2]),
    "tensordot_ints": lambda lib: lib.tensordot(lib.arange(6).view(2, 3),
                                                lib.arange(12).view(3, 4), 1),
    "tensordot_empty": lambda lib: lib.tensordot(_t(lib, (2, 0)), _t(lib, (0, 3)), 1),
    "tensordot_full_empty": lambda lib: lib.tensordot(_t(lib, (0,)), _t(lib, (0,)), 1),
    "tensordot_negative_dims": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (3, 2)),
                                                         ([-1], [0])),
    "tensordot_broadcast_dim": lambda lib: lib.tensordot(_t(lib, (2, 1)), _t(lib, (3, 4)), 1),
    "kron_ints": lambda lib: lib.kron(lib.arange(4).view(2, 2), lib.tensor([[1, -1]])),
    "kron_mixed_dtypes": lambda lib: lib.kron(lib.arange(3), _t(lib, (2,))),
    "kron_noncontiguous_other": lambda lib: lib.kron(_t(lib, (2,)), _t(lib, (3, 2)).t()),
    "kron_noncontiguous": lambda lib: lib.kron(_t(lib, (3, 2)).t(), _t(lib, (3,))),
}

TENSORDOT_ERRORS = {
    "negative": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (3, 4)), -1),
    "too_many": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (2, 3)), 3),
    "sizes": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (4, 4)), 1),
    "list_lengths": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (2, 3)), ([0, 1], [0])),
    "dtypes": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (3, 4), "float64"), 1),
    "dim_range": lambda lib: lib.tensordot(_t(lib, (2, 3)), _t(lib, (3, 4)), ([2], [0])),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(name: str) -> None:
    same_outcome(VALUES[name])


@pytest.mark.parametrize("name", sorted(TENSORDOT_ERRORS))
def test_tensordot_errors_match_torch(name: str) -> None:
    same_outcome(TENSORDOT_ERRORS[name])


GRAPHS = {
    "mm": ("ij,jk->ik", [(2, 3), (3, 4)]),
    "diagonal": ("ii->i", [(3, 3)]),
    "three": ("i,i,i->", [(3,), (3,), (3,)]),
    "sum": ("ij->", [(2, 3)]),
    "outer": ("i,j->ij", [(2,), (3,)]),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_einsum_graph_is_torchs(name: str) -> None:
    """The whole graph (not only the output's node) has PyTorch's nodes in PyTorch's order."""
    equation, shapes = GRAPHS[name]
    graphs = []
    for lib in (chainrule, torch):
        xs = [_t(lib, s, seed=i).requires_grad_() for i, s in enumerate(shapes)]
        graphs.append(_walk(lib.einsum(equation, *xs)))
    assert graphs[0] == graphs[1]
