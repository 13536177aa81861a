"""Factories check their ``layout`` argument as PyTorch's: a value that is not a
``torch.layout`` raises "<f>(): argument 'layout' must be torch.layout, not str" (chainrule
accepted anything and computed); ``torch.strided`` and None are accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

FACTORIES = {
    "zeros": lambda lib, x, layout: lib.zeros(2, layout=layout),
    "ones": lambda lib, x, layout: lib.ones(2, layout=layout),
    "empty": lambda lib, x, layout: lib.empty(2, layout=layout),
    "full": lambda lib, x, layout: lib.full((2,), 1.0, layout=layout),
    "empty_like": lambda lib, x, layout: lib.empty_like(x, layout=layout),
    "zeros_like": lambda lib, x, layout: lib.zeros_like(x, layout=layout),
    "ones_like": lambda lib, x, layout: lib.ones_like(x, layout=layout),
    "full_like": lambda lib, x, layout: lib.full_like(x, 2, layout=layout),
    "empty_strided": lambda lib, x, layout: lib.empty_strided((2,), (1,), layout=layout),
    "new_zeros": lambda lib, x, layout: x.new_zeros(2, layout=layout),
    "new_ones": lambda lib, x, layout: x.new_ones(2, layout=layout),
    "new_empty": lambda lib, x, layout: x.new_empty(2, layout=layout),
    "new_full": lambda lib, x, layout: x.new_full((2,), 1.0, layout=layout),
    "new_empty_strided": lambda lib, x, layout: x.new_empty_strided((2,), (1,), layout=layout),
}
LAYOUTS = {
    "a str": lambda lib: "strided",
    "an int": lambda lib: 3,
    "a dtype": lambda lib: lib.float32,
    "strided": lambda lib: lib.strided,
    "None": lambda lib: None,
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("factory", list(FACTORIES))
def test_layout_argument(factory: str, layout: str) -> None:
    def program(lib: Any) -> Any:
        return tuple(FACTORIES[factory](lib, lib.ones(2), LAYOUTS[layout](lib)).shape)

    same_outcome(program)
