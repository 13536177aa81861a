"""``autograd.graph``'s utilities compared with PyTorch: ``GradientEdge`` and
``get_gradient_edge`` (and edges standing for tensors in ``autograd.grad`` and ``backward``),
``register_multi_grad_hook``, ``increment_version``, ``save_on_cpu``,
``allow_mutation_on_saved_tensors`` and ``disable_saved_tensors_hooks``; and the engine running a
node that received no gradient (its hooks see None), which ``register_multi_grad_hook`` counts on.

Every program runs once with ``lib = chainrule`` and once with ``lib = torch``; what it returns
(values, hook calls in order, node names) or raises (type and message) must be the same.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch
from .outcomes import attempt

# ----------------------------------------------------------------------------------------------
# Helpers


def _plain(value: Any) -> Any:
    """What a program returned, comparable across the libraries: tensors as (values, dtype,
    requires_grad), nodes by name, containers element by element, anything else by its text."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return normalise_output(value)
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        data = np.round(value.detach().numpy().astype(float), 4).tolist()
        return ("tensor", data, normalise_output(str(value.dtype)), value.requires_grad)
    if isinstance(value, chainrule.autograd.graph.Node | torch.autograd.graph.Node):
        return ("node", value.name().replace("torch::", "chainrule::"))
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return normalise_output(repr(value))


_WHERE = re.compile(r" The tensor was last modified in place at \S+\.$")


def _run(program: Callable[[Any], Any], lib: Any) -> tuple:
    """``("ok", plain result)`` or ``(exception type, message)`` of ``program(lib)`` (without
    chainrule's note on where a tensor was modified in place, beyond PyTorch's message)."""
    kind, result = attempt(lambda: program(lib), _plain)
    if kind != "ok":
        result = _WHERE.sub("", result)
    return kind, result


def _same(program: Callable[[Any], Any]) -> tuple:
    """Run ``program`` with both libraries, check they agree; PyTorch's outcome."""
    theirs = _run(program, torch)
    ours = _run(program, chainrule)
    assert ours == theirs
    return theirs


def _grads(gs: Any) -> Any:
    """Gradients a hook received, as lists (None kept)."""
    if gs is None:
        return None
    if isinstance(gs, list | tuple):
        return [_grads(g) for g in gs]
    return np.round(gs.detach().numpy().astype(float), 4).tolist()


def _leaves(lib: Any) -> tuple:
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    return a, b


class _TwoOut:
    """A custom Function of two inputs whose backward gives no gradient to the first."""

    @staticmethod
    def make(lib: Any) -> Any:
        class TwoOut(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * 1, y * 1

            @staticmethod
            def backward(ctx, gx, gy):
                return None, gy

        return TwoOut


# ----------------------------------------------------------------------------------------------
# GradientEdge and get_gradient_edge


def test_graph_has_pytorchs_public_names() -> None:
    missing = {
        name for name in torch.autograd.graph.__all__
        if not hasattr(chainrule.autograd.graph, name)
    }
    # (compile-time and CUDA-stream switches: nothing to do here)
    assert missing == {
        "region_activation_memory_budget", "set_warn_on_accumulate_grad_stream_mismatch",
        "set_override_stale_capture_stream",
    }
    for name in ("GradientEdge", "get_gradient_edge", "increment_version", "save_on_cpu",
                 "register_multi_grad_hook", "allow_mutation_on_saved_tensors"):
        assert name in chainrule.autograd.graph.__all__


def test_gradient_edge_is_pytorchs_named_tuple() -> None:
    def program(lib):
        GradientEdge = lib.autograd.graph.GradientEdge
        a, _ = _leaves(lib)
        b = a * 3
        edge = GradientEdge(b.grad_fn, 0)
        return [
            GradientEdge._fields, len(edge), edge.ownership_token, edge[1], isinstance(edge, tuple),
            repr(GradientEdge(1, 2)), GradientEdge.__module__.replace("torch", "chainrule"),
            edge == lib.autograd.graph.get_gradient_edge(b), GradientEdge.__doc__,
            edge.node is b.grad_fn,
        ]

    assert _same(program)[0] == "ok"


def test_get_gradient_edge_names_the_node_and_output() -> None:
    def program(lib):
        get = lib.autograd.graph.get_gradient_edge
        TwoOut = _TwoOut.make(lib)
        a, b = _leaves(lib)
        c = a * b
        s = lib.arange(4.0, requires_grad=True)
        p, q = s.split(2)
        o1, o2 = TwoOut.apply(a * 1, b)
        result = []
        for t in (a, c, p, q, o1, o2):
            edge = get(t)
            result.append((edge.node, edge.output_nr, edge.ownership_token))
        leaf_acc = (a * 1).grad_fn.next_functions[0][0]
        result.append(get(a).node is leaf_acc)
        result.append(get(c).node is c.grad_fn)
        result.append(get(o2).ownership_token.next_functions[0][0] is o2.grad_fn)
        return result

    outcome = _same(program)
    assert outcome[1][4] == [("node", "TwoOutBackward"), 0, ("node", "ViewBackward0")]


@pytest.mark.parametrize("case", ["no_grad", "no_grad_view_of_leaf"])
def test_get_gradient_edge_refusals(case: str) -> None:
    def program(lib):
        if case == "no_grad":
            return lib.autograd.graph.get_gradient_edge(lib.ones(2))
        a = lib.ones(2)
        with lib.no_grad():
            v = a[:1]
        a.requires_grad_()
        return v.requires_grad, lib.autograd.graph.get_gradient_edge(v)

    assert _same(program)[0] in ("RuntimeError", "AssertionError")


def _sin_graph(lib: Any) -> tuple:
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    c = b.sin()
    return a, b, c


# name -> program(lib): autograd.grad with GradientEdges among its inputs or outputs
GRAD_CASES: dict[str, Callable[[Any], Any]] = {
    "input_nonleaf_edge": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.get_gradient_edge(b)))(*_sin_graph(lib)),
    "inputs_mixed": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), [lib.autograd.graph.get_gradient_edge(a), b,
                  lib.autograd.graph.get_gradient_edge(b)]))(*_sin_graph(lib)),
    "input_edge_by_hand": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.GradientEdge(b.grad_fn, 0)))(*_sin_graph(lib)),
    "input_edge_create_graph": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.get_gradient_edge(b), create_graph=True))(*_sin_graph(lib)),
    "input_split_output_edge": lambda lib: (lambda s: (lambda p, q: lib.autograd.grad(
        (p * q * q).sum(), lib.autograd.graph.get_gradient_edge(q)))(*s.split(2)))(
        lib.arange(4.0, requires_grad=True)),
    "output_edge_given_grad": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c), a, grad_outputs=lib.tensor([1.0, -1.0])))(
        *_sin_graph(lib)),
    "output_edge_implicit_scalar": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c.sum()), a))(*_sin_graph(lib)),
    "output_edge_implicit_non_scalar": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c), a))(*_sin_graph(lib)),
    "output_edge_bad_shape": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c), a, grad_outputs=lib.ones(3)))(*_sin_graph(lib)),
    "output_edge_complex_grad": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c), a,
        grad_outputs=lib.ones(2, dtype=lib.complex64)))(*_sin_graph(lib)),
    "output_edge_float64_grad_cast": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c), a,
        grad_outputs=lib.tensor([0.1, 0.2], dtype=lib.float64)))(*_sin_graph(lib)),
    "output_edge_float16_rounds_the_grad": lambda lib: (lambda a: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge((a * 3).sin()), a,
        grad_outputs=lib.tensor([1000.3, -0.7], dtype=lib.float64)))(
        lib.tensor([1.0, 2.0], dtype=lib.float16, requires_grad=True)),
    "output_edge_by_hand_implicit_scalar": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.GradientEdge(c.sum().grad_fn, 0), a))(*_sin_graph(lib)),
    "output_edge_by_hand_implicit_non_scalar": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.GradientEdge(c.grad_fn, 0), a))(*_sin_graph(lib)),
    "output_edge_by_hand_bad_shape": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.GradientEdge(c.grad_fn, 0), a, grad_outputs=lib.ones(2, 1)))(
        *_sin_graph(lib)),
    "output_leaf_edge": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(a), a, grad_outputs=lib.ones(2)))(
        *_sin_graph(lib)),
    "output_and_input_same_edge": lambda lib: (lambda a, b, c: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(c), lib.autograd.graph.get_gradient_edge(c),
        grad_outputs=lib.ones(2)))(*_sin_graph(lib)),
    "output_split_edge": lambda lib: (lambda s: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(s.split(2)[1]), s, grad_outputs=lib.ones(2)))(
        lib.arange(4.0, requires_grad=True)),
    "output_split_edge_implicit": lambda lib: (lambda s: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge(s.split(2)[1]), s))(
        lib.arange(4.0, requires_grad=True)),
    "output_float64_scalar_edge": lambda lib: (lambda x: lib.autograd.grad(
        lib.autograd.graph.get_gradient_edge((x * x).sum()), x))(
        lib.ones(3, dtype=lib.float64, requires_grad=True)),
    "unused_edge": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.get_gradient_edge(lib.ones(2, requires_grad=True) * 2)))(
        *_sin_graph(lib)),
    "unused_edge_allowed": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.get_gradient_edge(lib.ones(2, requires_grad=True) * 2),
        allow_unused=True))(*_sin_graph(lib)),
    "unused_edge_materialized": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.get_gradient_edge(lib.ones(2, requires_grad=True) * 2),
        materialize_grads=True))(*_sin_graph(lib)),
    "used_edge_materialized": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), lib.autograd.graph.get_gradient_edge(b), materialize_grads=True))(
        *_sin_graph(lib)),
    "materialized_tensor_create_graph": lambda lib: (lambda a, u: lib.autograd.grad(
        (a * 2).sum(), [a, u], materialize_grads=True, create_graph=True))(
        *_leaves(lib)),
    "input_not_tensor_or_edge": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), (a, 1)))(*_sin_graph(lib)),
    "input_edge_of_none": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), [lib.autograd.graph.GradientEdge(None, 0)]))(*_sin_graph(lib)),
    "input_edge_str_output_nr": lambda lib: (lambda a, b, c: lib.autograd.grad(
        c.sum(), [lib.autograd.graph.GradientEdge(b.grad_fn, "x")]))(*_sin_graph(lib)),
    "output_not_tensor": lambda lib: lib.autograd.grad([1], _leaves(lib)[0]),
    "output_edge_of_int": lambda lib: lib.autograd.grad(
        [lib.autograd.graph.GradientEdge(1, 0)], _leaves(lib)[0], grad_outputs=[lib.ones(1)]),
    "output_edge_str_output_nr": lambda lib: (lambda a, b, c: lib.autograd.grad(
        [lib.autograd.graph.GradientEdge(b.grad_fn, "x")], a, grad_outputs=[lib.ones(2)]))(
        *_sin_graph(lib)),
}


GRAD_ERRORS = {
    "output_edge_implicit_non_scalar": "RuntimeError", "output_edge_bad_shape": "RuntimeError",
    "output_edge_by_hand_implicit_non_scalar": "RuntimeError",
    "output_edge_by_hand_bad_shape": "RuntimeError",
    "output_edge_complex_grad": "RuntimeError", "output_split_edge_implicit": "RuntimeError",
    "unused_edge": "RuntimeError", "unused_edge_materialized": "RuntimeError",
    "input_not_tensor_or_edge": "RuntimeError", "input_edge_of_none": "RuntimeError",
    "input_edge_str_output_nr": "TypeError", "output_not_tensor": "AssertionError",
    "output_edge_of_int": "AttributeError", "output_edge_str_output_nr": "TypeError",
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradient_edges_in_autograd_grad(name: str) -> None:
    outcome = _same(GRAD_CASES[name])
    assert outcome[0] == GRAD_ERRORS.get(name, "ok"), outcome


def test_an_edge_gives_the_gradient_into_it() -> None:
    a, b, c = _sin_graph(chainrule)
    edge = chainrule.autograd.graph.get_gradient_edge(b)
    (by_edge,) = chainrule.autograd.grad(c.sum(), edge, retain_graph=True)
    (by_tensor,) = chainrule.autograd.grad(c.sum(), b)
    assert by_edge.tolist() == by_tensor.tolist() == np.cos([3.0, 6.0]).astype(np.float32).tolist()


def _backward_program(case: str) -> Callable[[Any], Any]:
    def program(lib):
        get = lib.autograd.graph.get_gradient_edge
        a, b, c = _sin_graph(lib)
        if case == "leaf_edge_input":
            c.sum().backward(inputs=[get(a)])
        elif case == "nonleaf_edge_input":
            c.sum().backward(inputs=get(b))
            return a.grad, b.retains_grad, b.grad_fn.name()
        elif case == "tensor_backward_edge_tuple":
            c.backward(lib.ones(2), inputs=(get(a),))
        elif case == "edge_root":
            lib.autograd.backward(get(c), lib.tensor([1.0, 2.0]))
        elif case == "edge_root_implicit":
            lib.autograd.backward(get(c))
        elif case == "edge_root_scalar":
            lib.autograd.backward(get(c.sum()))
        elif case == "unused_edge_input":
            c.sum().backward(inputs=[get(lib.ones(2, requires_grad=True) * 2)])
        elif case == "input_not_tensor":
            c.sum().backward(inputs=[a, 3])
        elif case == "root_not_tensor":
            lib.autograd.backward([3])
        elif case == "empty_inputs":
            c.sum().backward(inputs=[])
        return a.grad

    return program


@pytest.mark.parametrize("case", [
    "leaf_edge_input", "nonleaf_edge_input", "tensor_backward_edge_tuple", "edge_root",
    "edge_root_implicit", "edge_root_scalar", "unused_edge_input", "input_not_tensor",
    "root_not_tensor", "empty_inputs",
])
def test_gradient_edges_in_backward(case: str) -> None:
    outcome = _same(_backward_program(case))
    if case in ("leaf_edge_input", "edge_root", "edge_root_scalar"):
        assert outcome[0] == "ok" and outcome[1] is not None


# ----------------------------------------------------------------------------------------------
# register_multi_grad_hook


def test_multi_grad_hook_docstring_example() -> None:
    def program(lib):
        log: list = []
        a, b = _leaves(lib)
        c = a * b
        d = a * b
        handle = lib.autograd.graph.register_multi_grad_hook(
            (a, b, c, d), lambda grads: log.append(_grads(grads)))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        return log, type(handle).__name__, type(handle).__mro__[1].__name__

    outcome = _same(program)
    assert outcome[1][0] == [[[3.0, 4.0], [1.0, 2.0], [1.0, 1.0], None],
                             [[3.0, 4.0], None, [1.0, 1.0], None]]


def _all_mode_passes(lib: Any) -> list:
    """One 'all' hook over four tensors, then backward passes over different parts of the
    graph: the number of gradients waited for is fixed per pass."""
    log: list = []
    get = lib.autograd.graph.get_gradient_edge
    p = lib.tensor([1.0], requires_grad=True)
    q = lib.tensor([2.0], requires_grad=True)
    r = p * 3
    s = q * 4
    handle = lib.autograd.graph.register_multi_grad_hook(
        (p, q, r, s), lambda grads: log.append(_grads(grads)))
    r.sum().backward(retain_graph=True)
    s.sum().backward(retain_graph=True)
    (r + s).sum().backward(retain_graph=True)
    lib.autograd.backward([r.sum(), s.sum()], retain_graph=True)
    lib.autograd.grad((r + s).sum(), [r, s], retain_graph=True)
    lib.autograd.grad((r + s).sum(), [get(r)], retain_graph=True)
    (r + s).sum().backward(inputs=[p], retain_graph=True)
    (r + s).sum().backward(inputs=[get(r)], retain_graph=True)
    handle.remove()
    (r + s).sum().backward(retain_graph=True)
    return log


def _all_mode_roots(lib: Any) -> list:
    """A tensor whose node is the pass's single root is not counted (PyTorch makes no dummy
    root then); with several root edges it is."""
    log: list = []
    a, b = _leaves(lib)
    c = a * b
    d = a * b
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda grads: log.append(_grads(grads)))
    c.backward(lib.ones(2), retain_graph=True)
    log.append("--")
    lib.autograd.backward([c, d], [lib.ones(2), lib.ones(2)], retain_graph=True)
    log.append("--")
    lib.autograd.backward([c, c], [lib.ones(2), lib.ones(2)], retain_graph=True)
    return log


def _all_mode_order(lib: Any) -> list:
    """The multi hook and other hooks on the same tensors, in registration order; hooks
    registered after it change what later ones see, not what it got."""
    log: list = []
    m = lib.tensor([1.0, 2.0], requires_grad=True)
    n = m * 2
    z = n.exp()
    lib.autograd.graph.register_multi_grad_hook(
        (m, n, z), lambda grads: log.append(("all", _grads(grads))))
    n.register_hook(lambda g: log.append(("n", _grads(g))) or g * 10)
    m.register_hook(lambda g: log.append(("m", _grads(g))) or g + 1)
    (z * n).sum().backward()
    log.append(("m.grad", _grads(m.grad)))
    return log


def _all_mode_reentrant(lib: Any) -> list:
    """A backward pass started inside a hook is a graph task of its own."""
    log: list = []
    a, b = _leaves(lib)
    c = a * b
    inner = lib.tensor([5.0], requires_grad=True)

    def reentrant(g):
        with lib.enable_grad():
            y = (inner * 2).sum()
        y.backward()
        log.append(("reentrant", _grads(g)))

    c.register_hook(reentrant)
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda grads: log.append(("all", _grads(grads))))
    lib.autograd.graph.register_multi_grad_hook(
        (inner,), lambda grads: log.append(("inner", _grads(grads))))
    c.sum().backward()
    return log


def _all_mode_create_graph(lib: Any) -> list:
    log: list = []
    m = lib.tensor([1.0, 2.0], requires_grad=True)
    n = m * m
    lib.autograd.graph.register_multi_grad_hook((m, n), lambda grads: log.append(
        ([None if g is None else g.requires_grad for g in grads], _grads(grads))))
    lib.autograd.grad(n.sum(), n, create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (backward with create_graph=True warns)
        (n * n).sum().backward(create_graph=True)
    m.grad = None
    return log


def _all_mode_multi_output(lib: Any) -> list:
    log: list = []
    s = lib.arange(4.0, requires_grad=True)
    u, v = s.split(2)
    lib.autograd.graph.register_multi_grad_hook((u, v), lambda gs: log.append(_grads(gs)))
    (u * 2).sum().backward(retain_graph=True)
    (u.sum() + v.sum()).backward(retain_graph=True)
    t = lib.tensor([1.0], requires_grad=True)
    lib.autograd.graph.register_multi_grad_hook((t, t), lambda gs: log.append(_grads(gs)))
    (t * 2).sum().backward()
    return log


def _all_mode_handle(lib: Any) -> list:
    log: list = []
    t = lib.tensor([1.0], requires_grad=True)
    with lib.autograd.graph.register_multi_grad_hook(
            (t,), lambda gs: log.append(_grads(gs))) as handle:
        (t * 2).sum().backward()
    (t * 2).sum().backward()
    log.append((len(handle.handles), hasattr(handle, "id")))
    handle.remove()  # (again: nothing happens)
    return log


def _all_mode_hook_fails(lib: Any) -> list:
    t = lib.tensor([1.0], requires_grad=True)

    def fails(grads):
        raise ValueError(f"got {len(grads)}")

    lib.autograd.graph.register_multi_grad_hook([t], fails)
    (t * 2).sum().backward()
    return []


def _all_mode_leaf_in_autograd_grad(lib: Any) -> list:
    a, b = _leaves(lib)
    c = a * b
    lib.autograd.graph.register_multi_grad_hook((a, b, c), lambda gs: None)
    return list(lib.autograd.grad(c.sum(), (a,)))


def _all_mode_nonleaf_in_autograd_grad(lib: Any) -> list:
    log: list = []
    a, b = _leaves(lib)
    c = a * b
    d = a * b
    lib.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda gs: log.append(_grads(gs)))
    lib.autograd.grad(c.sum(), (c,))
    return log


def _any_mode(lib: Any) -> list:
    log: list = []
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * 3
    handle = lib.autograd.graph.register_multi_grad_hook(
        (x, y, z, lib.ones(1)), lambda g: log.append(_grads(g)), mode="any")
    z.sum().backward(retain_graph=True)
    z.sum().backward(retain_graph=True)
    lib.autograd.grad(z.sum(), y, retain_graph=True)
    (z.sum() * 5).backward(inputs=[x], retain_graph=True)
    handle.remove()
    z.sum().backward()
    log.append(len(handle.handles))
    return log


def _bad_mode(lib: Any) -> Any:
    return lib.autograd.graph.register_multi_grad_hook((_leaves(lib)[0],), print, mode="some")


def _no_grad_tensor_all(lib: Any) -> Any:
    return lib.autograd.graph.register_multi_grad_hook((_leaves(lib)[0], lib.ones(2)), print)


def _generator_of_tensors(lib: Any) -> Any:
    return lib.autograd.graph.register_multi_grad_hook((t for t in _leaves(lib)), print)


def _positional_mode(lib: Any) -> Any:
    return lib.autograd.graph.register_multi_grad_hook((_leaves(lib)[0],), print, "any")


MULTI_CASES: dict[str, Callable[[Any], Any]] = {
    "all_passes": _all_mode_passes, "all_roots": _all_mode_roots, "all_order": _all_mode_order,
    "all_reentrant": _all_mode_reentrant, "all_create_graph": _all_mode_create_graph,
    "all_multi_output": _all_mode_multi_output, "all_handle": _all_mode_handle,
    "all_hook_fails": _all_mode_hook_fails,
    "all_leaf_in_autograd_grad": _all_mode_leaf_in_autograd_grad,
    "all_nonleaf_in_autograd_grad": _all_mode_nonleaf_in_autograd_grad, "any": _any_mode,
    "bad_mode": _bad_mode, "no_grad_tensor_all": _no_grad_tensor_all,
    "generator": _generator_of_tensors, "positional_mode": _positional_mode,
}


@pytest.mark.parametrize("name", sorted(MULTI_CASES))
def test_multi_grad_hook(name: str) -> None:
    outcome = _same(MULTI_CASES[name])
    expected_errors = {
        "all_hook_fails": "ValueError", "all_leaf_in_autograd_grad": "RuntimeError",
        "bad_mode": "ValueError", "no_grad_tensor_all": "AssertionError",
        "generator": "TypeError", "positional_mode": "TypeError",
    }
    assert outcome[0] == expected_errors.get(name, "ok"), outcome
    if outcome[0] == "ok" and name != "all_handle":
        assert outcome[1], "the hooks were called"


def test_multi_grad_hook_counts_what_the_pass_executes() -> None:
    """Spelled out (PyTorch's outcome, which the differential test compares with)."""
    log = _all_mode_passes(chainrule)
    assert log == [
        [[3.0], None, [1.0], None], [None, [4.0], None, [1.0]], [[3.0], [4.0], [1.0], [1.0]],
        [[3.0], [4.0], [1.0], [1.0]], [None, None, [1.0], [1.0]], [None, None, [1.0], None],
        [[3.0], None, [1.0], None], [None, None, [1.0], None],
    ]
    assert _all_mode_roots(chainrule) == [
        [[3.0, 4.0], None, [1.0, 1.0], None], "--",
        [[6.0, 8.0], [2.0, 4.0], [1.0, 1.0], [1.0, 1.0]], "--",
        [[6.0, 8.0], [2.0, 4.0], [2.0, 2.0], None],
    ]


def _threads_log(lib: Any) -> dict[int, list]:
    results: dict[int, list] = {}

    def work(k: int) -> None:
        log: list = []
        x = lib.tensor([float(k)], requires_grad=True)
        y = x * 2
        lib.autograd.graph.register_multi_grad_hook((x, y), lambda gs: log.append(_grads(gs)))
        for _ in range(20):
            (y * y).sum().backward(retain_graph=True)
        results[k] = log

    threads = [threading.Thread(target=work, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_multi_grad_hook_in_threads() -> None:
    """Each thread's backward pass is its own graph task: the hook fires once per pass in each
    thread, with that thread's gradients, as PyTorch's."""
    ours, theirs = _threads_log(chainrule), _threads_log(torch)
    assert ours == theirs and len(ours[1]) == 20


# ----------------------------------------------------------------------------------------------
# Nodes that receive no gradient still run: their hooks see None


def _none_grads_hooks(lib: Any) -> list:
    log: list = []
    TwoOut = _TwoOut.make(lib)
    x, y = _leaves(lib)
    x2 = x * 2
    x.register_hook(lambda g: log.append(("x", _grads(g))))
    x2.register_hook(lambda g: log.append(("x2", _grads(g))))
    x2.grad_fn.register_prehook(lambda g: log.append(("x2 pre", _grads(g))))
    x2.grad_fn.register_hook(lambda gi, go: log.append(("x2 post", _grads(gi), _grads(go))))
    acc = x2.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda g: log.append(("acc pre", _grads(g))))
    acc.register_hook(lambda gi, go: log.append(("acc post", _grads(gi), _grads(go))))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post acc", _grads(t.grad))))
    o1, o2 = TwoOut.apply(x2, y)
    (o1 + o2).sum().backward()
    o1, o2 = TwoOut.apply(x, y)
    (o1 + o2).sum().backward(inputs=[x, y])
    return log + [x.grad, y.grad]


def _none_grads_custom_backward(lib: Any) -> list:
    """A custom Function that gets no gradient still runs its backward, on zeros."""
    log: list = []
    TwoOut = _TwoOut.make(lib)

    class G(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            log.append(("G", _grads(g)))
            return g + 1

    class NoMaterialize(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            log.append(("NoMaterialize", _grads(g)))
            return g

    x, y = _leaves(lib)
    o1, o2 = TwoOut.apply(G.apply(x), y)
    (o1 + o2).sum().backward()
    log.append(x.grad)
    x.grad = None
    o1, o2 = TwoOut.apply(NoMaterialize.apply(x), y)
    (o1 + o2).sum().backward()
    log.append(x.grad)
    return log


def _none_grads_saved_checked(lib: Any) -> list:
    """An op node that gets no gradient unpacks what it saved (version check, unpack hooks)
    and frees it."""
    log: list = []
    TwoOut = _TwoOut.make(lib)
    x, y = _leaves(lib)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: log.append("unpack") or t):
        z = x.exp()
    o1, o2 = TwoOut.apply(z, y)
    (o1 + o2).sum().backward(retain_graph=True)
    (o1 + o2).sum().backward()
    log.append(_run(lambda lib: (o1 + o2).sum().backward(), lib)[0])
    z = x * x
    o1, o2 = TwoOut.apply(z.clone(), y)
    (o1 + o2).sum().backward()
    log.append(_run(lambda lib: z.grad_fn._saved_self, lib))
    z = x.exp()
    o1, o2 = TwoOut.apply(z, y)
    with lib.no_grad():
        z.add_(1)
    (o1 + o2).sum().backward()
    return log


NONE_CASES = {
    "hooks": _none_grads_hooks, "custom_backward": _none_grads_custom_backward,
    "saved_checked": _none_grads_saved_checked,
}


@pytest.mark.parametrize("name", sorted(NONE_CASES))
def test_a_node_without_gradient_still_runs(name: str) -> None:
    outcome = _same(NONE_CASES[name])
    if name == "saved_checked":
        assert outcome[0] == "RuntimeError" and "modified by an inplace" in outcome[1]
    else:
        assert outcome[0] == "ok" and outcome[1]


# ----------------------------------------------------------------------------------------------
# increment_version


def _versions(lib: Any) -> list:
    increment = lib.autograd.graph.increment_version
    x = lib.ones(2)
    v = x[0]
    out = [increment(x), x._version]
    increment([x, x])
    increment((x,))
    increment(t for t in [x])
    increment({x: 1})
    out.append(x._version)
    increment(v)
    out.append((x._version, v._version))
    with lib.inference_mode():
        it = lib.ones(2)
        increment(it)
        increment(x)
    increment([x, it])
    out.append(x._version)
    out.append(_run(lambda lib: increment([x, 3]), lib))
    out.append(x._version)  # (bumped before the error)
    for bad in (3, None, [[x]]):
        out.append(_run(lambda lib, bad=bad: increment(bad), lib))
    return out


def _version_checked_by_backward(lib: Any) -> Any:
    a = lib.ones(2, requires_grad=True)
    b = a.exp()
    lib.autograd.graph.increment_version(b)
    b.sum().backward()


@pytest.mark.parametrize("program", [_versions, _version_checked_by_backward])
def test_increment_version(program: Callable[[Any], Any]) -> None:
    outcome = _same(program)
    if program is _versions:
        assert outcome[1][1] == 1 and outcome[1][2] == 6
    else:
        assert outcome[0] == "RuntimeError" and "is at version 1; expected version 0" in outcome[1]


# ----------------------------------------------------------------------------------------------
# save_on_cpu and disable_saved_tensors_hooks


def _save_on_cpu(lib: Any) -> list:
    graph = lib.autograd.graph
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out: list = []
    with graph.save_on_cpu() as entered:
        y = a * a
        z = y.exp()
    out += [entered, y.grad_fn._saved_self, y.grad_fn._saved_self is a, z.grad_fn._saved_result,
            lib.autograd.grad(z.sum(), a, retain_graph=True)]
    with lib.no_grad():
        a.mul_(2)  # not copied: the gradient sees the change (the version is not checked)
    out.append(lib.autograd.grad(y.sum(), a))
    with graph.save_on_cpu(pin_memory=True):
        w = a * a
    with lib.no_grad():
        a.mul_(2)  # a copy was saved
    out += [w.grad_fn._saved_self, w.grad_fn._saved_self._version, lib.autograd.grad(w.sum(), a)]
    with graph.save_on_cpu(pin_memory=True, device_type="nonexistent"):
        out.append(a * a)
    with graph.save_on_cpu(pin_memory=True, device_type="cpu"):
        out.append(_run(lambda lib: a * a, lib))
    hooks = graph.save_on_cpu()
    out += [isinstance(hooks, graph.saved_tensors_hooks), hooks.pack_hook.__name__,
            hooks.unpack_hook.__name__]
    return out


def _disabled_hooks(lib: Any) -> list:
    graph = lib.autograd.graph
    a = lib.ones(2, requires_grad=True)
    out: list = []
    with graph.disable_saved_tensors_hooks("m"):
        out.append(a * a)  # ops save as usual
        out.append(_run(lambda lib: graph.save_on_cpu().__enter__(), lib))
        with graph.disable_saved_tensors_hooks("n"):
            out.append(_run(lambda lib: graph.saved_tensors_hooks(print, print).__enter__(), lib))
        out.append(_run(lambda lib: graph.allow_mutation_on_saved_tensors().__enter__(), lib))
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        def disable_inside(lib):
            with graph.disable_saved_tensors_hooks("inside"):
                return "entered"

        out.append(_run(disable_inside, lib))
        out.append(a * a)
    with graph.save_on_cpu():
        out.append("hooks usable again")
    return out


@pytest.mark.parametrize("program", [_save_on_cpu, _disabled_hooks])
def test_save_on_cpu_and_disabled_hooks(program: Callable[[Any], Any]) -> None:
    outcome = _same(program)
    assert outcome[0] == "ok"
    if program is _save_on_cpu:
        # no copy: the changed values; pinned: a copy, the old ones
        assert outcome[1][5] == [("tensor", [4.0, 8.0, 12.0], "chainrule.float32", False)]
        assert outcome[1][6] == ("tensor", [2.0, 4.0, 6.0], "chainrule.float32", True)
        assert outcome[1][8] == [("tensor", [4.0, 8.0, 12.0], "chainrule.float32", False)]


def test_save_on_cpu_gives_the_same_gradients() -> None:
    def program(lib, hooks):
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
        w = lib.tensor(np.linspace(0.5, 1.5, 8).reshape(4, 2), requires_grad=True)
        with hooks(lib):
            y = (x @ w).tanh().exp().sum() + (x * x).sigmoid().mean()
        y.backward()
        return x.grad, w.grad

    for hooks in (lambda lib: lib.autograd.graph.save_on_cpu(),
                  lambda lib: lib.autograd.graph.save_on_cpu(pin_memory=True)):
        for lib in (chainrule, torch):
            assert _plain(program(lib, hooks)) == _plain(program(lib, lambda lib: _Nothing()))
        assert _plain(program(chainrule, hooks)) == _plain(program(torch, hooks))


class _Nothing:
    """A context manager that does nothing."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# ----------------------------------------------------------------------------------------------
# allow_mutation_on_saved_tensors


def _in_context(body: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            return body(lib, ctx)

    return program


def _clone_of(lib: Any) -> tuple:
    a = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    return a, a.clone()


def _mutated_by(mutate: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """``(b * b).sum()`` saves b; ``mutate`` changes b; the gradient with respect to a."""
    def body(lib, ctx):
        a, b = _clone_of(lib)
        out = (b * b).sum()
        mutate(lib, b)
        counts = len(ctx.cloned), len(ctx.original)
        return lib.autograd.grad(out, a), *counts

    return _in_context(body)


def _no_grad(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def run(lib, b):
        with lib.no_grad():
            fn(lib, b)

    return run


def _docstring_example(lib, ctx):
    a = lib.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b**2).sum()
    changed = b.sin_()
    counts = (len(ctx.cloned), len(ctx.original), len(ctx.tid_to_weakhandle), len(ctx.sid_to_tid))
    out.sum().backward()
    return changed, counts, a.grad


def _result_saved(lib, ctx):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = a.clone().exp()
    out = (c * 2).sum()
    c.zero_()
    return lib.autograd.grad(out, a)


def _saved_identity(lib, ctx):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = lib.tensor([4.0, 5.0, 6.0])
    out = (w * x).sum()
    mul = out.grad_fn.next_functions[0][0]
    before = (mul._saved_other is x, mul._saved_self is w)
    x.mul_(2)
    return before, mul._saved_other, mul._saved_other is x, lib.autograd.grad(out, w)


def _optimizer(name: str) -> Callable[[Any, Any], Any]:
    def body(lib, ctx):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = (w * w).sum()
        options: dict[str, Any] = {"lr": 0.1}
        if name == "SGD":
            options["momentum"] = 0.9
        opt = getattr(lib.optim, name)([w], **options)
        w.grad = lib.ones(3)
        opt.step()
        opt.step()
        cloned = len(ctx.cloned)
        return lib.autograd.grad(out, w), w.detach(), cloned

    return body


def _zero_grad(lib, ctx):
    w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w.grad = lib.tensor([5.0, 6.0, 7.0])
    y = (w * w.grad).sum()
    lib.optim.SGD([w], lr=0.1).zero_grad(set_to_none=False)
    lin = lib.nn.Linear(2, 1, bias=False)
    lin.weight.grad = lib.ones(1, 2)
    y2 = (lin.weight.grad * lin.weight).sum()
    lin.zero_grad(set_to_none=False)
    return lib.autograd.grad(y, w), lib.autograd.grad(y2, lin.weight)


def _module_updates(lib, ctx):
    lin = lib.nn.Linear(2, 1, bias=False)
    with lib.no_grad():
        lin.weight.fill_(1.0)
    x = lib.tensor([[1.0, 2.0]], requires_grad=True)
    o = lin(x).sum()
    lin.load_state_dict({"weight": lib.tensor([[5.0, 7.0]])})
    o2 = lin(x).sum()
    lib.nn.init.zeros_(lin.weight)
    return lib.autograd.grad(o, x, retain_graph=True), lib.autograd.grad(o2, x)


def _clip_grad(lib, ctx):
    w = lib.tensor([3.0, 4.0], requires_grad=True)
    w.grad = lib.tensor([3.0, 4.0])
    y = (w.grad * w).sum()
    lib.nn.utils.clip_grad_norm_([w], 1.0)
    v = lib.tensor([3.0, 4.0], requires_grad=True)
    v.grad = lib.tensor([3.0, -4.0])
    y2 = (v.grad * v).sum()
    lib.nn.utils.clip_grad_value_([v], 1.0)
    return lib.autograd.grad(y, w), w.grad, lib.autograd.grad(y2, v), v.grad


def _embedding_renorm(lib, ctx):
    w = lib.tensor([[3.0, 4.0], [1.0, 0.0]], requires_grad=True)
    weight = w * 1
    y = (weight * weight).sum()
    lib.nn.functional.embedding(lib.tensor([0]), weight, max_norm=1.0)
    return lib.autograd.grad(y, w), weight.detach()


def _accumulated_grad(lib, ctx):
    """The engine adds a second gradient into .grad in place: a graph that saved .grad keeps
    the first."""
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    v = lib.tensor([1.0, 1.0], requires_grad=True)
    y = (w.grad * v).sum()
    (w * 3).sum().backward()
    return lib.autograd.grad(y, v), w.grad


def _batch_norm_stats(lib, ctx):
    bn = lib.nn.BatchNorm1d(2)
    x = lib.tensor([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]], requires_grad=True)
    o = bn(x)
    return o.grad_fn._saved_running_mean, bn.running_mean, lib.autograd.grad(o.pow(3).sum(), x)


def _mark_dirty(lib, ctx):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a, b = _clone_of(lib)
    out = (b * b).sum()
    Double.apply(b)
    return lib.autograd.grad(out, a)


def _two_versions(lib, ctx):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a.clone()
    o1 = (b * b).sum()
    b.add_(1)
    o2 = (b * b).sum()
    b.add_(1)
    counts = (len(ctx.cloned), len(ctx.original), sorted(v for (_, v) in ctx.sid_to_tid))
    grads = (lib.autograd.grad(o1, a, retain_graph=True), lib.autograd.grad(o2, a))
    again = _run(lambda lib: lib.autograd.grad(o2, a), lib)
    return counts, grads, again, (len(ctx.cloned), len(ctx.original))


def _inner_hooks_win(lib, ctx):
    a, b = _clone_of(lib)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        out = (b * b).sum()
    b.add_(1)
    return lib.autograd.grad(out, a)


def _other_thread(lib, ctx):
    """The mutation happens in another thread: not cloned (PyTorch's mode is per thread)."""
    a, b = _clone_of(lib)
    out = (b * b).sum()
    t = threading.Thread(target=lambda: b.add_(1))
    t.start()
    t.join()
    return lib.autograd.grad(out, a)


def _inference_in_place(lib, ctx):
    with lib.inference_mode():
        t = lib.ones(2)
        return t.add_(1)


def _context_state(lib, ctx):
    a, b = _clone_of(lib)
    out = (b * b).sum()
    b.add_(1)
    kinds = [type(getattr(ctx, name)).__name__
             for name in ("cloned", "original", "tid_to_weakhandle", "sid_to_tid")]
    return type(ctx).__name__, kinds, list(ctx.cloned.values()), lib.autograd.grad(out, a)


def _after_exit(mutate: bool) -> Callable[[Any], Any]:
    def program(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a, b = _clone_of(lib)
            out = (b * b).sum()
            if mutate:
                b.mul_(3)
        return len(ctx.cloned), lib.autograd.grad(out, a)

    return program


def _nested(lib):
    graph = lib.autograd.graph
    with graph.allow_mutation_on_saved_tensors():
        error = _run(lambda lib: graph.allow_mutation_on_saved_tensors().__enter__(), lib)
        a, b = _clone_of(lib)
        out = (b * b).sum()
        b.mul_(3)
        return error, _run(lambda lib: lib.autograd.grad(out, a), lib)


def _nested_with(lib):
    """The nesting error resets the (global) flag: backward in the outer block then fails."""
    graph = lib.autograd.graph
    with graph.allow_mutation_on_saved_tensors():
        try:
            with graph.allow_mutation_on_saved_tensors():
                pass
        except RuntimeError as error:
            message = str(error)
        a, b = _clone_of(lib)
        out = (b * b).sum()
        b.mul_(3)
        return message, _run(lambda lib: lib.autograd.grad(out, a), lib)


def _as_decorator(lib):
    @lib.autograd.graph.allow_mutation_on_saved_tensors()
    def step():
        a, b = _clone_of(lib)
        out = (b * b).sum()
        b.mul_(3)
        return lib.autograd.grad(out, a)

    return step(), step()


MUTATION_CASES: dict[str, Callable[[Any], Any]] = {
    "docstring_example": _in_context(_docstring_example),
    "sin_": _mutated_by(lambda lib, b: b.sin_()),
    "mul_": _mutated_by(lambda lib, b: b.mul_(2)),
    "no_grad_add_": _mutated_by(_no_grad(lambda lib, b: b.add_(1))),
    "no_grad_div_number": _mutated_by(_no_grad(lambda lib, b: b.div_(3.0))),
    "augmented": _mutated_by(lambda lib, b: b.__imul__(2)),
    "zero_": _mutated_by(lambda lib, b: b.zero_()),
    "fill_": _mutated_by(lambda lib, b: b.fill_(7.0)),
    "copy_": _mutated_by(lambda lib, b: b.copy_(lib.arange(4.0))),
    "uniform_": _mutated_by(_no_grad(lambda lib, b: b.uniform_(5.0, 5.0))),
    "unsqueeze_": _mutated_by(lambda lib, b: b.unsqueeze_(0)),
    "view_offset_0": _mutated_by(lambda lib, b: b[:2].mul_(10)),
    "view_offset_1": _mutated_by(lambda lib, b: b[1:].mul_(10)),
    "setitem_int_0": _mutated_by(lambda lib, b: b.__setitem__(0, 9.0)),
    "setitem_int_1": _mutated_by(lambda lib, b: b.__setitem__(1, 9.0)),
    "setitem_slice": _mutated_by(lambda lib, b: b.__setitem__(slice(None), 9.0)),
    "setitem_tail": _mutated_by(lambda lib, b: b.__setitem__(slice(2, None), 9.0)),
    "setitem_list": _mutated_by(lambda lib, b: b.__setitem__([0, 2], 0.0)),
    "no_grad_setitem_int_0": _mutated_by(_no_grad(lambda lib, b: b.__setitem__(0, 9.0))),
    "no_grad_setitem_int_1": _mutated_by(_no_grad(lambda lib, b: b.__setitem__(1, 9.0))),
    "no_grad_setitem_mask": _mutated_by(_no_grad(lambda lib, b: b.__setitem__(b > 2, 0.0))),
    "no_grad_setitem_tail": _mutated_by(_no_grad(
        lambda lib, b: b.__setitem__(slice(2, None), 9.0))),
    "data_mul_": _mutated_by(lambda lib, b: b.data.mul_(10)),
    "base_of_saved_view": _in_context(lambda lib, ctx: (lambda a, b: (
        lambda v, o: (b.mul_(10), lib.autograd.grad(o, a))[1])(b[:2], (b[:2] * b[:2]).sum()))(
        *_clone_of(lib))),
    "base_of_saved_offset_view": _in_context(lambda lib, ctx: (lambda a, b: (
        lambda o: (b.mul_(10), lib.autograd.grad(o, a))[1])((b[2:] * b[2:]).sum()))(
        *_clone_of(lib))),
    "result_saved": _in_context(_result_saved),
    "saved_identity": _in_context(_saved_identity),
    "sgd": _in_context(_optimizer("SGD")), "adam": _in_context(_optimizer("Adam")),
    "adagrad": _in_context(_optimizer("Adagrad")), "rmsprop": _in_context(_optimizer("RMSprop")),
    "zero_grad": _in_context(_zero_grad), "module_updates": _in_context(_module_updates),
    "clip_grad": _in_context(_clip_grad), "embedding_renorm": _in_context(_embedding_renorm),
    "accumulated_grad": _in_context(_accumulated_grad),
    "batch_norm_stats": _in_context(_batch_norm_stats), "mark_dirty": _in_context(_mark_dirty),
    "two_versions": _in_context(_two_versions), "inner_hooks": _in_context(_inner_hooks_win),
    "other_thread": _in_context(_other_thread),
    "inference_in_place": _in_context(_inference_in_place),
    "context_state": _in_context(_context_state),
    "after_exit_mutated": _after_exit(True), "after_exit_unmutated": _after_exit(False),
    "nested": _nested, "nested_with": _nested_with, "decorator": _as_decorator,
}


@pytest.mark.parametrize("name", sorted(MUTATION_CASES))
def test_allow_mutation_on_saved_tensors(name: str) -> None:
    outcome = _same(MUTATION_CASES[name])
    errors = {"after_exit_mutated": "AssertionError", "after_exit_unmutated": "AssertionError",
              "inference_in_place": "RuntimeError"}
    assert outcome[0] == errors.get(name, "ok"), outcome


@pytest.mark.parametrize("name", ["sin_", "no_grad_add_", "setitem_int_0", "no_grad_setitem_mask",
                                  "unsqueeze_", "sgd", "accumulated_grad"])
def test_mutation_is_undone_for_backward(name: str) -> None:
    """Spelled out: the gradient is the one of the values saved (2 * b), and one tensor was
    cloned (PyTorch's outcome, which the differential test compares with); ``sin_`` saves its
    input's old values, a new original."""
    kind, result = _run(MUTATION_CASES[name], chainrule)
    assert kind == "ok"
    if name == "sgd":
        assert result[0][0][1] == [2.0, 4.0, 6.0] and result[2] == 1
    elif name == "accumulated_grad":
        assert result[0][0][1] == [3.0, 3.0] and result[1][1] == [6.0, 6.0]
    else:
        assert result[0][0][1] == [2.0, 4.0, 6.0, 8.0]
        assert result[1:] == ([1, 1] if name == "sin_" else [1, 0])


def test_outside_the_context_mutation_is_still_refused() -> None:
    def program(lib):
        a, b = _clone_of(lib)
        out = (b * b).sum()
        with lib.no_grad():
            b.add_(1)
        return lib.autograd.grad(out, a)

    outcome = _same(program)
    assert outcome[0] == "RuntimeError" and "modified by an inplace operation" in outcome[1]
    assert not chainrule.autograd.graph.MUTATION_WATCH
