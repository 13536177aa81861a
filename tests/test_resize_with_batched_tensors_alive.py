"""``resize_`` growing a storage finds the tensors on it among the live objects: a tensor that
vmap batched (kept alive past the vmap call) holds no NumPy array and is on no storage; it once
made the scan raise vmap's 'read the values of a batched tensor' error (PyTorch's own
test_resize_version_bump failed so after a vmap test)."""

from __future__ import annotations

import torch

import chainrule
from chainrule.func import vmap


def _run(lib, make_vmap):
    kept = []

    def f(t):
        kept.append(t)  # (a batched tensor that outlives the call)
        return t * 2

    make_vmap(f)(lib.ones(3, 2))
    x = lib.rand((1,))
    y = lib.randn((3,))
    versions = []
    x.resize_((1, 2))
    versions.append(x._version)
    x.resize_as_(y)
    versions.append(x._version)
    x.resize_((3,))
    versions.append(x._version)
    x.resize_as_(y)
    versions.append(x._version)
    v = x.view(3)
    x.resize_((5,))  # (grows the storage again: the view stays on the old one, as PyTorch)
    return versions, tuple(x.shape), len(kept), tuple(v.shape)


def test_resize_after_vmap_as_pytorch() -> None:
    assert _run(chainrule, vmap) == _run(torch, torch.func.vmap)


def test_grown_storage_keeps_values() -> None:
    x = chainrule.tensor([1.0, 2.0])
    x.resize_((4,))
    assert x[:2].tolist() == [1.0, 2.0]
