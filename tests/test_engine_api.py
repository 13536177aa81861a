"""The engine as PyTorch's Python code reaches it, compared with PyTorch: nodes called as
functions (``grad_fn(grad)``), ``Variable._execution_engine.queue_callback``, and the
multithreading switch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

LIBS = (chainrule, torch)


def _described(value: Any) -> Any:
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        fn = value.grad_fn
        return (value.tolist(), value.requires_grad, None if fn is None else fn.name())
    if isinstance(value, tuple | list):
        return type(value).__name__, [_described(v) for v in value]
    return value


def _both(run: Callable[[Any], Any]) -> None:
    ours, theirs = (attempt(lambda lib=lib: run(lib), _described) for lib in LIBS)
    assert ours == theirs


NODE_CALLS: dict[str, Callable[[Any], Any]] = {
    "sum": lambda lib: _leaf(lib).mul(3).sum().grad_fn(lib.tensor(2.0)),
    "mul_number": lambda lib: (_leaf(lib) * 3).grad_fn(lib.ones(2)),
    "mul_two_leaves": lambda lib: (_leaf(lib) * _leaf(lib, 5.0)).grad_fn(lib.ones(2)),
    "mul_no_grad": lambda lib: _under_no_grad(lib, lambda: (_leaf(lib) * _leaf(lib, 5.0))),
    "too_many": lambda lib: (_leaf(lib) * 3).grad_fn(lib.ones(2), lib.ones(2)),
    "too_few": lambda lib: (_leaf(lib) * 3).grad_fn(),
    "unbind_two_outputs": lambda lib: _leaf(lib).unbind()[0].grad_fn(lib.tensor(1.0),
                                                                       lib.tensor(2.0)),
    "accumulate_grad": lambda lib: _accumulate(lib),
    "custom_function": lambda lib: _custom(lib),
}


def _leaf(lib: Any, value: float = 2.0) -> Any:
    return lib.full((2,), value, requires_grad=True)


def _under_no_grad(lib: Any, make: Callable[[], Any]) -> Any:
    out = make()
    with lib.no_grad():
        return out.grad_fn(lib.ones(2))


def _accumulate(lib: Any) -> Any:
    x = _leaf(lib)
    node = (x * 3).grad_fn.next_functions[0][0]
    returned = node(lib.ones(2))
    node(lib.ones(2) * 2)
    return returned, x.grad


def _custom(lib: Any) -> Any:
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    return Double.apply(_leaf(lib)).grad_fn(lib.ones(2))


@pytest.mark.parametrize("name", sorted(NODE_CALLS))
def test_nodes_are_callable(name: str) -> None:
    _both(NODE_CALLS[name])


def test_node_call_keeps_saved_values() -> None:
    def run(lib: Any) -> Any:
        x = _leaf(lib)
        y = (x * x).sum()
        first = y.grad_fn.next_functions[0][0](lib.ones(2))
        y.backward()  # the saved tensors are still there
        return first, x.grad

    _both(run)


def test_queue_callback_outside_backward() -> None:
    _both(lambda lib: lib.autograd.Variable._execution_engine.queue_callback(lambda: None))


def test_callbacks_run_after_the_pass_in_order() -> None:
    def run(lib: Any) -> Any:
        log: list[Any] = []
        engine = lib.autograd.Variable._execution_engine
        w = _leaf(lib)

        def second() -> None:
            log.append(("second", w.grad.tolist()))
            engine.queue_callback(lambda: log.append("queued by a callback"))

        def hook(g: Any) -> Any:
            log.append(("hook", g.tolist()))
            engine.queue_callback(lambda: log.append(("first", w.grad.tolist())))
            engine.queue_callback(second)
            return g

        a = w * 3
        a.register_hook(hook)
        a.sum().backward()
        log.append("after backward")
        return log

    _both(run)


def test_callbacks_belong_to_their_own_pass() -> None:
    """A backward run inside a hook (reentrant) runs its callbacks when it ends, not the
    outer pass's."""

    def run(lib: Any) -> Any:
        log: list[Any] = []
        engine = lib.autograd.Variable._execution_engine
        w = _leaf(lib)
        v = _leaf(lib, 3.0)

        def hook(g: Any) -> Any:
            engine.queue_callback(lambda: log.append("outer callback"))
            (inner,) = lib.autograd.grad(_inner(lib, v, engine, log), v)
            log.append(("inner grad", inner.tolist()))
            return g

        a = w * 3
        a.register_hook(hook)
        a.sum().backward()
        return log

    _both(run)


def _inner(lib: Any, v: Any, engine: Any, log: list[Any]) -> Any:
    b = v * v
    b.register_hook(lambda g: engine.queue_callback(lambda: log.append("inner callback")))
    return b.sum()


def test_multithreading_switch() -> None:
    def run(lib: Any) -> Any:
        seen = [lib.autograd.is_multithreading_enabled()]
        lib.autograd.set_multithreading_enabled(False)
        seen.append(lib.autograd.is_multithreading_enabled())
        lib.autograd.set_multithreading_enabled(True)
        with lib.autograd.set_multithreading_enabled(False):
            seen.append(lib.autograd.is_multithreading_enabled())
            x = _leaf(lib)
            (x * x).sum().backward()
            seen.append(x.grad.tolist())
        seen.append(lib.autograd.is_multithreading_enabled())
        return seen

    _both(run)


BATCHED: dict[str, Callable[[Any], Any]] = {
    "eye": lambda lib: _jacobian_rows(lib),
    "scalar_output": lambda lib: _batched_sum(lib, allow_unused=True),
    "materialized_unused": lambda lib: _batched_sum(lib, allow_unused=True, materialize=True),
    "unused_refused": lambda lib: _batched_sum(lib, allow_unused=False),
    "create_graph_values": lambda lib: _batched_second_order(lib),
    "wrong_shape": lambda lib: _unbatched(lib),
    "batch_sizes_differ": lambda lib: _two_outputs(lib),
    "graph_freed_after": lambda lib: _twice(lib),
    "empty_batch": lambda lib: lib.autograd.grad(_leaf(lib) * 2, _leaf(lib), lib.ones(0, 2),
                                                 is_grads_batched=True),
}


def _jacobian_rows(lib: Any) -> Any:
    x = _leaf(lib)
    return lib.autograd.grad(x * x * 3, x, lib.eye(2), is_grads_batched=True)


def _unbatched(lib: Any) -> Any:
    x = _leaf(lib)
    return lib.autograd.grad(x * 3, x, lib.ones(2), is_grads_batched=True)


def _batched_sum(lib: Any, allow_unused: bool, materialize: bool = False) -> Any:
    x, y = _leaf(lib), _leaf(lib, 5.0)
    kwargs = {"materialize_grads": True} if materialize else {}
    return lib.autograd.grad((x * 3).sum(), [x, y], lib.arange(3.0), is_grads_batched=True,
                             allow_unused=allow_unused, **kwargs)


def _batched_second_order(lib: Any) -> Any:
    x = _leaf(lib)
    (g,) = lib.autograd.grad(x * x, x, lib.eye(2), is_grads_batched=True, create_graph=True)
    (h,) = lib.autograd.grad(g.sum(), x)
    return g.detach(), h


def _two_outputs(lib: Any) -> Any:
    x = _leaf(lib)
    return lib.autograd.grad([x * 2, x * 3], x, [lib.eye(2), lib.ones(3, 2)],
                             is_grads_batched=True)


def _twice(lib: Any) -> Any:
    x = _leaf(lib)
    y = x * x
    first = lib.autograd.grad(y, x, lib.eye(2), is_grads_batched=True)
    return first, lib.autograd.grad(y, x, lib.eye(2), is_grads_batched=True)


@pytest.mark.parametrize("name", sorted(BATCHED))
def test_is_grads_batched(name: str) -> None:
    _both(BATCHED[name])


def test_a_tensor_cannot_be_its_own_grad() -> None:
    def run(lib: Any) -> Any:
        x = lib.ones(2, requires_grad=True)
        x.grad = x

    _both(run)
