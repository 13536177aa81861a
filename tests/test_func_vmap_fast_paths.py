"""The batching rules' fast paths against ``torch.func.vmap``: a product of a batched operand
with an unbatched matrix (one plain product, ranks not aligned), per-example gradients through
it, and PyTorch's errors where the fast path must not apply."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule
from chainrule.func._batched import FALLBACK_COUNTS

from .conftest import assert_close, normalise_output, torch

RNG = np.random.default_rng(8)
MAT = RNG.standard_normal((4, 3))
SQUARE = RNG.standard_normal((4, 4))

# (name, function of lib and the matrix, batched input's shape, in_dims)
CASES = {
    "vector_at_matrix": (lambda lib, m: lambda v: v @ m, (5, 4), 0),
    "matrix_at_matrix": (lambda lib, m: lambda a: lib.matmul(a, m), (5, 2, 4), 0),
    "stack_at_matrix": (lambda lib, m: lambda a: a @ m, (2, 3, 5, 4), 2),
    "mm": (lambda lib, m: lambda a: lib.mm(a, m), (5, 2, 4), 0),
    "matrix_at_vector": (lambda lib, m: lambda v: m.t() @ v, (4, 5), 1),
    "mv": (lambda lib, m: lambda v: lib.mv(m.t(), v), (5, 4), 0),
    "rmatmul": (lambda lib, m: lambda v: m.t().__rmatmul__(v), (5, 3), 0),
    "transposed_matrix": (lambda lib, m: lambda v: v @ m.t().t(), (5, 4), 0),
    "square_both_ways": (lambda lib, m: lambda v: (v @ m[:, :3]) + 0 * v[:3], (5, 4), 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_product_with_an_unbatched_matrix(name: str, dtype: str) -> None:
    make, shape, in_dims = CASES[name]
    x = RNG.standard_normal(shape).astype(dtype)
    results = []
    for lib in (chainrule, torch):
        m = lib.tensor(MAT.astype(dtype))
        results.append(lib.func.vmap(make(lib, m), in_dims=in_dims)(lib.tensor(x)))
    FALLBACK_COUNTS.clear()
    ours, theirs = results
    assert tuple(ours.shape) == tuple(theirs.shape)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert_close(ours, theirs, rtol=tol, atol=tol)
    assert not FALLBACK_COUNTS


def _per_example_gradients(lib, x, m):
    def loss(m, x):
        return ((x @ m).tanh() @ m.t()).pow(2).sum()

    return lib.func.vmap(lib.func.grad(loss, argnums=(0, 1)), in_dims=(None, 0))(m, x)


def test_per_example_gradients_through_the_fast_path() -> None:
    x = RNG.standard_normal((6, 4))
    ours = _per_example_gradients(chainrule, chainrule.tensor(x), chainrule.tensor(MAT))
    theirs = _per_example_gradients(torch, torch.tensor(x), torch.tensor(MAT))
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_jacobian_of_a_matrix_vector_product() -> None:
    x = RNG.standard_normal(4)
    ours = chainrule.func.jacrev(lambda v: (chainrule.tensor(SQUARE) @ v).sin())(
        chainrule.tensor(x)
    )
    theirs = torch.func.jacrev(lambda v: (torch.tensor(SQUARE) @ v).sin())(torch.tensor(x))
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def _error(lib, case):
    m = lib.tensor(MAT)
    try:
        if case == "scalar_at_matrix":
            lib.func.vmap(lambda s: s @ m)(lib.tensor(RNG.standard_normal(4)))
        elif case == "size_mismatch":
            lib.func.vmap(lambda v: v @ m)(lib.tensor(RNG.standard_normal((5, 3))))
        elif case == "mv_of_matrix":
            lib.func.vmap(lambda a: lib.mv(m, a))(lib.tensor(RNG.standard_normal((5, 3, 2))))
        elif case == "mm_of_vector":
            lib.func.vmap(lambda a: lib.mm(m, a))(lib.tensor(RNG.standard_normal((5, 3))))
        elif case == "bmm_of_matrices":
            lib.func.vmap(lambda a: lib.bmm(a, a))(lib.tensor(RNG.standard_normal((5, 3, 3))))
        elif case == "dot_of_matrices":
            lib.func.vmap(lambda a: lib.dot(a, a))(lib.tensor(RNG.standard_normal((5, 3, 2))))
    except RuntimeError as error:
        return normalise_output(str(error))
    return None


@pytest.mark.parametrize(
    "case",
    [
        "scalar_at_matrix",
        "size_mismatch",
        "mv_of_matrix",
        "mm_of_vector",
        "bmm_of_matrices",
        "dot_of_matrices",
    ],
)
def test_errors_are_pytorchs(case: str) -> None:
    theirs = _error(torch, case)
    assert theirs is not None
    assert _error(chainrule, case) == theirs
