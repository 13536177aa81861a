"""Memory formats as PyTorch's: ``is_contiguous(memory_format=)``, ``contiguous``, ``clone``,
``to`` and the dtype casts with ``memory_format=torch.channels_last`` / ``channels_last_3d`` /
``contiguous_format`` / ``preserve_format``: strides, whether ``self`` comes back, errors,
nodes and gradients. Before, the memory format was ignored: a row-major tensor counted as
channels-last contiguous and ``x.contiguous(memory_format=torch.channels_last)`` kept
row-major strides."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = [chainrule, torch]

TENSORS = {
    "row_major": lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5),
    "channels_last": lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(
        memory_format=lib.channels_last),
    "transposed": lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5).transpose(1, 2),
    "spatial_ones": lambda lib: lib.arange(6.0).reshape(2, 3, 1, 1),
    "one_sample": lambda lib: lib.arange(60.0).reshape(1, 3, 4, 5),
    "empty_batch": lambda lib: lib.zeros(0, 3, 4, 5),
    "empty_channels": lambda lib: lib.zeros(2, 0, 4, 5),
    "rank_3": lambda lib: lib.arange(24.0).reshape(2, 3, 4),
    "rank_5": lambda lib: lib.arange(720.0).reshape(2, 3, 4, 5, 6),
}
FORMATS = ["default", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d"]
CALLS = {
    "is_contiguous": lambda lib, x, kw: x.is_contiguous(**kw),
    "contiguous": lambda lib, x, kw: x.contiguous(**kw),
    "clone": lambda lib, x, kw: x.clone(**kw),
    "to": lambda lib, x, kw: x.to(**kw),
    "to_float64": lambda lib, x, kw: x.to(lib.float64, **kw),
    "double": lambda lib, x, kw: x.double(**kw),
}


def _outcome(lib: Any, tensor: str, memory_format: str, call: str) -> tuple[Any, ...]:
    x = TENSORS[tensor](lib)
    kw = {} if memory_format == "default" else {"memory_format": getattr(lib, memory_format)}
    try:
        out = CALLS[call](lib, x, kw)
    except RuntimeError as error:
        return ("error", str(error))
    if isinstance(out, bool):
        return ("bool", out)
    values = out.tolist()
    return ("tensor", tuple(out.stride()), out is x, str(out.dtype).split(".")[1], values)


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("memory_format", FORMATS)
@pytest.mark.parametrize("tensor", sorted(TENSORS))
def test_memory_formats_as_pytorch(tensor: str, memory_format: str, call: str) -> None:
    assert _outcome(chainrule, tensor, memory_format, call) == _outcome(
        torch, tensor, memory_format, call)


@pytest.mark.parametrize("how", ["contiguous", "clone", "to"])
def test_nodes_and_gradients_through_a_conversion(how: str) -> None:
    weights = np.linspace(-1, 1, 120).reshape(2, 3, 4, 5)
    results = []
    for lib in LIBS:
        x = lib.arange(120.0).reshape(2, 3, 4, 5).requires_grad_()
        y = getattr(x, how)(memory_format=lib.channels_last)
        (y * lib.tensor(weights.tolist())).sum().backward()
        results.append((type(y.grad_fn).__name__, tuple(y.stride()), tuple(x.grad.stride()),
                        x.grad.tolist()))
    assert results[0] == results[1]


def test_a_memory_format_of_another_type_is_refused() -> None:
    messages = []
    for lib in LIBS:
        with pytest.raises(TypeError) as error:
            lib.zeros(2, 3).is_contiguous(memory_format=1)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
