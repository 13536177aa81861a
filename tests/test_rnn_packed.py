"""PackedSequence through nn.RNN / LSTM / GRU against PyTorch: the packed output, the final
hidden (and cell) states and the gradients of the input, the initial states and every
parameter, for sorted and unsorted lengths (enforce_sorted), one and two layers, one and two
directions, with and without initial states; and a finite-difference gradcheck."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

CONFIGS = [
    (cls, bidirectional, layers, enforce_sorted)
    for cls in ("RNN", "LSTM", "GRU")
    for bidirectional in (False, True)
    for layers in (1, 2)
    for enforce_sorted in (True, False)
]


def _run(
    lib: Any, cls: str, bidirectional: bool, layers: int, enforce_sorted: bool, with_hx: bool
) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    module = getattr(lib.nn, cls)(
        3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=True
    )
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    x = lib.tensor(rng.standard_normal((3, 5, 3)), dtype=lib.float32, requires_grad=True)
    lengths = [5, 4, 3] if enforce_sorted else [4, 5, 2]
    packed = lib.nn.utils.rnn.pack_padded_sequence(
        x, lengths, batch_first=True, enforce_sorted=enforce_sorted
    )
    directions = 2 if bidirectional else 1
    starts: list[Any] = []
    hx = None
    if with_hx:
        shape = (layers * directions, 3, 4)
        starts = [
            lib.tensor(rng.standard_normal(shape), dtype=lib.float32, requires_grad=True)
            for _ in range(2 if cls == "LSTM" else 1)
        ]
        hx = tuple(starts) if cls == "LSTM" else starts[0]
    out, h = module(packed, hx)
    assert type(out).__name__ == "PackedSequence"
    padded, lengths_out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    states = h if isinstance(h, tuple) else (h,)
    weights = lib.arange(float(padded.numel())).reshape(padded.shape) / 50
    loss = (padded * weights).sum() + sum((s * s).sum() for s in states)
    loss.backward()
    found = [padded, lengths_out, out.batch_sizes, *states, x.grad, *(s.grad for s in starts)]
    found += [p.grad for p in module.parameters()]
    return [f.detach().numpy() for f in found]


@pytest.mark.parametrize("with_hx", [False, True], ids=["zero_state", "given_state"])
@pytest.mark.parametrize(("cls", "bidirectional", "layers", "enforce_sorted"), CONFIGS)
def test_packed_as_pytorch(
    cls: str, bidirectional: bool, layers: int, enforce_sorted: bool, with_hx: bool
) -> None:
    theirs = _run(torch, cls, bidirectional, layers, enforce_sorted, with_hx)
    ours = _run(chainrule, cls, bidirectional, layers, enforce_sorted, with_hx)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_packed_gradcheck(cls: str) -> None:
    chainrule.manual_seed(0)
    module = getattr(chainrule.nn, cls)(2, 3, bidirectional=True).double()
    x = chainrule.randn(4, 3, 2, dtype=chainrule.float64, requires_grad=True)

    def run(inputs: Any) -> Any:
        packed = chainrule.nn.utils.rnn.pack_padded_sequence(
            inputs, [2, 4, 3], enforce_sorted=False
        )
        out, h = module(packed)
        states = h if isinstance(h, tuple) else (h,)
        return (out.data, *states)

    assert chainrule.autograd.gradcheck(run, (x,))
