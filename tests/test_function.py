"""Custom ``autograd.Function``s behave, print and fail as in PyTorch."""

from __future__ import annotations

import gc
import math
import re
import warnings
import weakref

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, normalise_output, torch

LIBS = (chainrule, torch)


def _error(fn) -> tuple[type, str]:
    """The exception type and message ``fn()`` raises (chainrule's names as PyTorch's)."""
    with pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's below
        fn()
    return type(info.value).__name__, normalise_output(str(info.value))


def _same_error(make) -> str:
    """Run ``make(lib)`` in both libraries; both must raise the same type and message."""
    ours = _error(lambda: make(chainrule))
    theirs = _error(lambda: make(torch))
    assert ours == theirs
    return ours[1]


def _first_sentence_same_error(make) -> None:
    """As :func:`_same_error`, but chainrule may add text after PyTorch's message."""
    ours = _error(lambda: make(chainrule))
    theirs = _error(lambda: make(torch))
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1]), (ours[1], theirs[1])


def _r(t) -> list:
    """Values rounded to 5 decimals (NumPy's and PyTorch's float32 kernels may differ in the
    last bit)."""
    return np.round(np.asarray(t.tolist(), dtype=float), 5).tolist()


def exp_function(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    return Exp


def simple(lib, forward, backward, name="F", setup_context=None):
    """A Function subclass named ``name`` from plain functions."""
    attrs = {"forward": staticmethod(forward), "backward": staticmethod(backward)}
    if setup_context is not None:
        attrs["setup_context"] = staticmethod(setup_context)
    return type(name, (lib.autograd.Function,), attrs)


# ----------------------------------------------------------------------------------------------
# The basics


def test_exp_prints_and_differentiates_like_pytorch() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = exp_function(lib).apply(x)
        fn = y.grad_fn
        y.sum().backward()
        results.append((
            normalise_output(repr(y)), normalise_output(repr(fn)), fn.name(),
            type(fn).__name__, normalise_output(repr(type(fn))), fn.needs_input_grad,
            [type(n).__name__ for n, _ in fn.next_functions], _r(x.grad),
        ))
    assert results[0] == results[1]
    assert results[0][0] == "tensor([2.7183, 7.3891], grad_fn=<ExpBackward>)"
    assert results[0][1].startswith("<chainrule.autograd.function.ExpBackward object at 0x")


def test_ctx_is_the_node_and_holds_attributes() -> None:
    seen = {}

    class Scale(chainrule.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            seen["ctx"] = ctx
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.k, None

    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(x, 3.0)
    assert y.grad_fn is seen["ctx"]
    assert y.grad_fn.k == 3.0
    assert y.grad_fn.metadata == {}
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_setup_context_form_binds_defaults_and_keywords() -> None:
    results = []
    for lib in LIBS:
        log = []

        def forward(x, k, scale=2.0):
            return x * k * scale

        def setup_context(ctx, inputs, output, log=log):
            log.append((len(inputs), inputs[1:], ctx.needs_input_grad))
            ctx.factor = inputs[1] * inputs[2]

        def backward(ctx, grad):
            return grad * ctx.factor, None, None

        fn = simple(lib, forward, backward, "Scaled", setup_context)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x, 3)
        z = fn.apply(x, 3, scale=1.0)
        (y.sum() + z.sum()).backward()
        results.append((log, y.tolist(), z.tolist(), x.grad.tolist(), repr(y.grad_fn.name())))
    assert results[0] == results[1]


def keyword_function(lib):
    def forward(ctx, a, scale=2.0, b=None, *, c=1.0):
        return a * scale if b is None else a * b * c

    def backward(ctx, g):
        return (g * 2, None, g)[: len(ctx.needs_input_grad)]

    return simple(lib, forward, backward, "K")


def test_keyword_arguments_become_positional_inputs() -> None:
    results = []
    for lib in LIBS:
        fn = keyword_function(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = fn.apply(x, scale=3.0)
        z = fn.apply(x, 3.0, b=w)
        (y.sum() + z.sum()).backward()
        results.append((
            y.tolist(), y.grad_fn.needs_input_grad, z.grad_fn.needs_input_grad,
            len(z.grad_fn.next_functions), x.grad.tolist(), w.grad.tolist(),
        ))
    assert results[0] == results[1]


@pytest.mark.parametrize("kwargs", [{"b": None}, {"c": 2.0}, {"zz": 1}])
def test_keyword_argument_errors(kwargs: dict) -> None:
    def make(lib):
        keyword_function(lib).apply(lib.ones(2, requires_grad=True), **kwargs)

    _same_error(make)


def test_non_tensor_arguments_and_next_functions() -> None:
    results = []
    for lib in LIBS:
        fn = simple(lib, lambda ctx, a, b, n: a * b * n, lambda ctx, g: (g, g, None), "Mixed")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x, lib.ones(2), 3)
        results.append((
            [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions],
            y.grad_fn.needs_input_grad,
        ))
    assert results[0] == results[1] == ([("AccumulateGrad"), None], (True, False, False))


def test_forward_runs_without_grad_and_backward_under_the_engine_mode() -> None:
    results = []
    for lib in LIBS:
        modes = []

        def forward(ctx, a, lib=lib, modes=modes):
            modes.append(("forward", lib.is_grad_enabled()))
            ctx.save_for_backward(a)
            return a ** 3

        def backward(ctx, g, lib=lib, modes=modes):
            modes.append(("backward", lib.is_grad_enabled()))
            (a,) = ctx.saved_tensors
            return 3 * a ** 2 * g

        cube = simple(lib, forward, backward, "Cube")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(cube.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        with lib.no_grad():
            y = cube.apply(x)
        results.append((modes, g.tolist(), g.grad_fn.name(), gg.tolist(), y.grad_fn))
    assert results[0] == results[1]
    assert results[0][3] == [6.0, 12.0]


# ----------------------------------------------------------------------------------------------
# PyTorch's errors for what backward returns


@pytest.mark.parametrize(
    ("n_inputs", "returned"),
    [(1, "two"), (2, "one")],
)
def test_wrong_number_of_gradients(n_inputs: int, returned: str) -> None:
    def make(lib):
        def forward(ctx, *args):
            return args[0] * 2

        def backward(ctx, g):
            return (g, g) if returned == "two" else g

        fn = simple(lib, forward, backward, "W")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fn.apply(*([x] * n_inputs)).sum().backward()

    message = _same_error(make)
    assert re.match(r"function WBackward returned an incorrect number of gradients", message)


def test_extra_none_gradients_are_allowed() -> None:
    for lib in LIBS:
        fn = simple(lib, lambda ctx, a: a * 2, lambda ctx, g: (g * 2, None, None), "Extra")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fn.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_gradient_of_wrong_shape() -> None:
    def make(lib):
        fn = simple(lib, lambda ctx, a: a * 2, lambda ctx, g: lib.ones(3), "S")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fn.apply(x).sum().backward()

    assert _same_error(make) == (
        "Function SBackward returned an invalid gradient at index 0 - got [3] but expected "
        "shape compatible with [2]"
    )


def test_broadcastable_gradients_are_reduced_and_cast() -> None:
    results = []
    for lib in LIBS:
        fn = simple(lib, lambda ctx, a: a * 2, lambda ctx, g, lib=lib: lib.ones(4, 2).double(), "B")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fn.apply(x).sum().backward()
        results.append((x.grad.tolist(), str(x.grad.dtype).split(".")[-1]))
    assert results[0] == results[1] == ([4.0, 4.0], "float32")


def test_gradient_for_non_tensor_input() -> None:
    def make(lib):
        fn = simple(lib, lambda ctx, a, n: a * n, lambda ctx, g: (g, g), "NT")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fn.apply(x, 3).sum().backward()

    assert _same_error(make) == (
        "function NTBackward returned a gradient different than None at position 2, but the "
        "corresponding forward input was not a Variable"
    )


def test_gradient_for_input_that_needs_none_is_dropped() -> None:
    for lib in LIBS:
        fn = simple(lib, lambda ctx, a, b: a * b, lambda ctx, g: (g, g), "NR")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        c = lib.ones(2)
        fn.apply(x, c).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0] and c.grad is None


@pytest.mark.parametrize("returned", ["number", "list"])
def test_gradient_that_is_not_a_tensor(returned: str) -> None:
    def make(lib):
        def backward(ctx, g):
            return 3 if returned == "number" else [g]

        fn = simple(lib, lambda ctx, a: a * 2, backward, "Bad")
        fn.apply(lib.tensor([1.0], requires_grad=True)).sum().backward()

    assert _same_error(make).startswith("expected Variable or None (got ")


def test_missing_methods_and_legacy_use() -> None:
    def no_forward(lib):
        type("NoForward", (lib.autograd.Function,), {}).apply(lib.ones(1))

    def no_backward(lib):
        fn = type("NoBackward", (lib.autograd.Function,), {"forward": staticmethod(
            lambda ctx, a: a * 2)})
        fn.apply(lib.ones(1, requires_grad=True)).sum().backward()

    def legacy_call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            instance = exp_function(lib)()
        instance(lib.ones(1))

    def both(lib):
        fn = type("Both", (lib.autograd.Function,), {
            "forward": staticmethod(lambda ctx, a: a * 2),
            "backward": staticmethod(lambda ctx, g: g),
            "vjp": staticmethod(lambda ctx, g: g),
        })
        fn.apply(lib.ones(1, requires_grad=True)).sum().backward()

    for make in (no_forward, no_backward, legacy_call, both):
        _same_error(make)


def test_instantiating_warns_like_pytorch() -> None:
    messages = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exp_function(lib)()
        messages.append([
            (w.category.__name__, re.sub(r"<class '.*'>", "<class>", str(w.message)))
            for w in caught
        ])
    assert messages[0] == messages[1]


# ----------------------------------------------------------------------------------------------
# Saved tensors


def test_saved_tensors_are_freed_after_backward() -> None:
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = exp_function(lib).apply(x)
        y.sum().backward(retain_graph=True)
        assert len(y.grad_fn.saved_tensors) == 1
        y.sum().backward()

    def make(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = exp_function(lib).apply(x)
        y.sum().backward()
        y.sum().backward()

    assert _same_error(make).startswith("Trying to backward through the graph a second time")

    def access(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = exp_function(lib).apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors

    _same_error(access)


def test_nothing_saved_allows_a_second_backward() -> None:
    for lib in LIBS:
        fn = simple(lib, lambda ctx, a: a * 2, lambda ctx, g: g * 2, "NS")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x)
        y.sum().backward()
        (y * 1).sum().backward()
        assert x.grad.tolist() == [4.0, 4.0]


def test_saved_output_is_the_node_output_without_a_reference_cycle() -> None:
    results = []
    for lib in LIBS:
        def forward(ctx, a):
            r = a * 2
            ctx.save_for_backward(r, r, None)
            return r

        def backward(ctx, g, log=results):
            r1, r2, none = ctx.saved_tensors
            log.append((r1.grad_fn is ctx, none, r1.tolist()))
            return g * 2

        fn = simple(lib, forward, backward, "SaveOut")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fn.apply(x).sum().backward()
    assert results[0] == results[1] == (True, None, [2.0, 4.0])

    # chainrule: an output saved by its own node is freed by reference counting alone
    def forward(ctx, a):
        r = a * 2
        ctx.save_for_backward(r)
        return r

    fn = simple(chainrule, forward, lambda ctx, g: g * 2, "Cycle")
    gc.disable()
    try:
        y = fn.apply(chainrule.tensor([1.0], requires_grad=True))
        node = weakref.ref(y.grad_fn)
        ref = weakref.ref(y)
        del y
        assert ref() is None and node() is None
    finally:
        gc.enable()


def test_saving_an_intermediate_and_a_non_tensor() -> None:
    results = []
    for lib in LIBS:
        def forward(ctx, a):
            t = a * 5
            ctx.save_for_backward(t)
            return a * 2

        def backward(ctx, g, log=results):
            (t,) = ctx.saved_tensors
            log.append((t.tolist(), t.requires_grad))
            return g * 2

        simple(lib, forward, backward, "SI").apply(lib.tensor([1.0], requires_grad=True)) \
            .sum().backward()
    assert results[0] == results[1]

    def make(lib):
        fn = simple(lib, lambda ctx, a: ctx.save_for_backward(a, 3) or a * 2, lambda ctx, g: g,
                    "Bad")
        fn.apply(lib.tensor([1.0], requires_grad=True))

    assert _same_error(make) == (
        "save_for_backward can only save variables, but argument 1 is of type int"
    )


@pytest.mark.parametrize("which", ["input", "output"])
def test_saved_tensor_modified_in_place(which: str) -> None:
    def make(lib):
        def forward(ctx, a):
            r = a * 2
            ctx.save_for_backward(a if which == "input" else r)
            return r

        fn = simple(lib, forward, lambda ctx, g: (ctx.saved_tensors[0] * 0 + 2) * g, "SV")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = x.clone()
        y = fn.apply(z)
        (z if which == "input" else y).add_(1)
        y.sum().backward()

    _first_sentence_same_error(make)


def test_saved_tensors_hooks_pack_and_unpack_custom_saves() -> None:
    results = []
    for lib in LIBS:
        log = []

        def forward(ctx, a):
            r = a * 3
            ctx.save_for_backward(a, r)
            return r

        def backward(ctx, g, log=log):
            a, r = ctx.saved_tensors
            log.append(("backward", a.tolist(), r.tolist()))
            return g * 3

        fn = simple(lib, forward, backward, "Packed")
        x = lib.tensor([1.0, 2.0], requires_grad=True)

        def pack(t, log=log):
            log.append(("pack", t.tolist()))
            return t.tolist()

        def unpack(p, log=log, lib=lib):
            log.append(("unpack", p))
            return lib.tensor(p)

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = fn.apply(x)
        y.sum().backward()
        results.append((log, x.grad.tolist()))
    assert results[0] == results[1]


# ----------------------------------------------------------------------------------------------
# Several outputs, non-differentiable outputs, materialisation


def test_multiple_outputs_and_materialised_grads() -> None:
    results = []
    for lib in LIBS:
        log = []

        def forward(ctx, a, k):
            return a * 2, k, a * 3, (a > 1)

        def backward(ctx, g1, g2, g3, g4, log=log):
            log.append([None if g is None else g.tolist() for g in (g1, g2, g3, g4)])
            return g1 * 2 + g3 * 3, None

        fn = simple(lib, forward, backward, "Multi")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        outs = fn.apply(x, 5)
        outs[0].sum().backward(retain_graph=True)
        outs[2].sum().backward()
        results.append((
            log, [type(o).__name__ for o in outs], outs[2].output_nr, outs[3].requires_grad,
            x.grad.tolist(),
        ))
    assert results[0] == results[1]


def test_set_materialize_grads_false_passes_none() -> None:
    results = []
    for lib in LIBS:
        log = []

        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2, a * 3

        def backward(ctx, g1, g2, log=log):
            log.append((g1 is None, g2 is None))
            return g1 * 2

        simple(lib, forward, backward, "NoMat").apply(lib.ones(2, requires_grad=True))[0] \
            .sum().backward()
        results.append(log)
    assert results[0] == results[1] == [(False, True)]


def test_mark_non_differentiable() -> None:
    results = []
    for lib in LIBS:
        log = []

        def forward(ctx, a):
            idx = (a > 1).long()
            ctx.mark_non_differentiable(idx)
            return a * 1, idx

        def backward(ctx, g1, g2, log=log):
            log.append((g1.tolist(), g2.tolist(), str(g2.dtype).split(".")[-1]))
            return g1

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        values, idx = simple(lib, forward, backward, "ND").apply(x)
        values.sum().backward()
        results.append((log, idx.requires_grad, idx.grad_fn is None, values.requires_grad))
    assert results[0] == results[1]


def test_input_returned_as_is_becomes_a_view() -> None:
    results = []
    for lib in LIBS:
        fn = simple(lib, lambda ctx, a: a, lambda ctx, g: g * 2, "Id")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x)
        plain = lib.ones(2)
        z = fn.apply(plain)
        with lib.no_grad():
            w = fn.apply(x)
        y.sum().backward()
        results.append((
            y is x, y._base is x, y.grad_fn.name(), x.grad.tolist(), z is plain,
            z._base is plain, w is x, w.requires_grad, w._base is None,
        ))
    assert results[0] == results[1]


def test_setup_context_saving_an_input_returned_as_is() -> None:
    def make(lib):
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        fn = simple(lib, lambda a: a, lambda ctx, g: g, "SCId", setup_context)
        fn.apply(lib.ones(2, requires_grad=True))

    assert _same_error(make).startswith("An input that has been returned as-is as output")


def test_same_output_twice() -> None:
    results = []
    for lib in LIBS:
        log = []

        def forward(ctx, a):
            r = a * 2
            return r, r

        def backward(ctx, g1, g2, log=log):
            log.append((g1.tolist(), g2.tolist()))
            return g1 + g2

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        o1, o2 = simple(lib, forward, backward, "Twice").apply(x)
        (o1.sum() + 2 * o2.sum()).backward()
        results.append((log, o1 is o2, o1.output_nr, x.grad.tolist()))
    assert results[0] == results[1]


# ----------------------------------------------------------------------------------------------
# mark_dirty


def dirty_function(lib):
    def forward(ctx, a):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a

    return simple(lib, forward, lambda ctx, g: g * 2, "Dirty")


def test_mark_dirty_rewrites_the_input_history() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = x.clone()
        w = dirty_function(lib).apply(z)
        (w * w).sum().backward()
        c = lib.ones(2)
        dirty_function(lib).apply(c)
        results.append((
            w is z, z.grad_fn.name(), z._version, x.grad.tolist(), c._version, c.tolist(),
        ))
    assert results[0] == results[1]


def test_mark_dirty_on_a_view_rebases_the_base() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = x * 1
        view = base[:2]
        out = dirty_function(lib).apply(view)
        (base * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        results.append((out is view, type(base.grad_fn).__name__, base._version, x.grad.tolist()))
    assert results[0] == results[1]


def test_mark_dirty_errors() -> None:
    def leaf(lib):
        dirty_function(lib).apply(lib.ones(2, requires_grad=True))

    def view_of_leaf(lib):
        dirty_function(lib).apply(lib.ones(3, requires_grad=True)[:2])

    def not_returned(lib):
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a * 1

        simple(lib, forward, lambda ctx, g: g, "NotReturned").apply(
            lib.ones(2, requires_grad=True).clone()
        )

    def view_with_two_outputs(lib):
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a, a * 2

        simple(lib, forward, lambda ctx, g1, g2: g1, "Two").apply(
            lib.ones(3, requires_grad=True).clone()[:2]
        )

    for make in (leaf, view_of_leaf, not_returned, view_with_two_outputs):
        _same_error(make)


def test_mark_dirty_of_a_non_input_warns() -> None:
    messages = []
    for lib in LIBS:
        def forward(ctx, a):
            r = a * 2
            ctx.mark_dirty(r)
            return r

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = simple(lib, forward, lambda ctx, g: g, "DirtyNonInput").apply(
                lib.ones(2, requires_grad=True)
            )
        messages.append(([str(w.message).split(" (Triggered")[0] for w in caught], y._version))
    assert messages[0] == messages[1]


# ----------------------------------------------------------------------------------------------
# once_differentiable and double backward


def test_once_differentiable() -> None:
    results = []
    for lib in LIBS:
        from importlib import import_module

        once = import_module(f"{lib.__name__}.autograd.function").once_differentiable

        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 2

        @once
        def backward(ctx, g, lib=lib):
            (a,) = ctx.saved_tensors
            return 2 * a * g

        fn = simple(lib, forward, backward, "Once")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g_plain,) = lib.autograd.grad(fn.apply(x).sum(), x, create_graph=True)
        (g,) = lib.autograd.grad((fn.apply(x) * x).sum(), x, create_graph=True)
        names = [type(n).__name__ for n, _ in g.grad_fn.next_functions]
        error = _error(lambda g=g: g.sum().backward())
        results.append((g_plain.tolist(), g_plain.requires_grad, g.tolist(), names, error))
    assert results[0] == results[1]
    assert results[0][4][1] == (
        "trying to differentiate twice a function that was marked with @once_differentiable"
    )


def test_double_backward_through_a_custom_backward() -> None:
    results = []
    for lib in LIBS:
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * a * b

        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return 2 * a * b * g, a * a * g

        fn = simple(lib, forward, backward, "Poly")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, -1.0], requires_grad=True)
        gx, gy = lib.autograd.grad(fn.apply(x, y).sum(), (x, y), create_graph=True)
        hxx, hxy = lib.autograd.grad(gx.sum(), (x, y), retain_graph=True)
        (hyx,) = lib.autograd.grad(gy.sum(), x)
        results.append([t.tolist() for t in (gx, gy, hxx, hxy, hyx)])
    assert results[0] == results[1]


def test_anomaly_mode_names_the_custom_node() -> None:
    def make(lib):
        fn = simple(lib, lambda ctx, a: a * 2, lambda ctx, g: g * float("nan"), "NanF")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                fn.apply(lib.ones(1, requires_grad=True)).sum().backward()

    assert _same_error(make) == "Function 'NanFBackward' returned nan values in its 0th output."


def test_node_hooks_fire_on_custom_nodes() -> None:
    results = []
    for lib in LIBS:
        log = []
        fn = simple(lib, lambda ctx, a: a * 2, lambda ctx, g: g * 2, "Hooked")
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = fn.apply(x)
        y.grad_fn.register_prehook(lambda go, log=log: log.append(("pre", go[0].tolist())))
        y.grad_fn.register_hook(
            lambda gi, go, log=log: log.append(("post", gi[0].tolist(), go[0].tolist()))
        )
        y.register_hook(lambda g, log=log: log.append(("tensor", g.tolist())))
        (y * 3).sum().backward()
        results.append(log)
    assert results[0] == results[1]


def test_returned_arrays_never_alias_what_backward_keeps() -> None:
    class Constant(chainrule.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.c = chainrule.ones(2)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return ctx.c

    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = Constant.apply(x)
    y.sum().backward()
    x.grad.add_(5)
    assert y.grad_fn.c.tolist() == [1.0, 1.0]


def test_deep_chain_of_custom_functions() -> None:
    fn = simple(chainrule, lambda ctx, a: a * 1.0001, lambda ctx, g: g * 1.0001, "Step")
    x = chainrule.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(3000):
        y = fn.apply(y)
    y.sum().backward()
    assert math.isclose(x.grad.item(), 1.0001 ** 3000, rel_tol=1e-4)


# ----------------------------------------------------------------------------------------------
# The official tutorial's example


def _legendre_fit(lib, steps: int) -> tuple[list[float], list[float]]:
    class LegendrePolynomial3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    dtype = lib.float
    x = lib.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = lib.sin(x)
    a = lib.full((), 0.0, dtype=dtype, requires_grad=True)
    b = lib.full((), -1.0, dtype=dtype, requires_grad=True)
    c = lib.full((), 0.0, dtype=dtype, requires_grad=True)
    d = lib.full((), 0.3, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    losses = []
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            losses.append(loss.item())
        loss.backward()
        with lib.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return losses, [a.item(), b.item(), c.item(), d.item()]


def test_legendre_polynomial_tutorial_matches_pytorch() -> None:
    ours = _legendre_fit(chainrule, 2000)
    theirs = _legendre_fit(torch, 2000)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-8)
    assert math.isclose(ours[0][-1], 8.9436, rel_tol=1e-4)


def test_tensor_values_agree_for_a_multi_input_function() -> None:
    rng = np.random.default_rng(0)
    a0 = rng.standard_normal((3, 4))
    b0 = rng.standard_normal(4)
    grads = []
    for lib in LIBS:
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return (a * b).tanh()

        def backward(ctx, g):
            a, b = ctx.saved_tensors
            t = (a * b).tanh()
            local = g * (1 - t * t)
            return local * b, local * a  # b's gradient is reduced by the engine

        fn = simple(lib, forward, backward, "TanhProd")
        a = lib.tensor(a0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True)
        out = fn.apply(a, b)
        (out * out).sum().backward()
        grads.append((out, a.grad, b.grad))
    for ours, theirs in zip(grads[0], grads[1], strict=True):
        assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# What backward receives for outputs without a gradient (materialize_grads True and False)


def _received(lib, materialize: bool, use: str, create_graph: bool) -> list:
    """A Function with a differentiable output, a non-differentiable float output (0-d), an
    integral output, an output the loss may not use, and a non-tensor output: what its
    backward gets for each."""
    log: list = []

    def describe(g):
        if g is None:
            return None
        if not isinstance(g, lib.Tensor):
            return repr(g)
        return (tuple(g.shape), str(g.dtype).split(".")[-1], g.tolist(), g.requires_grad)

    class Outputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            total = x.sum()
            ctx.mark_non_differentiable(total)
            return x * 2, total, (x > 1).long(), x * 3, "text"

        @staticmethod
        def backward(ctx, g_twice, g_total, g_long, g_thrice, g_text):
            log.append([describe(g) for g in (g_twice, g_total, g_long, g_thrice, g_text)])
            result = None
            for g, factor in ((g_twice, 2), (g_thrice, 3)):
                if g is not None:
                    result = g * factor if result is None else result + g * factor
            return result

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    twice, total, long, thrice, _ = Outputs.apply(x)
    log.append((total.requires_grad, long.requires_grad, thrice.requires_grad))
    loss = {"first": twice.sum(), "last": thrice.sum(), "both": (twice * thrice).sum()}[use]
    grads = lib.autograd.grad(loss, x, create_graph=create_graph)
    log.append([describe(g) for g in grads])
    return log


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("use", ["first", "last", "both"])
@pytest.mark.parametrize("materialize", [True, False], ids=["materialize", "no_materialize"])
def test_outputs_without_gradient_reach_backward_as_in_pytorch(
    materialize: bool, use: str, create_graph: bool
) -> None:
    """Unused and non-differentiable outputs: zeros of their shape and dtype when
    materialized, None otherwise (never a 0-d zero); non-tensor outputs: None."""
    ours = _received(chainrule, materialize, use, create_graph)
    theirs = _received(torch, materialize, use, create_graph)
    assert ours == theirs
