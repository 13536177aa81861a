"""The top-level in-place functions (``torch.exp_(x)``, ``torch.clamp_(x, ...)``): each writes
into a clone of the sample (an in-place op on a leaf that requires grad is an error), so the
sweep compares the node PyTorch records in place, values and gradients through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import OpInfo
from .variants import NOT_DIFFERENTIABLE_INPLACE, UNARY, UNARY_SHAPES, _away_from_zero, _positive

# Unary in-place functions PyTorch has at the top level (relu_ included; absolute_, erfinv_,
# sgn_, sign_, digamma_, lgamma_ are Tensor methods only).
_TOP_LEVEL_UNARY = [
    name for name in UNARY if name not in ("absolute", "erfinv", "sgn", "sign", "digamma", "lgamma")
]


def _unary(name: str) -> Callable[..., Any]:
    return lambda lib, x: getattr(lib, name + "_")(x.clone())


OPS = [
    OpInfo(
        f"torch.{name}_",
        _unary(name),
        UNARY_SHAPES,
        **(dict(UNARY[name], grad=False) if name in NOT_DIFFERENTIABLE_INPLACE else UNARY[name]),
    )
    for name in _TOP_LEVEL_UNARY
]

OPS += [
    OpInfo(
        "torch.clamp_",
        lambda lib, x: lib.clamp_(x.clone(), min=-0.5, max=0.7),
        UNARY_SHAPES,
        make_inputs=_away_from_zero,
    ),
    OpInfo(
        "torch.clip_",
        lambda lib, x: lib.clip_(x.clone(), -0.5, 0.7),
        UNARY_SHAPES,
        make_inputs=_away_from_zero,
    ),
    OpInfo(
        "torch.clamp_min_",
        lambda lib, x: lib.clamp_min_(x.clone(), 0.1),
        UNARY_SHAPES,
        make_inputs=_away_from_zero,
    ),
    OpInfo(
        "torch.clamp_max_",
        lambda lib, x: lib.clamp_max_(x.clone(), 0.1),
        UNARY_SHAPES,
        make_inputs=_away_from_zero,
    ),
    OpInfo("torch.logit_", lambda lib, x: lib.logit_(x.clone()), UNARY_SHAPES, low=0.1, high=0.9),
    OpInfo("torch.i0_", lambda lib, x: lib.i0_(x.clone()), UNARY_SHAPES),
    OpInfo(
        "torch.sinc_",
        lambda lib, x: lib.sinc_(x.clone()),
        UNARY_SHAPES,
        make_inputs=_away_from_zero,
    ),
    OpInfo(
        "torch.xlogy_",
        lambda lib, x, y: lib.xlogy_(x.clone(), y),
        [((3, 4), (3, 4))],
        make_inputs=_positive,
    ),
    OpInfo("torch.fill_", lambda lib, x: lib.fill_(x.clone(), 1.5) * x, UNARY_SHAPES),
    OpInfo("torch.zero_", lambda lib, x: lib.zero_(x.clone()) + x, UNARY_SHAPES),
    OpInfo(
        "torch.index_put_",
        lambda lib, x, v: lib.index_put_(x.clone(), (lib.tensor([2, 0]),), v),
        [((3, 4), (4,))],
    ),
    OpInfo(
        "torch.index_put__accumulate",
        lambda lib, x, v: lib.index_put_(x.clone(), (lib.tensor([2, 2]),), v, accumulate=True),
        [((3, 4), (4,))],
    ),
    OpInfo(
        "torch.as_strided_", lambda lib, x: lib.as_strided_(x.clone(), (2, 2), (1, 2)), [((3, 4),)]
    ),
    # (a finite difference sees the detached path too: no gradcheck)
    OpInfo("torch.detach_", lambda lib, x: lib.detach_(x * 1) + x, UNARY_SHAPES, gradcheck=False),
    OpInfo(
        "torch.resize_as_",
        lambda lib, x, y: lib.resize_as_(x.detach().clone(), y),
        [((3, 4), (2, 6))],
        grad=False,
    ),
]
