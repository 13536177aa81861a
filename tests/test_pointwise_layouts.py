"""Output layouts of element-wise and softmax-like ops on inputs of every memory layout.

PyTorch's element-wise results follow TensorIterator's rule (the input's layout when it is dense,
otherwise its dimensions ordered by stride, an expanded dimension kept in place), while some of
its kernels allocate a contiguous result whatever the input (softmax, log_softmax, log_sigmoid,
pow with a number base). The strides decide whether ``.view()`` of a result works, so they are
compared with PyTorch's here on more layouts than the op sweep builds: three-dimensional
permutations and expansions of the first or a middle dimension.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _layouts(lib: Any, rng: np.random.Generator) -> dict[str, Any]:
    def leaf(shape: tuple[int, ...]) -> Any:
        return lib.from_numpy(rng.uniform(0.3, 2.0, shape))

    return {
        "transposed": leaf((4, 3)).t(),
        "expanded": leaf((1, 4)).expand(3, 4),
        "strided": leaf((3, 8))[:, ::2],
        "permuted3": leaf((4, 2, 3)).permute(2, 0, 1),
        "expanded3": leaf((1, 2, 3)).expand(4, 2, 3),
        "expanded_middle": leaf((3, 1, 4)).expand(3, 2, 4),
        "contiguous": leaf((2, 3, 4)),
    }


OPS: dict[str, Callable[[Any, Any], Any]] = {
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, 0),
    "softmax_last": lambda lib, x: x.softmax(-1),
    "log_softmax": lambda lib, x: lib.log_softmax(x, -1),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x, 1),
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "softmax_half": lambda lib, x: lib.softmax(x.half(), -1),
    "rpow": lambda lib, x: 2 ** x,
    "pow_number_base": lambda lib, x: lib.pow(2.5, x),
    "rfloat_power": lambda lib, x: lib.float_power(1.7, x),
    "polygamma_1": lambda lib, x: lib.polygamma(1, x),
    "polygamma_2": lambda lib, x: lib.polygamma(2, x),
    "digamma": lambda lib, x: lib.digamma(x),
    "nan_to_num": lambda lib, x: lib.nan_to_num(x.log() * 1e308 * 1e308),
    "round_decimals": lambda lib, x: lib.round(x, decimals=2),
    "exp": lambda lib, x: x.exp(),
    "sgn": lambda lib, x: x.sgn(),
    "clamp": lambda lib, x: x.clamp(0.5, 1.5),
    "heaviside": lambda lib, x: lib.heaviside(x - 1, lib.tensor(0.5, dtype=x.dtype)),
    "div_floor": lambda lib, x: lib.div(x, 0.3, rounding_mode="floor"),
}


def _dense_strides(t: Any) -> tuple[tuple[int, int], ...]:
    """Sizes and strides of the dimensions longer than 1 (where elements lie in memory)."""
    return tuple((n, s) for n, s in zip(t.shape, t.stride(), strict=True) if n > 1)


@pytest.mark.parametrize("layout", list(_layouts(torch, np.random.default_rng(0))))
@pytest.mark.parametrize("name", list(OPS))
def test_output_layout_matches_torch(name: str, layout: str) -> None:
    ours_x = _layouts(chainrule, np.random.default_rng(5))[layout]
    theirs_x = _layouts(torch, np.random.default_rng(5))[layout]
    ours, theirs = OPS[name](chainrule, ours_x), OPS[name](torch, theirs_x)
    assert _dense_strides(ours) == _dense_strides(theirs), (ours.stride(), theirs.stride())
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-12)
