"""The error for operands that do not broadcast names the shape broadcast so far and the
operand that does not fit it, the last dimension first, as PyTorch's TensorIterator does
(chainrule once named the first two operands' sizes: "tensor a (4) ... tensor b (4)"). Every
triple of these shapes through seven ops of three operands, against PyTorch.
"""

from __future__ import annotations

import itertools

import pytest

import chainrule

from .conftest import torch

SHAPES = [(2, 4), (3,), (4,), (2, 1), (1, 4), (3, 2, 4), (5, 1, 1), (2, 3), ()]
OPS = {
    "addcmul": lambda lib, a, b, c: lib.addcmul(a, b, c),
    "addcmul_": lambda lib, a, b, c: a.clone().addcmul_(b, c),
    "addcdiv": lambda lib, a, b, c: lib.addcdiv(a, b, c),
    "where": lambda lib, a, b, c: lib.where(a > 0, b, c),
    "lerp": lambda lib, a, b, c: lib.lerp(a, b, c),
    "clamp": lambda lib, a, b, c: lib.clamp(a, b, c),
    "add": lambda lib, a, b, c: a + b,
}


def _message(lib, name: str, shapes) -> str | None:
    a, b, c = (lib.ones(s, dtype=lib.float64) for s in shapes)
    try:
        OPS[name](lib, a, b, c)
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("name", sorted(OPS))
def test_broadcast_errors_as_pytorch(name: str) -> None:
    for shapes in itertools.product(SHAPES, repeat=3):
        assert _message(chainrule, name, shapes) == _message(torch, name, shapes), shapes


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "float32",
                                   "float16"])
def test_masked_fill_names_a_mask_dtype_as_pytorch(dtype: str) -> None:
    messages = []
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError) as info:
            lib.zeros(2, 4).masked_fill_(lib.tensor([1, 0], dtype=getattr(lib, dtype)), 1.0)
        messages.append(str(info.value))
    assert messages[1] == messages[0]
