"""The layout of element-wise results over operands laid out differently.

PyTorch's TensorIterator lets the first operand that orders two dimensions decide the result's
memory order (``x.t() + y`` is laid out as ``x.t()``, ``y + x.t()`` as ``y``); NumPy falls back
to row-major when its operands disagree. The order decides ``stride()``, ``is_contiguous()`` and
whether ``.view()`` works, so it is compared with PyTorch here, with values and gradients.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

#: (shape, memory order of the first operand, of the second), outermost dimension first.
LAYOUTS = [
    ((2, 3, 4), (0, 1, 2), (2, 1, 0)),
    ((2, 3, 4), (2, 1, 0), (0, 1, 2)),
    ((2, 3, 4), (1, 0, 2), (0, 2, 1)),
    ((3, 4), (1, 0), (0, 1)),
    ((3, 4), (0, 1), (1, 0)),
]

OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda lib, a, b: a + b,
    "radd": lambda lib, a, b: b + a,
    "mul": lambda lib, a, b: a * b,
    "sub_alpha": lambda lib, a, b: a.sub(b, alpha=2),
    "div": lambda lib, a, b: lib.div(a, b + 30),
    "atan2": lambda lib, a, b: lib.atan2(b, a),
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "where": lambda lib, a, b: lib.where(a > 3, b, a),
    "lerp": lambda lib, a, b: a.lerp(b, 0.3),
    "clamp": lambda lib, a, b: a.clamp(min=b),
    "gt": lambda lib, a, b: a > b,
}


def _laid_out(lib: Any, values: np.ndarray, order: tuple[int, ...]) -> Any:
    """``values`` as a leaf whose dimensions lie in memory in ``order`` (outermost first)."""
    block = np.ascontiguousarray(values.transpose(order))
    leaf = lib.from_numpy(block).requires_grad_()
    return leaf, leaf.permute(*np.argsort(order).tolist())


def _cases() -> list[Any]:
    cases = []
    for shape, first, second in LAYOUTS:
        for broadcast in range(3):
            other = list(shape)
            if broadcast:
                other[broadcast - 1 if broadcast == 1 else -1] = 1
            for name in OPS:
                cases.append(pytest.param(shape, first, second, tuple(other), name,
                                          id=f"{name}-{shape}-{first}-{second}-{other}"))
    return cases


@pytest.mark.parametrize(("shape", "first", "second", "other_shape", "name"), _cases())
def test_elementwise_results_are_laid_out_as_pytorch(shape, first, second, other_shape,
                                                     name) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-5, 5, shape)
    y = rng.uniform(-5, 5, other_shape)
    results = []
    for lib in (chainrule, torch):
        (xl, xv), (yl, yv) = _laid_out(lib, x, first), _laid_out(lib, y, second)
        out = OPS[name](lib, xv, yv)
        if out.requires_grad:
            out.backward(lib.ones_like(out))
        results.append((out.stride(), out.is_contiguous(), out.detach().numpy(), xl.grad,
                        yl.grad))
    ours, theirs = results
    assert ours[:2] == theirs[:2], f"{name}: strides {ours[0]} != {theirs[0]}"
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    for mine, reference in zip(ours[3:], theirs[3:], strict=True):
        assert (mine is None) == (reference is None)
        if mine is not None:
            np.testing.assert_allclose(mine.numpy(), reference.numpy(), rtol=1e-12)
