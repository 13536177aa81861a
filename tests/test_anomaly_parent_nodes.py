"""Anomaly mode across a double backward, compared with PyTorch: when a node made by a
backward pass (``create_graph=True``) fails, the warning for it is followed by one for the node
whose backward made it ("Previous calculation was induced by ..."), with that node's forward
traceback, or the no-information text when it was made outside anomaly mode.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest

from .outcomes import same_outcome

_TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\)")


def _functions(lib: Any) -> Any:
    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            return a * 2.0 + b

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            bad = grad.clone()
            bad[0] = float("nan")
            return grad.clone(), bad

    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            g = grad.clone().expand(3)
            return Inner.apply(g * x, g + x)

    return Outer


def _shape(message: str) -> tuple[str, ...]:
    """The parts of a warning that do not depend on the library's frames: its head and the
    lines of this file that made the nodes."""
    message = _TRIGGERED.sub("", message)
    head = message.split(":\n")[0]
    frames = tuple(re.findall(r"^    (\S.*)$", message, flags=re.MULTILINE))
    user_lines = tuple(f for f in frames if "Inner.apply(" in f or "outer.apply(" in f)
    return (head, *user_lines)


@pytest.mark.parametrize("forward_in_anomaly_mode", [True, False])
def test_warnings_name_the_node_that_made_the_failing_one(forward_in_anomaly_mode: bool) -> None:
    def program(lib: Any) -> Any:
        outer = _functions(lib)
        x = lib.rand(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if forward_in_anomaly_mode:
                    with lib.autograd.detect_anomaly():
                        out = outer.apply(x)
                        (gx,) = lib.autograd.grad(out, (x,), create_graph=True)
                        gx.sum().backward()
                else:
                    out = outer.apply(x)
                    (gx,) = lib.autograd.grad(out, (x,), create_graph=True)
                    with lib.autograd.detect_anomaly():
                        gx.sum().backward()
            except RuntimeError as error:
                raised = str(error)
        shapes = [
            _shape(str(w.message)) for w in caught if "Anomaly Detection" not in str(w.message)
        ]
        return raised, shapes

    same_outcome(program)
