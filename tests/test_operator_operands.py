"""Operators with operands they do not take: PyTorch's operators return ``NotImplemented``, so
Python tries the other operand's reflected method and otherwise raises its own TypeError."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import chainrule


class _Reflected:
    """An operand that knows how to combine with a tensor from the right."""

    def __radd__(self, other: Any) -> str:
        return "radd"

    def __rmul__(self, other: Any) -> str:
        return "rmul"

    def __rsub__(self, other: Any) -> str:
        return "rsub"

    def __rtruediv__(self, other: Any) -> str:
        return "rtruediv"

    def __rpow__(self, other: Any) -> str:
        return "rpow"

    def __rmatmul__(self, other: Any) -> str:
        return "rmatmul"


EXPRESSIONS = [
    "t + 'a'", "t * 'a'", "t - 'a'", "t / 'a'", "t + None", "t + [1, 2]", "t * [1, 2]",
    "t + (1, 2)", "'a' + t", "None * t", "None - t", "t ** 'a'", "t // 'a'", "t % None",
    "t + R()", "t * R()", "t - R()", "t / R()", "t ** R()", "t @ R()",
    "t.__add__('a')", "t.__radd__(None)", "t.__mul__([1])", "t.__sub__(R())",
    "t.__truediv__(None)", "t + np.float64(2)", "t * np.int64(3)", "t + 2j", "t + True",
    "t - False", "t / 4",
]


def _outcome(lib: Any, expression: str) -> tuple[str, str]:
    t = lib.tensor([1.0, 2.0])
    try:
        value = eval(expression, {"t": t, "R": _Reflected, "np": np})
    except Exception as error:  # noqa: BLE001 - the exception is what is compared
        return type(error).__name__, str(error)
    return "ok", str(value).replace("chainrule", "torch")


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_operator_matches_pytorch(expression: str) -> None:
    assert _outcome(chainrule, expression) == _outcome(torch, expression)


def test_the_functions_still_raise_their_argument_errors() -> None:
    """``torch.add(t, 'a')`` is not an operator: PyTorch's argument error, not NotImplemented."""
    for lib in (chainrule, torch):
        with pytest.raises(TypeError, match="must be Tensor, not str"):
            lib.add(lib.tensor([1.0]), "a")
