"""``affine_grid`` (``ops/nn_ops/affine_grid.py``) and ``torch.affine_grid_generator``: 2-D and
3-D transforms, with and without ``align_corners``; first order only (PyTorch's gradient has
no graph)."""

from __future__ import annotations

from . import OpInfo


def _f(lib):
    return lib.nn.functional


OPS = [
    OpInfo(
        "F.affine_grid",
        lambda lib, t: _f(lib).affine_grid(t, [2, 1, 3, 4], False),
        [((2, 2, 3),)],
        second_order=False,
    ),
    OpInfo(
        "F.affine_grid_align_corners",
        lambda lib, t: _f(lib).affine_grid(t, [1, 3, 2, 5], align_corners=True),
        [((1, 2, 3),)],
        second_order=False,
    ),
    OpInfo(
        "F.affine_grid_3d",
        lambda lib, t: _f(lib).affine_grid(t, [1, 1, 2, 3, 2], False),
        [((1, 3, 4),)],
        second_order=False,
    ),
    OpInfo(
        "torch.affine_grid_generator",
        lambda lib, t: lib.affine_grid_generator(t, [2, 1, 2, 2, 3], True),
        [((2, 3, 4),)],
        second_order=False,
    ),
]
