"""gradcheck's options against PyTorch's: the deprecated ``get_numerical_jacobian`` /
``get_analytical_jacobian``, ``check_batched_grad``, the undefined-gradient check,
``raise_exception=False``."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch

LIBS = (chainrule, torch)
# The module (``import chainrule.autograd.gradcheck as m`` gives the function once the
# attribute has been read, as PyTorch's does).
chainrule_gradcheck = importlib.import_module("chainrule.autograd.gradcheck")


def _module(lib: Any) -> Any:
    """The library's gradcheck module (``torch.autograd.gradcheck`` names the function)."""
    if lib is chainrule:
        return chainrule_gradcheck
    return sys.modules["torch.autograd.gradcheck"]


def _run(make: Callable[[Any], Any], lib: Any) -> tuple[tuple[str, Any], list[tuple]]:
    """``("ok", result)`` or ``(exception type, normalised message)``, and the warnings raised
    (message, category, whether it points at this file)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: tuple[str, Any] = ("ok", make(lib))
        except Exception as error:  # noqa: BLE001 - compared with PyTorch's
            outcome = (type(error).__name__, normalise_output(str(error)))
    seen = [(str(w.message), w.category.__name__, w.filename == __file__) for w in caught]
    return outcome, seen


def _numbers_masked(text: str) -> str:
    """Tensor values and the spaces before them replaced by ``#`` (random grad_outputs:
    chainrule's generator draws other normal numbers than PyTorch's, so the padding differs)."""
    return re.sub(r"\s*-?\d+\.\d*(e[-+]?\d+)?", "#", text)


def _assert_same_tensors(ours: Any, theirs: Any) -> None:
    """Same structure, shapes, dtypes and (numerically) values; booleans equal."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, chainrule.Tensor)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).replace("chainrule.", "") == str(theirs.dtype).replace(
            "torch.", ""
        )
        np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-7, atol=1e-9)
        return
    if isinstance(theirs, tuple):
        assert type(ours) is tuple and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _assert_same_tensors(a, b)
        return
    assert ours == theirs and type(ours) is type(theirs)


def _same(make: Callable[[Any], Any]) -> tuple[str, Any]:
    (ours, our_warnings), (theirs, their_warnings) = _run(make, chainrule), _run(make, torch)
    assert our_warnings == their_warnings
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        _assert_same_tensors(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]
    return ours


def _x(lib: Any) -> Any:
    return lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)


def _y(lib: Any) -> Any:
    return lib.tensor([[1.5, -0.5]], dtype=lib.float64, requires_grad=True)


def _function(lib: Any, forward: Callable[..., Any], backward: Callable[..., Any]) -> Any:
    return type("Custom", (lib.autograd.Function,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
    })


# ----------------------------------------------------------------------------------------------
# get_numerical_jacobian / get_analytical_jacobian


def _numerical(lib: Any, fn: Callable[..., Any], inputs: Any, **kwargs: Any) -> Any:
    return _module(lib).get_numerical_jacobian(fn, inputs, **kwargs)


def _analytical(lib: Any, inputs: Any, output: Any, **kwargs: Any) -> Any:
    return _module(lib).get_analytical_jacobian(inputs, output, **kwargs)


NUMERICAL = {
    "two_inputs": lambda lib: _numerical(
        lib, lambda ins: ins[0].sin() * ins[1].sum(), (_x(lib), _y(lib))),
    "first_output_only": lambda lib: _numerical(
        lib, lambda ins: (ins[0].exp(), ins[0].sum()), (_x(lib),)),
    "tensor_inputs": lambda lib: _numerical(lib, lambda ins: ins[0] ** 2, _x(lib)),
    "list_inputs_with_number": lambda lib: _numerical(
        lib, lambda ins: ins[0] * ins[1], [_x(lib), 3.0]),
    "target_outside_inputs": lambda lib: _numerical(
        lib, lambda ins: ins[0] * 2, (_x(lib),), target=(_y(lib),)),
    "nested_target": lambda lib: (lambda x, y: _numerical(
        lib, lambda ins: ins[0] * y.sum(), (x,), target=[x, [y]]))(_x(lib), _y(lib)),
    "eps": lambda lib: _numerical(lib, lambda ins: ins[0].exp(), (_x(lib),), eps=1e-6),
    "float32_output": lambda lib: _numerical(lib, lambda ins: ins[0].float() * 2, (_x(lib),)),
    "no_input_requires_grad": lambda lib: _numerical(
        lib, lambda ins: ins[0] * 2, (_x(lib).detach(),)),
    "integer_output_last": lambda lib: _numerical(
        lib, lambda ins: (ins[0] * 2, (ins[0] > 0).long()), (_x(lib),)),
    "integer_output_first": lambda lib: _numerical(
        lib, lambda ins: ((ins[0] > 0).long(), ins[0] * 2), (_x(lib),)),
    "grad_out": lambda lib: _numerical(lib, lambda ins: ins[0], (_x(lib),), grad_out=2.0),
    "no_floating_output": lambda lib: _numerical(
        lib, lambda ins: (ins[0] > 0).long(), (_x(lib),)),
    "bool_output": lambda lib: _numerical(
        lib, lambda ins: (ins[0] * 2, ins[0] > 0), (_x(lib),)),
    "zero_dim_tensor_inputs": lambda lib: _numerical(
        lib, lambda ins: ins[0] * 2, lib.tensor(1.5, dtype=lib.float64, requires_grad=True)),
}


@pytest.mark.parametrize("case", sorted(NUMERICAL))
def test_get_numerical_jacobian_matches_pytorch(case: str) -> None:
    kind, _ = _same(NUMERICAL[case])
    expected_kind = {
        "grad_out": "ValueError",
        "no_floating_output": "IndexError", "bool_output": "RuntimeError",
        "zero_dim_tensor_inputs": "TypeError",
    }
    assert kind == expected_kind.get(case, "ok")


ANALYTICAL = {
    "two_inputs": lambda lib: (lambda x, y: _analytical(lib, (x, y), x.sin() * y.sum()))(
        _x(lib), _y(lib)),
    "mixed_inputs": lambda lib: (lambda x: _analytical(lib, [x, 3, x.detach()], x.exp()))(
        _x(lib)),
    "unused_input": lambda lib: (lambda x, y: _analytical(lib, (x, y), x * 2))(
        _x(lib), _y(lib)),
    "scalar_output": lambda lib: (lambda x: _analytical(lib, (x,), (x * x).sum()))(_x(lib)),
    "empty_output": lambda lib: (lambda x: _analytical(
        lib, (x,), lib.zeros(0, dtype=lib.float64)))(_x(lib)),
    "nondet_tol": lambda lib: (lambda x: _analytical(lib, (x,), x ** 3, nondet_tol=1e-3))(
        _x(lib)),
    "grad_out": lambda lib: (lambda x: _analytical(lib, (x,), x * 2, grad_out=0.5))(_x(lib)),
    "detached_output": lambda lib: (lambda x: _analytical(lib, (x,), x.detach() * 2))(
        _x(lib)),
    "no_input_requires_grad": lambda lib: (lambda x: _analytical(lib, (x.detach(),), x * 2))(
        _x(lib)),
    "tensor_inputs": lambda lib: (lambda x: _analytical(lib, x, x * 2))(_x(lib)),
}


@pytest.mark.parametrize("case", sorted(ANALYTICAL))
def test_get_analytical_jacobian_matches_pytorch(case: str) -> None:
    kind, result = _same(ANALYTICAL[case])
    expected_kind = {
        "grad_out": "ValueError",
        "detached_output": "RuntimeError", "no_input_requires_grad": "RuntimeError",
        "tensor_inputs": "AssertionError",
    }
    assert kind == expected_kind.get(case, "ok")
    if kind == "ok":
        jacobians, *flags = result
        assert flags == [True, True, True]


def test_get_analytical_jacobian_reports_a_backward_that_is_not_reentrant() -> None:
    def make(lib: Any) -> Any:
        rng = np.random.default_rng(0)
        noisy = _function(lib, lambda ctx, a: a * 2, lambda ctx, g: g * 2 + lib.tensor(
            rng.standard_normal(tuple(g.shape)) * 1e-9))
        x = _x(lib)
        jacobians, reentrant, sizes, types = _analytical(lib, (x,), noisy.apply(x))
        relaxed = _analytical(lib, (x,), noisy.apply(x), nondet_tol=1e-6)[1]
        return reentrant, relaxed, sizes, types, jacobians[0].shape == (3, 3)

    assert _same(make) == ("ok", (False, True, True, True, True))


def test_jacobian_functions_are_exported_as_in_pytorch() -> None:
    names = ("get_numerical_jacobian", "get_analytical_jacobian",
             "get_numerical_jacobian_wrt_specific_input")
    assert set(names) <= set(chainrule_gradcheck.__all__)
    assert set(names) <= set(_module(torch).__all__)


def test_every_public_function_of_pytorchs_gradcheck_module_exists() -> None:
    theirs = _module(torch)
    assert [name for name in theirs.__all__ if not hasattr(chainrule_gradcheck, name)] == []
    for name in ("gradcheck", "gradgradcheck", "get_numerical_jacobian",
                 "get_analytical_jacobian", "get_numerical_jacobian_wrt_specific_input"):
        ours, reference = (inspect.signature(getattr(m, name)) for m in (chainrule_gradcheck,
                                                                         theirs))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
            (p.name, p.kind, p.default) for p in reference.parameters.values()], name


# ----------------------------------------------------------------------------------------------
# get_numerical_jacobian_wrt_specific_input (public, not deprecated): fn(*inputs), one input


def _wrt(lib: Any, fn: Callable[..., Any], input_idx: int, inputs: Any, eps: float = 1e-6,
         outputs: Any = None, **kwargs: Any) -> Any:
    if outputs is None:
        out = fn(*inputs) if isinstance(inputs, tuple | list) else fn(inputs)
        outputs = out if isinstance(out, tuple) else (out,)
    return _module(lib).get_numerical_jacobian_wrt_specific_input(
        fn, input_idx, inputs, outputs, eps, **kwargs)


def _z(lib: Any) -> Any:
    return lib.tensor([[0.5, 1.0], [-1.5, 2.0]], dtype=lib.float64, requires_grad=True)


WRT_INPUT = {
    "first": lambda lib: _wrt(lib, lambda a, b: a.sin() * b.sum(), 0, (_x(lib), _y(lib))),
    "second": lambda lib: _wrt(lib, lambda a, b: a.sin() * b.sum(), 1, (_x(lib), _y(lib))),
    "matrix_input": lambda lib: _wrt(lib, lambda a: a @ a, 0, (_z(lib),)),
    "two_outputs": lambda lib: _wrt(lib, lambda a: (a.exp(), a.sum()), 0, (_x(lib),)),
    "list_inputs_with_number": lambda lib: _wrt(lib, lambda a, k: a * k, 0, [_x(lib), 3.0]),
    "eps": lambda lib: _wrt(lib, lambda a: a.exp(), 0, (_x(lib),), eps=1e-3),
    "float32": lambda lib: _wrt(lib, lambda a: a * a, 0, (_x(lib).float().detach()
                                                          .requires_grad_(),), eps=1e-2),
    "float32_output_of_float64_input": lambda lib: _wrt(lib, lambda a: a.float() * 2, 0,
                                                        (_x(lib),)),
    "empty_input": lambda lib: _wrt(lib, lambda a: a * 2, 0, (
        lib.zeros(0, dtype=lib.float64, requires_grad=True),)),
    "zero_dim_input": lambda lib: _wrt(lib, lambda a: a * 3, 0, (
        lib.tensor(1.5, dtype=lib.float64, requires_grad=True),)),
    "explicit_input": lambda lib: (lambda x, y: _wrt(
        lib, lambda a: a * y.sum(), 0, (x,), input=y))(_x(lib), _y(lib)),
    "input_not_requiring_grad": lambda lib: _wrt(lib, lambda a: a * 2, 0, (_x(lib).detach(),)),
    "integer_output_last": lambda lib: _wrt(
        lib, lambda a: (a * 2, (a > 0).long()), 0, (_x(lib),)),
    "integer_output_first": lambda lib: _wrt(
        lib, lambda a: ((a > 0).long(), a * 2), 0, (_x(lib),)),
    "bool_output": lambda lib: _wrt(lib, lambda a: (a * 2, a > 0), 0, (_x(lib),)),
    "fewer_outputs_given": lambda lib: _wrt(
        lib, lambda a: (a * 2, a.sum()), 0, (_x(lib),), outputs=(_x(lib),)),
    "more_outputs_given": lambda lib: _wrt(
        lib, lambda a: a * 2, 0, (_x(lib),), outputs=(_x(lib), _x(lib))),
    "output_of_other_size_given": lambda lib: _wrt(
        lib, lambda a: a * 2, 0, (_x(lib),), outputs=(_y(lib),)),
    "no_floating_output_given": lambda lib: _wrt(
        lib, lambda a: a * 2, 0, (_x(lib),), outputs=(lib.zeros(3, dtype=lib.int64),)),
    "shape_changes": lambda lib: _wrt(
        lib, lambda a: a[: 1 + int(a[0] > 0.5)], 0, (_x(lib),), outputs=(_x(lib)[:1],)),
    "input_restored": lambda lib: (lambda x: (_wrt(lib, lambda a: a ** 3, 0, (x,)),
                                              x.detach()))(_x(lib)),
    "is_forward_ad": lambda lib: _wrt(lib, lambda a: a * 2, 0, (_x(lib),), is_forward_ad=True),
}


@pytest.mark.parametrize("case", sorted(WRT_INPUT))
def test_get_numerical_jacobian_wrt_specific_input_matches_pytorch(case: str) -> None:
    kind, _ = _same(WRT_INPUT[case])
    expected_kind = {
        "input_not_requiring_grad": "AssertionError", "bool_output": "RuntimeError",
        "fewer_outputs_given": "ok", "more_outputs_given": "IndexError",
        "output_of_other_size_given": "RuntimeError", "shape_changes": "AssertionError",
    }
    assert kind == expected_kind.get(case, "ok")


def test_get_numerical_jacobian_wrt_specific_input_agrees_with_gradcheck_jacobians() -> None:
    x = _x(chainrule)
    (ours,) = chainrule_gradcheck.get_numerical_jacobian_wrt_specific_input(
        lambda a: a.tanh(), 0, (x,), (x.tanh(),), 1e-6)
    expected = np.diag(1 - np.tanh(x.detach().numpy()) ** 2)
    np.testing.assert_allclose(ours.numpy(), expected, rtol=1e-8)


# ----------------------------------------------------------------------------------------------
# check_batched_grad


def _changes_after(lib: Any, calls: int, wrong: Callable[[Any], Any]) -> Any:
    """A right backward (``2 g``) for its first ``calls`` calls, then ``wrong(g)``: gradcheck of
    a 3-element input runs it 6 times for the Jacobian and twice for the one-by-one products,
    so the batched call(s) see the change."""
    count = [0]

    def backward(ctx: Any, g: Any) -> Any:
        count[0] += 1
        return wrong(g) if count[0] > calls else g * 2

    return _function(lib, lambda ctx, a: a * 2, backward)


def _raises(g: Any) -> Any:
    raise RuntimeError("backward ran out of buffers")


@pytest.mark.parametrize("wrong", ["scaled", "ignores_grad_output"])
def test_a_wrong_batched_gradient_fails_with_pytorchs_message(wrong: str) -> None:
    def make(lib: Any) -> Any:
        bad = (lambda g: g * 3) if wrong == "scaled" else (lambda g: lib.ones_like(g))
        return lib.autograd.gradcheck(
            _changes_after(lib, 8, bad).apply, (_x(lib),), check_batched_grad=True
        )

    (ours, _), (theirs, _) = _run(make, chainrule), _run(make, torch)
    assert ours[0] == theirs[0] == "GradcheckError"
    assert _numbers_masked(ours[1]) == _numbers_masked(theirs[1])
    assert ours[1].startswith(
        "For output 0 and input 0:\n\ngradcheck or gradgradcheck failed while testing batched "
        "gradient computation."
    )
    assert "\n\nGot:\ntensor([[" in ours[1] and "\n\nExpected:\ntensor([[" in ours[1]
    if wrong == "ignores_grad_output":
        assert "Got:\ntensor([[1., 1., 1.],\n        [1., 1., 1.]]" in ours[1]


@pytest.mark.parametrize("fast_mode", [False, True])
def test_an_error_while_batching_fails_with_pytorchs_message(fast_mode: bool) -> None:
    calls = 4 if fast_mode else 8  # fast mode runs backward twice for its one projection
    kind, message = _same(lambda lib: lib.autograd.gradcheck(
        _changes_after(lib, calls, _raises).apply, (_x(lib),), check_batched_grad=True,
        fast_mode=fast_mode,
    ))
    assert kind == "GradcheckError"
    assert message.startswith(
        "While computing batched gradients, got: backward ran out of buffers\n\ngradcheck or "
        "gradgradcheck failed while testing batched gradient computation."
    )
    # Without the batched check, the same function passes in both.
    assert _same(lambda lib: lib.autograd.gradcheck(
        _changes_after(lib, calls, _raises).apply, (_x(lib),), fast_mode=fast_mode,
    )) == ("ok", True)


def test_a_wrong_batched_gradient_returns_false_without_raising() -> None:
    assert _same(lambda lib: lib.autograd.gradcheck(
        _changes_after(lib, 8, lambda g: g * 3).apply, (_x(lib),), check_batched_grad=True,
        raise_exception=False,
    )) == ("ok", False)
    assert _same(lambda lib: lib.autograd.gradcheck(
        _changes_after(lib, 8, _raises).apply, (_x(lib),), check_batched_grad=True,
        raise_exception=False,
    )) == ("ok", False)


CORRECT = {  # the function, and the shapes of the outputs the batched check runs on
    "two_outputs": (lambda lib, **kw: lib.autograd.gradcheck(
        lambda a, b: (a * b.sum(), (a * a).sum()), (_x(lib), _y(lib)), **kw), [(3,), ()]),
    "unused_input": (lambda lib, **kw: lib.autograd.gradcheck(
        lambda a, b: a.exp(), (_x(lib), _y(lib)), **kw), [(3,)]),
    "gradgradcheck": (lambda lib, **kw: lib.autograd.gradgradcheck(
        lambda a, b: (a ** 3 * b.sum(), a.sin()), (_x(lib), _y(lib)), (_x(lib), _x(lib)), **kw),
        [(3,), (1, 2)]),
    "custom_function": (lambda lib, **kw: lib.autograd.gradcheck(
        _changes_after(lib, 10**9, _raises).apply, (_x(lib),), **kw), [(3,)]),
}


@pytest.mark.parametrize("case", sorted(CORRECT))
@pytest.mark.parametrize("fast_mode", [False, True])
def test_correct_functions_pass_the_batched_check_drawing_pytorchs_grad_outputs(
    case: str, fast_mode: bool
) -> None:
    """They pass in both, and the check draws two ``randn_like`` grad_outputs per
    differentiable output from the global generator, as PyTorch's does."""
    make, shapes = CORRECT[case]
    assert _same(lambda lib: make(lib, check_batched_grad=True, fast_mode=fast_mode)) == (
        "ok", True
    )
    for lib in LIBS:
        lib.manual_seed(7)
        assert make(lib, check_batched_grad=True, fast_mode=fast_mode)
        after_check = lib.randn(4, dtype=lib.float64)
        lib.manual_seed(7)
        for shape in shapes:
            for _ in range(2):
                lib.randn_like(lib.zeros(shape, dtype=lib.float64))
        assert np.array_equal(after_check.numpy(), lib.randn(4, dtype=lib.float64).numpy())


# ----------------------------------------------------------------------------------------------
# check_undefined_grad: outputs given no gradient at all, as PyTorch's UndefinedGrad does


def _no_materialize(lib: Any, backward: Callable[..., Any], n_outputs: int = 1) -> Any:
    def forward(ctx: Any, a: Any) -> Any:
        ctx.set_materialize_grads(False)
        return a * 2 if n_outputs == 1 else (a * 2, a * 3)

    return _function(lib, forward, backward)


def _ones_without_grad(lib: Any) -> Any:
    return _no_materialize(
        lib, lambda ctx, g: lib.ones(3, dtype=lib.float64) if g is None else g * 2
    )


def _raises_without_grad(ctx: Any, g: Any) -> Any:
    if g is None:
        raise RuntimeError("no gradient")
    return g * 2


def _two_outputs_none_at_all(lib: Any) -> Any:
    """Right when one output gets a gradient; a nonzero gradient when neither does."""
    def backward(ctx: Any, g1: Any, g2: Any) -> Any:
        if g1 is None and g2 is None:
            return lib.ones(3, dtype=lib.float64)
        return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)

    return _no_materialize(lib, backward, 2)


UNDEFINED = {
    "single_output_crashes": lambda lib, **kw: lib.autograd.gradcheck(
        _no_materialize(lib, lambda ctx, g: g * 2).apply, (_x(lib),), **kw),
    "single_output_nonzero": lambda lib, **kw: lib.autograd.gradcheck(
        _ones_without_grad(lib).apply, (_x(lib),), **kw),
    "single_output_raises": lambda lib, **kw: lib.autograd.gradcheck(
        _no_materialize(lib, _raises_without_grad).apply, (_x(lib),), **kw),
    "all_outputs_undefined": lambda lib, **kw: lib.autograd.gradcheck(
        _two_outputs_none_at_all(lib).apply, (_x(lib),), **kw),
    "gradgradcheck": lambda lib, **kw: lib.autograd.gradgradcheck(
        lambda a: _ones_without_grad(lib).apply(a) * a, (_x(lib),), **kw),
}


@pytest.mark.parametrize("case", sorted(UNDEFINED))
def test_undefined_output_gradients_are_checked_as_pytorch_does(case: str) -> None:
    kind, message = _same(lambda lib: UNDEFINED[case](lib))
    if case == "single_output_crashes":  # not a RuntimeError: PyTorch lets it through
        assert kind == "TypeError"
        return
    assert kind == "GradcheckError"
    assert "tools/autograd/derivatives.yaml" in message
    # raise_exception=False returns False; check_undefined_grad=False lets it pass
    assert _same(lambda lib: UNDEFINED[case](lib, raise_exception=False)) == ("ok", False)
    assert _same(lambda lib: UNDEFINED[case](lib, check_undefined_grad=False)) == ("ok", True)


def test_undefined_gradient_node_is_pytorchs() -> None:
    from chainrule.autograd.gradcheck import _undefined_grad

    calls: dict[str, list] = {"chainrule": [], "torch": []}
    for lib in LIBS:
        seen = calls[lib.__name__]
        f = _no_materialize(lib, lambda ctx, g, seen=seen: seen.append(g) or g)
        x = _x(lib)
        out = f.apply(x)
        undefined = (
            _undefined_grad(out) if lib is chainrule else torch._C._functions.UndefinedGrad()(out)
        )
        name = undefined.grad_fn.name().replace("torch::", "chainrule::")
        assert name == "chainrule::autograd::UndefinedGradBackward"
        assert lib.autograd.grad(undefined, x, lib.ones_like(undefined), allow_unused=True) == (
            None,
        )
    assert calls["chainrule"] == calls["torch"] == [None]


# ----------------------------------------------------------------------------------------------
# Outputs gradcheck cannot difference


def test_non_floating_outputs_are_paired_as_pytorch_pairs_them() -> None:
    x_first = _same(lambda lib: lib.autograd.gradcheck(
        lambda a: ((a > 0).long(), a * 2), (_x(lib),)))
    assert x_first == ("IndexError", "list index out of range")
    assert _same(lambda lib: lib.autograd.gradcheck(
        lambda a: (a * 2, a > 0), (_x(lib),)))[0] == "RuntimeError"


def test_a_complex_output_is_refused_as_in_pytorch() -> None:
    """PyTorch refuses a complex output with a ValueError inside these functions (complex
    results of real inputs are recorded since complex autograd exists)."""
    errors = []
    for lib in (chainrule, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            found = []
            with pytest.raises(ValueError) as info:
                _numerical(lib, lambda ins, lib=lib: ins[0] * lib.tensor(1j), (_x(lib),))
            found.append(str(info.value))
            x = _x(lib)
            with pytest.raises(ValueError) as info:
                _analytical(lib, (x,), x * lib.tensor(1j))
            found.append(str(info.value))
        errors.append(found)
    assert errors[0] == errors[1]
