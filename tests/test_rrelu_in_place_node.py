"""``rrelu_`` (and ``F.rrelu(..., inplace=True)``) records PyTorch's in-place node
``RreluWithNoiseBackward1``, which keeps the output: its name, saved values, gradients (eval and
training mode), the refusal of a negative mean slope and of forward-mode AD, as PyTorch."""

from __future__ import annotations

import pytest

import chainrule

from .conftest import torch
from .outcomes import outcome

VALUES = [-2.0, -0.5, 0.0, 1.5, 3.0]


def _run(lib, call: str, lower: float, upper: float, training: bool):
    x = lib.tensor(VALUES, dtype=lib.float64, requires_grad=True)
    source = x.clone()
    if call == "function":
        y = lib.nn.functional.rrelu(source, lower, upper, training, inplace=True)
    else:
        y = lib.rrelu_(source, lower, upper, training)
    node = y.grad_fn
    saved = sorted(a for a in dir(node) if a.startswith("_saved_"))
    numbers = [node._saved_lower, node._saved_upper, node._saved_training]
    try:
        y.sum().backward(retain_graph=True)
    except RuntimeError as error:
        return type(node).__name__, saved, numbers, str(error)
    noise = node._saved_noise.tolist()
    grads = x.grad.tolist()
    if training:  # (random slopes: the gradient is the noise)
        return type(node).__name__, saved, numbers, grads == noise
    return type(node).__name__, saved, numbers, grads, node._saved_result.tolist()


@pytest.mark.parametrize("call", ["function", "torch.rrelu_"])
@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize(("lower", "upper"), [(0.125, 1 / 3), (0.2, 0.2), (-0.5, -0.2)])
def test_rrelu_in_place_records_the_in_place_node(call, training, lower, upper) -> None:
    got = _run(chainrule, call, lower, upper, training)
    assert got == _run(torch, call, lower, upper, training)
    assert got[0] == "RreluWithNoiseBackward1"


def test_rrelu_out_of_place_keeps_its_node() -> None:
    for lib in (chainrule, torch):
        x = lib.tensor(VALUES, requires_grad=True)
        assert type(lib.nn.functional.rrelu(x).grad_fn).__name__ == "RreluWithNoiseBackward0"


def test_rrelu_in_place_refuses_forward_ad() -> None:
    def call(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(VALUES), lib.ones(5))
            return lib.nn.functional.rrelu(dual, inplace=True)

    assert outcome(call, chainrule) == outcome(call, torch)
