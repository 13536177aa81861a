"""``Tensor.fill_diagonal_`` as PyTorch's: values (wrap, strided and expanded tensors, every
dtype's conversion of the value), errors, and the graph it records (a ``fill_`` of a diagonal
``as_strided`` view: the base's CopySlices) with its gradients."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

_CALLS = [
    "torch.zeros(3, 3).fill_diagonal_(5)",
    "torch.zeros(2, 2, 2).fill_diagonal_(1)",
    "torch.zeros(2, 5).fill_diagonal_(1, wrap=True)",
    "torch.zeros(7, 2).fill_diagonal_(1, wrap=True)",
    "torch.zeros(7, 3).fill_diagonal_(1, wrap=False)",
    "torch.zeros(3, 3).fill_diagonal_(fill_value=1, wrap=True)",
    "torch.zeros(8, 3).t().fill_diagonal_(1, wrap=True)",
    "torch.zeros(9, 3)[::2].fill_diagonal_(1, wrap=True)",
    "torch.zeros(4, 6)[:, ::2].fill_diagonal_(1)",
    "torch.zeros(3, 3).t().fill_diagonal_(2)",
    "torch.zeros(1, 3).expand(3, 3).fill_diagonal_(1)",
    "torch.zeros(0, 0).fill_diagonal_(1)",
    "torch.zeros(3, 3, dtype=torch.int64).fill_diagonal_(2.7)",
    "torch.zeros(3, 3, dtype=torch.bool).fill_diagonal_(2)",
    "torch.zeros(3, 3, dtype=torch.uint8).fill_diagonal_(-1)",
    "torch.zeros(3, 3, dtype=torch.complex64).fill_diagonal_(1 + 2j)",
    "torch.zeros(3, 3).fill_diagonal_(torch.tensor(2.0))",
    "torch.zeros(3, 3).fill_diagonal_(float('nan'))",
    "torch.zeros(3).fill_diagonal_(1)",
    "torch.zeros(2, 3, 4).fill_diagonal_(1)",
    "torch.zeros(3, 3).fill_diagonal_(1 + 2j)",
    "torch.zeros(3, 3).fill_diagonal_()",
    "torch.zeros(3, 3).fill_diagonal_('a')",
    "torch.zeros(3, 3).fill_diagonal_(torch.tensor([1.0, 2.0]))",
    "torch.zeros(3, 3, requires_grad=True).fill_diagonal_(1)",
]


def _outcome(lib: object, call: str) -> str:
    try:
        result = eval(call, {"torch": lib})
    except (RuntimeError, TypeError) as error:
        return f"{type(error).__name__}: {error}"
    return f"{str(result.dtype).split('.')[-1]} {result.tolist()}"


@pytest.mark.parametrize("call", _CALLS)
def test_as_pytorch(call: str) -> None:
    assert _outcome(chainrule, call) == _outcome(torch, call)


def test_returns_self_and_records_copy_slices() -> None:
    seen = []
    for lib in (chainrule, torch):
        x = lib.arange(9.0, requires_grad=True)
        y = (x * 2).reshape(3, 3)
        version = y._version
        assert y.fill_diagonal_(5) is y
        (y * lib.arange(9.0).reshape(3, 3)).sum().backward()
        seen.append(
            (
                type(y.grad_fn).__name__,
                [type(f[0]).__name__ for f in y.grad_fn.next_functions],
                y._version - version,
                x.grad.tolist(),
            )
        )
    assert seen[0] == seen[1]
    np.testing.assert_array_equal(seen[0][3], [0, 2, 4, 6, 0, 10, 12, 14, 0])
