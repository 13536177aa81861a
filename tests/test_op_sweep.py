"""Every entry of the op table, against PyTorch and against finite differences.

For each :class:`~tests.opinfos.OpInfo`, sample and dtype:

* forward values, shapes and dtypes equal PyTorch's;
* first-order gradients (``autograd.grad`` with a random output gradient) equal PyTorch's;
* second-order gradients (differentiating the first-order ones) equal PyTorch's;
* in float64, the first- and second-order gradients agree with central finite differences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import (
    both_vjps,
    differentiable_pairs,
    flat_outputs,
    leaves,
    requires_grad_flags,
    sample_inputs,
    selected,
)

DTYPES = ("float32", "float64")


def _cases() -> list[Any]:
    cases = []
    for info in ALL_OPS:
        for index in range(len(info.shapes)):
            for dtype in DTYPES:
                cases.append(pytest.param(info, index, dtype, id=f"{info.name}-{index}-{dtype}"))
    return cases


def _tolerances(info: OpInfo, dtype: str) -> tuple[float, float]:
    if dtype == "float64":
        return 1e-9, 1e-9
    return info.rtol, info.atol


def _run(lib: Any, info: OpInfo, arrays: list[np.ndarray], requires: list[bool]) -> tuple:
    xs = leaves(lib, arrays, requires)
    return xs, info.fn(lib, *xs)


@pytest.mark.parametrize(("info", "index", "dtype"), _cases())
def test_matches_torch(info: OpInfo, index: int, dtype: str) -> None:
    arrays = sample_inputs(info, index, dtype)
    requires = requires_grad_flags(info, arrays)
    rtol, atol = _tolerances(info, dtype)
    ours_in, ours = _run(chainrule, info, arrays, requires)
    theirs_in, theirs = _run(torch, info, arrays, requires)
    ours_out, theirs_out = flat_outputs(ours), flat_outputs(theirs)
    assert len(ours_out) == len(theirs_out)
    for i, (a, b) in enumerate(zip(ours_out, theirs_out, strict=True)):
        assert_close(a, b, rtol, atol, what=f"{info.name} output {i}")
        assert a.requires_grad == b.requires_grad, f"{info.name} output {i} requires_grad"
        if b.grad_fn is not None:
            # PyTorch's own C++ nodes say torch::autograd::CopySlices, chainrule's chainrule::...
            expected = b.grad_fn.name().replace("torch::", "chainrule::")
            assert a.grad_fn is not None and a.grad_fn.name() == expected, (
                f"{info.name}: grad_fn {a.grad_fn} != {type(b.grad_fn).__name__}"
            )
    if not any(requires):
        return
    diff = differentiable_pairs(ours_out, theirs_out)
    if not diff:
        return
    rng = np.random.default_rng(123)
    cotangents = [rng.standard_normal(b.shape).astype(dtype) for _, b in diff]
    ours_x, theirs_x = selected(ours_in, requires), selected(theirs_in, requires)
    grads = both_vjps([a for a, _ in diff], [b for _, b in diff], ours_x, theirs_x, cotangents,
                      create_graph=info.second_order)
    g_ours, g_theirs = [a for a, _ in grads], [b for _, b in grads]
    for i, (a, b) in enumerate(zip(g_ours, g_theirs, strict=True)):
        if b is None:
            assert a is None or not np.any(a.detach().numpy()), f"{info.name} grad {i}"
            continue
        assert_close(a, b, rtol * 10, atol * 10, what=f"{info.name} grad {i}")
    if not info.second_order:
        return
    pairs = [(a, b) for a, b in zip(g_ours, g_theirs, strict=True)
             if b is not None and b.requires_grad and a is not None and a.requires_grad]
    # Where only PyTorch's gradient is still in a graph (e.g. relu's mask), its derivative
    # must be zero: ours is a constant there.
    torch_only = [b for a, b in zip(g_ours, g_theirs, strict=True)
                  if b is not None and b.requires_grad and (a is None or not a.requires_grad)]
    if torch_only:
        zero = torch.autograd.grad(
            torch_only, theirs_x, [torch.ones_like(b) for b in torch_only], allow_unused=True,
            retain_graph=True,
        )
        for z in zero:
            assert z is None or not np.any(z.numpy(force=True)), f"{info.name}: lost grad-grad"
    if not pairs:
        return
    vs = [rng.standard_normal(b.shape).astype(dtype) for _, b in pairs]
    second = both_vjps([a for a, _ in pairs], [b for _, b in pairs], ours_x, theirs_x, vs)
    gg_ours, gg_theirs = [a for a, _ in second], [b for _, b in second]
    for i, (a, b) in enumerate(zip(gg_ours, gg_theirs, strict=True)):
        if b is None:
            assert a is None or not np.any(a.detach().numpy()), f"{info.name} grad-grad {i}"
            continue
        if a is None:
            assert not np.any(b.numpy(force=True)), f"{info.name} grad-grad {i} missing"
            continue
        assert_close(a, b, rtol * 100, atol * 100, what=f"{info.name} grad-grad {i}")


def _numerical_vjp(f: Any, arrays: list[np.ndarray], which: list[int], cotangent: list[np.ndarray],
                   eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of ``sum(f(x) * cotangent)`` with respect to ``arrays[which]``."""
    result = []
    for i in which:
        grad = np.zeros_like(arrays[i])
        flat = arrays[i].reshape(-1)
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            plus = f(arrays)
            flat[k] = old - eps
            minus = f(arrays)
            flat[k] = old
            grad.reshape(-1)[k] = sum(
                float(np.sum((p - m) * c)) for p, m, c in zip(plus, minus, cotangent, strict=True)
            ) / (2 * eps)
        result.append(grad)
    return result


@pytest.mark.parametrize(
    ("info", "index"),
    [pytest.param(i, k, id=f"{i.name}-{k}") for i in ALL_OPS for k in range(len(i.shapes))
     if i.grad and i.gradcheck],
)
def test_gradcheck(info: OpInfo, index: int) -> None:
    """First and second derivatives agree with finite differences (float64)."""
    arrays = sample_inputs(info, index, "float64", seed=1)
    requires = requires_grad_flags(info, arrays)
    which = [i for i, r in enumerate(requires) if r]
    if not which:
        pytest.skip("no differentiable input")

    def forward(values: list[np.ndarray]) -> list[np.ndarray]:
        xs = [chainrule.from_numpy(v.copy()) for v in values]
        with chainrule.no_grad():
            return [o.numpy().astype(np.float64) for o in flat_outputs(info.fn(chainrule, *xs))
                    if o.dtype.is_floating_point]

    outs = forward(arrays)
    rng = np.random.default_rng(5)
    cot = [rng.standard_normal(o.shape) for o in outs]

    def analytic(values: list[np.ndarray], create_graph: bool = False) -> tuple:
        xs = [chainrule.from_numpy(v.copy()).requires_grad_(r) for v, r in zip(
            values, requires, strict=True)]
        out = [o for o in flat_outputs(info.fn(chainrule, *xs)) if o.dtype.is_floating_point]
        gs = chainrule.autograd.grad(
            [o for o in out if o.requires_grad],
            [xs[i] for i in which],
            [chainrule.from_numpy(c.copy())
             for o, c in zip(out, cot, strict=True) if o.requires_grad],
            allow_unused=True, create_graph=create_graph,
        )
        return xs, gs

    _, grads = analytic(arrays)
    numeric = _numerical_vjp(forward, arrays, which, cot)
    for k, (g, n) in enumerate(zip(grads, numeric, strict=True)):
        got = np.zeros_like(n) if g is None else g.numpy()
        np.testing.assert_allclose(got, n, rtol=1e-4, atol=1e-5, err_msg=f"{info.name} d{k}")
    if not info.second_order:
        return
    vs = [rng.standard_normal(arrays[i].shape) for i in which]

    def first_order_dot(values: list[np.ndarray]) -> list[np.ndarray]:
        _, gs = analytic(values)
        total = sum(
            float(np.sum((np.zeros_like(v) if g is None else g.numpy()) * v))
            for g, v in zip(gs, vs, strict=True)
        )
        return [np.array(total)]

    xs, gs = analytic(arrays, create_graph=True)
    terms = [(g * chainrule.from_numpy(v.copy())).sum() for g, v in zip(gs, vs, strict=True)
             if g is not None and g.requires_grad]
    if not terms:
        return
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    second = chainrule.autograd.grad(total, [xs[i] for i in which], allow_unused=True)
    numeric2 = _numerical_vjp(first_order_dot, arrays, which, [np.array(1.0)])
    for k, (g, n) in enumerate(zip(second, numeric2, strict=True)):
        got = np.zeros_like(n) if g is None else g.numpy()
        np.testing.assert_allclose(got, n, rtol=1e-3, atol=1e-4, err_msg=f"{info.name} dd{k}")
