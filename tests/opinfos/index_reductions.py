"""scatter_reduce (every reduction, with and without ``self``) and index_reduce, out of place
and in place. Squared results make the second order go through each formula."""

from __future__ import annotations

from typing import Any

from . import OpInfo

_SCATTER_INDEX = [[0, 1, 0, 3], [2, 2, 1, 0], [3, 3, 3, 3]]


def _scatter(reduce: str, include_self: bool) -> Any:
    def fn(lib: Any, x: Any, s: Any) -> Any:
        out = x.scatter_reduce(1, lib.tensor(_SCATTER_INDEX), s, reduce, include_self=include_self)
        return out * out

    return fn


def _index(reduce: str, include_self: bool) -> Any:
    def fn(lib: Any, x: Any, s: Any) -> Any:
        out = lib.index_reduce(x, 0, lib.tensor([2, 0, 2]), s, reduce, include_self=include_self)
        return out * out

    return fn


OPS = (
    [
        OpInfo(
            f"scatter_reduce_{reduce}{'' if include_self else '_excluding_self'}",
            _scatter(reduce, include_self),
            [((3, 4), (3, 4))],
        )
        for reduce in ("sum", "prod", "mean", "amax", "amin")
        for include_self in (True, False)
    ]
    + [
        OpInfo(
            f"index_reduce_{reduce}{'' if include_self else '_excluding_self'}",
            _index(reduce, include_self),
            [((3, 4), (3, 4))],
        )
        for reduce in ("prod", "mean", "amax", "amin")
        for include_self in (True, False)
    ]
    + [
        OpInfo(
            "torch.scatter_reduce",
            lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor([[1, 0], [1, 1]]), s, "sum"),
            [((2, 3), (2, 2))],
        ),
        OpInfo(
            "Tensor.scatter_reduce_",
            lambda lib, x, s: x.clone().scatter_reduce_(-1, lib.tensor([[1, 0, 1]]), s, "mean"),
            [((2, 3), (1, 3))],
        ),
        OpInfo(
            "Tensor.index_reduce",
            lambda lib, x, s: x.index_reduce(-1, lib.tensor([1, 1]), s, "amax", include_self=False),
            [((2, 3), (2, 2))],
        ),
        OpInfo(
            "Tensor.index_reduce_",
            lambda lib, x, s: x.clone().index_reduce_(1, lib.tensor([0, 2]), s, "prod"),
            [((2, 3), (2, 2))],
        ),
    ]
)
