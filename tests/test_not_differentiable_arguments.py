"""Tensor arguments PyTorch refuses to differentiate: a loss weight, a soft-margin target, batch
norm's running statistics. With ``requires_grad=True`` under grad mode PyTorch raises ("The
function 'nll_loss_forward' is not differentiable with respect to argument 'weight'") where
chainrule used to drop the edge silently (the weight's ``.grad`` stayed None). Outside grad mode
both compute. The refusal changes nothing: running statistics keep their values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

Case = Callable[[Any], Any]


def _x(lib: Any, *shape: int) -> Any:
    data = np.linspace(-2, 2, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return lib.tensor(data.tolist(), requires_grad=True)


def _w(lib: Any, *shape: int) -> Any:
    data = np.linspace(0.2, 0.9, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return lib.tensor(data.tolist(), requires_grad=True)


def _labels(lib: Any, *values: int) -> Any:
    return lib.tensor(list(values))


CASES: dict[str, Case] = {
    "nll_loss weight": lambda L: L.nn.functional.nll_loss(
        _x(L, 3, 4).log_softmax(1), _labels(L, 0, 1, 3), weight=_w(L, 4)
    ),
    "nll_loss 1-d weight": lambda L: L.nn.functional.nll_loss(
        _x(L, 4).log_softmax(0), L.tensor(2), weight=_w(L, 4)
    ),
    "nll_loss2d weight": lambda L: L.nn.functional.nll_loss(
        _x(L, 2, 4, 3, 3).log_softmax(1), L.zeros(2, 3, 3, dtype=L.long), weight=_w(L, 4)
    ),
    "nll_loss 3-d weight": lambda L: L.nn.functional.nll_loss(
        _x(L, 2, 4, 3).log_softmax(1), L.zeros(2, 3, dtype=L.long), weight=_w(L, 4)
    ),
    "cross_entropy weight": lambda L: L.nn.functional.cross_entropy(
        _x(L, 3, 4), _labels(L, 0, 1, 2), weight=_w(L, 4)
    ),
    "cross_entropy smoothing weight": lambda L: L.nn.functional.cross_entropy(
        _x(L, 3, 4), _labels(L, 0, 1, 2), weight=_w(L, 4), label_smoothing=0.1
    ),
    "cross_entropy input without grad": lambda L: L.nn.functional.cross_entropy(
        _x(L, 3, 4).detach(), _labels(L, 0, 1, 2), weight=_w(L, 4)
    ),
    "bce weight": lambda L: L.nn.functional.binary_cross_entropy(
        _x(L, 3, 4).sigmoid(), _w(L, 3, 4).detach(), weight=_w(L, 4)
    ),
    "bce_with_logits weight": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        _x(L, 3, 4), _w(L, 3, 4).detach(), weight=_w(L, 3, 4)
    ),
    "bce_with_logits pos_weight": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        _x(L, 3, 4), _w(L, 3, 4).detach(), pos_weight=_w(L, 4)
    ),
    "bce_with_logits both": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        _x(L, 3, 4), _w(L, 3, 4).detach(), weight=_w(L, 4), pos_weight=_w(L, 4)
    ),
    "soft_margin target": lambda L: L.nn.functional.soft_margin_loss(_x(L, 3, 4), _w(L, 3, 4)),
    "soft_margin input without grad": lambda L: L.nn.functional.soft_margin_loss(
        _x(L, 3, 4).detach(), _w(L, 3, 4)
    ),
    "batch_norm running_mean": lambda L: L.nn.functional.batch_norm(
        _x(L, 3, 4), _w(L, 4), L.ones(4), training=True
    ),
    "batch_norm both": lambda L: L.nn.functional.batch_norm(
        _x(L, 3, 4), _w(L, 4), _w(L, 4), training=True
    ),
    "batch_norm eval running_var": lambda L: L.nn.functional.batch_norm(
        _x(L, 3, 4), L.zeros(4), _w(L, 4), training=False
    ),
    "instance_norm running_mean": lambda L: L.nn.functional.instance_norm(
        _x(L, 2, 3, 4), _w(L, 3), L.ones(3), use_input_stats=True
    ),
    "instance_norm eval running_var": lambda L: L.nn.functional.instance_norm(
        _x(L, 2, 3, 4), L.zeros(3), _w(L, 3), use_input_stats=False
    ),
}

#: Tensor arguments PyTorch does differentiate: they must keep working.
ALLOWED: dict[str, Case] = {
    "cross_entropy probabilities weight": lambda L: L.nn.functional.cross_entropy(
        _x(L, 3, 4), _w(L, 3, 4).softmax(-1), weight=_w(L, 4)
    ),
    "multilabel_soft_margin weight": lambda L: L.nn.functional.multilabel_soft_margin_loss(
        _x(L, 3, 4), _w(L, 3, 4), weight=_w(L, 4)
    ),
    "bce target": lambda L: L.nn.functional.binary_cross_entropy(
        _x(L, 3, 4).sigmoid(), _w(L, 3, 4)
    ),
    "bce_with_logits target": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        _x(L, 3, 4), _w(L, 3, 4)
    ),
    "layer_norm weight": lambda L: L.nn.functional.layer_norm(
        _x(L, 3, 4), (4,), _w(L, 4), _w(L, 4)
    ),
    "batch_norm module": lambda L: L.nn.BatchNorm1d(4)(_x(L, 3, 4)),
}


def _outcome(lib: Any, case: Case) -> tuple[str, str]:
    try:
        result = case(lib)
    except Exception as error:  # noqa: BLE001 - the type and message are compared
        return type(error).__name__, str(error)
    return "ok", str(result.requires_grad)


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_as_pytorch(name: str) -> None:
    expected = _outcome(torch, CASES[name])
    assert expected[0] == "RuntimeError"  # (the case is one PyTorch refuses)
    assert _outcome(chainrule, CASES[name]) == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_computed_outside_grad_mode(name: str) -> None:
    for lib in (torch, chainrule):
        with lib.no_grad():
            assert _outcome(lib, CASES[name]) == ("ok", "False")


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_differentiable_arguments_still_work(name: str) -> None:
    grads = []
    for lib in (torch, chainrule):
        lib.manual_seed(0)
        out = ALLOWED[name](lib)
        leaves = [t for t in _leaves_of(out)]
        assert leaves, name
        grads.append([np.asarray(g.tolist()) for g in lib.autograd.grad(out.sum(), leaves)])
    assert len(grads[0]) == len(grads[1])
    for t, c in zip(*grads, strict=True):
        np.testing.assert_allclose(c, t, rtol=1e-5, atol=1e-6)


def _leaves_of(out: Any) -> list[Any]:
    """The leaves requiring grad that ``out``'s graph reaches, in a fixed order."""
    found, stack, seen = [], [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hasattr(node, "variable"):
            found.append(node.variable)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return sorted(found, key=lambda t: (tuple(t.shape), t.sum().item()))


def test_refusal_changes_nothing() -> None:
    running_mean = chainrule.zeros(4, requires_grad=True)
    running_var = chainrule.ones(4)
    x = _x(chainrule, 3, 4)
    with pytest.raises(RuntimeError, match="argument 'running_mean'"):
        chainrule.nn.functional.batch_norm(x, running_mean, running_var, training=True)
    assert running_mean.tolist() == [0.0] * 4 and running_var.tolist() == [1.0] * 4
    assert running_mean._version == 0 and running_var._version == 0
    assert x.grad is None and running_mean.grad is None
