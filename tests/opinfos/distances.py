"""cdist: every p on the direct kernel (``CdistBackward0``, whose gradient PyTorch does not
differentiate again: no second order there), batch broadcasting, empty inputs, and the
matrix-product Euclidean path (``EuclideanDistBackward0``, differentiable twice)."""

from __future__ import annotations

import math
from typing import Any

from . import OpInfo


def _cdist(p: float, mode: str = "use_mm_for_euclid_dist_if_necessary") -> Any:
    def call(lib: Any, a: Any, b: Any) -> Any:
        return lib.cdist(a, b, p, compute_mode=mode)

    return call


SHAPES = [((4, 3), (5, 3)), ((2, 4, 3), (5, 3)), ((2, 1, 2, 3), (3, 4, 3)), ((0, 3), (2, 3)),
          ((2, 0), (3, 0))]

OPS = [
    *(OpInfo(f"cdist_p{p}", _cdist(p), SHAPES, second_order=False)
      for p in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf)),
    OpInfo("cdist_no_mm", _cdist(2.0, "donot_use_mm_for_euclid_dist"), [((30, 3), (4, 3))],
           second_order=False),
    OpInfo("cdist_mm", _cdist(2.0, "use_mm_for_euclid_dist"), SHAPES[:3], atol=1e-4),
    OpInfo("cdist_mm_large", _cdist(2.0), [((26, 3), (4, 3)), ((2, 3, 2), (27, 2))], atol=1e-4),
]
