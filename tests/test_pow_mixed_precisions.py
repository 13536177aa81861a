"""``pow`` of two tensors of different floating dtypes, values and gradients against PyTorch.

PyTorch promotes bfloat16 with float16 to float32 (NumPy has no common dtype for them, so a
derivative computing with both raised NumPy's DTypePromotionError), and its exponent gradient
``grad * result * log(self)`` takes the logarithm of the base promoted to the result's dtype (a
bfloat16 base's logarithm in bfloat16 was off by 2.5e-3 relative). The same for ``xlogy``,
whose derivative ``xlogy(grad, other)`` rounded a float32 gradient to a half ``other``'s dtype.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chainrule

DTYPES = ["bfloat16", "float16", "float32", "float64"]
BASES = [0.0, 0.5, 1.5, -2.0, 3.0, 7.25]
EXPONENTS = [2.0, 0.0, -1.0, 3.0, 1.5, -0.5]


def _run(lib, base_dtype, exponent_dtype, needs):
    a = lib.tensor(BASES, dtype=getattr(lib, base_dtype), requires_grad=needs[0])
    b = lib.tensor(EXPONENTS, dtype=getattr(lib, exponent_dtype), requires_grad=needs[1])
    y = a**b
    (y * lib.arange(1, 7, dtype=y.dtype)).sum().backward()
    grads = [t.grad for t in (a, b) if t.requires_grad]
    return y, grads


def _close(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(
        ours.detach().double().numpy(),
        theirs.detach().double().numpy(),
        rtol=4e-7,  # (float32 pow is NumPy's, within an ulp of PyTorch's)
        atol=0,
        equal_nan=True,
    )


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize(
    ("base_dtype", "exponent_dtype"),
    [pair for pair in itertools.permutations(DTYPES, 2)],
)
def test_pow_of_two_floating_dtypes(base_dtype, exponent_dtype, needs):
    y, grads = _run(chainrule, base_dtype, exponent_dtype, needs)
    y_ref, grads_ref = _run(torch, base_dtype, exponent_dtype, needs)
    _close(y, y_ref)
    assert len(grads) == len(grads_ref)
    for ours, theirs in zip(grads, grads_ref, strict=True):
        _close(ours, theirs)


@pytest.mark.parametrize("p", [float("inf"), float("-inf")])
def test_dist_infinite_norm_of_empty_tensors(p):
    with pytest.raises(RuntimeError) as theirs:
        torch.dist(torch.ones(0), torch.ones(0), p=p)
    with pytest.raises(RuntimeError) as ours:
        chainrule.dist(chainrule.ones(0), chainrule.ones(0), p=p)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((), ()), ((2, 3), (3,))])
@pytest.mark.parametrize(
    ("self_dtype", "other_dtype"),
    [pair for pair in itertools.permutations(DTYPES, 2)],
)
def test_xlogy_of_two_floating_dtypes(self_dtype, other_dtype, shapes):
    def run(lib):
        rng = np.random.default_rng(0)
        x = lib.tensor(rng.uniform(-2, 2, shapes[0]), dtype=getattr(lib, self_dtype))
        y = lib.tensor(rng.uniform(0.1, 3, shapes[1]), dtype=getattr(lib, other_dtype))
        x.requires_grad_()
        y.requires_grad_()
        out = lib.xlogy(x, y)
        gx, gy = lib.autograd.grad((out * 1.7).sum(), (x, y))
        return out, gx, gy

    for ours, theirs in zip(run(chainrule), run(torch), strict=True):
        _close(ours, theirs)
