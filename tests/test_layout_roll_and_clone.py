"""Result layouts as PyTorch's: roll in the input's suggested memory format, and clone and the
``*_like`` functions keeping the strides of size-1 dimensions.

``roll`` with dims returned a row-major result where PyTorch keeps a channels-last (NHWC,
NDHWC) input's layout; ``clone()``, ``to()``, ``empty_like``/``zeros_like``/``full_like`` and
``flip`` of a non-overlapping and dense tensor whose size-1 dimensions have other strides than
row-major ones (``(3, 1, 4)`` with strides ``(4, 100, 1)``) gave row-major strides, where
PyTorch copies the strides exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

RNG = np.random.default_rng(5)


def _data(*shape: int) -> Any:
    return RNG.standard_normal(shape).astype(np.float32)


D4, D5, D4C1, D4HW1, D4W6, D245, D3 = (
    _data(2, 3, 4, 5),
    _data(2, 3, 4, 5, 6),
    _data(2, 1, 4, 5),
    _data(2, 3, 1, 1),
    _data(2, 3, 4, 6),
    _data(2, 5, 3, 4),
    _data(3, 4, 5),
)

LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "channels_last": lambda t: t.tensor(D4).contiguous(memory_format=t.channels_last),
    "channels_last_3d": lambda t: t.tensor(D5).contiguous(memory_format=t.channels_last_3d),
    "permuted as channels_last": lambda t: t.tensor(D4).permute(0, 3, 1, 2),
    "permuted otherwise": lambda t: t.tensor(D245).permute(0, 2, 3, 1),
    "one channel": lambda t: t.tensor(D4C1).contiguous(memory_format=t.channels_last),
    "1x1 image": lambda t: t.tensor(D4HW1).contiguous(memory_format=t.channels_last),
    "sliced channels_last": lambda t: t.tensor(D4W6).contiguous(memory_format=t.channels_last)[
        ..., ::2
    ],
    "transposed 3-d": lambda t: t.tensor(D3).transpose(0, 2),
    "expanded": lambda t: t.tensor(D4[:1, :, :1, :1]).expand(2, 3, 4, 5),
    "row-major": lambda t: t.tensor(D4),
}

ROLLS: dict[str, Callable[[Any], Any]] = {
    "dim 0": lambda x: x.roll(1, 0),
    "dim 1": lambda x: x.roll(-2, 1),
    "last dim": lambda x: x.roll(3, -1),
    "two dims": lambda x: x.roll((1, 2), (0, -1)),
    "flattened": lambda x: x.roll(5),
    "a whole turn": lambda x: x.roll(x.shape[1], 1),
    "a whole turn, then another dim": lambda x: x.roll((x.shape[1], 1), (1, 0)),
    "one dim, then a whole turn": lambda x: x.roll((1, x.shape[1]), (0, 1)),
}


@pytest.mark.parametrize("roll", list(ROLLS))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_roll_layout_as_pytorch(layout: str, roll: str) -> None:
    results = []
    for lib in (chainrule, torch):
        x = LAYOUTS[layout](lib).requires_grad_()
        out = ROLLS[roll](x)
        (
            out
            * lib.tensor(
                np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=lib.float32
            )
        ).sum().backward()
        results.append(
            (tuple(out.stride()), out.detach().numpy(), x.grad.numpy(), tuple(x.grad.stride()))
        )
    ours, theirs = results
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    assert ours[3] == theirs[3]


def _odd(t: Any) -> Any:
    """(3, 1, 4) with strides (4, 100, 1): dense, but its size-1 dimension strides 100."""
    base = t.tensor(_ODD)
    return base.as_strided((3, 1, 4), (4, 100, 1))


_ODD = _data(12)
M43, M35, M53, D1413 = _data(4, 3), _data(3, 5), _data(5, 3), _data(1, 4, 1, 3)


SIZE_ONE: dict[str, Callable[[Any], Any]] = {
    "odd": _odd,
    "unsqueezed transposed": lambda t: t.tensor(M43).t().unsqueeze(1),
    "unsqueezed last": lambda t: t.tensor(M43).unsqueeze(-1),
    "size-1 permuted": lambda t: t.tensor(D1413).permute(3, 2, 1, 0),
    "column of a matrix": lambda t: t.tensor(M35)[:, 2:3],
    "row of a transposed matrix": lambda t: t.tensor(M53).t()[1:2],
    "channels_last one pixel": lambda t: t.tensor(D4HW1).contiguous(memory_format=t.channels_last),
}

COPIES: dict[str, Callable[[Any, Any], Any]] = {
    "clone": lambda t, x: x.clone(),
    "clone preserve_format": lambda t, x: x.clone(memory_format=t.preserve_format),
    "clone contiguous_format": lambda t, x: x.clone(memory_format=t.contiguous_format),
    "contiguous": lambda t, x: x.contiguous(),
    "detach clone": lambda t, x: x.detach().clone(),
    "to double": lambda t, x: x.double(),
    "empty_like": lambda t, x: t.empty_like(x),
    "zeros_like": lambda t, x: t.zeros_like(x),
    "ones_like": lambda t, x: t.ones_like(x),
    "full_like": lambda t, x: t.full_like(x, 2.0),
    "flip": lambda t, x: x.flip(0),
}


@pytest.mark.parametrize("copy", list(COPIES))
@pytest.mark.parametrize("layout", list(SIZE_ONE))
def test_copies_keep_the_strides_of_size_one_dimensions(layout: str, copy: str) -> None:
    results = []
    for lib in (chainrule, torch):
        x = SIZE_ONE[layout](lib)
        out = COPIES[copy](lib, x)
        values = out.numpy() if copy != "empty_like" else None
        results.append((tuple(x.stride()), tuple(out.stride()), values))
    ours, theirs = results
    assert ours[:2] == theirs[:2]
    if ours[2] is not None:
        np.testing.assert_array_equal(ours[2], theirs[2])


def test_a_clone_with_kept_strides_is_an_independent_copy() -> None:
    x = _odd(chainrule)
    y = x.clone()
    y.add_(1)
    np.testing.assert_allclose(y.numpy(), x.numpy() + 1)
    z = y.view(3, 4)  # (a view of the dense copy works as PyTorch's)
    np.testing.assert_allclose(z.numpy(), (x.numpy() + 1).reshape(3, 4))
    assert (
        z.stride()
        == torch.tensor(_ODD).as_strided((3, 1, 4), (4, 100, 1)).clone().view(3, 4).stride()
    )


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (3, 0, 2)])
def test_roll_of_empty_tensors_keeps_their_strides(shape: tuple[int, ...]) -> None:
    strides = []
    for lib in (chainrule, torch):
        x = lib.zeros(shape).transpose(0, -1)
        strides.append([tuple(x.roll(1, 0).stride()), tuple(x.roll((1, 1), (0, -1)).stride())])
    assert strides[0] == strides[1]
