"""``stft`` / ``istft`` (``ops/stft.py``), functions and Tensor methods: real and complex
signals, windows shorter than ``n_fft``, centred or not, normalised, one- and two-sided, the
round trip, and ``istft`` of a given spectrum. Complex results are compared as their real pairs.
Windows are kept away from 0 so that ``istft``'s overlapped window stays invertible."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _signal_and_window(rng: np.random.Generator, shapes, dtype) -> list[np.ndarray]:
    signal, window = shapes
    return [
        rng.uniform(-2.0, 2.0, signal).astype(dtype),
        rng.uniform(0.5, 1.5, window).astype(dtype),
    ]


def _real(lib, out):
    return lib.view_as_real(out) if out.dtype.is_complex else out


def _stft(lib, x, w, **kw):
    return _real(lib, lib.stft(x, 8, window=w, return_complex=True, **kw))


def _round_trip(lib, x, w, stft_kw, istft_kw):
    spectrum = lib.stft(x, 8, window=w, return_complex=True, **stft_kw)
    return lib.istft(spectrum, 8, window=w, **istft_kw)


OPS = [
    OpInfo(
        "stft",
        lambda lib, x, w: _stft(lib, x, w, hop_length=2),
        [((2, 20), (8,))],
        make_inputs=_signal_and_window,
    ),
    OpInfo(
        "stft_short_window_normalized",
        lambda lib, x, w: _stft(lib, x, w, hop_length=3, win_length=5, normalized=True),
        [((17,), (5,))],
        make_inputs=_signal_and_window,
    ),
    OpInfo(
        "stft_not_centred_two_sided",
        lambda lib, x, w: _stft(lib, x, w, center=False, onesided=False),
        [((2, 19), (8,))],
        make_inputs=_signal_and_window,
    ),
    OpInfo(
        "stft_complex_signal",
        lambda lib, x, w: _real(lib, lib.stft(lib.view_as_complex(x), 8, 2, window=w)),
        [((18, 2), (8,))],
        make_inputs=_signal_and_window,
        extra={"complex": True},
    ),
    OpInfo(
        "Tensor.stft",
        lambda lib, x, w: _real(
            lib, x.stft(8, 4, window=w, pad_mode="constant", return_complex=True)
        ),
        [((2, 21), (8,))],
        make_inputs=_signal_and_window,
    ),
    OpInfo(
        "istft",
        lambda lib, x, w: _round_trip(lib, x, w, {"hop_length": 2}, {"hop_length": 2}),
        [((2, 20), (8,))],
        make_inputs=_signal_and_window,
    ),
    OpInfo(
        "istft_length_not_centred",
        lambda lib, x, w: _round_trip(
            lib,
            x,
            w,
            {"hop_length": 3, "center": False},
            {"hop_length": 3, "center": False, "length": 17},
        ),
        [((19,), (8,))],
        make_inputs=_signal_and_window,
    ),
    OpInfo(
        "istft_two_sided_complex",
        lambda lib, x, w: lib.view_as_real(
            _round_trip(
                lib,
                x,
                w,
                {"hop_length": 2, "onesided": False},
                {"hop_length": 2, "onesided": False, "return_complex": True},
            )
        ),
        [((2, 16), (8,))],
        make_inputs=_signal_and_window,
        extra={"complex": True},
    ),
    OpInfo(
        "Tensor.istft",
        lambda lib, x, w: lib.view_as_complex(x).istft(8, 2, window=w, normalized=True),
        [((5, 7, 2), (8,))],
        make_inputs=_signal_and_window,
        extra={"complex": True},
    ),
]
