"""``prod``'s gradient under ``torch.func`` transforms, bit for bit with PyTorch, signed zeros
included.

PyTorch's ``prod_backward`` takes its division-free "composite" path (the cumulative products
of ``[1, x_0, ..., x_{n-2}]`` and of the reversed ``[1, x_{n-1}, ..., x_1]``) whenever the saved
input is functorch-wrapped: in ``grad``'s own backward pass, for a graph recorded under
``vmap``, inside ``jvp``/``jacfwd`` (so in ``hessian``). Outside (``autograd.grad``, a top-level
``jacrev``/``vjp``) it divides the product by each element. The two round differently, and
their derivatives give zeros of different signs: ``hessian(lambda x: x.prod())`` has ``-0.0``
on the diagonal where the other path gives ``0.0``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

RNG = np.random.default_rng(1515)
INPUTS = {
    "pair": np.array([1.5, -2.0], dtype=np.float32),
    "four": np.array([-1.0, 2.0, -3.0, 0.5], dtype=np.float32),
    "random12": RNG.standard_normal(12).astype(np.float32),
    "with_zero": np.array([0.0, 2.0, -3.0], dtype=np.float32),
    "two_zeros": np.array([0.0, 2.0, 0.0, 1.5], dtype=np.float32),
    "matrix": np.array([[1.5, -2.0], [0.0, 3.0]], dtype=np.float32),
    "float64": RNG.standard_normal(5),
}


def _full(lib: Any) -> Callable[[Any], Any]:
    return lambda t: t.prod()


def _along_last(lib: Any) -> Callable[[Any], Any]:
    return lambda t: t.prod(-1).sum()


TRANSFORMS: dict[str, Callable[[Any, Callable[[Any], Any], Any], Any]] = {
    "hessian": lambda lib, f, x: lib.func.hessian(f)(x),
    "jacfwd_jacrev": lambda lib, f, x: lib.func.jacfwd(lib.func.jacrev(f))(x),
    "jvp_of_grad": lambda lib, f, x: lib.func.jvp(lib.func.grad(f), (x,), (lib.ones_like(x),))[1],
    "jvp_of_jacrev": lambda lib, f, x: lib.func.jvp(lib.func.jacrev(f), (x,), (lib.ones_like(x),))[
        1
    ],
    "grad": lambda lib, f, x: lib.func.grad(f)(x),
    "vmap_grad": lambda lib, f, x: lib.func.vmap(lib.func.grad(f))(x.unsqueeze(0).repeat(3, 1)),
    "vmap_hessian": lambda lib, f, x: lib.func.vmap(lib.func.hessian(f))(
        x.unsqueeze(0).repeat(2, 1)
    ),
    # (outside the transforms' levels: the division path)
    "jacrev": lambda lib, f, x: lib.func.jacrev(f)(x),
    "vjp": lambda lib, f, x: lib.func.vjp(f, x)[1](lib.ones_like(f(x)))[0],
    "autograd_hessian": lambda lib, f, x: lib.autograd.functional.hessian(f, x),
    "autograd_grad": lambda lib, f, x: _plain_grad(lib, f, x),
}


def _plain_grad(lib: Any, f: Callable[[Any], Any], x: Any) -> Any:
    leaf = x.detach().clone().requires_grad_()
    return lib.autograd.grad(f(leaf), leaf)[0]


def _bits(t: Any) -> tuple[str, tuple[int, ...], bytes]:
    array = np.ascontiguousarray(t.detach().numpy())
    return str(array.dtype), array.shape, array.tobytes()


@pytest.mark.parametrize("reduction", ["full", "along_last"])
@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_bit_for_bit_with_pytorch(name: str, transform: str, reduction: str) -> None:
    x = INPUTS[name]
    if transform.startswith("vmap") and x.ndim != 1:
        pytest.skip("vmap cases stack 1-d inputs")
    make = _full if reduction == "full" else _along_last
    results = []
    for lib in (chainrule, torch):
        results.append(TRANSFORMS[transform](lib, make(lib), lib.tensor(x)))
    assert _bits(results[0]) == _bits(results[1]), (
        results[0].detach().numpy().tolist(),
        results[1].detach().numpy().tolist(),
    )


def test_hessian_diagonal_zero_signs() -> None:
    """The case the issue names: ``-0.0`` on the diagonal as PyTorch's, not ``0.0``."""
    x = chainrule.tensor([1.5, -2.0])
    h = chainrule.func.hessian(lambda t: t.prod())(x).numpy()
    assert np.signbit(h[0, 0]) and not np.signbit(h[1, 1])
    expected = torch.func.hessian(lambda t: t.prod())(torch.tensor([1.5, -2.0])).numpy()
    assert np.array_equal(np.signbit(h), np.signbit(expected))
