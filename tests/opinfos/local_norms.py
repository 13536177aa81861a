"""Compositions of other ops (``ops/nn_ops/local_norms.py``): rms_norm, local_response_norm
and the power-average pools."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _positive(rng, shapes, dtype):
    return [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]


OPS = [
    OpInfo("F.rms_norm", lambda lib, x: _f(lib).rms_norm(x, (4,)), [((2, 3, 4),)]),
    OpInfo(
        "F.rms_norm_weight",
        lambda lib, x, w: _f(lib).rms_norm(x, (3, 4), w, eps=1e-3),
        [((2, 3, 4), (3, 4))],
    ),
    OpInfo(
        "F.local_response_norm",
        lambda lib, x: _f(lib).local_response_norm(x, 2),
        [((2, 3, 4),), ((1, 4, 2, 3),)],
    ),
    OpInfo(
        "F.lp_pool1d",
        lambda lib, x: _f(lib).lp_pool1d(x, 2.0, 2),
        [((2, 3, 6),)],
        make_inputs=_positive,
    ),
    OpInfo(
        "F.lp_pool2d",
        lambda lib, x: _f(lib).lp_pool2d(x, 3.0, (2, 1), stride=1),
        [((1, 2, 3, 4),)],
        make_inputs=_positive,
    ),
    OpInfo(
        "F.lp_pool3d",
        lambda lib, x: _f(lib).lp_pool3d(x, 1.5, 2),
        [((1, 1, 2, 4, 2),)],
        make_inputs=_positive,
    ),
]
