"""``__torch_function__``: Tensor subclasses and tensor-like objects taking over functions,
methods and operators, as PyTorch's protocol (issue 14, capability 8).

Every scenario is run with ``lib`` as chainrule and as PyTorch; what the user sees is compared:
the result's type (the subclass kept or not), values, gradients, the node ``as_subclass``
records, which calls reach a handler, and the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = {"chainrule": chainrule, "torch": torch}


def _classes(lib: ModuleType) -> dict[str, type]:
    """The subclasses and tensor-like types of a scenario, made for ``lib``."""
    calls: list[Any] = []

    class Logged(lib.Tensor):
        log = calls

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            cls.log.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    class Plain(lib.Tensor):
        pass

    class Other(lib.Tensor):
        pass

    class Refusing(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return NotImplemented

    class Intercepting(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            if func is lib.add:
                return "torch.add intercepted"
            if func is lib.Tensor.add:
                return "Tensor.add intercepted"
            return super().__torch_function__(func, types, args, kwargs or {})

    class Opted(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

    class Duck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return ("duck", func.__name__.split(".")[-1], [t.__name__ for t in types])

    class RefusingDuck:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            return NotImplemented

    return {c.__name__: c for c in (Logged, Plain, Other, Refusing, Intercepting, Opted, Duck,
                                    RefusingDuck)}


def _outcome(value: Any) -> Any:
    """What a scenario's result shows: type name and values of tensors (in tuples too)."""
    if isinstance(value, tuple | list):
        return type(value).__name__, [_outcome(v) for v in value]
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return (type(value).__name__, np.round(value.detach().numpy(), 5).tolist(),
                getattr(value.grad_fn, "name", lambda: None)())
    return value


def _run(scenario: Callable[[ModuleType, dict[str, type]], Any], lib: ModuleType) -> Any:
    try:
        return _outcome(scenario(lib, _classes(lib)))
    except (TypeError, RuntimeError) as error:
        return type(error).__name__, str(error).replace("torch.", "chainrule.")


def _subclass(lib: ModuleType, cls: type, requires_grad: bool = False) -> Any:
    x = lib.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.5]], requires_grad=requires_grad)
    return x.as_subclass(cls)


# Expressions on a subclass instance ``m`` (2x3) and a plain tensor ``x`` (2x3).
EXPRESSIONS: dict[str, Callable[[ModuleType, Any, Any], Any]] = {
    "m + 1": lambda lib, m, x: m + 1,
    "1 + m": lambda lib, m, x: 1 + m,
    "m - x": lambda lib, m, x: m - x,
    "x * m": lambda lib, m, x: x * m,
    "m / 2": lambda lib, m, x: m / 2,
    "2 - m": lambda lib, m, x: 2 - m,
    "-m": lambda lib, m, x: -m,
    "m @ m.t()": lambda lib, m, x: m @ m.t(),
    "m[0]": lambda lib, m, x: m[0],
    "m[:, 1:]": lambda lib, m, x: m[:, 1:],
    "m == 1": lambda lib, m, x: m == 1,
    "m.sum()": lambda lib, m, x: m.sum(),
    "m.sum(dim=0)": lambda lib, m, x: m.sum(dim=0),
    "m.max(1)": lambda lib, m, x: m.max(1),
    "m.exp()": lambda lib, m, x: m.exp(),
    "m.view(3, 2)": lambda lib, m, x: m.view(3, 2),
    "m.add(1, alpha=2)": lambda lib, m, x: m.add(1, alpha=2),
    "m.float()": lambda lib, m, x: m.float(),
    "m.to(float64)": lambda lib, m, x: m.to(lib.float64),
    "m.detach()": lambda lib, m, x: m.detach(),
    "m.clone()": lambda lib, m, x: m.clone(),
    "m.split(1)": lambda lib, m, x: m.split(1),
    "m.tolist()": lambda lib, m, x: m.tolist(),
    "m.numpy()": lambda lib, m, x: m.numpy().tolist(),
    "len(m)": lambda lib, m, x: len(m),
    "float(m[0, 0])": lambda lib, m, x: float(m[0, 0]),
    "torch.add(m, 1, alpha=2)": lambda lib, m, x: lib.add(m, 1, alpha=2),
    "torch.exp(m)": lambda lib, m, x: lib.exp(m),
    "torch.stack([x, m])": lambda lib, m, x: lib.stack([x, m]),
    "torch.cat([m, x])": lambda lib, m, x: lib.cat([m, x]),
    "torch.where(m > 0, m, x)": lambda lib, m, x: lib.where(m > 0, m, x),
    "torch.zeros_like(m)": lambda lib, m, x: lib.zeros_like(m),
    "torch.matmul(x, m.t())": lambda lib, m, x: lib.matmul(x, m.t()),
    "F.relu(m)": lambda lib, m, x: lib.nn.functional.relu(m),
    "F.softmax(m, 1)": lambda lib, m, x: lib.nn.functional.softmax(m, 1),
    "F.linear(m, x)": lambda lib, m, x: lib.nn.functional.linear(m, x),
    "F.mse_loss(m, x)": lambda lib, m, x: lib.nn.functional.mse_loss(m, x),
    "m += 1": lambda lib, m, x: m.__iadd__(1),
}


@pytest.mark.parametrize("cls", ["Logged", "Plain", "Opted"])
@pytest.mark.parametrize("expression", list(EXPRESSIONS))
def test_a_subclass_passes_through_ops(expression: str, cls: str) -> None:
    """Results keep the subclass (also in tuples and named tuples); a class that opts out
    (``_disabled_torch_function_impl``) gets plain tensors; values as PyTorch's."""

    def scenario(lib: ModuleType, classes: dict[str, type]) -> Any:
        m = _subclass(lib, classes[cls])
        x = lib.tensor([[2.0, 1.0, 0.0], [1.0, -1.0, 4.0]])
        return EXPRESSIONS[expression](lib, m, x)

    assert _run(scenario, chainrule) == _run(scenario, torch)


@pytest.mark.parametrize("expression", list(EXPRESSIONS))
def test_the_handler_is_called_for_every_entry_point(expression: str) -> None:
    """Each function, method and operator of the list reaches ``__torch_function__`` (as in
    PyTorch: a call with a subclass argument never computes without asking it), and the
    handler's ``func`` computes the same result when called again."""
    classes = _classes(chainrule)
    logged = classes["Logged"]
    m = _subclass(chainrule, logged)
    x = chainrule.tensor([[2.0, 1.0, 0.0], [1.0, -1.0, 4.0]])
    logged.log.clear()  # type: ignore[attr-defined]
    EXPRESSIONS[expression](chainrule, m, x)
    assert logged.log, f"{expression} did not call __torch_function__"  # type: ignore[attr-defined]


def test_func_is_the_public_function_or_method() -> None:
    """``func`` is what the user called: ``torch.add`` for the function, ``Tensor.add`` for the
    method and for ``+`` (so a handler can intercept one and not the other)."""
    for lib in LIBS.values():
        m = _subclass(lib, _classes(lib)["Intercepting"])
        assert lib.add(m, 1) == "torch.add intercepted"
        assert m.add(1) == "Tensor.add intercepted"
        assert m + 1 == "Tensor.add intercepted"
        assert type(lib.mul(m, 2)).__name__ == "Intercepting"


def test_as_subclass_is_an_alias_in_the_graph() -> None:
    """``as_subclass`` of a leaf that requires grad: ``AliasBackward0`` to its AccumulateGrad,
    ``_base`` the leaf, one version counter; gradients through the subclass's ops reach the
    leaf as PyTorch's, as a plain tensor."""
    seen = {}
    for name, lib in LIBS.items():
        cls = _classes(lib)["Logged"]
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        m = x.as_subclass(cls)
        node = m.grad_fn
        edge = node.next_functions[0][0]
        y = (m * m * 2 + m.exp()).sum()
        y.backward()
        with lib.no_grad():
            x.add_(1)
        seen[name] = (
            type(m).__name__, node.name(), type(edge).__name__, m._base is x, m.is_leaf,
            m.requires_grad, m._version, type(y).__name__, y.grad_fn.name(),
            type(x.grad).__name__, np.round(x.grad.numpy(), 5).tolist(), repr(m).split("(")[0],
        )
    assert seen["chainrule"] == seen["torch"]


def test_as_subclass_without_grad_and_repr() -> None:
    for lib in LIBS.values():
        cls = _classes(lib)["Plain"]
        m = lib.tensor([1.0, 2.0]).as_subclass(cls)
        assert m.grad_fn is None and not m.requires_grad and m.is_leaf
        assert repr(m) == "Plain([1., 2.])"
        g = lib.tensor([1.0], requires_grad=True).as_subclass(cls)
        assert repr(g) == "Plain([1.], grad_fn=<AliasBackward0>)"
        assert repr(lib.nn.Parameter(lib.ones(1))) == (
            "Parameter containing:\ntensor([1.], requires_grad=True)")


def test_make_subclass() -> None:
    """``Tensor._make_subclass(cls, data, require_grad)``: a detached leaf sharing ``data``'s
    memory and version counter."""
    seen = {}
    for name, lib in LIBS.items():
        cls = _classes(lib)["Plain"]
        data = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        t = lib.Tensor._make_subclass(cls, data, True)
        with lib.no_grad():
            data.add_(1)
        seen[name] = (type(t).__name__, t.is_leaf, t.requires_grad, t.grad_fn, t._base,
                      t._version, t.tolist())
    assert seen["chainrule"] == seen["torch"]


@pytest.mark.parametrize("call", [
    "as_subclass(int)", "as_subclass(3)", "_make_subclass(int)", "_make_subclass(list data)",
    "_make_subclass(long, require_grad)",
])
def test_subclass_errors(call: str) -> None:
    def scenario(lib: ModuleType, classes: dict[str, type]) -> Any:
        x = lib.ones(2)
        return {
            "as_subclass(int)": lambda: x.as_subclass(int),
            "as_subclass(3)": lambda: x.as_subclass(3),
            "_make_subclass(int)": lambda: lib.Tensor._make_subclass(int, x),
            "_make_subclass(list data)": lambda: lib.Tensor._make_subclass(lib.Tensor, [1.0]),
            "_make_subclass(long, require_grad)": lambda: lib.Tensor._make_subclass(
                classes["Plain"], lib.ones(2, dtype=lib.long), True),
        }[call]()

    outcome = _run(scenario, chainrule)
    assert outcome == _run(scenario, torch)
    assert outcome[0] in ("TypeError", "RuntimeError")


@pytest.mark.parametrize("expression", [
    "torch.add(duck, 1)", "torch.add(x, duck)", "torch.exp(duck)", "x + duck",
    "torch.add(refusing_duck, 1)", "x + refusing_duck", "refusing.sum()",
    "refusing + 1", "torch.exp(refusing)", "plain + other",
])
def test_tensor_like_objects_and_refusals(expression: str) -> None:
    """An object of any type with ``__torch_function__`` takes the call; when every handler
    returns NotImplemented, PyTorch's TypeError (Python's own for an operator)."""

    def scenario(lib: ModuleType, classes: dict[str, type]) -> Any:
        x = lib.ones(2)
        names = {
            "duck": classes["Duck"](), "refusing_duck": classes["RefusingDuck"](),
            "x": x, "torch": lib,
        }
        with lib._C.DisableTorchFunctionSubclass():
            names["refusing"] = x.as_subclass(classes["Refusing"])
            names["plain"] = x.as_subclass(classes["Plain"])
            names["other"] = x.as_subclass(classes["Other"])
        return eval(expression, {}, names)

    assert _run(scenario, chainrule) == _run(scenario, torch)


def test_disabling_dispatch() -> None:
    """Inside ``DisableTorchFunctionSubclass`` a subclass computes as a plain tensor (results are
    plain); ``DisableTorchFunction`` turns off tensor-like objects too."""
    for lib in LIBS.values():
        classes = _classes(lib)
        logged = classes["Logged"]
        m = _subclass(lib, logged)
        logged.log.clear()  # type: ignore[attr-defined]
        with lib._C.DisableTorchFunctionSubclass():
            assert type(m + 1) is lib.Tensor
            assert type(lib.exp(m)) is lib.Tensor
        assert logged.log == []  # type: ignore[attr-defined]
        assert type(m + 1) is logged


def test_has_torch_function() -> None:
    for lib in LIBS.values():
        classes = _classes(lib)
        m = _subclass(lib, classes["Plain"])
        x, p = lib.ones(1), lib.nn.Parameter(lib.ones(1))
        overrides = lib.overrides
        got = (overrides.has_torch_function((m,)), overrides.has_torch_function((x, p)),
               overrides.has_torch_function((x, [m])), overrides.has_torch_function_unary(x),
               overrides.has_torch_function_variadic(x, classes["Duck"]()),
               overrides.is_tensor_like(classes["Duck"]()), overrides.is_tensor_like(3),
               overrides.has_torch_function((_subclass(lib, classes["Opted"]),)))
        assert got == (True, False, False, False, True, True, False, False)
        with lib._C.DisableTorchFunctionSubclass():
            assert not overrides.has_torch_function((m,))


def test_parameters_and_modules() -> None:
    """Ops on parameters give plain tensors; a module fed a subclass returns the subclass,
    and its parameters' gradients are plain, as in PyTorch."""
    seen = {}
    for name, lib in LIBS.items():
        lib.manual_seed(0)
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([[1.0, 0.5, -1.0], [0.0, 2.0, 1.0]]))
            layer.bias.fill_(0.25)
        p = layer.weight
        m = _subclass(lib, _classes(lib)["Plain"])
        out = layer(m)
        out.sum().backward()
        seen[name] = (type(p * 2).__name__, type(p.sum()).__name__, type(out).__name__,
                      out.detach().numpy().tolist(), type(p.grad).__name__,
                      p.grad.numpy().tolist())
    assert seen["chainrule"] == seen["torch"]


def test_plain_method_handler_warns() -> None:
    """A ``__torch_function__`` that is a plain method still works, with PyTorch's warning."""
    for lib in LIBS.values():
        class Legacy:
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
                return "legacy"

        with pytest.warns(UserWarning, match="plain method is deprecated"):
            assert lib.add(Legacy(), 1) == "legacy"


def _logging_mode(lib: ModuleType) -> type:
    class Logging(lib.overrides.TorchFunctionMode):
        def __init__(self, name: str, log: list) -> None:
            super().__init__()
            self.name, self.log = name, log

        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
            self.log.append((self.name, func.__name__, [t.__name__ for t in types]))
            return func(*args, **(kwargs or {}))

    return Logging


def test_a_mode_sees_every_call_on_plain_tensors() -> None:
    """A TorchFunctionMode is asked for functions, methods and operators on plain tensors,
    innermost mode first, each handler running with its own mode off; results and gradients
    are unchanged; Tensor's methods are restored when the last mode exits."""
    seen = {}
    for name, lib in LIBS.items():
        before = lib.Tensor.sum
        log: list = []
        mode = _logging_mode(lib)
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with mode("outer", log):
            y = x + 1
            z = lib.add(x, 1, alpha=2)
            s = (y * z).sum()
            r = lib.nn.functional.relu(x).exp()
            with mode("inner", log):
                w = lib.mul(x, 2)
        total = s + r.sum() + w.sum()
        total.backward()
        # (types: PyTorch lists Tensor itself once a Python function such as relu has
        # dispatched, and nothing before; not compared)
        seen[name] = ([entry[:2] for entry in log], np.round(x.grad.numpy(), 4).tolist(),
                      type(y).__name__, lib.Tensor.sum is before)
    assert seen["chainrule"] == seen["torch"]
    assert seen["chainrule"][0]  # (the log is not empty)


def test_modes_and_subclasses() -> None:
    """A mode is asked before a subclass and given the subclass in ``types``; a mode returning
    NotImplemented is an error naming it; DisableTorchFunction turns modes off,
    DisableTorchFunctionSubclass does not; the base class's handler is abstract."""
    seen = {}
    for name, lib in LIBS.items():
        log: list = []
        mode = _logging_mode(lib)
        plain = _classes(lib)["Plain"]
        x = lib.tensor([1.0, 2.0])
        m = x.as_subclass(plain)
        with mode("m", log):
            q = m * 2
            with lib._C.DisableTorchFunction():
                lib.add(x, 1)
            with lib._C.DisableTorchFunctionSubclass():
                lib.sub(x, 1)
            depth = lib._C._len_torch_function_stack()

        class Declining(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
                return NotImplemented

        try:
            with Declining():
                lib.add(x, 1)
        except TypeError as error:
            declined = str(error).split("\n")[0].replace("torch.", "chainrule.")
        try:
            lib.overrides.TorchFunctionMode().__torch_function__(lib.add, (), (x, 1), {})
        except NotImplementedError:
            abstract = "NotImplementedError"
        with lib.overrides.BaseTorchFunctionMode():
            passed = lib.add(x, 1).tolist()
        seen[name] = (log, type(q).__name__, depth, declined, abstract, passed,
                      lib._C._len_torch_function_stack())
    assert seen["chainrule"] == seen["torch"]


def test_functions_built_from_tensor_methods_work_inside_a_mode() -> None:
    """Inside a mode's handler (its mode off), a function whose implementation calls Tensor
    methods (``einsum`` reads ``operand.dim()``) computes on plain tensors; it once raised
    'Multiple dispatch failed' there. Also after the handler, in the mode."""
    seen = {}
    for name, lib in LIBS.items():
        log: list = []
        mode = _logging_mode(lib)
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with mode("m", log):
            s = lib.einsum("i->", x)
            t = lib.einsum("i,i->", x, x).sum()
        (s + t).backward()
        seen[name] = ([entry[1] for entry in log], float(s), float(t),
                      x.grad.numpy().tolist())
    assert seen["chainrule"] == seen["torch"]
