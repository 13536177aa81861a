"""Max unpooling (``ops/nn_ops/unpooling.py``): the values written back at the indices a max
pooling of a fixed pattern gives (one per window, so every index is distinct), through
``nn.functional`` in both libraries."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _indices(lib, input_shape, kernel, stride=None, padding=0):
    """The indices of a max pooling of a fixed random pattern shaped like the unpooling's
    output (so they are ones PyTorch's max pooling really gives)."""
    nd = len(kernel)
    stride = stride or kernel
    padding = (padding,) * nd if isinstance(padding, int) else padding
    out = [
        (s - 1) * st + k - 2 * p
        for s, k, st, p in zip(input_shape[-nd:], kernel, stride, padding, strict=True)
    ]
    pattern = (
        np.random.default_rng(7)
        .permutation(int(np.prod(input_shape[:-nd])) * int(np.prod(out)))
        .astype(np.float64)
        .reshape(tuple(input_shape[:-nd]) + tuple(out))
    )
    pool = {1: _f(lib).max_pool1d, 2: _f(lib).max_pool2d, 3: _f(lib).max_pool3d}[nd]
    _, idx = pool(lib.tensor(pattern), kernel, stride, padding, return_indices=True)
    return idx


OPS = [
    OpInfo(
        "F.max_unpool2d",
        lambda lib, x: _f(lib).max_unpool2d(x, _indices(lib, (2, 3, 2, 3), (2, 2)), 2),
        [((2, 3, 2, 3),)],
    ),
    OpInfo(
        "F.max_unpool2d_stride_padding",
        lambda lib, x: _f(lib).max_unpool2d(
            x, _indices(lib, (1, 2, 3, 3), (2, 2), (3, 3), 1), 2, stride=3, padding=1
        ),
        [((1, 2, 3, 3),)],
    ),
    OpInfo(
        "F.max_unpool2d_output_size",
        lambda lib, x: _f(lib).max_unpool2d(
            x, _indices(lib, (2, 2, 2), (2, 2)), 2, output_size=(5, 5)
        ),
        [((2, 2, 2),)],
    ),
    OpInfo(
        "F.max_unpool1d",
        lambda lib, x: _f(lib).max_unpool1d(x, _indices(lib, (2, 3, 4), (2,)), 2),
        [((2, 3, 4),)],
    ),
    OpInfo(
        "F.max_unpool3d",
        lambda lib, x: _f(lib).max_unpool3d(x, _indices(lib, (1, 2, 2, 2, 2), (2, 2, 2)), 2),
        [((1, 2, 2, 2, 2),)],
    ),
    OpInfo(
        "F.max_unpool3d_unbatched_stride",
        lambda lib, x: _f(lib).max_unpool3d(
            x, _indices(lib, (2, 2, 1, 3), (2, 1, 2), (3, 1, 2)), (2, 1, 2), stride=(3, 1, 2)
        ),
        [((2, 2, 1, 3),)],
    ),
]
