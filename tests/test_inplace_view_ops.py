"""In-place view ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``), in-place comparisons
and ``bernoulli``: what the op sweep cannot see (errors, saved-tensor messages, ``retain_grad``,
views of the tensor), each compared with PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

from .outcomes import outcome, same_outcome


def _leaf(lib: Any, shape: tuple[int, ...] = (2, 3)) -> Any:
    data = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7 + 0.2
    return lib.tensor(data, requires_grad=True)


@pytest.mark.parametrize("write", [
    "u.t_()", "u.transpose_(0, 1)", "u.squeeze_(0)", "u.squeeze_()", "u.squeeze_((0,))",
    "u.unsqueeze_(0)", "u.clamp_(0)", "u.gt_(0)", "u.gt_(lib.zeros(3, dtype=lib.float64))",
    "u.polygamma_(1)", "u.div_(2, rounding_mode='floor')", "u.bernoulli_(0.5)", "u.add_(1)",
])
def test_saved_tensor_message_names_the_in_place_op(write: str) -> None:
    """PyTorch's message names the op: its node's name without ``Backward`` and a trailing 0
    (``TBackward1`` -> ``T1``, ``AddBackward0`` -> ``Add``)."""
    def run(lib: Any) -> Any:
        u = _leaf(lib, (1, 3)) * 1
        s = u * u
        eval(write, {"u": u, "lib": lib})
        s.sum().backward()

    kind, message = outcome(run, chainrule)
    assert kind == "RuntimeError"
    # (chainrule adds where the write happened; PyTorch's message is a prefix of it)
    theirs = outcome(run, torch)[1]
    assert message.startswith(theirs.split(" Hint:")[0])


@pytest.mark.parametrize("case", [
    lambda lib: _leaf(lib).t_(),
    lambda lib: _leaf(lib)[0].unsqueeze_(0),
    lambda lib: _leaf(lib).unbind(0)[0].unsqueeze_(0),
    lambda lib: lib.zeros(2, 3, 4).t_(),
    lambda lib: lib.zeros(2, 3).squeeze_(5),
    lambda lib: lib.zeros(2, 3).transpose_(0, -3),
    lambda lib: lib.zeros(2, 3).unsqueeze_(3),
    lambda lib: _leaf(lib).clone().polygamma_(-1),
], ids=["leaf", "view-of-leaf", "multi-output-view", "t_-3d", "squeeze-dim", "transpose-dim",
        "unsqueeze-dim", "polygamma-negative"])
def test_errors_are_pytorchs_and_change_nothing(case: Callable[[Any], Any]) -> None:
    same_outcome(case)


def test_no_grad_view_modified_in_place_is_refused() -> None:
    def run(lib: Any) -> Any:
        x = _leaf(lib)
        with lib.no_grad():
            v = x.view(6)
        return v.unsqueeze_(0)

    same_outcome(run)


def test_a_failed_view_op_leaves_the_tensor_alone() -> None:
    y = _leaf(chainrule).clone()
    node, version, shape = y.grad_fn, y._version, y.shape
    with pytest.raises(IndexError):
        y.transpose_(0, 5)
    assert (y.grad_fn, y._version, y.shape) == (node, version, shape)


def test_under_no_grad_a_leaf_changes_shape_without_history() -> None:
    for lib in (chainrule, torch):
        with lib.no_grad():
            z = lib.zeros(2, 3, requires_grad=True)
            z.t_()
        assert (tuple(z.shape), z.stride(), z.grad_fn, z._version, z.requires_grad) == (
            (3, 2), (1, 3), None, 1, True)


def test_retain_grad_stays_with_the_value_before_the_op() -> None:
    """PyTorch keeps a retained gradient on the old history across a view op in place: ``.grad``
    is the gradient of the value before ``t_``, in its old shape."""
    grads = []
    for lib in (chainrule, torch):
        x = _leaf(lib)
        y = x.clone()
        y.retain_grad()
        y.t_()
        (y * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum().backward()
        grads.append((y.grad.numpy(), x.grad.numpy()))
    (ours_y, ours_x), (theirs_y, theirs_x) = grads
    np.testing.assert_array_equal(ours_y, theirs_y)
    np.testing.assert_array_equal(ours_x, theirs_x)


def test_views_of_the_tensor_follow_its_new_shape() -> None:
    """A view of a base reshaped in place regenerates its history; a view reshaped in place
    keeps its base's history intact."""
    results = []
    for lib in (chainrule, torch):
        x = _leaf(lib)
        b = x.clone()
        v = b[0]
        b.t_()
        names = [type(v.grad_fn).__name__, type(b.grad_fn).__name__]
        (v * lib.arange(3.0, dtype=lib.float64)).sum().backward()
        first = x.grad.numpy().copy()
        x.grad = None
        b = x.clone()
        w = b[0:1]
        w.t_()
        names += [type(w.grad_fn).__name__, type(b.grad_fn).__name__, str(w._is_view())]
        (b * lib.arange(6.0, dtype=lib.float64).reshape(2, 3)).sum().backward()
        results.append((names, first, x.grad.numpy()))
    (names, first, second), (t_names, t_first, t_second) = results
    assert names == t_names
    np.testing.assert_array_equal(first, t_first)
    np.testing.assert_array_equal(second, t_second)


# ----------------------------------------------------------------------------------------------
# bernoulli


@pytest.mark.parametrize("case", [
    lambda lib: lib.bernoulli(lib.tensor([1.5])),
    lambda lib: lib.bernoulli(lib.tensor([float("nan")])),
    lambda lib: lib.bernoulli(lib.tensor([1, 0])),
    lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.5, 2, 0.1])),
    lambda lib: lib.zeros(3).bernoulli_(-0.1),
    lambda lib: lib.zeros(3).bernoulli(1.5),
    lambda lib: lib.zeros(3).bernoulli_(lib.ones(2, 3)),
    lambda lib: lib.zeros(3).bernoulli_(lib.ones(3, dtype=lib.long)),
    lambda lib: lib.zeros(2, 3).bernoulli_(lib.ones(3)),
    lambda lib: lib.zeros(3, dtype=lib.bool).bernoulli_(1.0),
    lambda lib: lib.zeros(3, dtype=lib.long).bernoulli_(0.0),
    lambda lib: lib.bernoulli(lib.tensor([0.0, 1.0, 1.0], dtype=lib.float16)),
    lambda lib: lib.bernoulli(lib.zeros(4), 1.0),
], ids=["p>1", "nan", "integer", "tensor-p>1", "negative", "method-p>1", "no-expand",
        "integer-p", "expand", "bool", "long", "float16", "number-p"])
def test_bernoulli_errors_and_degenerate_values(case: Callable[[Any], Any]) -> None:
    same_outcome(case)


def test_bernoulli_records_pytorchs_nodes() -> None:
    def graph(lib: Any) -> list[Any]:
        x = lib.tensor([0.2, 0.7, 0.5], requires_grad=True)
        p = lib.tensor([0.1, 0.5, 0.9], requires_grad=True)
        out = []
        y = lib.bernoulli(x)
        y.sum().backward()
        out += [type(y.grad_fn).__name__, x.grad.tolist()]
        y = x.bernoulli(0.3)
        out += [y.grad_fn.name().split("::")[-1], outcome(lambda _: y.sum().backward(), lib)]
        z = x.clone()
        z.bernoulli_(p)
        z.sum().backward()
        out += [type(z.grad_fn).__name__, [type(f[0]).__name__ for f in z.grad_fn.next_functions],
                p.grad.tolist()]
        z = x.clone()
        z.bernoulli_()
        out += [type(z.grad_fn).__name__, z._version]
        return out

    assert graph(chainrule) == graph(torch)


def test_bernoulli_draws_with_the_given_probabilities() -> None:
    chainrule.manual_seed(0)
    p = chainrule.tensor([0.1, 0.5, 0.9]).expand(20000, 3)
    means = chainrule.bernoulli(p).mean(0).numpy()
    np.testing.assert_allclose(means, [0.1, 0.5, 0.9], atol=0.02)
    filled = chainrule.empty(20000).bernoulli_(0.25)
    assert set(np.unique(filled.numpy())) == {0.0, 1.0}
    assert abs(filled.mean().item() - 0.25) < 0.02
