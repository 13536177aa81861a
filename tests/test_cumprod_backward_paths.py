"""``cumprod``'s gradient takes PyTorch's path for each case, bit for bit, signed zeros included.

PyTorch's ``cumprod_backward`` has three paths: ``reversed_cumsum(grad * y) / x`` when no input
is zero, an O(n) formula for inputs with zeros outside grad mode, and otherwise (grad mode on, or
any of input, output and gradient functorch-wrapped) a differentiable O(n^2) sum of "omitted
products" ``prod(x[:k]) * cumprod(x[k+1:])``, stacked. ``jacrev`` hands the backward a gradient
batched by ``vmap``, so it takes the O(n^2) path even without zeros: chainrule divided there, so
``jacrev(cumprod)`` had ``-0.0`` above the diagonal where PyTorch has ``0.0`` and ``y_1 / x_0``
instead of ``x_1``, and ``jacrev(jacrev(torch.prod))`` (whose first derivative is written with
cumprods) had a ``-0.0`` on the diagonal and last-bit differences. With zeros under
``create_graph`` chainrule used a polynomial form of its own: other signs of zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

RNG = np.random.default_rng(2026)
INPUTS = {
    "random": RNG.standard_normal(4),
    "random_float32": RNG.standard_normal(5).astype(np.float32),
    "negatives": np.array([-2.32503077, -0.21879166, -1.24591095, -0.73226735]),
    "one_zero": np.array([-0.75, 0.0, -0.25, 1.5], dtype=np.float32),
    "two_zeros": np.array([-0.125, 0.0, 0.625, 0.0]),
    "leading_zero": np.array([0.0, 2.0, -3.0], dtype=np.float32),
    "pair": np.array([1.5, -2.0]),
}


def _cumprod(lib: Any) -> Callable[[Any], Any]:
    return lambda t: t.cumprod(0)


def _cumprod_scalar(lib: Any) -> Callable[[Any], Any]:
    """A scalar of the cumulative products (no sum: a float32 sum's order is another matter)."""

    def f(t: Any) -> Any:
        y = t.cumprod(0)
        return y[-1] * 2 + y[1]

    return f


def _prod(lib: Any) -> Callable[[Any], Any]:
    return lambda t: t.prod()


def _cotangent(lib: Any, out: Any) -> Any:
    """Distinct weights for a non-scalar output (ones for a scalar)."""
    return (lib.arange(1.0, 1.0 + out.numel()).reshape(out.shape) / 4).to(out.dtype)


def _plain_grad(lib: Any, f: Callable[[Any], Any], x: Any) -> Any:
    leaf = x.detach().clone().requires_grad_()
    out = f(leaf)
    return lib.autograd.grad(out, leaf, _cotangent(lib, out))[0]


def _double_backward(lib: Any, f: Callable[[Any], Any], x: Any) -> Any:
    """The gradient recorded (create_graph) and differentiated again: grad mode is on."""
    leaf = x.detach().clone().requires_grad_()
    out = f(leaf)
    (g,) = lib.autograd.grad(out, leaf, _cotangent(lib, out), create_graph=True)
    total = (g * _cotangent(lib, g)).sum()
    return lib.autograd.grad(total.real if total.is_complex() else total, leaf)[0]


TRANSFORMS: dict[str, Callable[[Any, Callable[[Any], Any], Any], Any]] = {
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x),
    "jacrev_jacrev": lambda lib, f, x: lib.func.jacrev(lib.func.jacrev(f))(x),
    "jacfwd_jacrev": lambda lib, f, x: lib.func.jacfwd(lib.func.jacrev(f))(x),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x)[1](lib.ones_like(f(x)))[0],
    "vmap_vjp": lambda lib, f, x: lib.func.vmap(lib.func.vjp(f, x)[1])(
        lib.stack([lib.ones_like(f(x)), f(x)])
    )[0],
    "autograd_grad": _plain_grad,
    "double_backward": _double_backward,
}
SCALAR_TRANSFORMS: dict[str, Callable[[Any, Callable[[Any], Any], Any], Any]] = {
    "grad": lambda lib, f, x: lib.func.grad(f)(x),
    "vmap_grad": lambda lib, f, x: lib.func.vmap(lib.func.grad(f))(x.unsqueeze(0).repeat(2, 1)),
    "hessian": lambda lib, f, x: lib.func.hessian(f)(x),
    "jacrev_grad": lambda lib, f, x: lib.func.jacrev(lib.func.grad(f))(x),
}


def _bits(t: Any) -> tuple[str, tuple[int, ...], bytes]:
    array = np.ascontiguousarray(t.detach().resolve_conj().numpy())
    return str(array.dtype), array.shape, array.tobytes()


def _compare(transform: Callable[..., Any], make: Callable[[Any], Any], x: np.ndarray) -> None:
    results = [transform(lib, make(lib), lib.tensor(x)) for lib in (chainrule, torch)]
    assert _bits(results[0]) == _bits(results[1]), (
        results[0].detach().numpy().tolist(),
        results[1].detach().numpy().tolist(),
    )


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_cumprod_bit_for_bit_with_pytorch(name: str, transform: str) -> None:
    _compare(TRANSFORMS[transform], _cumprod, INPUTS[name])


@pytest.mark.parametrize("transform", sorted(TRANSFORMS) + sorted(SCALAR_TRANSFORMS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_scalar_of_cumprod_bit_for_bit_with_pytorch(name: str, transform: str) -> None:
    _compare({**TRANSFORMS, **SCALAR_TRANSFORMS}[transform], _cumprod_scalar, INPUTS[name])


@pytest.mark.parametrize("transform", ["jacrev_jacrev", "jacrev_grad", "hessian"])
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_second_derivatives_of_prod_bit_for_bit(name: str, transform: str) -> None:
    """prod's first derivative under a transform is written with cumprods: its second
    derivative goes through cumprod's gradient."""
    _compare({**TRANSFORMS, **SCALAR_TRANSFORMS}[transform], _prod, INPUTS[name])


def test_jacrev_of_prod_of_prod_has_positive_zero_diagonal() -> None:
    """The case found: one ``-0.0`` on the diagonal of ``jacrev(jacrev(torch.prod))``."""
    x = INPUTS["negatives"]
    ours = chainrule.func.jacrev(chainrule.func.jacrev(chainrule.prod))(chainrule.tensor(x))
    theirs = torch.func.jacrev(torch.func.jacrev(torch.prod))(torch.tensor(x))
    assert not np.signbit(ours.numpy().diagonal()).any()
    assert np.array_equal(np.signbit(ours.numpy()), np.signbit(theirs.numpy()))


def test_jacrev_of_cumprod_is_exact_below_the_diagonal() -> None:
    """``d y_1 / d x_0`` is ``x_1`` itself (omitted products), not ``y_1 / x_0``."""
    x = chainrule.tensor(INPUTS["negatives"])
    jac = chainrule.func.jacrev(lambda t: t.cumprod(0))(x)
    assert jac[1, 0].item() == x[1].item()
    assert not np.signbit(jac.numpy()[np.triu_indices(4, 1)]).any()


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("transform", ["jacrev", "double_backward", "vjp"])
def test_matrix_along_each_dim(dim: int, transform: str) -> None:
    x = np.array([[0.5, -1.5, 0.0, 2.0], [1.25, 0.0, 0.0, -0.75], [-2.0, 0.5, 3.0, 1.0]])

    def make(lib: Any) -> Callable[[Any], Any]:
        if transform == "double_backward":
            return lambda t: (t.cumprod(dim) * t).sum(dim)
        return lambda t: t.cumprod(dim)

    _compare(TRANSFORMS[transform], make, x)


@pytest.mark.parametrize("transform", ["vjp", "vmap_vjp", "double_backward"])
def test_complex(transform: str) -> None:
    x = np.array([1.0 - 2.0j, 0.5 + 0.25j, 0.0 + 0.0j, -1.5 + 1.0j], dtype=np.complex128)
    _compare(TRANSFORMS[transform], _cumprod, x)
    _compare(TRANSFORMS[transform], _cumprod, x[[0, 1, 3]])


@pytest.mark.parametrize("grad_enabled", [True, False])
@pytest.mark.parametrize("op", ["prod", "cumprod"])
def test_vjp_fn_runs_in_grad_mode_as_pytorch(op: str, grad_enabled: bool) -> None:
    """``vjp_fn`` records its backward pass (create_graph) whenever grad mode is on, so prod's
    and cumprod's formulas take their grad-mode paths for inputs with zeros: prod's gradient
    with two zeros is the products of the others (``-0.0`` where a factor is negative), not the
    shortcut's zeros; under no_grad the shortcut is PyTorch's too."""
    x = np.array([0.0, -2.0, 0.0, 1.5], dtype=np.float32)

    def run(lib: Any) -> Any:
        with lib.set_grad_enabled(grad_enabled):
            f = lib.prod if op == "prod" else (lambda t: t.cumprod(0))
            out, vjp_fn = lib.func.vjp(f, lib.tensor(x))
            return vjp_fn(_cotangent(lib, out) * 4 - 1)[0]

    ours, theirs = run(chainrule), run(torch)
    assert _bits(ours) == _bits(theirs), (ours.tolist(), theirs.tolist())
    if op == "prod" and grad_enabled:
        assert np.signbit(ours.numpy()).tolist() == [True, False, True, True]
