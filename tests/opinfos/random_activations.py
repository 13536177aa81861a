"""rrelu in eval mode (``RreluWithNoiseBackward0`` with the mean slope, in place
``RreluWithNoiseBackward1``; the training-mode slopes are random draws)."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _away_from_zero(rng, shapes, dtype):
    values = rng.uniform(0.2, 2.0, shapes[0]) * rng.choice([-1.0, 1.0], shapes[0])
    return [values.astype(dtype)]


OPS = [
    OpInfo(
        "F.rrelu",
        lambda lib, x: _f(lib).rrelu(x, 0.1, 0.3),
        [((3, 4),)],
        make_inputs=_away_from_zero,
    ),
    OpInfo(
        "F.rrelu_",
        lambda lib, x: _f(lib).rrelu(x.clone(), 0.1, 0.3, inplace=True),
        [((3, 4),)],
        make_inputs=_away_from_zero,
    ),
]
