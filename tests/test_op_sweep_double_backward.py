"""Double backward of every entry, differentiating with respect to the incoming gradient too.

The first-order gradient ``g = vjp(f, x)(v)`` is linear in the cotangent ``v``; its derivative
with respect to ``v`` runs each op's ``*BackwardBackward0`` path (the backward of the backward),
which a second order taken with a constant ``v`` never reaches (pooling, padding, embedding and
indexing are linear: their second derivative with respect to ``x`` is zero, so everything
happens in ``d g / d v``). For every differentiable entry, ``v`` requires grad and
``d(g . w)/dx`` and ``d(g . w)/dv`` are compared with PyTorch's, and in float64 with central
finite differences of ``g``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs

#: Entries where PyTorch 2.13's double backward is wrong, by finite differences; chainrule keeps
#: the true derivative (checked below against finite differences instead of PyTorch).
PYTORCH_DOUBLE_BACKWARD_BUGS = {
    "embedding_scale_grad_by_freq": (
        "d(grad_weight)/d(grad_output) drops the 1/count scaling: PyTorch's embedding double "
        "backward (embedding_dense_double_backward) ignores scale_grad_by_freq, so it gives 1 "
        "where the derivative is 1/count"
    ),
}


def _cases() -> list[Any]:
    return [pytest.param(info, index, id=f"{info.name}-{index}")
            for info in ALL_OPS if info.grad and info.second_order
            for index in range(len(info.shapes))]


def _first_order(lib: Any, info: OpInfo, arrays: list[np.ndarray], requires: list[bool],
                 cotangents: list[np.ndarray] | None) -> tuple[list[Any], list[Any], list[Any]]:
    """Inputs, cotangents (requiring grad) and ``g = vjp(v)`` recorded for differentiation."""
    xs = [lib.from_numpy(a.copy()).requires_grad_(r) for a, r in zip(arrays, requires,
                                                                    strict=True)]
    outs = [o for o in flat_outputs(info.fn(lib, *xs)) if o.requires_grad]
    if cotangents is None:
        rng = np.random.default_rng(99)
        cotangents = [rng.standard_normal(tuple(o.shape)) for o in outs]
    vs = [lib.from_numpy(c.copy()).requires_grad_(True) for c in cotangents]
    wanted = [x for x, r in zip(xs, requires, strict=True) if r]
    gs = lib.autograd.grad(outs, wanted, vs, allow_unused=True, create_graph=True)
    return wanted, vs, list(gs)


def _second_order(lib: Any, wanted: list[Any], vs: list[Any], gs: list[Any],
                  ws: list[np.ndarray]) -> list[Any]:
    """``d(sum g . w) / d(x, v)``; None where it does not depend on them."""
    terms = [(g * lib.from_numpy(w.copy())).sum() for g, w in zip(gs, ws, strict=True)
             if g is not None and g.requires_grad]
    if not terms:
        return [None] * (len(wanted) + len(vs))
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return list(lib.autograd.grad(total, wanted + vs, allow_unused=True))


@pytest.mark.parametrize(("info", "index"), _cases())
def test_double_backward_matches_torch(info: OpInfo, index: int) -> None:
    arrays = sample_inputs(info, index, "float64")
    requires = requires_grad_flags(info, arrays)
    if not any(requires):
        pytest.skip("no differentiable input in this sample")
    ours_x, ours_v, ours_g = _first_order(chainrule, info, arrays, requires, None)
    if not ours_v:
        pytest.skip("no differentiable output in this sample")
    cotangents = [v.detach().numpy() for v in ours_v]
    theirs_x, theirs_v, theirs_g = _first_order(torch, info, arrays, requires, cotangents)
    rng = np.random.default_rng(7)
    ws = [rng.standard_normal(a.shape) for a, r in zip(arrays, requires, strict=True) if r]
    ours = _second_order(chainrule, ours_x, ours_v, ours_g, ws)
    theirs = _second_order(torch, theirs_x, theirs_v, theirs_g, ws)
    names = [f"d/dx{i}" for i in range(len(ours_x))] + [f"d/dv{i}" for i in range(len(ours_v))]
    for name, a, b in zip(names, ours, theirs, strict=True):
        what = f"{info.name}: {name} of the first-order gradient"
        if name.startswith("d/dv") and info.name in PYTORCH_DOUBLE_BACKWARD_BUGS:
            continue  # PyTorch is wrong here; finite differences check ours
        if b is None or a is None:
            other = b if a is None else a
            assert other is None or not np.any(other.detach().numpy()), what
            continue
        assert_close(a, b, 1e-7, 1e-7, what=what)


@pytest.mark.parametrize(("info", "index"), [
    c for c in _cases()
    if c.values[0].gradcheck or c.values[0].name in PYTORCH_DOUBLE_BACKWARD_BUGS
])
def test_gradient_is_linear_in_the_cotangent(info: OpInfo, index: int) -> None:
    """``d g / d v`` against finite differences: g(v + e) - g(v - e) over 2e (float64)."""
    arrays = sample_inputs(info, index, "float64")
    requires = requires_grad_flags(info, arrays)
    if not any(requires):
        pytest.skip("no differentiable input in this sample")
    xs, vs, gs = _first_order(chainrule, info, arrays, requires, None)
    if not vs:
        pytest.skip("no differentiable output in this sample")
    rng = np.random.default_rng(7)
    ws = [rng.standard_normal(a.shape) for a, r in zip(arrays, requires, strict=True) if r]
    analytic = _second_order(chainrule, xs, vs, gs, ws)[len(xs):]
    base = [v.detach().numpy().copy() for v in vs]

    def g_dot_w(cotangents: list[np.ndarray]) -> float:
        _, _, g = _first_order(chainrule, info, arrays, requires, cotangents)
        return sum(float(np.sum(gi.detach().numpy() * w)) for gi, w in zip(g, ws, strict=True)
                   if gi is not None)

    eps = 1e-6
    for k, v in enumerate(base):
        numeric = np.zeros_like(v)
        flat = v.reshape(-1)
        for j in range(flat.size):
            old = flat[j]
            flat[j] = old + eps
            plus = g_dot_w(base)
            flat[j] = old - eps
            minus = g_dot_w(base)
            flat[j] = old
            numeric.reshape(-1)[j] = (plus - minus) / (2 * eps)
        got = np.zeros_like(v) if analytic[k] is None else analytic[k].numpy()
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{info.name}: d g / d v{k}")
