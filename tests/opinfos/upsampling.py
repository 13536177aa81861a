"""Interpolation (``ops/nn_ops/upsampling.py``): every mode and rank of ``interpolate``, with
sizes and scale factors (the node saves the scales), align_corners both ways."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


def _interp(**kw):
    return lambda lib, x: _f(lib).interpolate(x, **kw)


OPS = [
    OpInfo("F.interpolate_nearest1d", _interp(scale_factor=1.7), [((1, 2, 4),)]),
    OpInfo("F.interpolate_nearest2d", _interp(size=(5, 3)), [((1, 2, 3, 4),)]),
    OpInfo("F.interpolate_nearest3d", _interp(scale_factor=2), [((1, 1, 2, 2, 3),)]),
    OpInfo(
        "F.interpolate_nearest_exact2d",
        _interp(scale_factor=0.7, mode="nearest-exact"),
        [((1, 2, 4, 5),)],
    ),
    OpInfo("F.interpolate_nearest_exact1d", _interp(size=7, mode="nearest-exact"), [((2, 1, 3),)]),
    OpInfo(
        "F.interpolate_nearest_exact3d",
        _interp(size=(3, 1, 2), mode="nearest-exact"),
        [((1, 1, 2, 2, 3),)],
    ),
    OpInfo("F.interpolate_linear", _interp(scale_factor=1.5, mode="linear"), [((2, 2, 4),)]),
    OpInfo(
        "F.interpolate_linear_align",
        _interp(size=6, mode="linear", align_corners=True),
        [((1, 2, 4),)],
    ),
    OpInfo(
        "F.interpolate_bilinear",
        _interp(scale_factor=(1.5, 0.8), mode="bilinear"),
        [((1, 2, 3, 5),)],
    ),
    OpInfo(
        "F.interpolate_bilinear_align",
        _interp(size=(4, 4), mode="bilinear", align_corners=True),
        [((1, 1, 3, 2),)],
    ),
    OpInfo("F.interpolate_bicubic", _interp(scale_factor=1.6, mode="bicubic"), [((1, 1, 3, 4),)]),
    OpInfo(
        "F.interpolate_bicubic_align",
        _interp(size=(2, 5), mode="bicubic", align_corners=True),
        [((1, 2, 3, 3),)],
    ),
    OpInfo(
        "F.interpolate_trilinear",
        _interp(scale_factor=1.5, mode="trilinear", recompute_scale_factor=True),
        [((1, 1, 2, 3, 2),)],
    ),
    OpInfo("F.interpolate_area", _interp(size=(2, 3), mode="area"), [((1, 2, 4, 5),)]),
]
