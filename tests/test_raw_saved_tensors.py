"""``grad_fn._raw_saved_<name>``: PyTorch's handle on one saved value, whose
``register_hooks(pack_hook, unpack_hook)`` packs it now and unpacks it each time it is used.
Compared with PyTorch: gradients through the hooks, how often each hook runs, what
``_saved_<name>`` shows, and the errors (hooks set twice, the value already freed, an unpack
hook returning no tensor, a pack hook writing in place)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = [chainrule, torch]


def _values(t: Any) -> list[float]:
    return t.detach().tolist()


def _through_hooks(lib: Any, make: Any, which: str) -> tuple[Any, ...]:
    """Register a doubling pack hook (and a counting unpack hook) on one saved value of the
    node ``make(x, y)`` creates; return the gradients, the unpack count and ``_saved_`` value."""
    x = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
    y = lib.tensor([1.25, -0.75, 3.0], requires_grad=True)
    out = make(x, y)
    calls = [0]

    def unpack(p: Any) -> Any:
        calls[0] += 1
        return p

    getattr(out.grad_fn, "_raw_saved_" + which).register_hooks(lambda t: t * 2, unpack)
    shown = _values(getattr(out.grad_fn, "_saved_" + which))
    out.sum().backward(retain_graph=True)
    out.sum().backward()
    grads = [None if t.grad is None else _values(t.grad) for t in (x, y)]
    return grads, calls[0], shown


@pytest.mark.parametrize(("make", "which"), [
    (lambda x, y: x.sin(), "self"),
    (lambda x, y: x.exp(), "result"),
    (lambda x, y: x * y, "other"),
    (lambda x, y: x * y, "self"),
    (lambda x, y: x * 2.5, "other"),
    (lambda x, y: y.atan2(x), "other"),
], ids=["sin_self", "exp_result", "mul_other", "mul_self", "mul_number", "atan2_other"])
def test_gradients_through_registered_hooks_as_pytorch(make: Any, which: str) -> None:
    ours, theirs = (_through_hooks(lib, make, which) for lib in LIBS)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    for a, b in zip(ours[0], theirs[0], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)


def _error(lib: Any, case: str) -> tuple[type, str]:
    x = lib.tensor([0.5, 1.5], requires_grad=True)
    try:
        if case == "twice":
            out = x.sin()
            out.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
            out.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        elif case == "freed":
            out = x.sin()
            handle = out.grad_fn._raw_saved_self
            out.sum().backward()
            handle.register_hooks(lambda t: t, lambda t: t)
        elif case == "freed_after":
            out = x.sin()
            out.sum().backward()
            out.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        elif case == "unpack_returns_none":
            out = x.sin()
            out.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda p: None)
            out.sum().backward()
        elif case == "pack_in_place":
            out = x.exp()
            out.grad_fn._raw_saved_result.register_hooks(lambda t: t.mul_(2), lambda t: t)
        elif case == "not_callable":
            x.sin().grad_fn._raw_saved_self.register_hooks(1, 2)
    except (RuntimeError, TypeError) as error:
        message = str(error)
        return type(error), message.split("\n")[0] if case == "not_callable" else message
    return type(None), ""


@pytest.mark.parametrize("case", ["twice", "freed", "freed_after", "unpack_returns_none",
                                  "pack_in_place", "not_callable"])
def test_errors_as_pytorch(case: str) -> None:
    ours, theirs = _error(chainrule, case), _error(torch, case)
    assert ours == theirs


def test_a_value_saved_as_it_is_is_still_version_checked() -> None:
    """Hooks on one saved value leave the other saved tensors checked, as PyTorch's."""
    messages = []
    for lib in LIBS:
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        z = y * 1
        out = x * z
        out.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        with lib.no_grad():
            z.add_(1)
        with pytest.raises(RuntimeError) as error:
            out.sum().backward()
        # (chainrule's message goes on to name the line of the write: beyond PyTorch's)
        message = str(error.value).split(" The tensor was last modified in place at")[0]
        messages.append(message.replace("torch.", "").replace("chainrule.", ""))
    assert messages[0] == messages[1]


def test_unpack_hook_and_data_attributes() -> None:
    for lib in LIBS:
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        out = x.exp()  # (kept alive: PyTorch's handle does not keep its node)
        handle = out.grad_fn._raw_saved_result
        assert handle.unpack_hook is None
        np.testing.assert_allclose(_values(handle.data), np.exp([0.5, 1.5]), rtol=1e-6)
        assert not handle.data.requires_grad
        unpack = lambda t: t  # noqa: E731
        handle.register_hooks(lambda t: t, unpack)
        assert handle.unpack_hook is unpack
