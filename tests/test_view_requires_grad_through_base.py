"""A view without history made before its base required grad: PyTorch reads a view's
``requires_grad`` through its base, so the view requires grad (it stays a leaf, and the
gradients sent to it go nowhere); chainrule once reported False and refused backward through
it. Each scenario runs in PyTorch and chainrule and must give the same observations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import chainrule


def _later_base(lib: Any) -> list[Any]:
    x = lib.zeros(4)
    v = x[:2]
    x.requires_grad_()
    out = [v.requires_grad, v.is_leaf, v.grad_fn is None]
    y = v * 2
    out += [y.requires_grad, type(y.grad_fn).__name__]
    y.sum().backward()
    out += [x.grad is None, v.grad is None]
    return out


def _in_place_refused(lib: Any) -> list[Any]:
    x = lib.zeros(4)
    v = x[:2]
    x.requires_grad_()
    with pytest.raises(RuntimeError) as error:
        v.add_(1)
    return [str(error.value), x.tolist()]


def _base_turned_off(lib: Any) -> list[Any]:
    x = lib.zeros(4)
    v = x[:2]
    x.requires_grad_()
    first = v.requires_grad
    x.requires_grad_(False)
    return [first, v.requires_grad, (v * 2).requires_grad]


def _view_own_flag(lib: Any) -> list[Any]:
    x = lib.zeros(4)
    v = x[:2]
    v.requires_grad_()
    x.requires_grad_()
    (v * 2).sum().backward()
    out = [v.grad.tolist(), x.grad is None]
    x.requires_grad_(False)
    return [*out, v.requires_grad]


def _chained_views_mixed_with_base(lib: Any) -> list[Any]:
    x = lib.zeros(4)
    v = x.view(2, 2)
    w = v[0]
    x.requires_grad_()
    out = [v.requires_grad, w.requires_grad]
    (w * 3 + x[:2]).sum().backward()
    return [*out, x.grad.tolist()]


def _no_grad_view(lib: Any) -> list[Any]:
    with lib.no_grad():
        x = lib.zeros(3)
        v = x[1:]
    x.requires_grad_()
    out = [v.requires_grad, v.detach().requires_grad]
    with pytest.raises(RuntimeError) as error:
        v.mul_(2)
    return [*out, str(error.value)]


def _view_flag_off(lib: Any) -> list[Any]:
    x = lib.zeros(4)
    v = x[:2]
    x.requires_grad_()
    v.requires_grad_(False)
    return [v.requires_grad]


def _double_view_dtype(lib: Any) -> list[Any]:
    x = lib.zeros(2, 3, dtype=lib.float64)
    v = x.t()
    x.requires_grad_()
    y = (v.exp() * v).sum()
    y.backward()
    return [v.requires_grad, y.requires_grad, y.dtype == lib.float64, x.grad is None]


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except RuntimeError as error:
        return str(error)


def _multi_views_later_base(lib: Any) -> list[Any]:
    """unbind/split outputs (views PyTorch forbids modifying) of a base that starts to
    require grad: they require grad too."""
    x = lib.ones(2, 3)
    u, s, p = x.unbind(0)[0], x.split(1)[0], x[0]
    x.requires_grad_()
    return [u.requires_grad, s.requires_grad, p.requires_grad, _outcome(lambda: u.grad_fn)]


def _multi_views_base_written(lib: Any) -> list[Any]:
    """The same, when the base (a detached tensor) comes to require grad by an in-place op
    with an operand that requires it: requires_grad True, grad_fn PyTorch's error."""
    out = []
    for make in (lambda d: d[1], lambda d: d.unbind(0)[-1], lambda d: d.split(1, 0)[1]):
        x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        y = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
        d = (x * 1.0).detach()
        view = make(d)
        d.add_(y * 1.0, alpha=-0.5)
        fn = _outcome(lambda view=view: view.grad_fn)
        out += [view.requires_grad, fn if isinstance(fn, str) else type(fn).__name__]
    return out


SCENARIOS: dict[str, Callable[[Any], list[Any]]] = {
    "multi_views_later_base": _multi_views_later_base,
    "multi_views_base_written": _multi_views_base_written,
    "later_base": _later_base,
    "in_place_refused": _in_place_refused,
    "base_turned_off": _base_turned_off,
    "view_own_flag": _view_own_flag,
    "chained_views": _chained_views_mixed_with_base,
    "no_grad_view": _no_grad_view,
    "view_flag_off": _view_flag_off,
    "double_transpose": _double_view_dtype,
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_as_pytorch(name: str) -> None:
    assert SCENARIOS[name](chainrule) == SCENARIOS[name](torch)
