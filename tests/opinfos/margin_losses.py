"""Margin and likelihood losses (``ops/nn_ops/margin_losses.py``), composed of other ops as
PyTorch composes them, and the soft margin loss (``SoftMarginLossBackward0``)."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _signs(lib, shape):
    return lib.tensor(np.resize([1.0, -1.0, -1.0], shape))


def _positive_last(rng, shapes, dtype):
    out = [rng.uniform(-2, 2, s).astype(dtype) for s in shapes[:-1]]
    return out + [rng.uniform(0.5, 2.0, shapes[-1]).astype(dtype)]


OPS = [
    OpInfo(
        "F.margin_ranking_loss",
        lambda lib, a, b: _f(lib).margin_ranking_loss(
            a, b, _signs(lib, (5,)).to(a.dtype), margin=0.1
        ),
        [((5,), (5,))],
    ),
    OpInfo(
        "F.hinge_embedding_loss",
        lambda lib, x: _f(lib).hinge_embedding_loss(
            x, _signs(lib, (3, 4)).to(x.dtype), reduction="sum"
        ),
        [((3, 4),)],
    ),
    OpInfo(
        "F.soft_margin_loss",
        lambda lib, x: _f(lib).soft_margin_loss(x, _signs(lib, (3, 4)).to(x.dtype)),
        [((3, 4),)],
    ),
    OpInfo(
        "F.soft_margin_loss_none",
        lambda lib, x: _f(lib).soft_margin_loss(
            x, _signs(lib, (3, 4)).to(x.dtype), reduction="none"
        ),
        [((3, 4),)],
    ),
    OpInfo(
        "F.cosine_embedding_loss",
        lambda lib, a, b: _f(lib).cosine_embedding_loss(
            a, b, _signs(lib, (3,)).to(a.dtype), margin=0.1
        ),
        [((3, 4), (3, 4))],
    ),
    OpInfo(
        "F.multilabel_soft_margin_loss",
        lambda lib, x, t: _f(lib).multilabel_soft_margin_loss(x, t.sigmoid()),
        [((3, 4), (3, 4))],
    ),
    OpInfo(
        "F.triplet_margin_loss",
        lambda lib, a, p, n: _f(lib).triplet_margin_loss(a, p, n, margin=3.0, swap=True),
        [((3, 4), (3, 4), (3, 4))],
    ),
    OpInfo(
        "F.triplet_margin_with_distance_loss",
        lambda lib, a, p, n: _f(lib).triplet_margin_with_distance_loss(a, p, n, margin=3.0),
        [((3, 4), (3, 4), (3, 4))],
    ),
    OpInfo(
        "F.poisson_nll_loss", lambda lib, x, t: _f(lib).poisson_nll_loss(x, t), [((3, 4), (3, 4))]
    ),
    OpInfo(
        "F.poisson_nll_loss_full",
        lambda lib, x, t: _f(lib).poisson_nll_loss(x, t * 3, log_input=False, full=True),
        [((3, 4), (3, 4))],
        make_inputs=lambda rng, shapes, dtype: [
            rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes
        ],
    ),
    OpInfo(
        "F.gaussian_nll_loss",
        lambda lib, x, t, v: _f(lib).gaussian_nll_loss(x, t, v, full=True),
        [((3, 4), (3, 4), (3, 1))],
        make_inputs=_positive_last,
    ),
]
