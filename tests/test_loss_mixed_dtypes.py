"""Losses whose input and target have different dtypes (a float32 prediction against a float64
target read from NumPy is the common case), against PyTorch:

* ``smooth_l1_loss`` promotes the two (a float64 loss for float32 and float64);
* ``binary_cross_entropy_with_logits`` builds its loss in place on ``1 - target``: the loss
  has the target's dtype, whichever is wider;
* ``binary_cross_entropy`` refuses two dtypes ("Found dtype Double but expected Float");
  ``huber_loss`` computes the forward in the input's dtype and its backward refuses them,
  for the input's gradient and the target's alike.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule

DTYPES = ["float16", "bfloat16", "float32", "float64"]
PAIRS = [pair for pair in itertools.product(DTYPES, DTYPES) if pair[0] != pair[1]]
RNG = np.random.default_rng(7)
LOGITS = RNG.standard_normal(6) * 3
PROBS = RNG.random(6)


def _loss(lib, name, input_dtype, target_dtype, grads):
    a = lib.tensor(LOGITS).to(getattr(lib, input_dtype)).requires_grad_(grads[0])
    b = lib.tensor(PROBS).to(getattr(lib, target_dtype)).requires_grad_(grads[1])
    functional = lib.nn.functional
    try:
        out = _forward(functional, name, a, b)
    except RuntimeError as error:
        return ["forward", "RuntimeError", str(error)]
    result = [str(out.dtype).split(".")[-1], float(out)]
    try:
        found = lib.autograd.grad(out, [t for t in (a, b) if t.requires_grad])
    except RuntimeError as error:
        return [*result, "RuntimeError", str(error)]
    return [*result, [str(g.dtype).split(".")[-1] for g in found],
            [g.double().tolist() for g in found]]


def _forward(functional, name, a, b):
    if name == "smooth_l1_loss":
        return functional.smooth_l1_loss(a, b)
    if name == "huber_loss":
        return functional.huber_loss(a, b)
    if name == "binary_cross_entropy":
        return functional.binary_cross_entropy(a.sigmoid(), b)
    return functional.binary_cross_entropy_with_logits(a, b)


def _close(expected, got, dtype):
    tol = 2e-2 if "16" in dtype else 1e-6
    return np.allclose(np.asarray(expected, float), np.asarray(got, float), rtol=tol, atol=tol)


@pytest.mark.parametrize("grads", [(True, False), (False, True), (True, True)],
                         ids=["input", "target", "both"])
@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits"])
def test_mixed_dtype_loss(name, pair, grads):
    expected = _loss(torch, name, *pair, grads)
    got = _loss(chainrule, name, *pair, grads)
    if expected[0] == "forward":
        assert got == expected
        return
    assert got[0] == expected[0]  # the loss's dtype
    assert _close(expected[1], got[1], expected[0])
    if expected[2] == "RuntimeError":
        assert got[2:] == expected[2:]
        return
    assert got[2] == expected[2]  # the gradients' dtypes
    # (Values: PyTorch computes a gradient of another dtype than the loss's partly in that
    # dtype, where a 0-d incoming gradient does not take part in promotion; chainrule keeps
    # the wider dtype until the end, so compare at the narrower dtype's precision.)
    for dtype, want, have in zip(got[2], expected[3], got[3], strict=True):
        narrow = "float16" if "16" in dtype or "16" in pair[0] or "16" in pair[1] else dtype
        assert _close(want, have, narrow)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("extras", ["", "weight", "pos_weight", "weight+pos_weight"])
def test_bce_with_logits_one_dtype_forward_is_exact(dtype, reduction, extras):
    # The in-place steps of the mixed-dtype case change nothing when all dtypes agree: the
    # element-wise loss stays bit for bit PyTorch's (its sums can end an ulp apart, as every
    # float64 sum here: NumPy's pairwise order is not PyTorch's; the gradients are the OpInfo
    # sweep's business).
    def run(lib):
        kind = getattr(lib, dtype)
        a = lib.tensor(LOGITS).to(kind)
        b = lib.tensor(PROBS).to(kind)
        kwargs = {}
        if "pos_weight" in extras:
            kwargs["pos_weight"] = lib.tensor(PROBS[::-1] * 3).to(kind)
        if extras.startswith("weight"):
            kwargs["weight"] = lib.tensor(PROBS * 2).to(kind)
        out = lib.nn.functional.binary_cross_entropy_with_logits(a, b, reduction=reduction,
                                                                 **kwargs)
        return str(out.dtype).split(".")[-1], out.double().numpy()

    (dtype_got, got), (dtype_expected, expected) = run(chainrule), run(torch)
    assert dtype_got == dtype_expected
    if reduction == "none":
        assert got.tolist() == expected.tolist()
    else:
        np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(np.float64).eps)
