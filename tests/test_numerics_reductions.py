"""Reductions, scans, softmax and the normalisations: half precision, extreme inputs, ties, NaN
and zeros, against PyTorch (values, first and second derivatives).

Float16 follows one rule: accumulate in float32 and round once (chainrule's ``_accumulate``).
Where PyTorch's own float16 CPU kernels do not (they round every step in float16), its answers
are several, sometimes hundreds of ulps from the exact ones; there chainrule is compared with
PyTorch in float64 rounded to float16 instead, and the kernels are named in the test:
``prod`` (accumulates in float16 vector lanes), ``layer_norm``/``group_norm`` backward and
``batch_norm`` forward (hundreds of ulps). ``log_softmax`` over the last dim keeps the row's sum
and its log in float16; chainrule does the same, bit for bit
(``test_nn_kernel_numerics.py::test_float16_log_softmax_rounds_as_pytorch``).

Extreme inputs in float32: PyTorch's layer/group norm combine their Welford partial moments with
empty vector lanes, ``delta * delta * 0`` with ``delta`` the row's mean, which is NaN once the
mean exceeds 1.8e19 in a row shorter than a vector (so ``[1e30] * 3`` normalises to NaN, ``[1e30]
* 20`` to 0): a CPU-dependent bug chainrule does not copy (it gives 0). Rows with +-3e38 are
compared separately for the cases the brief names; the rest of their gradients depend on
where PyTorch's fused backward kernels overflow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .test_numerics_harness import (
    FLOATS,
    SPECIALS,
    assert_agrees,
    differential,
    mismatches,
    ulp_tolerance,
)


def _f(lib):
    return lib.nn.functional


def _weights(lib, x):
    """Distinct weights on the last dim: with a uniform seed the gradients of softmax and the
    normalisations are exactly 0, which would test nothing."""
    return (lib.arange(x.shape[-1], dtype=x.dtype) + 1) * 0.75


def _rows(dtype, values=SPECIALS):
    """Rows of three around each special value: with two ordinary values, three equal (ties),
    with its negation and 0, and twice after a 1."""
    out = []
    for v in values:
        out += [[v, 1.0, 2.0], [v, v, v], [v, -v, 0.0], [1.0, v, v]]
    with np.errstate(over="ignore"):
        return np.array(out, np.float64).astype(dtype)


_NOT_HUGE = tuple(v for v in SPECIALS if abs(v) != 3e38)

_REDUCTIONS = {
    "sum": lambda lib, x: x.sum(1),
    "sum_all": lambda lib, x: x.sum(),
    "mean": lambda lib, x: x.mean(1),
    "mean_all": lambda lib, x: x.mean(),
    "amax": lambda lib, x: x.amax(1),
    "amin": lambda lib, x: x.amin(1),
    "max_dim": lambda lib, x: x.max(1)[0],
    "min_dim": lambda lib, x: x.min(1)[0],
    "max_all": lambda lib, x: x[:4].max(),
    "min_all": lambda lib, x: x[4:8].min(),
    "median_dim": lambda lib, x: x.median(1)[0],
    "median_all": lambda lib, x: x[8:12].median(),
    "logsumexp": lambda lib, x: x.logsumexp(1),
    "norm2": lambda lib, x: x.norm(dim=1),
    "norm1": lambda lib, x: x.norm(p=1, dim=1),
    "norm_inf": lambda lib, x: x.norm(p=math.inf, dim=1),
    "norm3": lambda lib, x: x.norm(p=3, dim=1),
    "norm_half": lambda lib, x: x.norm(p=0.5, dim=1),
    "norm_all": lambda lib, x: x[:4].norm(),
    "var": lambda lib, x: x.var(1),
    "var_all": lambda lib, x: x[4:8].var(),
    "std": lambda lib, x: x.std(1),
    "var_mean": lambda lib, x: lib.var_mean(x, 1)[0] + lib.var_mean(x, 1)[1],
    "std_mean": lambda lib, x: lib.std_mean(x, 1)[0] * lib.std_mean(x, 1)[1],
    "std_mean_mean": lambda lib, x: lib.std_mean(x, 1)[1],
    "var_mean_all": lambda lib, x: lib.var_mean(x[4:8])[0],
    "softmax": lambda lib, x: x.softmax(1) * _weights(lib, x),
    "softmax_dim0": lambda lib, x: x.softmax(0) * _weights(lib, x),
    "log_softmax": lambda lib, x: x.log_softmax(1) * _weights(lib, x),
    "cumsum": lambda lib, x: x.cumsum(1),
    "prod": lambda lib, x: x.prod(1),
    "prod_all": lambda lib, x: x[:8].prod(),
    "cumprod": lambda lib, x: x.cumprod(1),
    "normalize": lambda lib, x: _f(lib).normalize(x, dim=1) * _weights(lib, x),
    "dist": lambda lib, x: lib.dist(x, x[:, :1] * 0 + 1),
}

# The scans and products of special values overflow inside their second derivatives, where
# PyTorch's formulas (divisions by the input, O(n^2) products) give inf/NaN in other places
# than chainrule's zero-safe ones: compared to first order there.
_FIRST_ORDER_ONLY = {"prod", "prod_all", "cumprod"}


# PyTorch's float16 prod accumulates in float16 (see test_half_against_exact): not compared.
_REDUCTION_CASES = [(dtype, name) for dtype in FLOATS for name in sorted(_REDUCTIONS)
                    if not (dtype == "float16" and name in ("prod", "prod_all"))]


@pytest.mark.parametrize("dtype,name", _REDUCTION_CASES)
def test_reductions_at_special_values(dtype, name):
    fn = _REDUCTIONS[name]
    values = SPECIALS
    if dtype == "float16" and name in ("log_softmax",):
        values = _NOT_HUGE
    assert_agrees(fn, [_rows(dtype, values)], dtype, name, rows=True,
                  second_order=name not in _FIRST_ORDER_ONLY)


_NORMALISATIONS = {
    "layer_norm": lambda lib, x: _f(lib).layer_norm(x, (3,)) * _weights(lib, x),
    "layer_norm_affine": lambda lib, x: _f(lib).layer_norm(
        x, (3,), _weights(lib, x), _weights(lib, x) - 1) * _weights(lib, x),
    "group_norm": lambda lib, x: _f(lib).group_norm(x.reshape(-1, 3, 1), 1).reshape(-1, 3)
    * _weights(lib, x),
    "batch_norm": lambda lib, x: _f(lib).batch_norm(x.t(), None, None, training=True).t()
    * _weights(lib, x),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(_NORMALISATIONS))
def test_normalisations_at_special_values(dtype, name):
    # Without +-3e38 (see the module docstring; the brief's cases are tested below).
    assert_agrees(_NORMALISATIONS[name], [_rows(dtype, _NOT_HUGE)], dtype, name, rows=True)


def test_layer_norm_extreme_rows():
    # The reported cases: float32 [-3e38, 0, 3e38] is NaN (Welford's difference overflows; it
    # was -0.0), float64 [1e30] * 3 is 0 (it was -1: a two-pass mean off by one ulp).
    for lib in (chainrule, torch):
        wide = _f(lib).layer_norm(lib.tensor([[-3e38, 0.0, 3e38]]), (3,))
        assert all(math.isnan(v) for v in wide[0].tolist())
        same = _f(lib).layer_norm(lib.tensor([[1e30] * 3], dtype=lib.float64), (3,))
        assert same.tolist() == [[0.0, 0.0, 0.0]]
        group = _f(lib).group_norm(lib.tensor([[[1e30], [1e30], [1e30]]], dtype=lib.float64), 1)
        assert group.flatten().tolist() == [0.0, 0.0, 0.0]
    for dtype in ("float32", "float64"):
        rows = np.array([[-3e38, 0.0, 3e38], [3e38, -3e38, 0.0], [1e20, -1e20, 0.0],
                         [5.0, 5.0, 5.0], [1e4, -1e4, 88.0]], dtype)
        assert_agrees(lambda lib, x: _f(lib).layer_norm(x, (3,)) * _weights(lib, x), [rows],
                      dtype, "layer_norm", rows=True)


def test_batch_norm_extreme_batches():
    # PyTorch takes the mean in the input's dtype and the squared deviations in float64.
    rows = np.array([[3e38, 1.0, 2.0], [3e38, 3e38, 3e38], [1e30, 1e30, 1e30]], np.float32)
    assert_agrees(lambda lib, x: _f(lib).batch_norm(x.t(), None, None, training=True).t(),
                  [rows], "float32", "batch_norm", second_order=False, rows=True)


def test_var_and_std_take_pytorchs_paths():
    # var()/std() over everything (float32/64): the mean in the input's dtype, then float64;
    # over a dim and var_mean/std_mean: Welford in float64 (a constant row has variance 0).
    for lib in (chainrule, torch):
        for dtype, expected in ((lib.float32, math.inf), (lib.float64, 2.9710560942849127e+28)):
            x = lib.tensor([1e30] * 3, dtype=dtype)
            assert x.var().item() == expected and x.var(0).item() == expected
            assert lib.var_mean(x)[0].item() == 0.0
            assert x.repeat(2).reshape(2, 3).var(1).tolist() == [0.0, 0.0]


def test_cumsum_and_cumprod_accumulate_float32_in_float64():
    for lib in (chainrule, torch):
        x = lib.tensor([3e38, 3e38, -3e38, 1.0])
        assert x.cumsum(0).tolist() == [3e38, math.inf, 3e38, 3e38] or np.allclose(
            x.cumsum(0).tolist(), [3.0000000054977558e38, math.inf] + [3.0000000054977558e38] * 2)
        assert lib.tensor([3e38, -3e38, 0.0]).cumprod(0)[2].item() == 0.0


# ----------------------------------------------------------------------------------------------
# Half precision


def test_half_examples_from_the_issue():
    # mean of 2000 x 60 ones was inf, var NaN, cumsum of 4096 x 0.1 ended at 256, the norm of
    # [300, 400] was inf, var([1000, 1001, 1002]) 1.375 and normalize([300, 400]) [0, 0].
    for lib in (chainrule, torch):
        h = lib.float16
        ones = lib.ones(2000, 60, dtype=h)
        assert ones.mean().item() == 1.0 and ones.var().item() == 0.0
        assert ones.sum().item() == math.inf  # 120000 does not fit in float16, in both
        assert lib.full((4096,), 0.1, dtype=h).cumsum(0)[-1].item() == 409.5
        assert lib.tensor([300.0, 400.0], dtype=h).norm().item() == 500.0
        assert lib.tensor([1000.0, 1001.0, 1002.0], dtype=h).var().item() == 1.0
        out = _f(lib).normalize(lib.tensor([300.0, 400.0], dtype=h), dim=0)
        assert out.tolist() == [0.60009765625, 0.7998046875]
        assert lib.dist(lib.tensor([300.0, 400.0], dtype=h), lib.zeros(2, dtype=h)).item() == 500


def _half_data(shape, loc=0.0, scale=3.0, seed=0):
    return np.random.default_rng(seed).normal(loc, scale, shape).astype(np.float16)


_HALF_REDUCTIONS = {
    "sum": (lambda lib, x: x.sum(1) * 0.01, _half_data((4, 3000), 5)),
    "mean": (lambda lib, x: x.mean(0), _half_data((3000, 4), 100)),
    "mean_all": (lambda lib, x: x.mean(), _half_data((300, 400), 100)),
    "var": (lambda lib, x: x.var(0), _half_data((500, 4), 100)),
    "var_all": (lambda lib, x: x.var(), _half_data((500, 4), 100)),
    "std": (lambda lib, x: x.std(1), _half_data((4, 500), 100, 30)),
    "var_mean": (lambda lib, x: lib.var_mean(x, 0)[0] + lib.var_mean(x, 0)[1],
                 _half_data((500, 4), 100)),
    "std_mean": (lambda lib, x: lib.std_mean(x)[0] * lib.std_mean(x)[1],
                 _half_data((500, 4), 100)),
    "cumsum": (lambda lib, x: x.cumsum(0), _half_data((3000,), 0.1, 0.01)),
    "cumprod": (lambda lib, x: x.cumprod(0), _half_data((300,), 1.0, 0.03)),
    "norm": (lambda lib, x: x.norm(dim=1), _half_data((4, 500), 0, 30)),
    "norm_p3": (lambda lib, x: x.norm(p=3), _half_data((500,), 0, 30)),
    "logsumexp": (lambda lib, x: x.logsumexp(0), _half_data((2000, 3))),
    "softmax": (lambda lib, x: x.softmax(1) * (lib.arange(30, dtype=x.dtype) % 7 - 3),
                _half_data((20, 30))),
    "softmax_dim0": (lambda lib, x: x.softmax(0) * (lib.arange(30, dtype=x.dtype) % 7 - 3)[:, None],
                     _half_data((30, 20))),
    "normalize": (lambda lib, x: _f(lib).normalize(x, dim=1) * 3, _half_data((4, 500), 0, 30)),
    "dist": (lambda lib, x: lib.dist(x, x.detach() * 0 + 1, 3), _half_data((500,), 0, 30)),
    "layer_norm_value": (lambda lib, x: _f(lib).layer_norm(x, (500,)).detach(),
                         _half_data((4, 500), 100)),
    "group_norm_value": (lambda lib, x: _f(lib).group_norm(x, 2).detach(),
                         _half_data((3, 4, 125), 100)),
}


@pytest.mark.parametrize("name", sorted(_HALF_REDUCTIONS))
def test_half_reductions_against_pytorch(name):
    fn, x = _HALF_REDUCTIONS[name]
    # Second derivatives: PyTorch's engine sums float16 gradients over broadcast dims in
    # float32, chainrule's in float16 (autograd/engine.py, reported): first order only.
    problems = differential(fn, [x], "float16", second_order=False, ulps=4, rows=True)
    assert not problems, "\n".join(problems)


_HALF_EXACT = {
    "prod": (lambda lib, x: x.prod(), _half_data((300,), 1.0, 0.03)),
    "prod_dim": (lambda lib, x: x.prod(1), _half_data((3, 300), 1.0, 0.03)),
    "layer_norm": (lambda lib, x: _f(lib).layer_norm(x, (500,)) * 0.5,
                   _half_data((4, 500), 100)),
    "layer_norm_affine": (lambda lib, x: _f(lib).layer_norm(
        x, (500,), x[0].detach() * 0 + 1.5, x[0].detach() * 0 - 2) * 0.5,
        _half_data((4, 500), 100)),
    "group_norm": (lambda lib, x: _f(lib).group_norm(x, 2) * 0.5, _half_data((3, 4, 125), 100)),
    "batch_norm": (lambda lib, x: _f(lib).batch_norm(x, None, None, training=True) * 0.5,
                   _half_data((300, 4, 2), 100)),
}


@pytest.mark.parametrize("name", sorted(_HALF_EXACT))
def test_half_against_exact(name):
    """PyTorch's float16 kernels for these round each step in float16 (see the module
    docstring): chainrule is compared with PyTorch in float64, rounded to float16 once."""
    fn, x = _HALF_EXACT[name]
    ours = chainrule.from_numpy(x.copy()).requires_grad_()
    y = fn(chainrule, ours)
    seed = np.random.default_rng(1).normal(0, 1, tuple(y.shape)).astype(np.float16)
    (g,) = chainrule.autograd.grad(y, ours, chainrule.from_numpy(seed.copy()))
    exact = torch.from_numpy(x.astype(np.float64)).requires_grad_()
    z = fn(torch, exact)
    (h,) = torch.autograd.grad(z, exact, torch.from_numpy(seed.astype(np.float64)))
    assert y.dtype == chainrule.float16 and g.dtype == chainrule.float16
    atol = float(np.finfo(np.float16).tiny)
    for what, a, b in (("value", y, z), ("gradient", g, h)):
        rtol, _ = ulp_tolerance("float16", 2)
        expected = b.detach().numpy().astype(np.float16).astype(np.float64)
        bad = mismatches(a.detach().numpy().astype(np.float64), expected, rtol, atol)
        assert not bad.any(), f"{name} {what}: {a.detach().numpy()[bad][:5]} vs {expected[bad][:5]}"


# ----------------------------------------------------------------------------------------------
# Ties, NaN and zeros


def test_extreme_value_gradients_at_ties_and_nan():
    for lib in (chainrule, torch):
        x = lib.tensor([[1.0, 3.0, 3.0], [math.nan, 2.0, math.nan]], requires_grad=True)
        x.amax(1).sum().backward()
        # amax shares the gradient equally among ties (the NaN row: compared below).
        amax_grad = x.grad.clone()
        x.grad = None
        x.max(1)[0].sum().backward()
        assert x.grad.tolist()[0] == [0.0, 1.0, 0.0]  # max(dim): all to the returned index
        assert str(amax_grad.tolist()[0]) == "[0.0, 0.5, 0.5]"
    assert_agrees(lambda lib, t: t.amax(1) + t.amin(1) + t.max(1)[0] + t.median(1)[0],
                  [np.array([[1.0, 3.0, 3.0], [math.nan, 2.0, math.nan], [2.0, 2.0, 2.0]])],
                  "float64", "ties")
    assert_agrees(lambda lib, t: t.max() + t.min() + t.median(),
                  [np.array([1.0, 3.0, 3.0, 1.0])], "float64", "full ties")
    assert_agrees(lambda lib, t: t.max(), [np.array([1.0, math.nan, 3.0, math.nan])],
                  "float64", "max with NaN")


def test_logsumexp_of_all_minus_infinity():
    assert_agrees(lambda lib, t: t.logsumexp(1),
                  [np.array([[-math.inf, -math.inf], [math.inf, -math.inf], [0.0, -math.inf]])],
                  "float64", "logsumexp")


@pytest.mark.parametrize("rows", [
    [[2.0, 0.0, 3.0, 4.0]],  # one zero
    [[2.0, 0.0, 3.0, 0.0]],  # two zeros
    [[0.0, 0.0, 0.0, 0.0]],
    [[2.0, 5.0, 3.0, 4.0], [1.0, 0.0, 2.0, 3.0]],  # a slice without zeros next to one with
])
def test_prod_and_cumprod_with_zeros(rows):
    x = np.array(rows)
    for fn in (lambda lib, t: t.prod(1), lambda lib, t: t.prod(), lambda lib, t: t.cumprod(1),
               lambda lib, t: t.cumprod(1) * _weights(lib, t)):
        assert_agrees(fn, [x], "float64", "prod/cumprod with zeros")


def test_norm_and_dist_at_zero():
    for lib in (chainrule, torch):
        x = lib.zeros(3, requires_grad=True)
        x.norm().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.dist(y, lib.tensor([1.0, 2.0])).backward()
        assert y.grad.tolist() == [0.0, 0.0]
    for p in (2, 1, 3, 0.5, math.inf):
        assert_agrees(lambda lib, t, p=p: t.norm(p=p, dim=1),
                      [np.array([[0.0, 0.0, 0.0], [0.0, -0.0, 1.0]])], "float64", f"norm {p}")
        assert_agrees(lambda lib, a, b, p=p: lib.dist(a, b, p),
                      [np.array([1.0, 2.0]), np.array([1.0, 2.0])], "float64", f"dist {p}")


def test_dist_matches_pytorch():
    for lib in (chainrule, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([[0.0], [1.0]], dtype=lib.float64, requires_grad=True)
        d = lib.dist(a, b)
        assert d.grad_fn.name() == "DistBackward0" and d.dtype == lib.float64
        assert d.grad_fn._saved_p == 2
        with pytest.raises(RuntimeError, match="input dtype should be either floating point or "
                                               "complex. Got Long instead"):
            lib.dist(lib.tensor([1, 2]), lib.tensor([1, 2]))
        with pytest.raises(TypeError, match=r"dist\(\): argument 'other' \(position 2\) must be "
                                            "Tensor, not float"):
            lib.dist(a, 2.0)
    rng = np.random.default_rng(3)
    # p = 0 (a count) has no gradient; PyTorch's DistBackward0 then negates an undefined tensor
    # and raises "Expected a proper Tensor but got None": chainrule gives no gradient instead.
    for p in (2, 1, 3, 0.5, math.inf):
        assert_agrees(lambda lib, x, y, p=p: lib.dist(x, y, p),
                      [rng.normal(0, 1, (3, 4)), rng.normal(0, 1, (4,))], "float64", f"dist {p}")
