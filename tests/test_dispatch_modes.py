"""Dispatch modes (``torch.utils._python_dispatch.TorchDispatchMode``) and ``torch.ops.aten``
against PyTorch 2.13: the ops a mode sees (their ``OpOverload`` names), that its handler runs
below autograd (grad mode off, nothing recorded inside; the node recorded around the handler's
result with the op's own formula), nesting, and the overload objects' names and identity.

chainrule's modes see its op table (ops/_dispatch_modes.py says what differs from ATen): the
programs below use ops both see alike; PyTorch's extra ``detach`` calls (autograd saving an
output) are left out of the comparison.
"""

from __future__ import annotations

from typing import Any

import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt


def both(case: Any) -> None:
    got = attempt(lambda: case(chainrule))
    want = attempt(lambda: case(torch))
    assert got == want


def _python_dispatch(lib: Any) -> Any:
    if lib is torch:
        import torch.utils._python_dispatch as module
    else:
        import chainrule.utils._python_dispatch as module
    return module


def _recording_mode(lib: Any, log: list[Any], describe: Any = str) -> Any:
    module = _python_dispatch(lib)

    class Recording(module.TorchDispatchMode):
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            if str(func) != "aten.detach.default":
                log.append(describe(func, args))
            return func(*args, **(kwargs or {}))

    return Recording()


def _x(lib: Any) -> Any:
    return lib.tensor(
        [[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], dtype=lib.float64, requires_grad=True
    )


PROGRAMS: dict[str, Any] = {
    "pointwise": lambda lib, x: x.sin() * 2 + x.cos() - x.exp() / 3,
    "reductions": lambda lib, x: x.sum() + x.sum(0).mean() + x.mean(),
    "matmul": lambda lib, x: (x @ x.t()).tanh() @ x,
    "var_mean": lambda lib, x: lib.var_mean(x)[0] * x.pow(2).sigmoid(),
    "comparisons": lambda lib, x: lib.where(x.gt(0), x.relu(), x.eq(2).double()),
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_ops_seen_and_results(program: str) -> None:
    def case(lib: Any) -> Any:
        log: list[Any] = []
        x = _x(lib)
        with _recording_mode(lib, log):
            out = PROGRAMS[program](lib, x)
        out.sum().backward()
        return log, [round(v, 12) for v in x.grad.reshape(-1).tolist()], out.grad_fn is not None

    both(case)


def test_handler_runs_below_autograd() -> None:
    """The handler gets the tensors as given (still requiring grad) with grad mode off: what it
    computes has no grad_fn; the op's result has its node."""

    def case(lib: Any) -> Any:
        log: list[Any] = []

        def describe(func: Any, args: Any) -> Any:
            result = func(*args)
            return (
                str(func),
                [a.requires_grad for a in args if isinstance(a, lib.Tensor)],
                lib.is_grad_enabled(),
                result.requires_grad,
                result.grad_fn is None,
            )

        x = _x(lib)
        with _recording_mode(lib, log, describe):
            y = x.sin()
            z = y * x
        return log, type(y.grad_fn).__name__, type(z.grad_fn).__name__, lib.is_grad_enabled()

    both(case)


def test_handler_result_becomes_the_output() -> None:
    """A handler may return another value: it is the op's output, and the gradient is the op's
    formula (sin's cos), not the handler's."""

    def case(lib: Any) -> Any:
        module = _python_dispatch(lib)

        class PlusOne(module.TorchDispatchMode):
            def __torch_dispatch__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                out = func(*args, **(kwargs or {}))
                return out + 1 if str(func) == "aten.sin.default" else out

        x = _x(lib)
        with PlusOne():
            y = x.sin()
        y.sum().backward()
        return (
            [round(v, 12) for v in y.reshape(-1).tolist()],
            [round(v, 12) for v in x.grad.reshape(-1).tolist()],
        )

    both(case)


def test_output_shares_the_handlers_version_counter() -> None:
    def case(lib: Any) -> Any:
        module = _python_dispatch(lib)
        kept: list[Any] = []

        class Keep(module.TorchDispatchMode):
            def __torch_dispatch__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                out = func(*args, **(kwargs or {}))
                kept.append(out)
                return out

        x = _x(lib)
        with Keep():
            y = x.exp()
        before = kept[0]._version
        y.mul_(2)
        return before, kept[0]._version, kept[0].tolist() == y.tolist()

    both(case)


def test_nested_modes_and_the_current_mode() -> None:
    def case(lib: Any) -> Any:
        module = _python_dispatch(lib)
        log: list[Any] = []

        class Named(module.TorchDispatchMode):
            def __init__(self, name: str) -> None:
                super().__init__()
                self.name = name

            def __torch_dispatch__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                current = module._get_current_dispatch_mode()
                log.append((self.name, str(func), getattr(current, "name", None)))
                return func(*args, **(kwargs or {}))

        x = _x(lib)
        outer, inner = Named("outer"), Named("inner")
        with outer:
            with inner:
                inside = module._get_current_dispatch_mode() is inner
                stack = [m.name for m in module._get_current_dispatch_mode_stack()]
                x.sin()
            x.cos()
        return log, inside, stack, module._get_current_dispatch_mode()

    both(case)


def test_overload_objects() -> None:
    def case(lib: Any) -> Any:
        aten = lib.ops.aten
        sin = aten.sin.default
        var_mean = aten.var_mean.correction
        return (
            repr(sin),
            str(sin),
            sin.__name__,
            sin.name(),
            repr(sin.overloadpacket),
            str(aten.sin),
            aten.sin.default is sin,
            sin.overloadpacket is aten.sin,
            var_mean.name(),
            str(var_mean),
            sin == aten.sin.default,
            sin != aten.cos.default,
        )

    both(case)


def test_calling_overloads() -> None:
    def case(lib: Any) -> Any:
        aten = lib.ops.aten
        x = _x(lib)
        y = aten.sin.default(x)
        z = aten.mul.Tensor(y, x)
        z.sum().backward()
        return (
            type(y.grad_fn).__name__,
            type(z.grad_fn).__name__,
            [round(v, 12) for v in x.grad.reshape(-1).tolist()],
        )

    both(case)
