"""``zeros_like``/``ones_like``/``empty_like``/``full_like``/``rand_like``/``randn_like`` lay
their result out as PyTorch's default ``preserve_format`` does: as the input (a transposed,
permuted or channels-last input gives a transposed, permuted or channels-last result; a
non-dense one keeps its dimensions' order), or in the ``memory_format`` asked for, with
PyTorch's error for a channels-last format of another rank. They were always row-major, so
``zeros_like(x.t()).view(-1)`` worked where PyTorch refuses it.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

INPUTS = {
    "contiguous": lambda lib: lib.arange(24.0).reshape(2, 3, 4),
    "transposed": lambda lib: lib.arange(24.0).reshape(2, 3, 4).transpose(0, 2),
    "permuted": lambda lib: lib.arange(24.0).reshape(2, 3, 4).permute(1, 2, 0),
    "sliced": lambda lib: lib.arange(24.0).reshape(2, 3, 4)[:, ::2],
    "expanded": lambda lib: lib.arange(4.0).expand(2, 3, 4),
    "channels_last": lambda lib: lib.arange(48.0).reshape(2, 3, 2, 4).contiguous(
        memory_format=lib.channels_last),
    "permuted_sliced": lambda lib: lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2],
    "int_transposed": lambda lib: lib.arange(6).reshape(2, 3).t(),
    "half_transposed": lambda lib: lib.ones(2, 3, dtype=lib.float16).t(),
}
FACTORIES = {
    "zeros_like": lambda lib, x, kw: lib.zeros_like(x, **kw),
    "ones_like": lambda lib, x, kw: lib.ones_like(x, **kw),
    "empty_like": lambda lib, x, kw: lib.empty_like(x, **kw),
    "full_like": lambda lib, x, kw: lib.full_like(x, 7, **kw),
    "rand_like": lambda lib, x, kw: lib.rand_like(x.float(), **kw),
    "randn_like": lambda lib, x, kw: lib.randn_like(x.float(), **kw),
}


def _outcome(lib, name: str, factory: str, memory_format: str | None):
    x = INPUTS[name](lib)
    kw = {} if memory_format is None else {"memory_format": getattr(lib, memory_format)}
    try:
        y = FACTORIES[factory](lib, x, kw)
    except RuntimeError as e:
        return str(e)
    values = None if factory in ("empty_like", "rand_like", "randn_like") else y.numpy().copy()
    return tuple(y.shape), y.stride(), str(y.dtype).split(".")[-1], y.is_contiguous(), values


@pytest.mark.parametrize("memory_format", [None, "preserve_format", "contiguous_format",
                                           "channels_last"])
@pytest.mark.parametrize("factory", sorted(FACTORIES))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_like_factories_lay_out_as_pytorch(name, factory, memory_format) -> None:
    expected = _outcome(torch, name, factory, memory_format)
    got = _outcome(chainrule, name, factory, memory_format)
    if isinstance(expected, str):
        assert got == expected
        return
    assert got[:4] == expected[:4]
    if expected[4] is not None:
        np.testing.assert_array_equal(got[4], expected[4])


def test_a_view_of_a_transposed_like_is_refused_as_in_pytorch() -> None:
    messages = []
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError) as info:
            lib.zeros_like(lib.zeros(3, 4).t()).view(-1)
        messages.append(str(info.value))
    assert messages[1] == messages[0]
