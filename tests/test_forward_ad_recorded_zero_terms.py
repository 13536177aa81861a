"""Forward-mode AD: PyTorch's formulas of several tangents take a missing one as a zero
tensor and compute its term (``other_t * self_p``). With a primal that requires grad the
tangent of ``d * 2``, ``x @ d``, ``d / x``, ``linear(x, d)`` then records the primal's history
(requires grad, ``grad_fn=AddBackward0``/``DivBackward0``) though the term adds nothing; and
the matrix products (mm, bmm, mv, addmm, addmv, baddbmm, addbmm, convolution) compute it with
a real zero tensor, so an infinite primal entry makes NaN in the tangent (``0 * inf``), where
the element-wise and outer products skip it. Before, chainrule's tangents had no history there
(found by the forward-mode AD tutorial, whose printed tangent shows
``grad_fn=<SelectBackward0>``) and no NaN. Values, NaN positions, the sign of zero, and the
gradients a backward pass through the tangent gives are PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

OPS = {
    "mul_scalar": lambda lib, d, x: d * 2,
    "scalar_mul": lambda lib, d, x: 2 * d,
    "mul": lambda lib, d, x: d * x,
    "rmul": lambda lib, d, x: x * d,
    "add": lambda lib, d, x: d + x,
    "sub": lambda lib, d, x: x - d,
    "div_scalar": lambda lib, d, x: d / 2,
    "div": lambda lib, d, x: d / x,
    "rdiv": lambda lib, d, x: x / d,
    "pow": lambda lib, d, x: d**x,
    "mm": lambda lib, d, x: x @ d,
    "mm_right": lambda lib, d, x: d @ x,
    "matmul_vector": lambda lib, d, x: d @ x[0],
    "addmm": lambda lib, d, x: lib.addmm(x, d, x),
    "linear": lambda lib, d, x: lib.nn.functional.linear(x, d),
    "maximum": lambda lib, d, x: lib.maximum(d, x),
    "where": lambda lib, d, x: lib.where(x > 0.8, d, x),
    "bmm": lambda lib, d, x: lib.bmm(d[None], x[None]),
    "dot": lambda lib, d, x: lib.dot(d[0], x[0]),
    "mv": lambda lib, d, x: lib.mv(x, d[0]),
    "outer": lambda lib, d, x: lib.outer(d[0], x[0]),
    "addcmul": lambda lib, d, x: lib.addcmul(x, d, x),
    "sin": lambda lib, d, x: d.sin(),
    "sum": lambda lib, d, x: d.sum(),
    "index": lambda lib, d, x: (d * x)[0],
}
# (tangents whose history differs only in the name of its last node: PyTorch's formula
# ends in another op than chainrule's)
SAME_NAME = set(OPS) - {"pow"}


def _tangent(lib: Any, name: str, primal: np.ndarray) -> dict[str, Any]:
    fwad = lib.autograd.forward_ad
    p = lib.nn.Parameter(lib.tensor(primal))
    t = lib.tensor(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3))
    x = lib.tensor(np.linspace(0.5, 1.5, 9, dtype=np.float32).reshape(3, 3))
    with fwad.dual_level():
        out = OPS[name](lib, fwad.make_dual(p, t), x)
        tangent = fwad.unpack_dual(out).tangent
    seen = {
        "requires_grad": tangent.requires_grad,
        "grad_fn": type(tangent.grad_fn).__name__ if tangent.grad_fn is not None else None,
        "value": tangent.detach().numpy().copy(),
    }
    if tangent.requires_grad:
        tangent.backward(lib.ones_like(tangent))
        seen["grad"] = p.grad.numpy(force=True).copy()
    return seen


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("primal", ["finite", "infinite"])
def test_tangents_record_as_pytorchs(name: str, primal: str) -> None:
    values = np.linspace(0.6, 1.4, 9, dtype=np.float32).reshape(3, 3)
    if primal == "infinite":
        values[0, 0] = np.inf
    ours, theirs = _tangent(chainrule, name, values), _tangent(torch, name, values)
    assert ours["requires_grad"] == theirs["requires_grad"]
    if name in SAME_NAME:
        assert ours["grad_fn"] == theirs["grad_fn"]
    np.testing.assert_allclose(ours["value"], theirs["value"], rtol=1e-6)  # (NaN where NaN)
    np.testing.assert_array_equal(np.signbit(ours["value"]), np.signbit(theirs["value"]))
    if "grad" in theirs:
        if name == "pow" and primal == "infinite":
            # Known difference: the zero terms give their inputs zero gradients straight;
            # PyTorch's exponent term passes its zero through log(inf) and gives NaN there.
            assert np.isnan(theirs["grad"][0, 0]) and ours["grad"][0, 0] == 0
            theirs["grad"][0, 0] = 0
        np.testing.assert_allclose(ours["grad"], theirs["grad"], rtol=1e-6)


def test_no_history_without_grad_mode_or_a_primal_requiring_grad() -> None:
    fwad = chainrule.autograd.forward_ad
    x = chainrule.ones(2, 2)
    for requires_grad, grad_mode in ((True, False), (False, True)):
        p = chainrule.ones(2, 2, requires_grad=requires_grad)
        with fwad.dual_level(), chainrule.set_grad_enabled(grad_mode):
            tangent = fwad.unpack_dual(fwad.make_dual(p, chainrule.ones(2, 2)) * x).tangent
        assert not tangent.requires_grad and tangent.grad_fn is None


BIAS_ONLY = {
    "addmm": lambda lib, b, m, x: lib.addmm(b, m, x),
    "addmm_scaled": lambda lib, b, m, x: lib.addmm(b, m, x, beta=0.5, alpha=2),
    "linear": lambda lib, b, m, x: lib.nn.functional.linear(m, x, b),
    "conv1d": lambda lib, b, m, x: lib.nn.functional.conv1d(m[None], x[:, :, None], b),
    "addmv": lambda lib, b, m, x: lib.addmv(b, m, x[0]),
    "baddbmm": lambda lib, b, m, x: lib.baddbmm(b[None, None], m[None], x[None]),
    "addbmm": lambda lib, b, m, x: lib.addbmm(b[None], m[None], x[None]),
    "addr": lambda lib, b, m, x: lib.addr(b[None].expand(2, 2), m[0], x[0]),
}


@pytest.mark.parametrize("name", list(BIAS_ONLY))
def test_a_tangent_of_the_added_term_only(name: str) -> None:
    """Only the added term (a bias) has a tangent: the products' zero terms are still
    computed (NaN at an infinite factor) except for the outer product's."""
    seen = []
    for lib in (chainrule, torch):
        fwad = lib.autograd.forward_ad
        m = lib.tensor([[np.inf, 1.0], [1.0, -2.0]])
        x = lib.tensor([[1.0, 0.5], [-1.0, 2.0]])
        with fwad.dual_level():
            b = fwad.make_dual(lib.tensor([1.0, -1.0]), lib.tensor([0.25, -0.5]))
            seen.append(fwad.unpack_dual(BIAS_ONLY[name](lib, b, m, x)).tangent.numpy())
    np.testing.assert_array_equal(seen[0], seen[1])
