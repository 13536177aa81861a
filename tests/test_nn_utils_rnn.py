"""nn.utils.rnn against PyTorch: pad_sequence (both sides, batch first or not),
pack_padded_sequence (PackPaddedSequenceBackward0, sorted or not), pad_packed_sequence
(total_length, the caller's order), pack_sequence, unpad_sequence, unpack_sequence, their
values, gradients, graphs, errors and reprs; clip_grads_with_norm_ is reachable from
nn.utils."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

ARRAYS = [np.random.default_rng(n).standard_normal((n, 2)) for n in (3, 1, 2)]


def _graph(t: Any) -> list[str]:
    names, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().split("::")[-1])
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first: bool, side: str) -> None:
    results = []
    for lib in (torch, chainrule):
        leaves = [lib.tensor(a, requires_grad=True) for a in ARRAYS]
        out = lib.nn.utils.rnn.pad_sequence(leaves, batch_first, -1.5, side)
        (out * out).sum().backward()
        results.append((out.detach().numpy(), [t.grad.numpy() for t in leaves], _graph(out)))
    (t_out, t_grads, t_graph), (c_out, c_grads, c_graph) = results
    np.testing.assert_array_equal(c_out, t_out)
    for c, t in zip(c_grads, t_grads, strict=True):
        np.testing.assert_array_equal(c, t)
    assert c_graph == t_graph


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_packed_match_torch(batch_first: bool, enforce_sorted: bool) -> None:
    lengths = [3, 2, 1] if enforce_sorted else [2, 3, 1]
    padded = np.random.default_rng(5).standard_normal((3, 3, 2))
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(padded, requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(leaf, lengths, batch_first, enforce_sorted)
        out, lens = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first, 0.5, 4)
        weights = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
        ((out * weights).sum() + (packed.data**2).sum()).backward()
        indices = [None if i is None else i.tolist() for i in packed[2:]]
        results.append(
            (
                packed.data.detach().numpy(),
                packed.batch_sizes.tolist(),
                indices,
                out.detach().numpy(),
                lens.tolist(),
                leaf.grad.numpy(),
                _graph(packed.data),
                _graph(out),
            )
        )
    t, c = results
    for a, b in zip(c, t, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, atol=1e-12)
        else:
            assert a == b


def test_pack_sequence_unpack_and_unpad_match_torch() -> None:
    results = []
    for lib in (torch, chainrule):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_sequence([lib.tensor(a) for a in ARRAYS], enforce_sorted=False)
        unpacked = rnn.unpack_sequence(packed)
        padded = rnn.pad_sequence([lib.tensor(a) for a in ARRAYS], batch_first=True)
        unpadded = rnn.unpad_sequence(padded, lib.tensor([3, 1, 2]), batch_first=True)
        results.append(
            (
                [u.numpy() for u in unpacked],
                [u.numpy() for u in unpadded],
                repr(packed).replace("torch", "chainrule"),
                type(packed).__name__,
                packed._fields,
            )
        )
    t, c = results
    for a, b in zip(c[0] + c[1], t[0] + t[1], strict=True):
        np.testing.assert_array_equal(a, b)
    assert c[2:] == t[2:]


def test_pack_padded_sequence_double_backward() -> None:
    x = chainrule.tensor(np.random.default_rng(0).standard_normal((3, 2, 2)), requires_grad=True)

    def f(v: Any) -> Any:
        packed = chainrule.nn.utils.rnn.pack_padded_sequence(v, [3, 2])
        return (packed.data**3).sum()

    assert chainrule.autograd.gradgradcheck(lambda v: f(v), (x,))


ERRORS = {
    "unsorted": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2, 1), [1, 3]),
    "zero_length": lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2, 1), [3, 0]),
    "total_length": lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2, 1), [3, 2]), total_length=2
    ),
    "padding_side": lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2)], padding_side="top"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


def test_clip_grads_with_norm_is_exported() -> None:
    assert chainrule.nn.utils.clip_grads_with_norm_ is not None
    for lib in (torch, chainrule):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.full((3,), 2.0)
        lib.nn.utils.clip_grads_with_norm_([p], 1.0, lib.tensor(4.0))
        np.testing.assert_allclose(p.grad.numpy(), 2.0 * 1.0 / (4.0 + 1e-6), rtol=1e-6)
