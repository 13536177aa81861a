"""``autograd.grad(..., is_grads_batched=True)`` and ``autograd.functional.jacobian/hessian(...,
vectorize=True)`` (both strategies), which run one backward pass under vmap as PyTorch's do:
values, dtypes, graphs kept or freed, and errors against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule
from chainrule.autograd import engine
from chainrule.func._batched import FALLBACK_COUNTS

from .conftest import assert_close, normalise_output, torch

RNG = np.random.default_rng(21)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((3, 2))
V = RNG.standard_normal((4, 2, 2))
V2 = RNG.standard_normal((4, 2, 3))
V3 = RNG.standard_normal((5, 3, 2))


@pytest.fixture
def vmapped_passes():
    """How many is_grads_batched passes ran under vmap (None results: the loop ran)."""
    results: list[bool] = []
    run = engine.VMAPPED_BACKWARD[0]

    def counting(*args):
        out = run(*args)
        results.append(out is not None)
        return out

    engine.VMAPPED_BACKWARD[0] = counting
    FALLBACK_COUNTS.clear()
    try:
        yield results
    finally:
        engine.VMAPPED_BACKWARD[0] = run
    assert not FALLBACK_COUNTS


def _leaves(lib, dtype="float64"):
    x = lib.tensor(X.astype(dtype), requires_grad=True)
    w = lib.tensor(W.astype(dtype), requires_grad=True)
    return x, w


def _compare(ours, theirs, rtol=1e-12, atol=1e-12, check_requires_grad=True):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        if b is None:
            assert a is None
            continue
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        if check_requires_grad:
            assert a.requires_grad == b.requires_grad
        assert_close(a, b, rtol=rtol, atol=atol)


def _batched_grads(lib, case):
    x, w = _leaves(lib)
    extra = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor(V)
    if case == "two_inputs":
        y = (x @ w).tanh() * x.sum()
        return lib.autograd.grad(y, (x, w), v, is_grads_batched=True)
    if case == "two_outputs":
        y1, y2 = (x @ w).exp(), x.sin()
        v2 = lib.tensor(V2)
        return lib.autograd.grad((y1, y2), x, (v, v2), is_grads_batched=True)
    if case == "unused":
        y = x @ w
        return lib.autograd.grad(y, (x, extra), v, is_grads_batched=True, allow_unused=True)
    if case == "materialize":
        y = x @ w
        return lib.autograd.grad(y, (x, extra), v, is_grads_batched=True, materialize_grads=True)
    if case == "create_graph":
        y = (x @ w).sigmoid()
        (g,) = lib.autograd.grad(y, x, v, is_grads_batched=True, create_graph=True)
        return g, lib.autograd.grad(g.pow(2).sum(), w)[0]
    if case == "non_leaf_input":
        h = x * 2
        y = (h @ w).relu()
        return lib.autograd.grad(y, (h, w), v, is_grads_batched=True)
    if case == "reductions_and_views":
        y = (x.unsqueeze(0) * w.t().unsqueeze(1)).softmax(-1).mean(1).t()
        v3 = lib.tensor(V3)
        return lib.autograd.grad(y, (x, w), v3, is_grads_batched=True)
    raise AssertionError(case)


CASES = [
    "two_inputs",
    "two_outputs",
    "unused",
    "materialize",
    "create_graph",
    "non_leaf_input",
    "reductions_and_views",
]


@pytest.mark.parametrize("case", CASES)
def test_is_grads_batched(case: str, vmapped_passes) -> None:
    theirs = _batched_grads(torch, case)
    ours = _batched_grads(chainrule, case)
    _compare(ours, theirs)
    assert vmapped_passes and all(vmapped_passes)  # one pass under vmap, not a loop


def _graph_after(lib, retain):
    x, w = _leaves(lib)
    y = (x @ w).exp()
    lib.autograd.grad(y, x, lib.tensor(V), is_grads_batched=True, retain_graph=retain)
    try:
        y.sum().backward()
    except RuntimeError as error:
        return str(error)
    return x.grad


@pytest.mark.parametrize("retain", [False, True])
def test_graph_freed_or_kept(retain: bool, vmapped_passes) -> None:
    theirs = _graph_after(torch, retain)
    ours = _graph_after(chainrule, retain)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        assert_close(ours, theirs)


def _error(lib, case):
    x, w = _leaves(lib)
    y = x @ w
    z = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
    try:
        if case == "shape":
            lib.autograd.grad(y, x, lib.tensor(V[:, :, :1]), is_grads_batched=True)
        elif case == "sizes":
            lib.autograd.grad(
                (y, y * 2), x, (lib.tensor(V), lib.tensor(V[:3])), is_grads_batched=True
            )
        elif case == "unused":
            lib.autograd.grad(y, (x, z), lib.tensor(V), is_grads_batched=True)
        elif case == "no_grad_output":
            lib.autograd.grad(y.detach(), x, lib.tensor(V), is_grads_batched=True)
    except (RuntimeError, ValueError) as error:
        return type(error).__name__, normalise_output(str(error))
    return None


@pytest.mark.parametrize("case", ["shape", "sizes", "unused", "no_grad_output"])
def test_is_grads_batched_errors(case: str) -> None:
    theirs = _error(torch, case)
    assert theirs is not None
    assert _error(chainrule, case) == theirs


def _jacobians(lib, case, dtype="float64"):
    F = lib.autograd.functional
    x = lib.tensor(X.astype(dtype))
    w = lib.tensor(W.astype(dtype))
    if case == "single":
        return (F.jacobian(lambda a: (a.sin() @ w).exp(), x, vectorize=True),)
    if case == "tuples":
        out = F.jacobian(lambda a, b: ((a @ b).tanh(), a.sum(0)), (x, w), vectorize=True)
        return tuple(j for row in out for j in row)
    if case == "unused_input":
        out = F.jacobian(lambda a, b: a.cos(), (x, w), vectorize=True)
        return out
    if case == "create_graph":
        xr = x.clone().requires_grad_()
        j = F.jacobian(lambda a: (a @ w).sigmoid(), xr, vectorize=True, create_graph=True)
        return j, lib.autograd.grad(j.sum(), xr)[0]
    if case == "forward_mode":
        out = F.jacobian(
            lambda a, b: ((a @ b).tanh(), a.sum(0)),
            (x, w),
            vectorize=True,
            strategy="forward-mode",
        )
        return tuple(j for row in out for j in row)
    if case == "hessian":
        return (F.hessian(lambda a: (a.sin() @ w).exp().sum(), x, vectorize=True),)
    if case == "hessian_tuple":
        out = F.hessian(lambda a, b: ((a @ b) ** 3).sum(), (x, w), vectorize=True)
        return tuple(h for row in out for h in row)
    if case == "hessian_forward_over_reverse":
        out = F.hessian(
            lambda a: (a.sin() @ w).exp().sum(),
            x,
            vectorize=True,
            outer_jacobian_strategy="forward-mode",
        )
        return (out,)
    if case == "non_contiguous":
        xt = lib.tensor(X.T.copy().astype(dtype)).t()
        return (F.jacobian(lambda a: a.cumsum(1) * a, xt, vectorize=True),)
    raise AssertionError(case)


JACOBIAN_CASES = [
    "single",
    "tuples",
    "unused_input",
    "create_graph",
    "forward_mode",
    "hessian",
    "hessian_tuple",
    "hessian_forward_over_reverse",
    "non_contiguous",
]


@pytest.mark.parametrize("case", JACOBIAN_CASES)
def test_vectorized_jacobian_and_hessian(case: str, vmapped_passes) -> None:
    theirs = _jacobians(torch, case)
    ours = _jacobians(chainrule, case)
    # (PyTorch's forward-over-reverse Hessian keeps a graph to the inputs, requires_grad=True
    # with a ReshapeAliasBackward0 node; chainrule's is detached, as before)
    _compare(ours, theirs, check_requires_grad=case != "hessian_forward_over_reverse")
    assert vmapped_passes and all(vmapped_passes)


def test_vectorized_jacobian_of_an_empty_output() -> None:
    def run(lib):
        x = lib.tensor(X)
        with pytest.raises(IndexError) as info:
            lib.autograd.functional.jacobian(lambda a: a[:, :0] * 2, x, vectorize=True)
        return str(info.value)

    assert run(chainrule) == run(torch)


def test_vectorized_jacobian_float32() -> None:
    theirs = _jacobians(torch, "tuples", "float32")
    ours = _jacobians(chainrule, "tuples", "float32")
    _compare(ours, theirs, rtol=1e-5, atol=1e-6)


def test_nan_and_inf_flow_through_the_batched_pass() -> None:
    def run(lib):
        x = lib.tensor([0.0, float("inf"), float("nan"), -1.0], requires_grad=True)
        y = x.sqrt() * 2
        v = lib.tensor(np.eye(4))
        return lib.autograd.grad(y, x, v.to(x.dtype), is_grads_batched=True)

    _compare(run(chainrule), run(torch), rtol=0, atol=0)
