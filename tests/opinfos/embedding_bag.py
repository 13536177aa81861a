"""``embedding_bag`` (``ops/nn_ops/embedding_bag.py``): the three modes, offsets (with an
empty bag and ``include_last_offset``), 2-D input, ``padding_idx`` and per-sample weights.
First order only: PyTorch's gradient has no graph (not differentiable again)."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _i(lib):
    return lib.tensor([1, 2, 4, 5, 4, 3, 2, 0])


def _o(lib):
    return lib.tensor([0, 3, 3, 6])


def _distinct(rng, shapes, dtype):
    out = []
    for s in shapes:
        n = int(np.prod(s))
        out.append(((rng.permutation(n) - n / 2) * (3.0 / n) + 0.013).astype(dtype).reshape(s))
    return out


OPS = [
    OpInfo(
        "F.embedding_bag_mean",
        lambda lib, w: _f(lib).embedding_bag(_i(lib), w, _o(lib)),
        [((6, 3),)],
        second_order=False,
    ),
    OpInfo(
        "F.embedding_bag_sum_padding",
        lambda lib, w: _f(lib).embedding_bag(_i(lib), w, _o(lib), mode="sum", padding_idx=2),
        [((6, 3),)],
        second_order=False,
    ),
    OpInfo(
        "F.embedding_bag_max",
        lambda lib, w: _f(lib).embedding_bag(_i(lib), w, _o(lib), mode="max"),
        [((6, 3),)],
        second_order=False,
        make_inputs=_distinct,
    ),
    OpInfo(
        "F.embedding_bag_last_offset",
        lambda lib, w: _f(lib).embedding_bag(
            _i(lib), w, lib.tensor([0, 3, 3, 8]), include_last_offset=True
        ),
        [((6, 3),)],
        second_order=False,
    ),
    OpInfo(
        "F.embedding_bag_2d_mean_padding",
        lambda lib, w: _f(lib).embedding_bag(lib.tensor([[1, 5, 2], [5, 5, 5]]), w, padding_idx=-1),
        [((6, 3),)],
        second_order=False,
    ),
    OpInfo(
        "F.embedding_bag_per_sample_weights",
        lambda lib, w, p: _f(lib).embedding_bag(
            _i(lib), w, _o(lib), mode="sum", per_sample_weights=p
        ),
        [((6, 3), (8,))],
        second_order=False,
    ),
]
