"""Anomaly mode turned on only for the backward pass, compared with PyTorch: the failing
node's warning says that no forward pass information is available (the node was made outside
anomaly mode), and the NaN error is PyTorch's.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest

from .outcomes import same_outcome

_TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\)")


def test_warning_without_forward_trace() -> None:
    def program(lib: Any) -> Any:
        class MakesNan(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x.clone()

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                return grad * float("nan")

        x = lib.ones(2, requires_grad=True)
        loss = MakesNan.apply(x).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with lib.autograd.detect_anomaly():
                    loss.backward()
            except RuntimeError as error:
                raised = str(error)
        messages = [_TRIGGERED.sub("", str(w.message)) for w in caught]
        return raised, [m for m in messages if m.startswith("Error detected")]

    same_outcome(program)


def test_warnings_as_errors_print_the_warning_and_raise_the_backward_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def program(lib: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            with lib.autograd.detect_anomaly():
                warnings.simplefilter("error")
                a = lib.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1**2
                d1 += 1
                try:
                    lib.autograd.grad(d2.sum(), a)
                except RuntimeError as error:
                    raised = type(error).__name__, str(error).split(":")[0]
        printed = capsys.readouterr().err
        return (
            raised,
            len(caught),
            "UserWarning: Error detected in PowBackward0. Traceback of forward call" in printed,
        )

    same_outcome(program)
