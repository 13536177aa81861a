"""gcd and lcm (integers from the float samples; no gradients), methods and in-place forms."""

from __future__ import annotations

from typing import Any

from . import OpInfo

SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3))]


def _ints(x: Any) -> Any:
    return (x * 7).long()


def _finite(rng: Any, shapes: Any, dtype: str) -> list[Any]:
    """Finite samples (the special-values sweep would turn inf and NaN into integers whose
    division traps in PyTorch's kernel)."""
    return [rng.uniform(-2, 2, s).astype(dtype) for s in shapes]


OPS = [
    OpInfo(
        "gcd",
        lambda lib, a, b: lib.gcd(_ints(a), _ints(b)),
        SHAPES,
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "lcm",
        lambda lib, a, b: lib.lcm(_ints(a), _ints(b)),
        SHAPES,
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "Tensor.gcd",
        lambda lib, a, b: _ints(a).gcd(_ints(b)),
        SHAPES[:1],
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "Tensor.lcm",
        lambda lib, a, b: _ints(a).lcm(_ints(b)),
        SHAPES[:1],
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "Tensor.gcd_",
        lambda lib, a, b: _ints(a).gcd_(_ints(b)),
        SHAPES[:1],
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "Tensor.lcm_",
        lambda lib, a, b: _ints(a).lcm_(_ints(b)),
        SHAPES[:1],
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "torch.gcd_",
        lambda lib, a, b: lib.gcd_(_ints(a), _ints(b)),
        SHAPES[:1],
        grad=False,
        make_inputs=_finite,
    ),
    OpInfo(
        "torch.lcm_",
        lambda lib, a, b: lib.lcm_(_ints(a), _ints(b)),
        SHAPES[:1],
        grad=False,
        make_inputs=_finite,
    ),
]
