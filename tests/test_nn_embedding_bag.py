"""embedding_bag and nn.EmbeddingBag against PyTorch: sum/mean/max, offsets with empty bags,
include_last_offset, 2-D input, padding_idx (also negative), per_sample_weights, max_norm,
float32/float64, the node and its inputs, a gradient without graph (as PyTorch's, except the
weight gradient with per-sample weights, which PyTorch differentiates again), module reprs and
from_pretrained, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

W = np.random.default_rng(0).standard_normal((6, 3))
I1 = [1, 2, 4, 5, 4, 3, 2, 0]
O1 = [0, 3, 3, 6]
CASES = [
    ("1-d", I1, O1, {}, False),
    ("2-d", [[1, 2, 2], [0, 5, 1]], None, {}, False),
    ("last offset", I1, [0, 3, 3, 8], {"include_last_offset": True}, False),
    ("padding", I1, O1, {"padding_idx": 2}, False),
    ("negative padding", [[1, 5, 2], [5, 5, 5]], None, {"padding_idx": -1}, False),
    ("per-sample weights", I1, O1, {}, True),
    ("per-sample weights padding", I1, O1, {"padding_idx": 4}, True),
    ("empty input", [], [0, 0], {}, False),
]


def _run(lib: Any, inp: Any, off: Any, kw: dict, psw: bool, mode: str, dtype: str) -> tuple:
    dt = getattr(lib, dtype)
    w = lib.tensor(W, dtype=dt, requires_grad=True)
    p = None
    if psw:
        p = lib.tensor(np.linspace(0.5, 1.5, len(inp)), dtype=dt, requires_grad=True)
    y = lib.nn.functional.embedding_bag(
        lib.tensor(inp, dtype=lib.long),
        w,
        None if off is None else lib.tensor(off),
        mode=mode,
        per_sample_weights=p,
        **kw,
    )
    seed = lib.tensor(np.arange(float(y.numel())).reshape(tuple(y.shape)), dtype=dt)
    grads = lib.autograd.grad(y, [w] if p is None else [w, p], seed, create_graph=True)
    return (
        y.detach().numpy(),
        [g.detach().numpy() for g in grads],
        [g.grad_fn is None and not g.requires_grad for g in grads],
        y.grad_fn.name(),
        [fn is None for fn, _ in y.grad_fn.next_functions],
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_and_gradients_match_torch(case: int, mode: str, dtype: str) -> None:
    _, inp, off, kw, psw = CASES[case]
    if psw and mode != "sum":  # PyTorch refuses per-sample weights there: the same error
        errors = []
        for lib in (torch, chainrule):
            with pytest.raises(Exception) as info:
                _run(lib, inp, off, kw, psw, mode, dtype)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]
        return
    t = _run(torch, inp, off, kw, psw, mode, dtype)
    c = _run(chainrule, inp, off, kw, psw, mode, dtype)
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(c[0], t[0], rtol=tol, atol=tol)
    for a, b in zip(c[1], t[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    if not psw:  # (PyTorch's weight gradient with per-sample weights has a graph; ours not)
        assert c[2] == t[2]
    assert c[3].split("::")[-1] == t[3].split("::")[-1]
    assert c[4] == t[4]


def test_max_norm_renormalises_the_used_rows_as_torch() -> None:
    out = []
    for lib in (torch, chainrule):
        w = lib.tensor(W * 3)
        y = lib.nn.functional.embedding_bag(
            lib.tensor([0, 2, 2]), w, lib.tensor([0, 1]), max_norm=1.0, norm_type=2.0, mode="sum"
        )
        out.append((y.numpy(), w.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6)


def test_module_matches_torch() -> None:
    out = []
    for lib in (torch, chainrule):
        reprs = [
            repr(lib.nn.EmbeddingBag(10, 3)),
            repr(
                lib.nn.EmbeddingBag(
                    10,
                    3,
                    max_norm=1.0,
                    norm_type=3.0,
                    scale_grad_by_freq=True,
                    mode="sum",
                    include_last_offset=True,
                    padding_idx=-2,
                )
            ),
        ]
        bag = lib.nn.EmbeddingBag.from_pretrained(
            lib.tensor(W), freeze=False, mode="max", padding_idx=1
        )
        y = bag(lib.tensor([[0, 1, 3], [4, 5, 1]]))
        y.sum().backward()
        padded = lib.nn.EmbeddingBag(4, 2, padding_idx=2).weight[2].tolist()
        out.append(
            (
                reprs,
                repr(bag),
                y.detach().numpy(),
                bag.weight.grad.numpy(),
                padded,
                lib.nn.EmbeddingBag.from_pretrained(lib.tensor(W)).weight.requires_grad,
            )
        )
    t, c = out
    assert c[0] == t[0] and c[1] == t[1] and c[4:] == t[4:]
    np.testing.assert_allclose(c[2], t[2], rtol=1e-12)
    np.testing.assert_allclose(c[3], t[3], rtol=1e-12)


E = "nn.functional.embedding_bag"
ERRORS: dict[str, Callable[[Any], Any]] = {
    "2-d with offsets": lambda t: t.nn.functional.embedding_bag(
        t.tensor([[0, 1]]), t.ones(3, 2), t.tensor([0])
    ),
    "1-d without offsets": lambda t: t.nn.functional.embedding_bag(t.tensor([0, 1]), t.ones(3, 2)),
    "2-d offsets": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), t.ones(3, 2), t.tensor([[0]])
    ),
    "3-d input": lambda t: t.nn.functional.embedding_bag(
        t.zeros(1, 1, 1, dtype=t.long), t.ones(3, 2)
    ),
    "1-d weight": lambda t: t.nn.functional.embedding_bag(t.tensor([0]), t.ones(3), t.tensor([0])),
    "bad mode": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0]), t.ones(3, 2), t.tensor([0]), mode="min"
    ),
    "max with scale": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0]), t.ones(3, 2), t.tensor([0]), mode="max", scale_grad_by_freq=True
    ),
    "max sparse": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0]), t.ones(3, 2), t.tensor([0]), mode="max", sparse=True
    ),
    "weights with mean": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0]), t.ones(3, 2), t.tensor([0]), per_sample_weights=t.ones(1)
    ),
    "weights shape": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), t.ones(3, 2), t.tensor([0]), mode="sum", per_sample_weights=t.ones(3)
    ),
    "float indices": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0.0]), t.ones(3, 2), t.tensor([0])
    ),
    "offsets[0]": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), t.ones(3, 2), t.tensor([1, 1])
    ),
    "offsets[-1]": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0, 1]), t.ones(3, 2), t.tensor([0, 3])
    ),
    "padding range": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0]), t.ones(3, 2), t.tensor([0]), padding_idx=3
    ),
    "index range": lambda t: t.nn.functional.embedding_bag(
        t.tensor([0, 3]), t.ones(3, 2), t.tensor([0])
    ),
    "module padding range": lambda t: t.nn.EmbeddingBag(3, 2, padding_idx=-4),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


def test_scale_grad_by_freq_is_refused() -> None:
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq=True"):
        chainrule.nn.functional.embedding_bag(
            chainrule.tensor([0, 1]),
            chainrule.ones(3, 2),
            chainrule.tensor([0]),
            scale_grad_by_freq=True,
        )
