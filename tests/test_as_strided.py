"""``as_strided`` and ``as_strided_`` against PyTorch: views of the tensor's storage (values,
memory shared with the base, the storage offset), PyTorch's errors, and the gradient where the
sweep does not reach: an expanded input (PyTorch averages over input elements sharing a
storage position) and overlapping outputs (their gradients add up)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

LIBS = (chainrule, torch)


def _described(value: Any) -> Any:
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        return value.tolist(), tuple(value.shape), value.stride(), value.storage_offset()
    if isinstance(value, tuple):
        return tuple(_described(v) for v in value)
    return value


def _leaf(lib: Any) -> Any:
    return lib.arange(12.0, dtype=lib.float64).requires_grad_()


CASES: dict[str, Callable[[Any], Any]] = {
    "offset_default_of_view": lambda lib: lib.arange(6.0)[2:].as_strided((2,), (1,)),
    "offset_given": lambda lib: lib.arange(6.0)[2:].as_strided((2,), (1,), 0),
    "transposed_layout": lambda lib: lib.arange(6.0).as_strided((2, 2), (1, 2), 1),
    "zero_size": lambda lib: lib.arange(6.0).as_strided((0, 3), (100, 1)),
    "out_of_bounds": lambda lib: lib.arange(6.0).as_strided((4,), (2,)),
    "negative_stride": lambda lib: lib.arange(6.0).as_strided((2,), (-1,)),
    "length_mismatch": lambda lib: lib.arange(6.0).as_strided((2, 2), (1,)),
    "writes_reach_the_base": lambda lib: _write_through(lib),
    "in_place": lambda lib: _in_place(lib),
    "expanded_input_gradient": lambda lib: _gradient(
        lib, lambda x: x[:2].expand(3, 2).as_strided((2, 2), (1, 1))),
    "overlapping_output_gradient": lambda lib: _gradient(
        lib, lambda x: x.as_strided((3, 3), (1, 1), 2)),
    "view_of_a_result": lambda lib: _gradient(
        lib, lambda x: (x * 2)[1:].as_strided((2, 2), (2, 1))),
}


def _write_through(lib: Any) -> Any:
    x = lib.arange(6.0)
    x.as_strided((2, 2), (2, 1)).add_(100)
    return x


def _in_place(lib: Any) -> Any:
    x = _leaf(lib)
    y = (x * 1).as_strided_((2, 2), (3, 1), 1)
    y.backward(lib.ones(2, 2) * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64))
    return y.detach(), y.grad_fn.name(), x.grad


def _gradient(lib: Any, fn: Callable[[Any], Any]) -> Any:
    x = _leaf(lib)
    y = fn(x)
    cotangent = lib.arange(float(y.numel()), dtype=lib.float64).reshape(y.shape) + 1
    y.backward(cotangent)
    return y.detach(), y.grad_fn.name(), x.grad


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_strided_matches_torch(name: str) -> None:
    ours, theirs = (attempt(lambda lib=lib: CASES[name](lib), _described) for lib in LIBS)
    assert ours == theirs
