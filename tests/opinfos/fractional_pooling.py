"""Fractional max pooling (``ops/nn_ops/fractional_pooling.py``) with fixed
``_random_samples`` (the windows are then PyTorch's), on inputs without ties."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _distinct(rng, shapes, dtype):
    out = []
    for s in shapes:
        n = int(np.prod(s))
        out.append(((rng.permutation(n) - n / 2) * (3.0 / n) + 0.013).astype(dtype).reshape(s))
    return out


def _samples(lib, shape, like):
    values = np.random.default_rng(5).uniform(size=shape)
    return lib.tensor(values).to(like.dtype)


OPS = [
    OpInfo(
        "F.fractional_max_pool2d",
        lambda lib, x: _f(lib).fractional_max_pool2d(
            x, 2, output_size=(3, 2), _random_samples=_samples(lib, (2, 2, 2), x)
        ),
        [((2, 2, 5, 4),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "F.fractional_max_pool2d_with_indices",
        lambda lib, x: _f(lib).fractional_max_pool2d_with_indices(
            x, (2, 3), output_ratio=(0.5, 0.5), _random_samples=_samples(lib, (1, 3, 2), x)
        ),
        [((3, 6, 7),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "F.fractional_max_pool3d",
        lambda lib, x: _f(lib).fractional_max_pool3d(
            x, 2, output_size=(2, 2, 3), _random_samples=_samples(lib, (1, 1, 3), x)
        ),
        [((1, 1, 4, 4, 5),)],
        make_inputs=_distinct,
    ),
    OpInfo(
        "F.fractional_max_pool3d_with_indices",
        lambda lib, x: _f(lib).fractional_max_pool3d_with_indices(
            x, (1, 2, 2), output_size=2, _random_samples=_samples(lib, (1, 2, 3), x)
        ),
        [((2, 3, 4, 4),)],
        make_inputs=_distinct,
    ),
]
