"""The conjugate bit on the tensors that share a ``conj()`` result's memory.

PyTorch's ``conj()`` is a lazy view; chainrule's is a copy flagged with the bit. The bit once
belonged to the one tensor object ``conj()`` returned, so its views and ``detach()`` lost it and
could be written: the write then silently did not reach the conjugated tensor, as PyTorch's
does. Now every tensor on that memory has the bit (as PyTorch's views of a conjugate view), and
writing into any of them is refused with chainrule's own message (the one difference left: a
later in-place change of the input does not show in the copy).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

DERIVED = {
    "itself": lambda c: c,
    "detach": lambda c: c.detach(),
    "view": lambda c: c.view(2, 2),
    "slice": lambda c: c[:1],
    "select": lambda c: c[1],
    "reshape": lambda c: c.reshape(4),
    "transpose": lambda c: c.t(),
    "clone": lambda c: c.clone(),
    "resolve_conj": lambda c: c.resolve_conj(),
    "conj_of_conj": lambda c: c.conj(),
    "real": lambda c: c.real,
    "mul": lambda c: c * 2,
}


def _conjugate(lib):
    z = lib.tensor([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]])
    return z, z.conj()


@pytest.mark.parametrize("name", sorted(DERIVED))
def test_conjugate_bit_as_pytorch(name: str) -> None:
    bits, refusals = [], []
    for lib in (torch, chainrule):
        _, c = _conjugate(lib)
        t = DERIVED[name](c)
        bits.append(t.is_conj())
        try:
            t.numpy()
            refusals.append(None)
        except RuntimeError as e:
            refusals.append(str(e))
    assert bits[1] == bits[0]
    assert refusals[1] == refusals[0]


@pytest.mark.parametrize("name", ["itself", "detach", "view", "slice", "select", "transpose"])
@pytest.mark.parametrize("write", ["setitem", "mul_", "copy_", "zero_"])
def test_writes_into_a_conjugate_are_refused_not_lost(name: str, write: str) -> None:
    z, c = _conjugate(chainrule)
    t = DERIVED[name](c)
    before_z, before_c = z.numpy().copy(), c.resolve_conj().numpy().copy()
    with pytest.raises(RuntimeError, match="conj\\(\\) of a complex tensor is a copy"):
        {
            "setitem": lambda: t.__setitem__(0, 5 + 1j),
            "mul_": lambda: t.mul_(2),
            "copy_": lambda: t.copy_(chainrule.ones_like(t)),
            "zero_": lambda: t.zero_(),
        }[write]()
    np.testing.assert_array_equal(z.numpy(), before_z)
    np.testing.assert_array_equal(c.resolve_conj().numpy(), before_c)


def test_a_copy_of_a_conjugate_is_writable_as_in_pytorch() -> None:
    results = []
    for lib in (torch, chainrule):
        z, c = _conjugate(lib)
        r = c.resolve_conj()
        r[0, 0] = 7.0
        results.append((z.numpy().copy(), r.numpy().copy()))
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_array_equal(got, want)
