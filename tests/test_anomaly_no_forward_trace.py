"""Anomaly mode turned on only for the backward pass, compared with PyTorch: the failing
node's warning says that no forward pass information is available (the node was made outside
anomaly mode), and the NaN error is PyTorch's.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

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
