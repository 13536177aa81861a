"""``grid_sample`` (``ops/nn_ops/grid_sample.py``) and ``torch.grid_sampler*``: 2-D and 3-D
inputs, every mode, padding and ``align_corners``, gradients in the input and the grid (to the
second order, as PyTorch's). The grid is drawn past [-1, 1] so that padding is reached; random
points miss the pixel boundaries where the gradient in the grid jumps."""

from __future__ import annotations

import numpy as np

from . import OpInfo


def _image_and_grid(rng: np.random.Generator, shapes, dtype) -> list[np.ndarray]:
    image, grid = shapes
    return [
        rng.standard_normal(image).astype(dtype),
        rng.uniform(-1.3, 1.3, size=grid).astype(dtype),
    ]


def _sample(mode: str, padding: str, align_corners: bool):
    def fn(lib, x, grid):
        return lib.nn.functional.grid_sample(x, grid, mode, padding, align_corners)

    return fn


_2D = [((2, 3, 4, 5), (2, 3, 2, 2))]
_3D = [((2, 2, 3, 4, 3), (2, 2, 1, 3, 3))]

OPS = (
    [
        OpInfo(
            f"F.grid_sample_{mode}_{padding}{'_align' if align else ''}",
            _sample(mode, padding, align),
            _2D,
            make_inputs=_image_and_grid,
        )
        for mode in ("bilinear", "nearest", "bicubic")
        for padding, align in (
            ("zeros", False),
            ("border", True),
            ("reflection", False),
            ("reflection", True),
        )
    ]
    + [
        OpInfo(
            f"F.grid_sample_3d_{mode}_{padding}{'_align' if align else ''}",
            _sample(mode, padding, align),
            _3D,
            make_inputs=_image_and_grid,
        )
        for mode, padding, align in (
            ("bilinear", "zeros", False),
            ("bilinear", "reflection", True),
            ("bilinear", "border", False),
            ("nearest", "zeros", True),
        )
    ]
    + [
        OpInfo(
            "torch.grid_sampler",
            lambda lib, x, grid: lib.grid_sampler(x, grid, 0, 1, False),
            _2D,
            make_inputs=_image_and_grid,
        ),
        OpInfo(
            "torch.grid_sampler_2d",
            lambda lib, x, grid: lib.grid_sampler_2d(x, grid, 2, 2, True),
            _2D,
            make_inputs=_image_and_grid,
        ),
        OpInfo(
            "torch.grid_sampler_3d",
            lambda lib, x, grid: lib.grid_sampler_3d(x, grid, 1, 2, True),
            _3D,
            make_inputs=_image_and_grid,
        ),
    ]
)
