"""Channel rearrangements (``ops/nn_ops/shuffle.py``): pixel_shuffle, pixel_unshuffle,
channel_shuffle (each one node whose gradient is the inverse rearrangement), and the
sliding blocks of unfold (im2col) and fold (col2im)."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


OPS = [
    OpInfo(
        "F.pixel_shuffle",
        lambda lib, x: _f(lib).pixel_shuffle(x, 2),
        [((1, 8, 2, 3),), ((8, 1, 2),), ((2, 1, 4, 1, 2),)],
    ),
    OpInfo(
        "F.pixel_unshuffle",
        lambda lib, x: _f(lib).pixel_unshuffle(x, 2),
        [((1, 2, 4, 6),), ((1, 2, 2),)],
    ),
    OpInfo(
        "F.channel_shuffle",
        lambda lib, x: _f(lib).channel_shuffle(x, 3),
        [((2, 6, 2),), ((1, 3, 2, 2),)],
    ),
]

OPS += [
    OpInfo(
        "F.unfold",
        lambda lib, x: _f(lib).unfold(x, (2, 3), padding=1, stride=(2, 1)),
        [((2, 2, 4, 3),), ((2, 3, 4),)],
    ),
    OpInfo("F.unfold_dilated", lambda lib, x: _f(lib).unfold(x, 2, dilation=2), [((1, 2, 5, 4),)]),
    OpInfo(
        "F.fold",
        lambda lib, x: _f(lib).fold(x, (4, 3), (2, 3), padding=1, stride=(2, 1)),
        [((2, 12, 9),), ((12, 9),)],
    ),
]

OPS += [
    OpInfo(
        "nn.utils.rnn.pack_padded_sequence",
        lambda lib, x: lib.nn.utils.rnn.pack_padded_sequence(x, [3, 2, 2]).data,
        [((3, 3, 2),)],
    ),
    OpInfo(
        "nn.utils.rnn.pack_padded_sequence_batch_first",
        lambda lib, x: (
            lib.nn.utils.rnn.pack_padded_sequence(
                x, [1, 3], batch_first=True, enforce_sorted=False
            ).data
        ),
        [((2, 3, 2),)],
    ),
]
