"""``scatter``/``scatter_`` with ``reduce="add"|"multiply"`` as PyTorch's (the deprecated
overloads): values for tensor and number sources, repeated indices, integer, bool, uint8 and
complex tensors, PyTorch's errors, its deprecation warning (once, for a tensor ``src``), and its
``NotImplemented`` node, whose backward raises."""

from __future__ import annotations

import warnings

import pytest

import chainrule
from chainrule.ops import indexing

from .conftest import torch

_CALLS = [
    "torch.ones(3, 3).scatter(0, idx, 2.0, reduce='add')",
    "torch.ones(3, 3).scatter(0, idx, value=2.0, reduce='multiply')",
    "torch.scatter(torch.ones(3, 3), 0, idx, 2.0, reduce='add')",
    "torch.ones(3, 3).scatter_(0, idx, 2.0, reduce='add')",
    "torch.ones(3, 3).scatter(0, idx, torch.full((1, 3), 3.0), reduce='multiply')",
    "torch.ones(3, 3).scatter(0, torch.tensor([[0, 0, 0]]), torch.tensor([[2.0, 3.0, 4.0]]), "
    "reduce='multiply')",
    "torch.ones(3, 3).scatter(0, torch.tensor([[0, 0, 0], [0, 0, 0]]), "
    "torch.tensor([[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]), reduce='add')",
    "torch.ones(2, 4).scatter_(1, torch.tensor([[1, 1, 3], [0, 0, 0]]), "
    "torch.arange(1.0, 9.0).view(2, 4), reduce='multiply')",
    "torch.ones(3, 3, dtype=torch.int64).scatter(0, idx, 2.5, reduce='multiply')",
    "torch.ones(3, 3, dtype=torch.uint8).scatter(0, idx, -1, reduce='add')",
    "torch.ones(3, 3, dtype=torch.bool).scatter(0, idx, True, reduce='add')",
    "torch.zeros(3, 3, dtype=torch.bool).scatter(0, idx, True, reduce='multiply')",
    "torch.ones(3, 3, dtype=torch.complex64).scatter(0, idx, 2.0, reduce='multiply')",
    "torch.ones(3, 3).scatter(0, idx, 2.0, reduce='mean')",
    "torch.ones(3, 3).scatter(0, idx, torch.ones(1, 3), reduce='sum')",
    "torch.ones(3, 3).scatter(0, torch.tensor([[5, 1, 2]]), 1.0, reduce='mean')",
    "torch.ones(3, 3).scatter(0, torch.tensor([[5, 1, 2]]), 1.0, reduce='add')",
    "torch.ones(3, 3).scatter(0, idx, torch.ones(1, 3), reduce=None)",
    "torch.ones(3, 3).scatter(0, idx, 2.0, reduce=None)",
]


def _outcome(lib: object, call: str) -> str:
    namespace = {"torch": lib, "idx": lib.tensor([[0, 1, 2]])}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = eval(call, namespace)
    except (RuntimeError, TypeError) as error:
        return f"{type(error).__name__}: {error}"
    return f"{str(result.dtype).split('.')[-1]} {result.tolist()}"


@pytest.mark.parametrize("call", _CALLS)
def test_as_pytorch(call: str) -> None:
    assert _outcome(chainrule, call) == _outcome(torch, call)


def test_not_differentiable_as_pytorch() -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.ones(3, 3, requires_grad=True)
        src = lib.full((1, 3), 3.0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x.scatter(0, lib.tensor([[0, 1, 2]]), src, reduce="add")
            z = x.detach().scatter(0, lib.tensor([[0, 1, 2]]), src, reduce="multiply")
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        seen.append(
            (
                y.grad_fn.name().split("::")[-1],
                len(y.grad_fn.next_functions),
                len(z.grad_fn.next_functions),
                str(error.value),
            )
        )
    assert seen[0] == seen[1]


def test_deprecation_warning_once_for_a_tensor_src(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexing, "_SCATTER_REDUCE_WARNED", [False])
    index = chainrule.tensor([[0, 1, 2]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chainrule.ones(3, 3).scatter(0, index, 2.0, reduce="add")
        assert not caught  # (a number: no warning)
        chainrule.ones(3, 3).scatter(0, index, chainrule.ones(1, 3), reduce="add")
        chainrule.ones(3, 3).scatter_(0, index, chainrule.ones(1, 3), reduce="add")
    assert len(caught) == 1
    assert str(caught[0].message).startswith(
        "The reduce argument of torch.scatter with Tensor src is deprecated"
    )
    assert caught[0].filename == __file__
