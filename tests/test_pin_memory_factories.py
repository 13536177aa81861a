"""Factories given ``pin_memory=`` answer as PyTorch's CPU build: True raises its
RuntimeError ("pin_memory=True requires a CUDA or other accelerator backend ..."), False is
accepted. chainrule computed for True in some factories and refused the argument itself
(TypeError, even for False) in others: full, arange, eye, linspace, logspace, the *_like
factories, empty_strided. ``new_tensor`` has no such argument, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

FACTORIES = {
    "zeros": lambda lib, x, p: lib.zeros(2, pin_memory=p),
    "ones": lambda lib, x, p: lib.ones(2, pin_memory=p),
    "empty": lambda lib, x, p: lib.empty(2, pin_memory=p),
    "full": lambda lib, x, p: lib.full((2,), 1.0, pin_memory=p),
    "rand": lambda lib, x, p: lib.rand(2, pin_memory=p),
    "randn": lambda lib, x, p: lib.randn(2, pin_memory=p),
    "randint": lambda lib, x, p: lib.randint(3, (2,), pin_memory=p),
    "randperm": lambda lib, x, p: lib.randperm(3, pin_memory=p),
    "arange": lambda lib, x, p: lib.arange(3, pin_memory=p),
    "eye": lambda lib, x, p: lib.eye(2, pin_memory=p),
    "tensor": lambda lib, x, p: lib.tensor([1.0], pin_memory=p),
    "empty_like": lambda lib, x, p: lib.empty_like(x, pin_memory=p),
    "zeros_like": lambda lib, x, p: lib.zeros_like(x, pin_memory=p),
    "ones_like": lambda lib, x, p: lib.ones_like(x, pin_memory=p),
    "full_like": lambda lib, x, p: lib.full_like(x, 2, pin_memory=p),
    "rand_like": lambda lib, x, p: lib.rand_like(x, pin_memory=p),
    "randn_like": lambda lib, x, p: lib.randn_like(x, pin_memory=p),
    "randint_like": lambda lib, x, p: lib.randint_like(x, 3, pin_memory=p),
    "linspace": lambda lib, x, p: lib.linspace(0, 1, 3, pin_memory=p),
    "logspace": lambda lib, x, p: lib.logspace(0, 1, 3, pin_memory=p),
    "empty_strided": lambda lib, x, p: lib.empty_strided((2,), (1,), pin_memory=p),
    "new_zeros": lambda lib, x, p: x.new_zeros(2, pin_memory=p),
    "new_ones": lambda lib, x, p: x.new_ones(2, pin_memory=p),
    "new_empty": lambda lib, x, p: x.new_empty(2, pin_memory=p),
    "new_full": lambda lib, x, p: x.new_full((2,), 1.0, pin_memory=p),
    "new_empty_strided": lambda lib, x, p: x.new_empty_strided((2,), (1,), pin_memory=p),
    "new_tensor": lambda lib, x, p: x.new_tensor([1.0], pin_memory=p),
    "normal": lambda lib, x, p: lib.normal(0.0, 1.0, (2,), pin_memory=p),
    "hann_window": lambda lib, x, p: lib.hann_window(4, pin_memory=p),
    "hamming_window": lambda lib, x, p: lib.hamming_window(4, pin_memory=p),
    "kaiser_window": lambda lib, x, p: lib.kaiser_window(4, pin_memory=p),
}


@pytest.mark.parametrize("pin", [True, False])
@pytest.mark.parametrize("factory", list(FACTORIES))
def test_pin_memory_argument(factory: str, pin: bool) -> None:
    def program(lib: Any) -> Any:
        return tuple(FACTORIES[factory](lib, lib.ones(2), pin).shape)

    same_outcome(program)
