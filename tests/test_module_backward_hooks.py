"""``nn.Module`` backward hooks, against PyTorch: full backward hooks and pre-hooks (per module
and global), the legacy ``register_backward_hook``, handles, ``prepend``; the arguments the hooks
get, the order they run in across modules, the gradients that result when they replace
``grad_input`` / ``grad_output``, the ``BackwardHookFunctionBackward`` nodes in the graph, and
PyTorch's warnings and errors.

Each test runs one program under chainrule and under PyTorch (``lib`` is the library) and
compares everything it recorded: values, call order, messages, and where warnings point.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt

LIBS = (chainrule, torch)


def _fmt(value: Any) -> Any:
    """Tensors as rounded nested lists, tuples and lists element-wise, others by type name."""
    if value is None:
        return None
    if isinstance(value, tuple | list):
        return tuple(_fmt(v) for v in value)
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        return (tuple(value.shape), np.round(value.detach().numpy().astype(float), 4).tolist())
    return type(value).__name__


def _warning(w: warnings.WarningMessage) -> tuple:
    """A warning's category, text and place: the line for a warning pointing at this file,
    the file's name for one pointing inside the library (PyTorch's ``module.py`` is
    chainrule's ``module.py``)."""
    here = os.path.basename(w.filename) == os.path.basename(__file__)
    place = w.lineno if here else os.path.basename(w.filename)
    text = re.sub(r"0x[0-9a-f]+", "0x...", str(w.message)).replace("chainrule", "torch")
    return w.category.__name__, text, here, place


def _run(program: Callable[[Any, list], Any]) -> tuple:
    """``program(lib, log)`` under both libraries: (what it returned or raised, its log, the
    warnings), chainrule's first."""
    results = []
    for lib in LIBS:
        log: list = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome = attempt(lambda lib=lib, log=log: program(lib, log), _fmt)
        results.append((outcome, log, [_warning(w) for w in caught]))
    return results[0], results[1]


def _same(program: Callable[[Any, list], Any]) -> tuple:
    """Run ``program`` under both libraries, assert that everything matches; PyTorch's record."""
    ours, theirs = _run(program)
    assert ours == theirs
    return theirs


def _node_chain(t: Any) -> list[str]:
    """The names of the nodes from ``t.grad_fn`` down the first non-leaf edge each time."""
    names = []
    node = t.grad_fn
    while node is not None:
        names.append(node.name())
        inner = [n for n, _ in node.next_functions
                 if n is not None and "AccumulateGrad" not in n.name()]
        node = inner[0] if inner else None
    return names


def _logging_hooks(log: list, name: str) -> tuple[Callable, Callable]:
    """A full backward hook and a pre-hook that record their calls."""

    def full(module, grad_input, grad_output):
        log.append((name, "full", type(module).__name__, _fmt(grad_input), _fmt(grad_output)))

    def pre(module, grad_output):
        log.append((name, "pre", type(module).__name__, _fmt(grad_output)))

    return full, pre


def _linear(lib: Any, n_in: int, n_out: int, scale: float = 0.1) -> Any:
    layer = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        layer.weight.copy_(lib.arange(float(n_in * n_out)).reshape(n_out, n_in) * scale - 0.4)
        layer.bias.copy_(lib.arange(float(n_out)) * 0.2 - 0.1)
    return layer


def _x(lib: Any, requires_grad: bool = True) -> Any:
    return lib.tensor([[1.0, 2.0, -1.0], [0.5, -0.3, 0.2]], requires_grad=requires_grad)


def _module(lib: Any, fn: Callable) -> Any:
    """A module of ``lib`` whose forward is ``fn``."""

    class Fn(lib.nn.Module):
        def forward(self, *args, **kwargs):
            return fn(*args, **kwargs)

    return Fn()


# ----------------------------------------------------------------------------------------------
# Arguments, order, gradients


def test_linear_hooks_get_pytorchs_arguments_and_graph() -> None:
    def program(lib, log):
        layer = _linear(lib, 3, 2)
        full, pre = _logging_hooks(log, "lin")
        layer.register_full_backward_pre_hook(pre)
        layer.register_full_backward_hook(full)
        x = _x(lib)
        y = layer(x)
        log.append(_node_chain(y))
        log.append([(n.name() if n else None, nr) for n, nr in y.grad_fn.next_functions])
        (y * lib.tensor([[1.0, 2.0], [-1.0, 0.5]])).sum().backward()
        return x.grad, layer.weight.grad, layer.bias.grad

    result = _same(program)
    log = result[1]
    assert log[0] == ["BackwardHookFunctionBackward", "AddmmBackward0",
                      "BackwardHookFunctionBackward"]
    assert [entry[:2] for entry in log[2:]] == [("lin", "pre"), ("lin", "full")]


def test_sequential_hooks_run_in_pytorchs_order_across_modules_and_on_retained_graphs() -> None:
    """Hooks on a Sequential and on each of its layers; the graph is run twice
    (``retain_graph``), the hooks fire both times and the gradients accumulate."""

    def program(lib, log):
        model = lib.nn.Sequential(_linear(lib, 3, 4), lib.nn.Tanh(), _linear(lib, 4, 2, 0.15))
        for name, module in (("outer", model), *((f"inner{i}", m) for i, m in enumerate(model))):
            full, pre = _logging_hooks(log, name)
            module.register_full_backward_hook(full)
            module.register_full_backward_pre_hook(pre)
        x = _x(lib)
        y = model(x)
        log.append(_node_chain(y))
        loss = y.pow(2).sum()
        loss.backward(retain_graph=True)
        log.append(("grad", _fmt(x.grad)))
        loss.backward()
        return x.grad, model[0].weight.grad, model[2].bias.grad

    log = _same(program)[1]
    assert log[0] == ["BackwardHookFunctionBackward"] * 2 + ["AddmmBackward0"] + [
        "BackwardHookFunctionBackward"] * 2 + ["TanhBackward0"] + [
        "BackwardHookFunctionBackward"] * 2 + ["AddmmBackward0"] + [
        "BackwardHookFunctionBackward"] * 2
    order = [(entry[0], entry[1]) for entry in log[1:] if entry[0] != "grad"]
    one_pass = [("outer", "pre"), ("inner2", "pre"), ("inner2", "full"), ("inner1", "pre"),
                ("inner1", "full"), ("inner0", "pre"), ("inner0", "full"), ("outer", "full")]
    assert order == one_pass * 2


def test_multiple_inputs_kwargs_and_tuple_outputs() -> None:
    """grad_input has one entry per positional argument: None for a non-tensor, the gradient
    PyTorch gives (zeros) for a tensor that does not require grad; keyword arguments are not
    hooked. grad_output has None for non-tensor outputs and outputs that got no gradient."""

    def program(lib, log):
        def forward(a, k, b, c=None):
            log.append(("forward gets", a.grad_fn.name(), b.requires_grad, b._base is not None,
                        c.grad_fn))
            return a * b * k, b * 2, "text", a + c, a * 3

        module = _module(lib, forward)
        full, pre = _logging_hooks(log, "m")
        module.register_full_backward_hook(full)
        module.register_full_backward_pre_hook(pre)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])
        c = lib.tensor([5.0, 6.0], requires_grad=True)
        out = module(a, 3, b, c=c)
        log.append([(o.grad_fn.name() if o.grad_fn else None, o.requires_grad)
                    if isinstance(o, lib.Tensor) else o for o in out])
        (out[0].sum() + 2 * out[3].sum()).backward()
        return a.grad, c.grad

    log = _same(program)[1]
    full_call = next(entry for entry in log if entry[1] == "full")
    grad_input, grad_output = full_call[3], full_call[4]
    assert grad_input[1] is None and grad_input[2] == ((2,), [0.0, 0.0])
    assert grad_output[1] is None and grad_output[2] is None and grad_output[4] is None


@pytest.mark.parametrize("case", ["unused input", "same tensor twice", "identity",
                                  "same output twice", "namedtuple output", "output detached",
                                  "shared module"])
def test_input_and_output_shapes_of_forward(case: str) -> None:
    def program(lib, log):
        import collections

        pair = collections.namedtuple("pair", "p q")
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        forwards = {
            "unused input": (lambda x, y: x * 2, (a, b), lambda o: o.sum()),
            "same tensor twice": (lambda x, y: x * y, (a, a), lambda o: o.sum()),
            "identity": (lambda x: x, (a,), lambda o: (o * o).sum()),
            "same output twice": (lambda x: (x * 2,) * 2, (a,),
                                  lambda o: o[0].sum() + 2 * o[1].sum()),
            "namedtuple output": (lambda x: pair(x * 2, x * 3), (a,), lambda o: o.q.sum()),
            "output detached": (lambda x: x.detach() * 2, (a,), lambda o: (o * a).sum()),
            "shared module": (lambda x: x * 3, (a,), None),
        }
        fn, args, loss = forwards[case]
        module = _module(lib, fn)
        full, pre = _logging_hooks(log, "m")
        module.register_full_backward_hook(full)
        module.register_full_backward_pre_hook(pre)
        if loss is None:  # the module used twice in one graph
            y = module(module(a) + 1)
            (y * lib.tensor([1.0, 2.0])).sum().backward()
        else:
            out = module(*args)
            log.append(type(out).__name__)
            loss(out).backward()
        return a.grad, b.grad

    _same(program)


def test_full_hook_replaces_grad_input_and_pre_hook_replaces_grad_output() -> None:
    def program(lib, log):
        model = lib.nn.Sequential(_linear(lib, 3, 4), lib.nn.Tanh(), _linear(lib, 4, 2, 0.15))

        def times_three(module, grad_output):
            log.append(("pre", _fmt(grad_output)))
            return (grad_output[0] * 3,)

        def negate(module, grad_input, grad_output):
            log.append(("full", _fmt(grad_input), _fmt(grad_output)))
            return (-grad_input[0],)

        def plus_one(module, grad_input, grad_output):
            log.append(("outer", _fmt(grad_input), _fmt(grad_output)))
            return (grad_input[0] + 1,)

        model[2].register_full_backward_pre_hook(times_three)
        model[0].register_full_backward_hook(negate)
        model.register_full_backward_hook(plus_one)
        x = _x(lib)
        model(x).sum().backward()
        return x.grad, model[0].weight.grad, model[2].weight.grad

    log = _same(program)[1]
    assert [entry[0] for entry in log] == ["pre", "full", "outer"]


@pytest.mark.parametrize("replacement", ["None for a grad_input", "None for a grad_output",
                                         "a grad_output for an unused output",
                                         "a grad_input for an input not requiring grad",
                                         "pre-hook returns a list"])
def test_replacing_gradients_with_none_or_for_missing_ones(replacement: str) -> None:
    def program(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0, 6.0])
        full_hook, pre_hook = {
            "None for a grad_input": (lambda gi: (None, gi[1]), None),
            "None for a grad_output": (None, lambda go: (None, go[1])),
            "a grad_output for an unused output": (None, lambda go: (go[0], lib.ones(2))),
            "a grad_input for an input not requiring grad": (
                lambda gi: (gi[0], lib.ones(2) * 5), None),
            "pre-hook returns a list": (None, lambda go: [go[0] * 2, go[1]]),
        }[replacement]
        second = c if replacement.endswith("not requiring grad") else b
        module = _module(lib, lambda x, y: (x * y, x + y))

        def full(m, gi, go):
            log.append(("full", _fmt(gi), _fmt(go)))
            return full_hook(gi) if full_hook else None

        def pre(m, go):
            log.append(("pre", _fmt(go)))
            return pre_hook(go) if pre_hook else None

        module.register_full_backward_hook(full)
        module.register_full_backward_pre_hook(pre)
        out = module(a, second)
        loss = out[0].sum() if "unused" in replacement else out[0].sum() + out[1].sum()
        loss.backward()
        return a.grad, b.grad

    _same(program)


def test_prepend_and_removal() -> None:
    def program(lib, log):
        layer = _linear(lib, 3, 2)
        handles = {}
        for name, prepend in (("a", False), ("b", True), ("c", False)):
            full, pre = _logging_hooks(log, name)
            handles[name] = (layer.register_full_backward_hook(full, prepend=prepend),
                             layer.register_full_backward_pre_hook(pre, prepend=prepend))
        x = _x(lib)
        layer(x).sum().backward()
        log.append("b removed")
        for handle in handles["b"]:
            handle.remove()
            handle.remove()  # a second remove() does nothing
        layer(x).sum().backward()
        log.append("all removed")
        for name in "ac":
            for handle in handles[name]:
                handle.remove()
        y = layer(x)
        log.append(y.grad_fn.name())
        y.sum().backward()
        with layer.register_full_backward_hook(_logging_hooks(log, "ctx")[0]):
            layer(x).sum().backward()
        layer(x).sum().backward()
        log.append(type(handles["a"][0]).__module__.replace("chainrule", "torch"))
        return x.grad

    log = _same(program)[1]
    order = [entry[:2] if isinstance(entry, tuple) else entry for entry in log]
    assert order == [
        ("b", "pre"), ("a", "pre"), ("c", "pre"), ("b", "full"), ("a", "full"), ("c", "full"),
        "b removed", ("a", "pre"), ("c", "pre"), ("a", "full"), ("c", "full"),
        "all removed", "AddmmBackward0", ("ctx", "full"), "torch.utils.hooks",
    ]


def test_global_hooks_run_before_module_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    def program(lib, log):
        hooks_module = lib.nn.modules.module
        # Global hooks leave their full/legacy flag set (as PyTorch's): restore it afterwards.
        monkeypatch.setattr(hooks_module, "_global_is_full_backward_hook",
                            hooks_module._global_is_full_backward_hook)
        layer = _linear(lib, 3, 2)
        full, pre = _logging_hooks(log, "local")
        layer.register_full_backward_hook(full)
        layer.register_full_backward_pre_hook(pre)
        global_full, global_pre = _logging_hooks(log, "global")
        handles = [hooks_module.register_module_full_backward_hook(global_full),
                   hooks_module.register_module_full_backward_pre_hook(global_pre)]
        try:
            tanh = lib.nn.Tanh()
            x = _x(lib)
            y = tanh(layer(x))
            log.append(_node_chain(y))
            y.sum().backward()
            log.append(attempt(lambda: hooks_module.register_module_backward_hook(global_full)))
        finally:
            for handle in handles:
                handle.remove()
        y = tanh(layer(x))
        log.append(y.grad_fn.name())
        y.sum().backward()
        return x.grad

    log = _same(program)[1]
    assert [entry[:3] if isinstance(entry, tuple) and len(entry) > 2 else entry
            for entry in log[1:]] == [
        ("global", "pre", "Tanh"), ("global", "full", "Tanh"), ("global", "pre", "Linear"),
        ("local", "pre", "Linear"), ("global", "full", "Linear"), ("local", "full", "Linear"),
        ("RuntimeError", "Cannot use both regular backward hooks and full backward hooks as a "
         "global Module hook. Please use only one of them."),
        "TanhBackward0", ("local", "pre", "Linear"), ("local", "full", "Linear"),
    ]


def test_double_backward_through_hooked_modules() -> None:
    """``create_graph``: the hooks fire on the first pass; the second-order pass reaches the
    inputs' hook node without passing the outputs' (PyTorch's hook then does nothing)."""

    def program(lib, log):
        layer = _linear(lib, 3, 4)
        tanh = lib.nn.Tanh()
        for name, module in (("lin", layer), ("tanh", tanh)):
            full, pre = _logging_hooks(log, name)
            module.register_full_backward_hook(full)
            module.register_full_backward_pre_hook(pre)
        x = _x(lib)
        (g,) = lib.autograd.grad(tanh(layer(x)).sum(), x, create_graph=True)
        log.append(("g", _fmt(g), _node_chain(g)))
        g.pow(2).sum().backward()
        return x.grad, layer.weight.grad

    _same(program)


# ----------------------------------------------------------------------------------------------
# Errors and warnings


@pytest.mark.parametrize("mistake", [
    "full hook returns two values", "pre-hook returns two values", "pre-hook changes the size",
    "full hook changes the size", "full hook changes the dtype", "full hook returns an int",
    "pre-hook returns a tensor", "hook raises",
])
def test_hooks_returning_the_wrong_thing_raise_pytorchs_errors(mistake: str) -> None:
    def program(lib, log):
        full_hook, pre_hook = {
            "full hook returns two values": (lambda gi, go: (gi[0], gi[0]), None),
            "pre-hook returns two values": (None, lambda go: (go[0], go[0])),
            "pre-hook changes the size": (None, lambda go: (go[0][:1],)),
            "full hook changes the size": (lambda gi, go: (gi[0][:1],), None),
            "full hook changes the dtype": (lambda gi, go: (gi[0].double(),), None),
            "full hook returns an int": (lambda gi, go: (3,), None),
            "pre-hook returns a tensor": (None, lambda go: go[0] * lib.ones(2, 2)),
            "hook raises": (lambda gi, go: 1 / 0, None),
        }[mistake]
        layer = _linear(lib, 3, 2)
        if full_hook is not None:
            layer.register_full_backward_hook(lambda m, gi, go: full_hook(gi, go))
        if pre_hook is not None:
            layer.register_full_backward_pre_hook(lambda m, go: pre_hook(go))
        x = _x(lib)
        layer(x).sum().backward()

    (outcome, _, _), _ = _run(program)
    assert outcome[0] != "ok"
    _same(program)


def test_modifying_a_hooked_input_or_output_in_place_is_pytorchs_error() -> None:
    def program(lib, log):
        model = lib.nn.Sequential(lib.nn.ReLU(inplace=True), _linear(lib, 3, 2))
        model.register_full_backward_hook(lambda m, gi, go: None)
        x = _x(lib)
        log.append(attempt(lambda: model(x)))
        layer = _linear(lib, 3, 2)
        layer.register_full_backward_pre_hook(lambda m, go: None)
        log.append(attempt(lambda: layer(x).add_(1)))
        relu = lib.nn.ReLU(inplace=True)
        relu.register_full_backward_hook(lambda m, gi, go: None)
        # Not hooked when no input requires grad: in place is fine then.
        return relu(lib.tensor([1.0, -2.0]))

    log = _same(program)[1]
    assert log[0] == ("RuntimeError",
                      "Output 0 of BackwardHookFunction is a view and is being modified inplace. "
                      "This view was created inside a custom Function (or because an input was "
                      "returned as-is) and the autograd logic to handle view+inplace would "
                      "override the custom backward associated with the custom Function, leading "
                      "to incorrect gradients. This behavior is forbidden. You can fix this by "
                      "cloning the output of the custom Function.")
    assert log[1] == log[0]


@pytest.mark.parametrize("how", ["backward", "autograd.backward", "autograd.grad"])
def test_no_input_requiring_grad_fires_at_the_outputs_with_a_warning(how: str) -> None:
    """grad_input all None, called when grad_output is known, PyTorch's warning pointing where
    PyTorch's points (the ``backward()`` line, or the caller of the code that called
    ``autograd.backward`` / ``autograd.grad``)."""

    def program(lib, log):
        layer = _linear(lib, 3, 2)
        full, pre = _logging_hooks(log, "lin")
        layer.register_full_backward_hook(full)
        layer.register_full_backward_pre_hook(pre)
        loss = layer(_x(lib, requires_grad=False)).sum()
        if how == "backward":
            loss.backward()
        elif how == "autograd.backward":
            lib.autograd.backward(loss)
        else:
            return lib.autograd.grad(loss, layer.bias)
        return layer.weight.grad

    (_, log, caught) = _same(program)
    assert log[-1][3] == (None,)
    assert caught[0][1].startswith("Full backward hook is firing when gradients are computed")
    assert caught[0][2]  # pointing at this file


def test_no_input_requiring_grad_hook_may_only_return_nones() -> None:
    def program(lib, log):
        layer = _linear(lib, 3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: (None,))
        layer(_x(lib, requires_grad=False)).sum().backward()
        other = _linear(lib, 3, 2)
        other.register_full_backward_hook(lambda m, gi, go: (go[0],))
        other(_x(lib, requires_grad=False)).sum().backward()

    (outcome, _, caught), _ = _run(program)
    assert outcome[0] == "RuntimeError" and len(caught) == 2
    _same(program)


def test_no_hooks_under_no_grad() -> None:
    def program(lib, log):
        layer = _linear(lib, 3, 2)
        full, pre = _logging_hooks(log, "lin")
        layer.register_full_backward_hook(full)
        layer.register_full_backward_pre_hook(pre)
        with lib.no_grad():
            y = layer(_x(lib))
        return y.requires_grad, y.grad_fn

    (_, log, caught) = _same(program)
    assert log == [] and caught == []


@pytest.mark.parametrize("output", ["dict", "list"])
def test_outputs_that_are_not_tensors_or_tuples_warn_and_get_no_hooks(output: str) -> None:
    def program(lib, log):
        wrap = (lambda t: {"out": t}) if output == "dict" else (lambda t: [t])
        module = _module(lib, lambda x: wrap(x * 2))
        full, pre = _logging_hooks(log, "m")
        module.register_full_backward_hook(full)
        module.register_full_backward_pre_hook(pre)
        x = _x(lib)
        out = module(x)
        (out["out"] if output == "dict" else out[0]).sum().backward()
        return x.grad

    (_, log, caught) = _same(program)
    assert log == [] and len(caught) == 1


def test_return_types_outputs_fail_as_in_pytorch() -> None:
    """A hooked module returning ``torch.return_types.max``: PyTorch rebuilds it with
    ``type(result)(*items)``, which struct sequences refuse."""

    def program(lib, log):
        module = _module(lib, lambda x: lib.max(x, 1))
        module.register_full_backward_hook(lambda m, gi, go: None)
        return module(_x(lib))

    (outcome, _, _), _ = _run(program)
    assert outcome[0] == "TypeError"
    _same(program)


def test_skipping_module_init_is_pytorchs_error() -> None:
    def program(lib, log):
        class NoInit(lib.nn.Module):
            def __init__(self):
                pass

            def forward(self, x):
                return x

        return NoInit()(lib.ones(1))

    _same(program)


# ----------------------------------------------------------------------------------------------
# The legacy hook


@pytest.mark.parametrize("case", ["linear, leaf input", "linear, non-leaf input",
                                  "two outputs", "dict output", "non-tensor input",
                                  "replaces grad_input", "global"])
def test_legacy_backward_hook_is_a_hook_on_the_last_node_with_pytorchs_warnings(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def program(lib, log):
        def legacy(module, grad_input, grad_output):
            log.append(("legacy", type(module).__name__, _fmt(grad_input), _fmt(grad_output)))
            if case == "replaces grad_input":
                return (grad_input[0] * 10, None)
            return None

        x = _x(lib)
        if case.startswith("linear"):
            module = _linear(lib, 3, 2)
            args: tuple = (x if case.endswith("leaf input") and "non" not in case else x * 2,)
        elif case == "two outputs":
            module = _module(lib, lambda a, b: (a * b, a + b))
            args = (x * 1, x * 2)
        elif case == "dict output":
            module = _module(lib, lambda a: {"a": a * 2})
            args = (x * 1,)
        elif case == "non-tensor input":
            module = _module(lib, lambda a, k: a * k)
            args = (x * 1, 3)
        else:
            module = _module(lib, lambda a: a * 3)
            args = (x,)
        if case == "global":
            hooks_module = lib.nn.modules.module
            monkeypatch.setattr(hooks_module, "_global_is_full_backward_hook",
                                hooks_module._global_is_full_backward_hook)
            handle = hooks_module.register_module_backward_hook(legacy)
            log.append(attempt(lambda: hooks_module.register_module_full_backward_hook(legacy)))
        else:
            handle = module.register_backward_hook(legacy)
            log.append(attempt(lambda: module.register_full_backward_hook(legacy)))
        try:
            out = module(*args)
        finally:
            handle.remove()
        if isinstance(out, dict):
            out = out["a"]
        elif isinstance(out, tuple):
            out = out[0] + out[1]
        out.sum().backward()
        return x.grad

    (_, log, caught) = _same(program)
    assert [entry[0] for entry in log] == ["RuntimeError", "legacy"]
    assert len(caught) == 1 and caught[0][0] == "FutureWarning"


def test_full_then_legacy_hook_on_one_module_is_refused() -> None:
    def program(lib, log):
        layer = _linear(lib, 3, 2)
        layer.register_full_backward_hook(lambda m, gi, go: None)
        layer.register_backward_hook(lambda m, gi, go: None)

    (outcome, _, _), _ = _run(program)
    assert outcome[0] == "RuntimeError"
    _same(program)


# ----------------------------------------------------------------------------------------------
# What the hooks are built on


def test_utils_hooks_offers_pytorchs_names() -> None:
    for lib in LIBS:
        hooks = lib.utils.hooks
        assert {"RemovableHandle", "BackwardHook", "unserializable_hook",
                "warn_if_has_hooks"} <= set(hooks.__all__)
        store: dict = {}
        flags: dict = {}
        hook_dict = type("Hooks", (dict,), {})()  # (a dict type that can be weakly referenced)
        flag_dict = type("Flags", (dict,), {})()
        handle = hooks.RemovableHandle(hook_dict, extra_dict=[flag_dict])
        hook_dict[handle.id] = store
        flag_dict[handle.id] = flags
        handle.remove()
        assert hook_dict == {} and flag_dict == {}
        assert lib.nn.modules._functions.BackwardHookFunction.__name__ == "BackwardHookFunction"


def test_warn_if_has_hooks_names_the_hooks_not_marked_unserializable() -> None:
    def program(lib, log):
        def named(grad):
            return None

        x = lib.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(named)
        x.register_hook(lib.utils.hooks.unserializable_hook(lambda grad: None))
        x.register_hook(named)
        for t in (x, y, lib.ones(1)):
            lib.utils.hooks.warn_if_has_hooks(t)

    caught = _same(program)[2]
    assert len(caught) == 2 and "will not be serialized" in caught[0][1]


def test_custom_function_post_hook_sees_the_gradient_of_an_input_not_requiring_grad() -> None:
    """PyTorch hands a node's post hooks every gradient its backward returned, also for inputs
    that do not require grad (which go nowhere): the module hooks' grad_input shows them."""

    def program(lib, log):
        class Pass(lib.autograd.Function):
            @staticmethod
            def forward(ctx, *args):
                ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
                return args

            @staticmethod
            def backward(ctx, *grads):
                return grads

        x = lib.tensor([1.0, -2.0], requires_grad=True)
        z = lib.tensor([3.0, 4.0])
        a, b = Pass.apply(x * 1, z)
        a.grad_fn.register_hook(lambda gi, go: log.append((_fmt(gi), _fmt(go))))
        (a * 2 + b).sum().backward()
        return x.grad

    log = _same(program)[1]
    assert log[0][0][1] == ((2,), [0.0, 0.0])
