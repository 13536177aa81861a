"""Custom autograd.Function in forward mode (issue 15): ``jvp(ctx, *tangents)`` and
``ctx.save_for_forward``, against PyTorch: tangents given to jvp (zeros for a tensor input
without one, None for other arguments), what ``ctx.saved_tensors`` returns there, the outputs'
tangents, PyTorch's errors (no jvp, wrong count, wrong size, number, gradient for a
non-differentiable output, a returned input whose tangent is not a view), reverse mode through
the tangent, and gradcheck(check_forward_ad=True) of a wrong jvp."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .outcomes import same_outcome


def _function(lib: Any, forward: Callable[..., Any], jvp: Callable[..., Any] | None,
              backward: Callable[..., Any] | None = None) -> Any:
    body: dict[str, Any] = {"forward": staticmethod(forward)}
    body["backward"] = staticmethod(backward or (lambda ctx, *g: g if len(g) > 1 else g[0]))
    if jvp is not None:
        body["jvp"] = staticmethod(jvp)
    return type("Custom", (lib.autograd.Function,), body)


def _describe(lib: Any, out: Any) -> list[Any]:
    fwad = lib.autograd.forward_ad
    described = []
    for o in out if isinstance(out, tuple) else (out,):
        if not isinstance(o, lib.Tensor):
            described.append(o)
            continue
        primal, tangent = fwad.unpack_dual(o)
        described.append((primal.tolist(), str(primal.dtype),
                          None if tangent is None else (tangent.tolist(), str(tangent.dtype))))
    return described


def _apply(lib: Any, cls: Any, tangent_on: str = "x") -> list[Any]:
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        x = lib.tensor([1.0, 2.0])
        y = lib.tensor([3.0, 4.0])
        if tangent_on in ("x", "both"):
            x = fwad.make_dual(x, lib.tensor([0.5, 0.25]))
        if tangent_on in ("y", "both"):
            y = fwad.make_dual(y, lib.tensor([1.0, -1.0]))
        return _describe(lib, cls.apply(x, y))


def _mul(ctx: Any, x: Any, y: Any) -> Any:
    ctx.save_for_forward(x, y)
    return x * y


def _mul_jvp(ctx: Any, xt: Any, yt: Any) -> Any:
    x, y = ctx.saved_tensors
    return xt * y + x * yt


CASES: dict[str, tuple[Callable[..., Any], Any]] = {
    "mul": (_mul, _mul_jvp),
    "no_jvp": (_mul, None),
    "count_more": (lambda ctx, x, y: x * y, lambda ctx, xt, yt: (xt, xt)),
    "count_fewer": (lambda ctx, x, y: (x * y, x + y), lambda ctx, xt, yt: xt * 2),
    "two_outputs": (lambda ctx, x, y: (x * y, x + y), lambda ctx, xt, yt: (xt * 3, xt + yt)),
    "wrong_size": (lambda ctx, x, y: x * y, lambda ctx, xt, yt: xt.sum()),
    "other_dtype": (lambda ctx, x, y: x * y, lambda ctx, xt, yt: xt.double()),
    "number": (lambda ctx, x, y: x * 2, lambda ctx, xt, yt: 2.0),
    "input_as_is": (lambda ctx, x, y: x, lambda ctx, xt, yt: xt),
    "input_as_is_view": (lambda ctx, x, y: x, lambda ctx, xt, yt: xt.view_as(xt)),
    "view_output": (lambda ctx, x, y: x[0], lambda ctx, xt, yt: xt[0]),
    "view_output_copy": (lambda ctx, x, y: x[0], lambda ctx, xt, yt: xt[0].clone()),
    "non_tensor_output": (lambda ctx, x, y: (x * y, 3), lambda ctx, xt, yt: (xt, None)),
    "bool_output": (lambda ctx, x, y: (x * y, x > 1), lambda ctx, xt, yt: (xt, None)),
    "bool_output_given": (lambda ctx, x, y: (x * y, x > 1), lambda ctx, xt, yt: (xt, xt)),
    "saved_for_backward_only": (
        lambda ctx, x, y: (ctx.save_for_backward(x), x * y)[1],
        lambda ctx, xt, yt: xt * len(ctx.saved_tensors) + 1,
    ),
    "save_non_tensor": (lambda ctx, x, y: (ctx.save_for_forward(3), x)[1],
                        lambda ctx, xt, yt: xt),
    "tangent_args": (lambda ctx, x, y: x + y,
                     lambda ctx, xt, yt: xt * 10 + yt * 100),
    "forward_sees_no_tangent": (
        lambda ctx, x, y: x * (2.0 if chainrule_or_torch_no_tangent(x) else 5.0),
        lambda ctx, xt, yt: xt,
    ),
}


def chainrule_or_torch_no_tangent(x: Any) -> bool:
    lib = chainrule if isinstance(x, chainrule.Tensor) else __import__("torch")
    return lib.autograd.forward_ad.unpack_dual(x).tangent is None


def _mark_non_differentiable(ctx: Any, x: Any, y: Any) -> Any:
    a = x * y
    ctx.mark_non_differentiable(a)
    return a, x + 1


CASES["non_differentiable_output"] = (_mark_non_differentiable, lambda ctx, xt, yt: (xt, xt))
CASES["non_differentiable_none"] = (_mark_non_differentiable, lambda ctx, xt, yt: (None, xt))


@pytest.mark.parametrize("tangent_on", ["x", "y", "both"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_custom_function_jvp(name: str, tangent_on: str) -> None:
    forward, jvp = CASES[name]
    same_outcome(lambda lib: _apply(lib, _function(lib, forward, jvp), tangent_on))


def test_no_tangent_no_jvp_call() -> None:
    """Without a tangent among the inputs, jvp is not called (nor needed)."""
    def run(lib: Any) -> Any:
        cls = _function(lib, _mul, lambda ctx, xt, yt: 1 / 0)
        with lib.autograd.forward_ad.dual_level():
            return _describe(lib, cls.apply(lib.tensor([1.0]), lib.tensor([2.0])))

    same_outcome(run)


def test_setup_context_and_non_tensor_argument() -> None:
    def run(lib: Any) -> Any:
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x: Any, scale: float) -> Any:
                return x * scale

            @staticmethod
            def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
                ctx.save_for_forward(inputs[0])
                ctx.scale = inputs[1]

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * ctx.scale, None

            @staticmethod
            def jvp(ctx: Any, xt: Any, scale_t: Any) -> Any:
                assert scale_t is None
                (x,) = ctx.saved_tensors
                return xt * ctx.scale + x * 0

        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.25]))
            return _describe(lib, Scale.apply(x, 3.0))

    same_outcome(run)


def test_reverse_mode_through_the_tangent() -> None:
    """jvp runs with grad mode on: its tangent has history, and backward through it works."""
    def run(lib: Any) -> Any:
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_forward(x)
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return 2 * x * g

            @staticmethod
            def jvp(ctx: Any, t: Any) -> Any:
                (x,) = ctx.saved_tensors
                return 2 * x * t

        fwad = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with fwad.dual_level():
            out = Square.apply(fwad.make_dual(x, lib.tensor([1.0, 3.0])))
            primal, tangent = fwad.unpack_dual(out)
            (g,) = lib.autograd.grad(tangent.sum(), x, retain_graph=True)
            (gp,) = lib.autograd.grad(primal.sum(), x)
            return tangent.tolist(), g.tolist(), gp.tolist(), type(out.grad_fn).__name__

    same_outcome(run)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("wrong", [False, True])
def test_gradcheck_of_custom_jvp(wrong: bool, fast_mode: bool) -> None:
    """PyTorch's gradcheck message for a wrong jvp, word for word (and a right one passes)."""
    def run(lib: Any) -> Any:
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_forward(x)
                ctx.save_for_backward(x)
                return x.exp()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return g * x.exp()

            @staticmethod
            def jvp(ctx: Any, t: Any) -> Any:
                (x,) = ctx.saved_tensors
                return t * 2 if wrong else t * x.exp()

        x = lib.from_numpy(np.array([0.5, 1.0, -0.25])).requires_grad_()
        return lib.autograd.gradcheck(Exp.apply, (x,), check_forward_ad=True,
                                      fast_mode=fast_mode)

    same_outcome(run)
