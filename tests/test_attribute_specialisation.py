"""The interpreter's fast attribute access on the engine's hot classes.

CPython specialises ``t._data = ...`` into a direct slot store only when the class keeps
``object.__setattr__``; a class that defines ``__setattr__`` or ``__delattr__`` (one C slot
serves both) sends every attribute store of every instance through a Python-level lookup. One
``__delattr__`` on ``Tensor`` (for PyTorch's refusal of ``del x.data``) once made every op
about 50% more instructions. These tests fail if that comes back: refusals belong in property
deleters.
"""

from __future__ import annotations

import dis
import gc

import numpy as np
import pytest
import torch

import chainrule
from chainrule import _tensor
from chainrule.autograd.node import Node

_OVERRIDES = ("__setattr__", "__delattr__", "__getattr__", "__getattribute__")


def _chainrule_subclasses(root: type) -> list[type]:
    gc.collect()
    found, todo = [], [root]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in found if str(getattr(c, "__module__", "")).startswith("chainrule")]


@pytest.mark.parametrize("root", [chainrule.Tensor, Node], ids=["Tensor", "Node"])
def test_hot_classes_keep_generic_attribute_access(root: type) -> None:
    offenders = [
        f"{cls.__module__}.{cls.__qualname__}.{name}"
        for cls in _chainrule_subclasses(root)
        for name in _OVERRIDES
        if name in cls.__dict__
    ]
    assert offenders == []


@pytest.mark.skipif(
    "STORE_ATTR_SLOT" not in getattr(dis, "_specialized_instructions", ()),
    reason="this interpreter has no STORE_ATTR_SLOT specialisation to observe",
)
def test_tensor_field_stores_specialise() -> None:
    data = np.zeros(1)
    t = _tensor.wrap(data)
    for _ in range(64):  # past the interpreter's warm-up
        _tensor._init(t, data, False)
    stores = [
        i.opname for i in dis.get_instructions(_tensor._init, adaptive=True)
        if i.opname.startswith("STORE_ATTR")
    ]
    assert stores and set(stores) == {"STORE_ATTR_SLOT"}


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("data", "Deleting tensor data is not allowed. Delete tensor instead!"),
        ("requires_grad", "requires_grad must be a bool"),
        ("_grad_fn", "Deletion of _grad_fn not allowed. Detach tensor instead!"),
        ("_backward_hooks", "Deletion of _backwards_hooks not allowed!"),
    ],
)
def test_refused_deletions_match_pytorch(name: str, message: str) -> None:
    for lib in (torch, chainrule):
        x = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as info:
            delattr(x, name)
        assert str(info.value) == message
        assert x.grad_fn is not None and x.requires_grad
        assert x._grad_fn is x.grad_fn


def test_legacy_grad_fn_attribute_is_assignable_as_in_pytorch() -> None:
    for lib in (torch, chainrule):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        assert type(y._grad_fn).__name__ == "MulBackward0"
        y._grad_fn = None
        assert y._grad_fn is None and y.grad_fn is None
        del y.grad  # allowed: clears the gradient
        assert y.grad is None
