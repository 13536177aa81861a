"""Random indexing compared with PyTorch: reads and writes through combinations of integers,
negative integers, slices with steps, lists, index tensors (1-d and 2-d), bool masks, None and
Ellipsis, on 1-, 2- and 3-d tensors; values and the gradient reaching the indexed tensor, or the
same exception type and message. (Also ``index_put(accumulate=True)`` with repeated indices.)
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule

from .conftest import torch


def _program(seed: int):
    r = random.Random(seed)
    shape = r.choice([(4,), (3, 4), (2, 3, 4)])

    def item(d: int):
        n = shape[d] if d < len(shape) else 1
        kind = r.choice(["int", "negint", "slice", "step", "list", "tensor", "bool", "none",
                         "ellipsis", "tensor2d", "full"])
        if kind == "int":
            return ("int", r.randrange(n))
        if kind == "negint":
            return ("int", -r.randint(1, n))
        if kind == "slice":
            start = r.randrange(n)
            return ("slice", start, r.randint(start, n + 2), None)
        if kind == "step":
            return ("slice", r.choice([None, 1]), None, r.choice([2, 3]))
        if kind in ("list", "tensor"):
            return (kind, [r.randrange(-n, n) for _ in range(r.randint(1, 4))])
        if kind == "tensor2d":
            return ("tensor", [[r.randrange(n) for _ in range(2)] for _ in range(2)])
        if kind == "bool":
            return ("bool", [r.random() < 0.5 for _ in range(n)])
        return (kind,)

    items = [item(d) for d in range(r.randint(1, len(shape)))]
    if sum(it[0] == "ellipsis" for it in items) > 1:
        items = [it for it in items if it[0] != "ellipsis"] + [("ellipsis",)]
    mode = r.choice(["get", "set", "set_tensor", "index_put_accumulate"])
    return shape, items, mode, np.random.RandomState(seed).randn(*shape)


def _index(lib, items):
    made = []
    for it in items:
        kind = it[0]
        if kind == "int":
            made.append(it[1])
        elif kind == "slice":
            made.append(slice(it[1], it[2], it[3]))
        elif kind == "list":
            made.append(list(it[1]))
        elif kind in ("tensor", "bool"):
            made.append(lib.tensor(it[1]))
        elif kind == "none":
            made.append(None)
        elif kind == "ellipsis":
            made.append(Ellipsis)
        else:
            made.append(slice(None))
    return tuple(made)


def _run(lib, seed: int):
    shape, items, mode, values = _program(seed)
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    index = _index(lib, items)
    base = x * 1.0
    if mode == "get":
        y = base[index]
    elif mode == "set":
        base[index] = 2.5
        y = base
    elif mode == "set_tensor":
        region = base.detach()[index]
        source = lib.tensor(np.arange(region.numel(), dtype=np.float64).reshape(
            tuple(region.shape)) + 0.5, requires_grad=True)
        base[index] = source * 2
        y = base
    else:
        rng = np.random.RandomState(seed)
        indices = tuple(lib.tensor(rng.randint(0, n, 5)) for n in shape)
        y = base.index_put(indices, lib.tensor(np.arange(5.0), requires_grad=True),
                           accumulate=True)
    weights = lib.tensor(np.random.RandomState(seed + 1).randn(*y.shape))
    (y * weights).sum().backward()
    return y.detach().numpy(), x.grad.numpy()


def _outcome(lib, seed: int):
    try:
        return ("ok", _run(lib, seed))
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return ("error", type(e).__name__, str(e).replace("chainrule", "torch"))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1))
def test_random_indexing(seed: int) -> None:
    expected, got = _outcome(torch, seed), _outcome(chainrule, seed)
    assert got[0] == expected[0], (got, expected)
    if expected[0] == "error":
        assert got[1:] == expected[1:]
        return
    (y_t, g_t), (y_c, g_c) = expected[1], got[1]
    assert y_c.shape == y_t.shape
    np.testing.assert_allclose(y_c, y_t, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_c, g_t, rtol=1e-12, atol=1e-12)
