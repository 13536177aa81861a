"""jacfwd's vectorized pass where it fell back to one forward pass per column, against torch.func.

* ``prod`` over all elements under vmap multiplied the whole batch together (its ``dim`` default
  is a sentinel, which the reduction rule took for a given dim): a wrong value, and Hessians of
  products fell back;
* ``binary_cross_entropy`` under vmap beside an unbatched target compared the physical sizes
  (an error), and its backward's 'mean' divided by the batch's number of elements;
* ``_where`` (the op under ``where``, in prod's backward with zeros) ran once per example;
* ``jacfwd(jacfwd(f))``: the inner JVP (reverse mode twice) took gradients of batched tensors
  through the engine directly, and with respect to unbatched cotangents (summed over the batch).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
from chainrule.func import _batched, _forward

from .conftest import torch

LIBS = (chainrule, torch)
X = np.array([0.3, -1.2, 2.0, 0.7])
X_ZERO = np.array([0.3, 0.0, 2.0, 0.7])
P = np.array([0.2, 0.6, 0.9, 0.4])
Y = np.array([0.0, 1.0, 1.0, 0.0])


def _t(lib: Any, a: np.ndarray, dtype: str = "float64") -> Any:
    return lib.tensor(a, dtype=getattr(lib, dtype))


def _both(make: Callable[[Any], Any]) -> list[np.ndarray]:
    """``make(lib)`` for chainrule (no per-example loop, no column loop) and PyTorch."""
    _forward.VECTORIZED_FALLBACKS.clear()
    _batched.FALLBACK_COUNTS.clear()
    found = []
    for lib in LIBS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.filterwarnings("ignore", message=".*torch.jit.script.*")
            found.append(make(lib).detach().numpy())
    assert not _forward.VECTORIZED_FALLBACKS, _forward.VECTORIZED_FALLBACKS
    assert not _batched.FALLBACK_COUNTS, _batched.FALLBACK_COUNTS
    return found


def _compare(ours: np.ndarray, theirs: np.ndarray, rtol: float = 1e-10) -> None:
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vmap_of_prod_over_all_elements(dtype: str) -> None:
    data = np.arange(1.0, 7.0).reshape(2, 3)
    cases = [
        lambda lib: lib.func.vmap(lambda v: v.prod())(_t(lib, data, dtype)),
        lambda lib: lib.func.vmap(lambda v: lib.prod(v, dtype=lib.float64))(_t(lib, data, dtype)),
        lambda lib: lib.func.vmap(lambda v: v.prod())(_t(lib, data.reshape(2, 3, 1), dtype)),
        lambda lib: lib.func.vmap(lambda v: v.prod(), in_dims=1)(_t(lib, data, dtype)),
        lambda lib: lib.func.vmap(lambda v: v.prod(0))(_t(lib, data, dtype)),
    ]
    for make in cases:
        _compare(*_both(make))


HESSIANS: dict[str, Callable[[Any], Any]] = {
    "prod": lambda lib: lib.func.hessian(lambda v: v.prod())(_t(lib, X)),
    "prod_with_zero": lambda lib: lib.func.hessian(lambda v: v.prod())(_t(lib, X_ZERO)),
    "jacrev_of_jacrev_prod_with_zero": lambda lib: lib.func.jacrev(
        lib.func.jacrev(lambda v: v.prod())
    )(_t(lib, X_ZERO)),
    "prod_dim": lambda lib: lib.func.hessian(lambda v: v.reshape(2, 2).prod(1).sum())(_t(lib, X)),
    "bce": lambda lib: lib.func.hessian(
        lambda v: lib.nn.functional.binary_cross_entropy(v, _t(lib, Y))
    )(_t(lib, P)),
    "bce_weight_sum": lambda lib: lib.func.hessian(
        lambda v: lib.nn.functional.binary_cross_entropy(
            v, _t(lib, Y), weight=_t(lib, P), reduction="sum"
        )
    )(_t(lib, P)),
    "bce_of_target": lambda lib: lib.func.hessian(
        lambda v: lib.nn.functional.binary_cross_entropy(_t(lib, P), v.sigmoid())
    )(_t(lib, X)),
    "bce_2d": lambda lib: lib.func.hessian(
        lambda v: lib.nn.functional.binary_cross_entropy(v.reshape(2, 2), _t(lib, Y).reshape(2, 2))
    )(_t(lib, P)),
}


@pytest.mark.parametrize("name", sorted(HESSIANS))
def test_hessians_vectorized_as_torch_func(name: str) -> None:
    _compare(*_both(HESSIANS[name]))


NESTED: dict[str, Callable[[Any], Any]] = {
    "sin_times_prod": lambda lib: lib.func.jacfwd(lib.func.jacfwd(lambda v: v.sin() * v.prod()))(
        _t(lib, X)
    ),
    "prod": lambda lib: lib.func.jacfwd(lib.func.jacfwd(lambda v: v.prod()))(_t(lib, X)),
    "bce": lambda lib: lib.func.jacfwd(
        lib.func.jacfwd(lambda v: lib.nn.functional.binary_cross_entropy(v, _t(lib, Y)))
    )(_t(lib, P)),
    "matmul_softmax": lambda lib: lib.func.jacfwd(
        lib.func.jacfwd(lambda v: (v.reshape(2, 2) @ v.reshape(2, 2)).softmax(0).sum(0))
    )(_t(lib, X)),
    "exp_cubic": lambda lib: lib.func.jacfwd(lib.func.jacfwd(lambda v: (v**3).exp().sum()))(
        _t(lib, X * 0.3)
    ),
    "float32": lambda lib: lib.func.jacfwd(lib.func.jacfwd(lambda v: v.tanh() * v.sum()))(
        _t(lib, X, "float32")
    ),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_jacfwd_vectorized_as_torch_func(name: str) -> None:
    ours, theirs = _both(NESTED[name])
    _compare(ours, theirs, 1e-5 if name == "float32" else 1e-10)


def test_nested_jacfwd_against_finite_differences() -> None:
    def f(lib: Any, v: Any) -> Any:
        return (v.sin() * v.prod()).sum()

    hess = chainrule.func.jacfwd(chainrule.func.jacfwd(lambda v: f(chainrule, v)))(_t(chainrule, X))
    grad = chainrule.func.grad(lambda v: f(chainrule, v))
    eps = 1e-6
    columns = []
    for j in range(4):
        step = np.zeros(4)
        step[j] = eps
        hi = grad(_t(chainrule, X + step)).numpy()
        lo = grad(_t(chainrule, X - step)).numpy()
        columns.append((hi - lo) / (2 * eps))
    np.testing.assert_allclose(hess.numpy(), np.stack(columns, -1), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss", ["binary_cross_entropy", "mse_loss", "l1_loss"])
def test_vmap_of_losses_with_an_unbatched_target(loss: str) -> None:
    """No size error nor size warning: each example's input has the target's size."""
    batch = np.array([[0.2, 0.6, 0.9, 0.4], [0.5, 0.1, 0.3, 0.8]])
    _compare(
        *_both(
            lambda lib: lib.func.vmap(lambda v: getattr(lib.nn.functional, loss)(v, _t(lib, Y)))(
                _t(lib, batch)
            )
        )
    )
    _compare(
        *_both(
            lambda lib: lib.func.vmap(
                lambda t: getattr(lib.nn.functional, loss)(_t(lib, P), t), in_dims=1
            )(_t(lib, batch.T.copy()))
        )
    )


def test_per_example_gradients_of_bce_mean() -> None:
    """The backward's 'mean' divides by one example's number of elements."""
    batch = np.array([[0.2, 0.6, 0.9, 0.4], [0.5, 0.1, 0.3, 0.8]])
    _compare(
        *_both(
            lambda lib: lib.func.vmap(
                lib.func.grad(lambda v: lib.nn.functional.binary_cross_entropy(v, _t(lib, Y)))
            )(_t(lib, batch))
        )
    )
