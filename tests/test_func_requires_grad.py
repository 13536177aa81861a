"""``requires_grad`` of torch.func's results as PyTorch's: a result stays differentiable when its
own graph reaches a tensor outside the transform (a parameter, an input that requires grad),
per result: an aux output or a gradient of the inputs alone is not, even when another result
of the same call is (forward-over-reverse ``hessian``/``jacfwd(jacrev(f))`` included)."""

from __future__ import annotations

import pytest

import chainrule

from .conftest import torch


def _programs(lib):
    F = lib.func
    x = lib.tensor([1.0, 2.0, 3.0])
    xr = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    aux_w = lambda x: ((x.sin() * w).sum(), x.cos())  # noqa: E731 - (aux of x alone)
    aux_both = lambda x: ((x.sin() * w).sum(), x.cos() * w)  # noqa: E731
    separate = lambda x: (x * x).sum() + w.sum()  # noqa: E731 - (w is not in the gradient)
    return {
        "hessian": lambda: F.hessian(lambda x: (x.sin() * x).sum())(x),
        "hessian_xr": lambda: F.hessian(lambda x: (x.sin() * x).sum())(xr),
        "hessian_w": lambda: F.hessian(lambda x: (x.sin() * w).sum())(x),
        "hessian_linear_w": lambda: F.hessian(lambda x: (x * w).sum())(x),
        "fwd_rev": lambda: F.jacfwd(F.jacrev(lambda x: x.pow(3).sum()))(x),
        "fwd_rev_w": lambda: F.jacfwd(F.jacrev(lambda x: (x.sin() * w).sum()))(x),
        "fwd_rev_separate": lambda: F.jacfwd(F.jacrev(separate))(x),
        "rev_rev_w": lambda: F.jacrev(F.jacrev(lambda x: (x.sin() * w).sum()))(x),
        "rev_fwd": lambda: F.jacrev(F.jacfwd(lambda x: (x.sin() * w).sum()))(x),
        "jacrev_aux": lambda: F.jacrev(aux_w, has_aux=True)(x),
        "jacrev_aux_both": lambda: F.jacrev(aux_both, has_aux=True)(x),
        "grad_aux": lambda: F.grad(aux_w, has_aux=True)(x),
        "grad_aux_xr": lambda: F.grad(aux_w, has_aux=True)(xr),
        "jacfwd_aux": lambda: F.jacfwd(aux_w, has_aux=True)(x),
        "fwd_rev_aux": lambda: F.jacfwd(F.jacrev(aux_w, has_aux=True), has_aux=True)(x),
        "rev_rev_aux": lambda: F.jacrev(F.jacrev(aux_w, has_aux=True), has_aux=True)(x),
        "fwd_fwd_aux": lambda: F.jacfwd(F.jacfwd(aux_w, has_aux=True), has_aux=True)(x),
        "vjp_aux": lambda: F.vjp(aux_w, x, has_aux=True)[::2],
        "grad_separate": lambda: F.grad(separate)(x),
        "grad_and_value_separate": lambda: F.grad_and_value(separate)(x),
        "grad_argnums": lambda: F.grad(lambda a, b: (b * w).sum() + (a * a).sum(), argnums=(0, 1))(
            x, x
        ),
        "vjp_outputs": lambda: F.vjp(lambda x: (x.sin(), x * w), x)[0],
        "vjp_fn_separate": lambda: F.vjp(separate, x)[1](lib.tensor(1.0)),
        "vjp_fn_w": lambda: F.vjp(lambda x: (x * w).sum(), x)[1](lib.tensor(1.0)),
        "jacrev_tuple": lambda: F.jacrev(lambda x: (x.sin(), x * w))(x),
        "jacrev_separate": lambda: F.jacrev(lambda x: x * x + w)(x),
        "vmap_grad_w": lambda: F.vmap(F.grad(lambda x: (x.sin() * w).sum()))(x[None].expand(2, 3)),
        "jvp_w": lambda: F.jvp(lambda x: (x.sin() * w).sum(), (x,), (x,)),
    }


def _flags(result):
    if isinstance(result, tuple | list):
        return [_flags(r) for r in result]
    if isinstance(result, dict):
        return {k: _flags(v) for k, v in result.items()}
    return result.requires_grad


CASES = list(_programs(chainrule))


@pytest.mark.parametrize("case", CASES)
def test_requires_grad_of_results(case: str) -> None:
    theirs = _flags(_programs(torch)[case]())
    ours = _flags(_programs(chainrule)[case]())
    assert ours == theirs


def test_hessian_of_a_parameter_function_backpropagates() -> None:
    """The Hessian of a function of a parameter is differentiable in it: its gradient as
    PyTorch's."""
    grads = []
    for lib in (torch, chainrule):
        x = lib.tensor([1.0, 2.0, 3.0])
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = lib.func.hessian(lambda x, w=w: (x.sin() * w).sum())(x)
        aux = lib.func.jacfwd(
            lib.func.jacrev(lambda x, w=w: ((x.sin() * w).sum(), x.cos()), has_aux=True),
            has_aux=True,
        )(x)[1]
        assert not aux.requires_grad
        (h * lib.arange(9.0).reshape(3, 3)).sum().backward()
        grads.append(w.grad.tolist())
    assert grads[1] == pytest.approx(grads[0], rel=1e-6)
