"""The legacy tensor types (``torch.DoubleTensor`` ...) as classes: their ``dtype``, ``layout``
and flags, ``x.type(torch.DoubleTensor)``, and the legacy ``new`` with an empty ``Size`` (a 0-d
tensor) or nothing (an empty one), compared with PyTorch.

Every program runs with ``lib = chainrule`` and ``lib = torch``; what it returns or raises
must be the same.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

NAMES = [
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


@pytest.mark.parametrize("name", NAMES)
def test_class_attributes(name: str) -> None:
    def program(lib: Any) -> Any:
        t = getattr(lib, name)
        return (
            t.dtype,
            str(t.layout),
            t.is_cuda,
            t.is_sparse,
            t.is_sparse_csr,
            t.is_xpu,
            t().dtype is t.dtype,
        )

    same_outcome(program)


@pytest.mark.parametrize("name", ["DoubleTensor", "FloatTensor", "IntTensor", "ByteTensor"])
def test_type_casts_to_a_legacy_type(name: str) -> None:
    def program(lib: Any) -> Any:
        t = getattr(lib, name)
        x = lib.randn(5, 5)
        y = lib.randint(5, (5, 5), dtype=t.dtype)
        return (
            isinstance(x.type(t), t),
            isinstance(x.type_as(y), t),
            x.type(t).dtype,
            x.type(t().dtype).dtype is t().dtype,
            y.type(t).data_ptr() == y.data_ptr(),
        )

    same_outcome(program)


def test_type_casts_values_with_history() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.5, -2.25], requires_grad=True)
        y = x.type(lib.DoubleTensor)
        y.sum().backward()
        return y, y.grad_fn.name(), x.grad

    same_outcome(program)


def test_new_with_an_empty_size_is_0d() -> None:
    def program(lib: Any) -> Any:
        x = lib.randn(3)
        return (
            x.new(lib.Size([])).shape,
            x.new([]).shape,
            x.new(()).shape,
            x.new().shape,
            lib.FloatTensor(lib.Size([])).shape,
            lib.FloatTensor().shape,
            x.new(lib.Size([2, 0])).shape,
        )

    same_outcome(program)


def test_new_0d_then_filled() -> None:
    def program(lib: Any) -> Any:
        x = lib.ones(5, requires_grad=True)
        return x.new(x[3].size()).fill_(7)

    same_outcome(program)
