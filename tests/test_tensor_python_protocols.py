"""Python's protocols on tensors against PyTorch, where a probe found them apart:
``reversed(t)`` (PyTorch flips dim 0), ``x in t`` (PyTorch compares with every element;
a 0-d tensor was "not iterable", a 2-d one raised "ambiguous"), ``bool`` of an empty tensor,
``float``/``int`` of a complex tensor (its real part when the imaginary part is 0), and
``t.type()`` of bfloat16 and the unsigned types.
"""

from __future__ import annotations

import math

import pytest
import torch

import chainrule

VALUES = [[1.0, -2.5, float("inf"), 0.0], [float("nan"), 3.0, -0.0, 7.0]]


def _outcome(lib, fn):
    try:
        out = fn(lib)
    except (RuntimeError, TypeError, ValueError, OverflowError) as error:
        return type(error).__name__, str(error).splitlines()[0]
    if isinstance(out, lib.Tensor):
        return "tensor", str(out.dtype).split(".")[-1], tuple(out.shape), repr(out.tolist())
    return type(out).__name__, repr(out)


def _same(fn):
    assert _outcome(chainrule, fn) == _outcome(torch, fn)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.tensor(3.0),
        lambda L: L.tensor([1, 2, 3]),
        lambda L: L.tensor(VALUES),
        lambda L: L.tensor(VALUES).t(),
        lambda L: L.zeros(0, 2),
    ],
)
def test_reversed(make):
    _same(lambda L: reversed(make(L)))


@pytest.mark.parametrize(
    "element",
    [1, 3.0, float("nan"), float("inf"), -0.0, True, 7, 2 + 0j, "a", None, [1, 2], (3,)],
)
@pytest.mark.parametrize("make", [lambda L: L.tensor(3.0), lambda L: L.tensor(VALUES)])
def test_contains(make, element):
    _same(lambda L: element in make(L))


@pytest.mark.parametrize("element", [lambda L: L.tensor(3.0), lambda L: L.tensor([7.0, 9.0])])
def test_contains_a_tensor(element):
    _same(lambda L: element(L) in L.tensor(VALUES))
    _same(lambda L: element(L) in L.tensor([[1.0, 2.0], [3.0, 4.0]]))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (2,)])
def test_bool_of_tensors_not_of_one_element(shape):
    _same(lambda L: bool(L.zeros(shape)))


@pytest.mark.parametrize(
    "value",
    [
        1.5 + 2j,
        -2.5 + 0j,
        0j,
        3 - 0j,
        complex(math.nan, 0),
        complex(1, math.nan),
        complex(math.inf, 0),
        complex(1e30, 0),
    ],
)
@pytest.mark.parametrize("convert", [float, int, complex, math.floor, bool])
def test_scalar_conversions_of_complex_tensors(value, convert):
    _same(lambda L: convert(L.tensor(value)))


@pytest.mark.parametrize(
    "dtype", ["bfloat16", "uint16", "uint32", "uint64", "float16", "complex64", "bool"]
)
def test_legacy_type_names(dtype):
    ours = chainrule.ones(2, dtype=getattr(chainrule, dtype)).type()
    theirs = torch.ones(2, dtype=getattr(torch, dtype)).type()
    assert ours.split(".", 1)[1] == theirs.split(".", 1)[1]
    assert chainrule.ones(2).type(ours).dtype == getattr(chainrule, dtype)
