"""gradcheck(check_forward_ad=True) against PyTorch's (issue 15): forward-mode Jacobians (column
by column, or one tangent per input in fast mode) compared with the numerical ones, PyTorch's
messages on a mismatch, check_backward_ad=False skipping the backward checks, and
gradgradcheck(check_fwd_over_rev=True) refused (forward-over-reverse is not supported yet)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _x(lib: Any, *shape: int, seed: int = 0) -> Any:
    data = np.random.default_rng(seed).uniform(0.3, 1.5, shape)
    return lib.from_numpy(data).requires_grad_()


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "exp": lambda lib, x, y: x.exp(),
    "mul": lambda lib, x, y: x * y,
    "matmul": lambda lib, x, y: x @ y.t(),
    "softmax": lambda lib, x, y: lib.softmax(x * y, 1),
    "two_outputs": lambda lib, x, y: (x.sin(), (x * y).sum(1)),
    "int_output_too": lambda lib, x, y: (x.exp(), x.argmax(1), y.cos()),
    "reduction": lambda lib, x, y: lib.logsumexp(x + y, 1),
    "norm": lambda lib, x, y: lib.linalg.vector_norm(x - y, 3.0),
    "cat_stack": lambda lib, x, y: lib.stack([lib.cat([x, y]), lib.cat([y, x])]),
    "conv": lambda lib, x, y: lib.nn.functional.conv1d(x[None], y[None, :, :2]),
    # (a tangent dropped by detach: the forward-mode Jacobian is wrong in both libraries)
    "wrong_detach": lambda lib, x, y: x.detach() * x + y,
    "wrong_second_input": lambda lib, x, y: x * y.detach(),
    "no_differentiable_output": lambda lib, x, y: (x * y).detach(),
}


def _cases() -> list[Any]:
    cases = []
    for name in sorted(FUNCTIONS):
        for backward in (True, False):
            if backward and name.startswith("wrong_"):
                continue  # (the backward check fails first: tests/test_gradcheck*.py)
            for fast_mode in (False, True):
                cases.append(
                    pytest.param(name, backward, fast_mode, id=f"{name}-{backward}-{fast_mode}")
                )
    return cases


@pytest.mark.parametrize(("name", "backward", "fast_mode"), _cases())
def test_gradcheck_forward_ad(name: str, backward: bool, fast_mode: bool) -> None:
    fn = FUNCTIONS[name]

    def run(lib: Any) -> Any:
        x, y = _x(lib, 2, 3), _x(lib, 2, 3, seed=1)
        return lib.autograd.gradcheck(
            lambda a, b: fn(lib, a, b),
            (x, y),
            check_forward_ad=True,
            check_backward_ad=backward,
            fast_mode=fast_mode,
        )

    same_outcome(run)


@pytest.mark.parametrize("name", ["exp", "wrong_detach"])
def test_raise_exception_false(name: str) -> None:
    fn = FUNCTIONS[name]

    def run(lib: Any) -> Any:
        x, y = _x(lib, 3), _x(lib, 3, seed=1)
        return lib.autograd.gradcheck(
            lambda a, b: fn(lib, a, b),
            (x, y),
            check_forward_ad=True,
            check_backward_ad=False,
            raise_exception=False,
        )

    same_outcome(run)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_wrong_tangent_message_is_pytorchs(fast_mode: bool) -> None:
    """The full text of PyTorch's mismatch message (numerical and analytical Jacobians)."""

    def run(lib: Any) -> Any:
        x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(
            lambda a: a.detach() * a.exp(),
            (x,),
            check_forward_ad=True,
            check_backward_ad=False,
            fast_mode=fast_mode,
        )

    same_outcome(run)


@pytest.mark.parametrize("name", ["exp", "mul", "softmax", "reduction", "matmul"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_forward_over_reverse(name: str, fast_mode: bool) -> None:
    """Forward mode through the backward pass (``check_fwd_over_rev``) passes as PyTorch's."""
    fn = FUNCTIONS[name]

    def run(lib: Any) -> Any:
        x, y = _x(lib, 2, 3), _x(lib, 2, 3, seed=1)
        return lib.autograd.gradgradcheck(
            lambda a, b: fn(lib, a, b),
            (x, y),
            check_fwd_over_rev=True,
            check_rev_over_rev=False,
            check_undefined_grad=False,
            fast_mode=fast_mode,
        )

    assert run(torch) is True
    assert run(chainrule) is True


def test_gradgradcheck_forward_over_reverse_finds_a_wrong_tangent() -> None:
    """A custom Function whose backward is right but not differentiable as written (it
    detaches): the tangent of its gradient is missing, and PyTorch's check fails as
    chainrule's (the numbers differ: the random grad_outputs come from each library's
    generator)."""

    def run(lib: Any) -> Any:
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, a: Any) -> Any:
                ctx.save_for_backward(a)
                ctx.save_for_forward(a)
                return a * a

            @staticmethod
            def jvp(ctx: Any, t: Any) -> Any:
                (a,) = ctx.saved_tensors
                return 2 * a * t

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (a,) = ctx.saved_tensors
                return g * 2 * lib.autograd.forward_ad.unpack_dual(a).primal.detach()

        x = _x(lib, 3)
        return lib.autograd.gradgradcheck(
            Square.apply,
            (x,),
            check_fwd_over_rev=True,
            check_rev_over_rev=False,
            check_undefined_grad=False,
        )

    from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

    from chainrule.autograd.gradcheck import GradcheckError

    first_lines = []
    for lib, error in ((chainrule, GradcheckError), (torch, TorchGradcheckError)):
        with pytest.raises(error) as caught:
            run(lib)
        first_lines.append(str(caught.value).splitlines()[0])
    assert first_lines[0] == first_lines[1]
    assert first_lines[0].startswith("Jacobian computed with forward mode mismatch")


@pytest.mark.parametrize(
    "options",
    [
        {"check_forward_ad": False, "check_backward_ad": False},
        {"check_batched_forward_grad": True},
        {"check_batched_grad": True, "check_backward_ad": False, "check_forward_ad": True},
    ],
)
def test_option_errors(options: dict[str, Any]) -> None:
    same_outcome(lambda lib: lib.autograd.gradcheck(lambda a: a.exp(), (_x(lib, 2),), **options))


def test_batched_forward_grad_refused() -> None:
    """Batched tangents need vmap, which chainrule has not: refused, never silently passed."""
    with pytest.raises(NotImplementedError, match="vmap"):
        chainrule.autograd.gradcheck(
            lambda a: a.exp(),
            (_x(chainrule, 2),),
            check_forward_ad=True,
            check_batched_forward_grad=True,
        )
