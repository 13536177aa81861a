"""``utils.checkpoint`` compared with PyTorch's: gradients of checkpointed functions (reentrant
and not), how often the function runs, nesting, dropout's random state, ``checkpoint_sequential``,
``autograd.grad`` and double backward, and the warnings and errors, word for word."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
import chainrule.utils.checkpoint
from chainrule.autograd.stepping import backward_steps
from chainrule.utils.checkpoint import checkpoint

from .conftest import assert_close, normalise_output, torch
from .outcomes import attempt

LIBS = (chainrule, torch)
REENTRANT = pytest.mark.parametrize(
    "use_reentrant", [True, False], ids=["reentrant", "non_reentrant"]
)


def _leaf(lib: Any, array: np.ndarray, requires_grad: bool = True) -> Any:
    return lib.tensor(array, dtype=lib.float64, requires_grad=requires_grad)


def _params(lib: Any) -> tuple[Any, Any, Any, Any]:
    """x (4, 3), w1 (3, 5), b1 (5,), w2 (5, 2): the same values in both libraries."""
    rng = np.random.default_rng(0)
    return (
        _leaf(lib, rng.standard_normal((4, 3))),
        _leaf(lib, rng.standard_normal((3, 5))),
        _leaf(lib, rng.standard_normal(5)),
        _leaf(lib, rng.standard_normal((5, 2))),
    )


def _grads(*tensors: Any) -> list[np.ndarray | None]:
    return [None if t.grad is None else t.grad.detach().numpy().copy() for t in tensors]


def _assert_same(ours: Any, theirs: Any, what: str = "", rtol: float = 1e-10) -> None:
    """Nested lists/tuples of arrays, tensors, numbers and strings: equal (floats close;
    ``rtol=1e-5`` for float32)."""
    if isinstance(ours, list | tuple):
        assert isinstance(theirs, list | tuple) and len(ours) == len(theirs), (what, ours, theirs)
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _assert_same(a, b, f"{what}[{i}]", rtol)
    elif isinstance(ours, chainrule.Tensor | np.ndarray) or isinstance(theirs, torch.Tensor):
        assert_close(ours, theirs, rtol=rtol, atol=rtol * 1e-2, what=what)
    else:
        assert ours == theirs, (what, ours, theirs)


def _differential(run: Callable[[Any], Any], rtol: float = 1e-10) -> Any:
    """``run(chainrule)`` equals ``run(torch)``; returns chainrule's result."""
    ours = run(chainrule)
    _assert_same(ours, run(torch), rtol=rtol)
    return ours


def _recorded(fn: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
    """``fn()`` and the warnings it raised, as (category, message with chainrule's names)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    return value, [(w.category.__name__, normalise_output(str(w.message))) for w in caught]


def _mlp_block(lib: Any, calls: list[str]) -> Callable[..., Any]:
    def block(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
        calls.append("block")
        h = lib.tanh(x @ w1 + b1)
        return (h @ w2).sigmoid()

    return block


# ----------------------------------------------------------------------------------------------
# Gradients, and the function running twice


@REENTRANT
def test_mlp_gradients_match_torch_and_the_function_runs_twice(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        params = _params(lib)
        calls: list[str] = []
        y = lib.utils.checkpoint.checkpoint(
            _mlp_block(lib, calls), *params, use_reentrant=use_reentrant
        )
        after_forward = len(calls)
        (y * y).sum().backward()
        return y, _grads(*params), after_forward, len(calls), y.grad_fn.name()

    y, grads, after_forward, after_backward, name = _differential(run)
    assert (after_forward, after_backward) == (1, 2)
    assert name == ("CheckpointFunctionBackward" if use_reentrant else "SigmoidBackward0")
    # ... and they are the gradients without checkpoint
    params = _params(chainrule)
    y = _mlp_block(chainrule, [])(*params)
    (y * y).sum().backward()
    _assert_same(grads, _grads(*params))


@REENTRANT
def test_several_inputs_and_outputs_with_numbers_and_strings(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        x, w1, b1, _ = _params(lib)
        calls: list[str] = []

        def fn(x: Any, scale: float, w: Any, tag: str, b: Any) -> Any:
            calls.append(tag)
            return (x * scale) @ w, tag, (x.exp() + 1).log(), 3, b * b

        out = lib.utils.checkpoint.checkpoint(fn, x, 0.5, w1, "t", b1,
                                              use_reentrant=use_reentrant)
        # the last tensor output gets no gradient (zeros for the reentrant backward)
        (out[0].pow(2).sum() + out[2].sum()).backward()
        return out[0], out[1], out[2], out[3], _grads(x, w1, b1), calls

    _differential(run)


def test_keyword_arguments_non_reentrant_and_refused_reentrant() -> None:
    def run(lib: Any) -> Any:
        x, w1, _, _ = _params(lib)

        def fn(x: Any, w: Any, *, power: float = 1.0, shift: Any = None) -> Any:
            return (x @ w).abs().pow(power) + shift

        y = lib.utils.checkpoint.checkpoint(fn, x, w1, use_reentrant=False, power=1.5,
                                            shift=w1[0])
        y.sum().backward()
        refused = attempt(lambda: lib.utils.checkpoint.checkpoint(
            fn, x, w1, use_reentrant=True, power=1.5, shift=1.0))
        return y, _grads(x, w1), refused

    *_, refused = _differential(run)
    assert refused == ("ValueError", "Unexpected keyword arguments: power,shift")


def test_reentrant_with_no_input_requiring_grad_warns_and_records_nothing() -> None:
    def run(lib: Any) -> Any:
        x, w1, _, _ = _params(lib)
        const = x.detach()

        def fn(a: Any) -> Any:
            return a @ w1  # w1 requires grad, but is no input

        y, caught = _recorded(lambda: lib.utils.checkpoint.checkpoint(
            fn, const, use_reentrant=True))
        failed = attempt(lambda: y.sum().backward())
        # non-reentrant: the graph is recorded, w1 gets its gradient, nothing is said
        z, quiet = _recorded(lambda: lib.utils.checkpoint.checkpoint(
            fn, const, use_reentrant=False))
        z.sum().backward()
        return y.requires_grad, caught, failed, z.requires_grad, quiet, _grads(w1)

    result = _differential(run)
    assert result[1] == [
        ("UserWarning", "None of the inputs have requires_grad=True. Gradients will be None")
    ]
    assert result[2][0] == "RuntimeError" and result[4] == []


@REENTRANT
def test_inputs_not_requiring_grad_get_none(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        x, w1, b1, w2 = _params(lib)
        const = x.detach()
        y = lib.utils.checkpoint.checkpoint(_mlp_block(lib, []), const, w1, b1, w2.detach(),
                                            use_reentrant=use_reentrant)
        y.sum().backward()
        return _grads(const, w1, b1)

    grads = _differential(run)
    assert grads[0] is None and grads[1] is not None


@pytest.mark.parametrize("outer", [True, False], ids=["outer_reentrant", "outer_non_reentrant"])
@pytest.mark.parametrize("inner", [True, False], ids=["inner_reentrant", "inner_non_reentrant"])
def test_nested_checkpoints(outer: bool, inner: bool) -> None:
    def run(lib: Any) -> Any:
        x, w1, b1, w2 = _params(lib)
        log: list[str] = []
        ckpt = lib.utils.checkpoint.checkpoint

        def inner_fn(h: Any, w: Any) -> Any:
            log.append("inner")
            return (h @ w).sin()

        def outer_fn(x: Any, w1: Any, w2: Any) -> Any:
            log.append("outer")
            h = lib.tanh(x @ w1)
            return ckpt(inner_fn, h, w2, use_reentrant=inner) * h.sum(1, keepdim=True)

        with warnings.catch_warnings():
            # reentrant inside reentrant: the inner input needs no grad in the outer forward
            warnings.simplefilter("ignore")
            y = ckpt(outer_fn, x, w1, w2, use_reentrant=outer)
            forward = list(log)
            y.pow(2).sum().backward()
        return y, _grads(x, w1, w2), forward, log

    _differential(run)


# ----------------------------------------------------------------------------------------------
# Random state


@REENTRANT
def test_dropout_draws_the_same_mask_when_recomputed(use_reentrant: bool) -> None:
    """The gradients equal those without checkpoint, though the generator moved between
    forward and backward; the recomputation leaves the generator where it was."""

    def run(lib: Any, mode: str) -> Any:
        x, w1, _, w2 = _params(lib)

        def fn(x: Any, w1: Any, w2: Any) -> Any:
            h = lib.nn.functional.dropout(lib.tanh(x @ w1), p=0.5, training=True)
            return lib.nn.functional.dropout(h @ w2, p=0.3, training=True)

        lib.manual_seed(3)
        if mode == "plain":
            y = fn(x, w1, w2)
        else:
            y = lib.utils.checkpoint.checkpoint(fn, x, w1, w2, use_reentrant=use_reentrant,
                                                preserve_rng_state=mode == "preserve")
        lib.manual_seed(11)
        lib.rand(7)  # the generator moves on between forward and backward
        before = lib.get_rng_state().numpy().copy()
        (y * lib.arange(2.0)).sum().backward()
        unchanged = np.array_equal(before, lib.get_rng_state().numpy())
        return _grads(x, w1, w2), unchanged

    for lib in LIBS:
        plain, _ = run(lib, "plain")
        preserved, unchanged = run(lib, "preserve")
        _assert_same(preserved, plain, lib.__name__)
        assert unchanged, lib.__name__
        redrawn, unchanged = run(lib, "no_preserve")
        # a new mask from where the generator is, and the generator moves
        assert not all(np.array_equal(a, b) for a, b in zip(redrawn, plain, strict=True))
        assert not unchanged, lib.__name__


# ----------------------------------------------------------------------------------------------
# checkpoint_sequential


def _sequential(lib: Any, shared: bool = False) -> Any:
    rng = np.random.default_rng(1)
    nn = lib.nn
    layers = [nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 3)]
    if shared:
        layers = [layers[2], nn.Tanh(), layers[2]]  # PyTorch runs a repeated child once
    model = nn.Sequential(*layers).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float64))
    return model


@REENTRANT
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_with_nn_sequential(use_reentrant: bool, segments: int) -> None:
    def run(lib: Any) -> Any:
        model = _sequential(lib)
        x = lib.tensor(np.random.default_rng(2).standard_normal((5, 4)), dtype=lib.float64,
                       requires_grad=True)
        y = lib.utils.checkpoint.checkpoint_sequential(model, segments, x,
                                                       use_reentrant=use_reentrant)
        (y * y).sum().backward()
        return y, _grads(x, *model.parameters())

    ours = _differential(run)
    model = _sequential(chainrule)
    x = chainrule.tensor(np.random.default_rng(2).standard_normal((5, 4)), dtype=chainrule.float64,
                         requires_grad=True)
    y = model(x)
    (y * y).sum().backward()
    _assert_same(ours[1], _grads(x, *model.parameters()))


@REENTRANT
def test_checkpoint_sequential_with_functions_runs_each_segment_twice(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        x, w1, _, w2 = _params(lib)
        calls: list[int] = []

        def step(i: int, f: Callable[[Any], Any]) -> Callable[[Any], Any]:
            def g(t: Any) -> Any:
                calls.append(i)
                return f(t)

            return g

        functions = [step(0, lambda t: t @ w1), step(1, lib.tanh), step(2, lambda t: t.sin()),
                     step(3, lambda t: t @ w2), step(4, lambda t: t.exp())]
        y = lib.utils.checkpoint.checkpoint_sequential(
            functions, 2, x, use_reentrant=use_reentrant, preserve_rng_state=False)
        y.sum().backward()
        shared = lib.utils.checkpoint.checkpoint_sequential(
            _sequential(lib, shared=True), 1, lib.ones(2, 6, dtype=lib.float64),
            use_reentrant=use_reentrant)
        errors = [
            attempt(lambda: lib.utils.checkpoint.checkpoint_sequential(
                functions, 2, x, use_reentrant=use_reentrant, foo=1, bar=2)),
            attempt(lambda: lib.utils.checkpoint.checkpoint_sequential(
                functions, 0, x, use_reentrant=use_reentrant)),
            attempt(lambda: lib.utils.checkpoint.checkpoint_sequential(
                functions, 6, x, use_reentrant=use_reentrant)),
        ]
        return y, _grads(x, w1, w2), calls, shared, errors

    result = _differential(run)
    assert result[2] == [0, 1, 2, 3, 4, 0, 1]
    assert result[4][0] == ("ValueError", "Unexpected keyword arguments: foo,bar")


# ----------------------------------------------------------------------------------------------
# use_reentrant=None


def test_use_reentrant_not_passed_warns_and_means_reentrant() -> None:
    def run(lib: Any) -> Any:
        x, w1, _, _ = _params(lib)
        cp = lib.utils.checkpoint
        y, caught = _recorded(lambda: cp.checkpoint(lambda a: a @ w1, x))
        z, caught_sequential = _recorded(lambda: cp.checkpoint_sequential(
            [lambda a: a @ w1, lib.tanh], 2, x))
        return y.grad_fn.name(), caught, z.grad_fn.name(), caught_sequential

    result = _differential(run)
    assert result[0] == "CheckpointFunctionBackward"
    assert result[1] == [("UserWarning", (
        "chainrule.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
        "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
        "exception. use_reentrant=False is recommended, but if you need to preserve the current "
        "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
        "the differences between the two variants."))]
    assert len(result[3]) == 1  # (it passes use_reentrant on to checkpoint)


# ----------------------------------------------------------------------------------------------
# autograd.grad, inputs=, double backward


def test_autograd_grad_and_second_order_non_reentrant() -> None:
    def run(lib: Any) -> Any:
        x, w1, _, _ = _params(lib)
        calls: list[str] = []

        def fn(x: Any, w: Any) -> Any:
            calls.append("fn")
            return lib.tanh(x @ w).pow(3).sum()

        y = lib.utils.checkpoint.checkpoint(fn, x, w1, use_reentrant=False)
        gx, gw = lib.autograd.grad(y, (x, w1), create_graph=True)
        (gx.pow(2).sum() + gw.sin().sum()).backward()
        first = (gx, gw)
        z = lib.utils.checkpoint.checkpoint(lambda t: (t.exp() * t).sum(), x,
                                            use_reentrant=False)
        (g,) = lib.autograd.grad(z, x, create_graph=True)
        (hessian_diagonal,) = lib.autograd.grad(g.sum(), x)
        return first, _grads(x, w1), hessian_diagonal, calls

    result = _differential(run)
    # forward; recomputed for autograd.grad; and again for the backward of its result, which
    # runs the forward's nodes again (a pass of its own)
    assert result[3] == ["fn", "fn", "fn"]


def test_reentrant_backward_with_create_graph_gives_a_first_order_grad() -> None:
    """As PyTorch: the inner backward records nothing, so ``x.grad`` has no history."""

    def run(lib: Any) -> Any:
        x, _, _, _ = _params(lib)
        y = lib.utils.checkpoint.checkpoint(lambda t: (t ** 3).sum(), x, use_reentrant=True)
        with warnings.catch_warnings():
            # (PyTorch warns about create_graph in backward() once per process)
            warnings.simplefilter("ignore")
            y.backward(create_graph=True)
        return x.grad, x.grad.requires_grad

    assert _differential(run)[1] is False


def test_backward_with_inputs_non_reentrant() -> None:
    def run(lib: Any) -> Any:
        params = _params(lib)
        y = lib.utils.checkpoint.checkpoint(_mlp_block(lib, []), *params, use_reentrant=False)
        y.sum().backward(inputs=[params[1], params[3]])
        return _grads(*params)

    grads = _differential(run)
    assert grads[0] is None and grads[1] is not None


@REENTRANT
def test_retain_graph_recomputes_for_each_backward(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        params = _params(lib)
        calls: list[str] = []
        y = lib.utils.checkpoint.checkpoint(_mlp_block(lib, calls), *params,
                                            use_reentrant=use_reentrant)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return _grads(*params), len(calls)

    assert _differential(run)[1] == 3


# ----------------------------------------------------------------------------------------------
# Non-reentrant specifics: early stop, contexts, in-place ops and Functions inside


def _logged_fn(lib: Any, log: list[str]) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        log.append("start")
        h = x.sin()
        h = h.exp()
        log.append("end")  # not reached by a recomputation that stops early
        return h * 3

    return fn


@pytest.mark.parametrize("how", ["default", "argument", "context"])
def test_early_stop(how: str) -> None:
    def run(lib: Any) -> Any:
        x, _, _, _ = _params(lib)
        log: list[str] = []
        cp = lib.utils.checkpoint
        early = cp.set_checkpoint_early_stop(False) if how == "context" else None
        with early or contextlib.nullcontext():
            y = cp.checkpoint(_logged_fn(lib, log), x, use_reentrant=False,
                              early_stop=how != "argument")
        y.sum().backward()
        return _grads(x), log

    _, log = _differential(run)
    assert log == (["start", "end", "start"] if how == "default" else ["start", "end"] * 2)


def test_context_fn_wraps_forward_and_recomputation() -> None:
    def run(lib: Any) -> Any:
        x, _, _, _ = _params(lib)
        log: list[str] = []

        @contextlib.contextmanager
        def context(name: str) -> Any:
            log.append("enter " + name)
            yield
            log.append("exit " + name)

        y = lib.utils.checkpoint.checkpoint(
            _logged_fn(lib, log), x, use_reentrant=False,
            context_fn=lambda: (context("forward"), context("recompute")))
        y.sum().backward()
        return _grads(x), log

    _differential(run)


def test_saved_tensors_read_outside_backward_recompute_each_time() -> None:
    def run(lib: Any) -> Any:
        x, _, _, _ = _params(lib)
        log: list[str] = []
        y = lib.utils.checkpoint.checkpoint(lambda t: _logged_fn(lib, log)(t).exp(), x,
                                            use_reentrant=False)
        first = y.grad_fn._saved_result
        second = y.grad_fn._saved_result
        return first, second, first.grad_fn.name(), log

    assert _differential(run)[3] == ["start", "end", "start", "end", "start", "end"]


@REENTRANT
def test_in_place_ops_and_custom_functions_inside(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        x, w1, _, _ = _params(lib)

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (a,) = ctx.saved_tensors
                return 2 * a * g

        def fn(x: Any, w: Any) -> Any:
            h = (x @ w).relu_()
            h = Square.apply(h)
            h[:, 1:].mul_(2)
            return h.tanh()

        y = lib.utils.checkpoint.checkpoint(fn, x, w1, use_reentrant=use_reentrant)
        y.sum().backward()
        return y, _grads(x, w1)

    _differential(run)


def test_gradient_taken_inside_the_checkpointed_function() -> None:
    def run(lib: Any) -> Any:
        x, _, _, _ = _params(lib)

        def fn(x: Any) -> Any:
            z = x.sin().cos()
            (gx,) = lib.autograd.grad(z.sum(), x, create_graph=True)
            return x.cos() * gx

        y = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)
        y.sum().backward()
        return y, _grads(x)

    _differential(run)


@REENTRANT
def test_no_grad_runs_the_function_once(use_reentrant: bool) -> None:
    def run(lib: Any) -> Any:
        params = _params(lib)
        calls: list[str] = []
        with lib.no_grad():
            y = lib.utils.checkpoint.checkpoint(_mlp_block(lib, calls), *params,
                                                use_reentrant=use_reentrant)
        return y, y.requires_grad, calls

    assert _differential(run)[1:] == (False, ["block"])


# ----------------------------------------------------------------------------------------------
# Errors


def _changing(lib: Any, state: dict[str, Any]) -> Callable[[Any], Any]:
    """A function whose recomputation differs from its forward once ``state`` is changed."""

    def fn(x: Any) -> Any:
        h = x[: state["rows"]].sin()
        if state["twice"]:
            h = h.cos()
        return h

    return fn


def _error_cases(lib: Any) -> dict[str, Callable[[], Any]]:
    cp = lib.utils.checkpoint
    x, w1, _, _ = _params(lib)

    def backward_after(change: dict[str, Any], **kwargs: Any) -> Callable[[], Any]:
        def go() -> Any:
            state = {"rows": 4, "twice": True}
            y = cp.checkpoint(_changing(lib, state), x, use_reentrant=False, **kwargs)
            state.update(change)
            y.sum().backward()
            return _grads(x)

        return go

    class TwiceSaved(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            ctx.saved_tensors  # noqa: B018 - read twice
            ctx.saved_tensors  # noqa: B018
            return g * 2

    def two_backwards_in_a_group() -> None:
        y = cp.checkpoint(lambda t: t.sin().exp(), x, use_reentrant=False)
        with cp.GraphExecGroup():
            y.sum().backward(retain_graph=True)
            y.sum().backward()

    def nested_groups() -> None:
        with cp.GraphExecGroup(), cp.GraphExecGroup():
            pass

    @contextlib.contextmanager
    def swallow() -> Any:
        with contextlib.suppress(ValueError):
            yield

    def fails(t: Any) -> Any:
        raise ValueError("boom")

    def other_context_fn() -> Any:  # not noop_context_fn itself
        return cp.noop_context_fn()

    def modified_input(use_reentrant: bool) -> Callable[[], Any]:
        def go() -> Any:
            h = x * 1
            y = cp.checkpoint(lambda t: t.sin(), h, use_reentrant=use_reentrant)
            with lib.no_grad():
                h.add_(1)
            y.sum().backward()

        return go

    return {
        "reentrant_autograd_grad": lambda: lib.autograd.grad(
            cp.checkpoint(lambda t: t.sin(), x, use_reentrant=True).sum(), x),
        "reentrant_backward_inputs": lambda: cp.checkpoint(
            lambda t: t.sin(), x, use_reentrant=True).sum().backward(inputs=[x]),
        "reentrant_context_fn": lambda: cp.checkpoint(
            lambda t: t, x, use_reentrant=True, context_fn=other_context_fn),
        "reentrant_debug": lambda: cp.checkpoint(lambda t: t, x, use_reentrant=True, debug=True),
        "determinism_check": lambda: cp.checkpoint(
            lambda t: t, x, use_reentrant=False, determinism_check="shapes"),
        "debug_with_context_fn": lambda: cp.checkpoint(
            lambda t: t, x, use_reentrant=False, debug=True, context_fn=other_context_fn),
        "debug_enabled_with_context_fn": lambda: _with(cp.set_checkpoint_debug_enabled(True),
                                                       lambda: cp.checkpoint(
            lambda t: t, x, use_reentrant=False, context_fn=other_context_fn)),
        "reentrant_output_detached": lambda: cp.checkpoint(
            lambda t: t.detach() * 2, x, use_reentrant=True).sum().backward(),
        "metadata_changed": backward_after({"rows": 3}),
        "metadata_changed_unchecked": backward_after({"rows": 3}, determinism_check="none"),
        "fewer_tensors_saved": backward_after({"twice": False}),
        "more_tensors_saved": lambda: _more_saved(cp, lib, x),
        "unpacked_twice": lambda: cp.checkpoint(
            lambda t: TwiceSaved.apply(t.sin()), x, use_reentrant=False).sum().backward(),
        "graph_exec_group_overlap": two_backwards_in_a_group,
        "graph_exec_group_nested": nested_groups,
        "context_fn_swallows": lambda: cp.checkpoint(
            fails, x, use_reentrant=False,
            context_fn=lambda: (swallow(), contextlib.nullcontext())),
        "function_raises_reentrant": lambda: cp.checkpoint(fails, x, use_reentrant=True),
        "function_raises_non_reentrant": lambda: cp.checkpoint(fails, x, use_reentrant=False),
        "detach_variable_list": lambda: cp.detach_variable([x]),
        "modified_input_reentrant": modified_input(True),
        "modified_input_non_reentrant": modified_input(False),
    }


def _with(context: Any, fn: Callable[[], Any]) -> Any:
    with context:
        return fn()


def _more_saved(cp: Any, lib: Any, x: Any) -> Any:
    state = {"rows": 4, "twice": False}
    y = cp.checkpoint(_changing(lib, state), x, use_reentrant=False, early_stop=False)
    state["twice"] = True
    y.sum().backward()


def _without_location(outcome: tuple) -> tuple:
    """chainrule adds where a tensor was modified in place to PyTorch's message."""
    kind, message = outcome
    if isinstance(message, str):
        message = message.split(" The tensor was last modified in place at ")[0]
    return kind, message


ERROR_CASES = list(_error_cases(chainrule))


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors_match_torch(case: str) -> None:
    ours = _without_location(attempt(_error_cases(chainrule)[case], str))
    theirs = attempt(_error_cases(torch)[case], str)
    # (metadata_changed_unchecked: neither checks; the backward formula meets mismatched
    # shapes and raises PyTorch's size-mismatch message, ops/_dispatch.numpy_broadcast_error)
    assert ours == theirs
    assert ours[0] != "ok"


def test_checkpoint_error_is_a_runtime_error_and_messages_name_the_tip() -> None:
    cases = _error_cases(chainrule)
    with pytest.raises(chainrule.utils.checkpoint.CheckpointError) as caught:
        cases["metadata_changed"]()
    assert isinstance(caught.value, RuntimeError)
    assert "tensor at position 0:\nsaved metadata: {'shape': chainrule.Size([4, 3])" in str(
        caught.value)
    assert "set_checkpoint_debug_enabled(True)" in str(caught.value)


# ----------------------------------------------------------------------------------------------
# The engine's part: which pass is running, and whether a reentrant checkpoint may run in it


def test_checkpoint_validity_follows_the_running_pass() -> None:
    def run(lib: Any) -> Any:
        x, w1, _, _ = _params(lib)
        seen: list[Any] = [lib.autograd._is_checkpoint_valid()]

        class Inner(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                return a * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                with lib.enable_grad():
                    y = lib.utils.checkpoint.checkpoint(lambda t: t.sin(), w1,
                                                        use_reentrant=True)
                    seen.append(attempt(lambda: y.sum().backward(), str)[0])
                seen.append(lib.autograd._is_checkpoint_valid())
                return g * 2

        lib.autograd.grad(Inner.apply(x).sum(), x)
        Inner.apply(x).sum().backward()
        Inner.apply(x).sum().backward(inputs=[x])
        return seen, _grads(w1)

    seen, _ = _differential(run)
    assert seen == [True, "RuntimeError", False, "ok", True, "RuntimeError", False]


def test_stepping_through_a_checkpointed_graph_recomputes_once() -> None:
    params = _params(chainrule)
    calls: list[str] = []
    y = checkpoint(_mlp_block(chainrule, calls), *params, use_reentrant=False)
    steps = list(backward_steps(y.sum()))
    assert len(steps) > 3 and calls == ["block", "block"]
    stepped = _grads(*params)
    reference = _params(chainrule)
    _mlp_block(chainrule, [])(*reference).sum().backward()
    _assert_same(stepped, _grads(*reference))


def test_module_layout_matches_torch() -> None:
    import torch.utils.checkpoint as theirs

    ours = chainrule.utils.checkpoint
    assert chainrule.utils.checkpoint.checkpoint is checkpoint
    assert set(ours.__all__) <= set(theirs.__all__)
    missing = set(theirs.__all__) - set(ours.__all__)
    assert missing == set()
    for name in ours.__all__:
        assert hasattr(ours, name), name
    assert ours.get_device_states(chainrule.ones(2)) == theirs.get_device_states(torch.ones(2))
    assert ours.DefaultDeviceType.get_device_type() == theirs.DefaultDeviceType.get_device_type()
