"""The gradient of ``x ** b`` with a bool tensor exponent raises PyTorch's error.

PyTorch's formula for the base's gradient computes ``exponent - 1``, which refuses a bool
tensor ("Subtraction, the `-` operator, with a bool tensor is not supported"); chainrule
returned ``[1., 0.]`` (noted by last stop's review). The exponent's gradient of a bool base
and a Python bool exponent still compute, as PyTorch's.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

CASES = {
    "x ** b": lambda lib, x, b: x**b,
    "pow(x, b)": lambda lib, x, b: lib.pow(x, b),
    "x ** 0-d bool": lambda lib, x, b: x ** lib.tensor(True),
    "b ** x": lambda lib, x, b: b**x,
    "x ** True": lambda lib, x, b: x**True,
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_pow_with_bool(case: str, create_graph: bool) -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([1.5, 2.0], requires_grad=True)
        b = lib.tensor([True, False])
        y = CASES[case](lib, x, b)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=create_graph)
        return y, g

    same_outcome(program)
