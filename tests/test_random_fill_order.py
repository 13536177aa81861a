"""In-place Bernoulli fills and randint_like take their draws in memory order.

PyTorch's kernels write a strided tensor element after element in memory order, so under a
seed a transposed or permuted tensor holds other numbers at each index than a contiguous one.
chainrule drew in index order for ``bernoulli_`` of a non-contiguous tensor, and
``randint_like`` returned a contiguous tensor (PyTorch keeps the input's layout) filled in
index order. ``bernoulli`` of float16/bfloat16 probabilities draws float uniforms (as float32
probabilities do); chainrule drew doubles, so the generator fell behind too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

P = np.random.default_rng(0).random((4, 3)).astype(np.float32)

CASES = {
    "transposed, number p": lambda lib: lib.ones(4, 3).t().bernoulli_(0.3),
    "transposed int, number p": lambda lib: lib.ones(4, 3, dtype=lib.int64).t().bernoulli_(0.3),
    "stepped rows, number p": lambda lib: lib.ones(8, 3)[::2].bernoulli_(0.7),
    "permuted 3-d, number p": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1).bernoulli_(0.5),
    "transposed, tensor p": lambda lib: lib.ones(4, 3).t().bernoulli_(lib.tensor(P.T.copy())),
    "transposed, float64 p": lambda lib: lib.ones(4, 3, dtype=lib.float64)
    .t()
    .bernoulli_(lib.tensor(P.T.copy(), dtype=lib.float64)),
    "transposed, broadcast p": lambda lib: lib.ones(4, 3)
    .t()
    .bernoulli_(lib.tensor(P[0, :3].copy()).reshape(3, 1)),
    "contiguous, transposed p": lambda lib: lib.ones(3, 4).bernoulli_(lib.tensor(P).t()),
    "out of place, transposed p": lambda lib: lib.bernoulli(lib.tensor(P).t()),
    "out of place, transposed input": lambda lib: lib.ones(4, 3).t().bernoulli(0.3),
    "float16 p": lambda lib: lib.bernoulli(lib.tensor(P).half()),
    "bfloat16 p": lambda lib: lib.bernoulli(lib.tensor(P).bfloat16()),
    "float16 in place, float16 p": lambda lib: lib.ones(3, 4, dtype=lib.float16).t().bernoulli_(
        lib.tensor(P).half()
    ),
    "randint_like transposed": lambda lib: lib.randint_like(lib.ones(3, 4).t(), 10),
    "randint_like channels last": lambda lib: lib.randint_like(
        lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1), -5, 5
    ),
    "randint_like contiguous format": lambda lib: lib.randint_like(
        lib.ones(3, 4).t(), 3, 10, memory_format=lib.contiguous_format
    ),
    "randint_like int8 transposed": lambda lib: lib.randint_like(
        lib.ones(5, 6, dtype=lib.int8).t(), 100
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_draws_and_layout_as_pytorch(case):
    results = []
    for lib in (torch, chainrule):
        lib.manual_seed(0)
        out = CASES[case](lib)
        after = lib.rand(3, dtype=lib.float64)  # the generator's state after the draw
        results.append((out.stride(), out.float().numpy(), after.numpy()))
    (strides, values, after), (ours_strides, ours, ours_after) = results
    assert ours_strides == strides
    np.testing.assert_array_equal(ours, values)
    np.testing.assert_array_equal(ours_after, after)
