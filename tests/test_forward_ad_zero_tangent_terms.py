"""The tangent's autograd history where an input has no tangent, against PyTorch.

PyTorch's forward formulas see a differentiable input without a tangent as a ZeroTensor and
run with grad mode on: ``linear(x, dual weight)`` computes ``x_t.mm(weight_p)`` with ``x_t``
zero, recorded because the weight requires grad, so the tangent has a ``grad_fn``
(``AddBackward0``; ``SelectBackward0`` after indexing, as the forward-mode AD tutorial prints)
and a backward pass through it gives the weight a zero gradient (not None), while the zero terms
add nothing to the values (a ZeroTensor product is zero even of an infinite primal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule
import chainrule.autograd.forward_ad as cr_fwad

from .conftest import torch

LIBS = [(chainrule, cr_fwad), (torch, torch.autograd.forward_ad)]

P = np.array([[1.0, -2.0], [3.0, 0.5]], dtype=np.float32)
Q = np.array([[0.0, 2.0], [float("inf"), -1.5]], dtype=np.float32)
W = np.array([[0.25, -1.0], [2.0, 4.0]], dtype=np.float32)
T = np.array([[1.0, -1.0], [0.5, 2.0]], dtype=np.float32)

# (name, f(lib, dual, q, w)); ``dual`` has primal P (requiring grad) and tangent T
CASES: list[tuple[str, Callable[..., Any]]] = [
    ("mul_number", lambda lib, d, q, w: d * 2),
    ("mul_plain", lambda lib, d, q, w: d * q),
    ("mul_requiring", lambda lib, d, q, w: d * w),
    ("mm_left", lambda lib, d, q, w: w @ d),
    ("mm_right", lambda lib, d, q, w: d @ w),
    ("linear", lambda lib, d, q, w: lib.nn.functional.linear(w, d)),
    ("linear_bias", lambda lib, d, q, w: lib.nn.functional.linear(w, d, w[0])),
    ("linear_select", lambda lib, d, q, w: lib.nn.functional.linear(w, d)[0]),
    # (q finite: PyTorch's mm materializes its ZeroTensor, and 0 * inf is nan there)
    ("addmm", lambda lib, d, q, w: lib.addmm(d, q.clamp(-3, 3), w)),
    ("div", lambda lib, d, q, w: d / q),
    ("add", lambda lib, d, q, w: d + w),
    ("sub", lambda lib, d, q, w: d - w),
    ("sin", lambda lib, d, q, w: d.sin()),
    ("select", lambda lib, d, q, w: d[0]),
    ("where", lambda lib, d, q, w: lib.where(q > 1, d, w)),
    ("cat", lambda lib, d, q, w: lib.cat([d, w])),
]


def _case(lib: Any, fwad: Any, f: Callable[..., Any], dtype: Any) -> tuple:
    p = lib.tensor(P, dtype=dtype, requires_grad=True)
    w = lib.tensor(W, dtype=dtype, requires_grad=True)
    q = lib.tensor(Q, dtype=dtype)
    with fwad.dual_level():
        out = f(lib, fwad.make_dual(p, lib.tensor(T, dtype=dtype)), q, w)
        tangent = fwad.unpack_dual(out).tangent
    grad_fn = None if tangent.grad_fn is None else tangent.grad_fn.name()
    grads: list[Any] = []
    if tangent.requires_grad:
        tangent.sum().backward()
        # (PyTorch's zero gradient is a ZeroTensor: clone() materializes it)
        grads = [None if x.grad is None else x.grad.clone().float().numpy() for x in (p, w)]
    return tangent.detach().float().numpy(), tangent.requires_grad, grad_fn, grads


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize(("name", "f"), CASES, ids=[c[0] for c in CASES])
def test_tangent_history_values_and_gradients(name: str, f: Any, dtype_name: str) -> None:
    ours, theirs = (_case(lib, fwad, f, getattr(lib, dtype_name)) for lib, fwad in LIBS)
    # (inf and nan where PyTorch has them; a cosine may differ in its last bit)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, atol=0)
    assert np.array_equal(np.signbit(ours[0]), np.signbit(theirs[0]))
    assert ours[1] == theirs[1], name
    assert ours[2] == theirs[2], name
    assert len(ours[3]) == len(theirs[3])
    for g_ours, g_theirs in zip(ours[3], theirs[3], strict=True):
        assert (g_ours is None) == (g_theirs is None), name
        if g_ours is not None:
            np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-6, atol=0)
            assert np.array_equal(np.signbit(g_ours), np.signbit(g_theirs)), name


def test_linear_module_with_dual_parameters() -> None:
    """The forward-mode AD tutorial: nn.Linear's parameters made dual, the output's tangent."""
    results = []
    for lib, fwad in LIBS:
        lib.manual_seed(0)
        model = lib.nn.Linear(5, 5)
        x = lib.randn(16, 5)
        params = dict(model.named_parameters())
        with fwad.dual_level():
            for name, p in params.items():
                delattr(model, name)
                setattr(model, name, fwad.make_dual(p, lib.ones_like(p)))
            jvp = fwad.unpack_dual(model(x)).tangent
        row = jvp[0]
        row.sum().backward()
        results.append(
            (
                row.detach().numpy(),
                row.grad_fn.name(),
                [None if p.grad is None else p.grad.clone().numpy() for p in params.values()],
            )
        )
    (ours, theirs) = results
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1] == theirs[1] == "SelectBackward0"
    assert theirs[2][1] is None  # (the bias's tangent is added, no primal read)
    for g_ours, g_theirs in zip(ours[2], theirs[2], strict=True):
        assert (g_ours is None) == (g_theirs is None)
        if g_ours is not None:
            np.testing.assert_array_equal(g_ours, g_theirs)


def test_no_history_without_grad_mode() -> None:
    for lib, fwad in LIBS:
        p = lib.tensor(P, requires_grad=True)
        with fwad.dual_level(), lib.no_grad():
            tangent = fwad.unpack_dual(fwad.make_dual(p, lib.tensor(T)) * 2).tangent
        assert not tangent.requires_grad and tangent.grad_fn is None
