"""``nn.init`` on an uninitialized (lazy) parameter or buffer raises what PyTorch raises: the
ValueError naming the first function or Tensor method PyTorch's init reaches it through, or
the RuntimeError of reading its shape (kaiming_normal_); and a Tensor subclass overriding
``__torch_function__`` sees the init functions PyTorch hands to it."""

from __future__ import annotations

import re

import pytest

import chainrule

from .conftest import torch

CALLS = {
    "zeros_": (),
    "ones_": (),
    "constant_": (0.5,),
    "uniform_": (),
    "normal_": (),
    "trunc_normal_": (),
    "eye_": (),
    "dirac_": (),
    "xavier_uniform_": (),
    "xavier_normal_": (),
    "kaiming_uniform_": (),
    "kaiming_normal_": (),
    "orthogonal_": (),
    "sparse_": (0.5,),
}


def _named(message: str) -> str:
    """The message with the callable's repr reduced to its name (reprs differ by library)."""
    pattern = r"<(?:method '(\w+)' of '[^']+' objects|function (?:Tensor\.)?(\w+) at 0x[0-9a-f]+)>"
    return re.sub(pattern, lambda m: m.group(1) or m.group(2), message)


def _error(lib, name: str, kind: str) -> tuple[str, str]:
    param = getattr(lib.nn.parameter, kind)()
    with pytest.raises((ValueError, RuntimeError)) as info:
        getattr(lib.nn.init, name)(param, *CALLS[name])
    return type(info.value).__name__, _named(str(info.value))


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_init_of_uninitialized_parameter_raises_as_pytorch(name: str, kind: str) -> None:
    assert _error(chainrule, name, kind) == _error(torch, name, kind)


@pytest.mark.parametrize("name", ["uniform_", "normal_", "constant_", "kaiming_uniform_"])
def test_init_functions_dispatch_to_torch_function(name: str) -> None:
    def seen(lib) -> list[str]:
        calls = []

        class Logged(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append(func.__name__)
                return "handled"

        t = lib.zeros(2, 3).as_subclass(Logged)
        out = getattr(lib.nn.init, name)(t, *CALLS[name])
        return [*calls[:1], out]

    assert seen(chainrule) == seen(torch) == [name, "handled"]
