"""Reductions and scans: every op with its dim / keepdim / tuple-dim / 0-d / empty variants.

Where ties would make a gradient undefined (max, amax, median, the inf-norm), the inputs are
distinct values; tie handling is tested separately against PyTorch in tests/test_reduction.py.
Inputs with zeros exercise prod's and cumprod's zero-safe gradients (their second derivatives
too: both are polynomials, so finite differences check them exactly).
"""

from __future__ import annotations

import math

import numpy as np

from . import OpInfo

ONE = [((3, 4),), ((2, 3, 4),)]
WITH_SCALAR = [((3, 4),), ((),)]
WITH_EMPTY = [((3, 4),), ((),), ((0, 3),)]
ZERO_D = [((),)]


def _distinct(rng, shapes, dtype):
    """Distinct values spread over about [-2, 2], so no max/median/inf-norm ties."""
    out = []
    for s in shapes:
        n = math.prod(s)
        values = (rng.permutation(n) - (n - 1) / 2) * (4.0 / max(n, 1)) + 0.01
        out.append(values.astype(dtype).reshape(s))
    return out


def _distinct_magnitudes(rng, shapes, dtype):
    """Distinct non-zero absolute values with random signs (for the +-inf and p < 1 norms)."""
    out = []
    for s in shapes:
        n = math.prod(s)
        magnitudes = 0.3 + rng.permutation(n) * (1.7 / max(n, 1))
        signs = rng.choice([-1.0, 1.0], size=n)
        out.append((magnitudes * signs).astype(dtype).reshape(s))
    return out


def _away_from_zero(rng, shapes, dtype):
    out = []
    for s in shapes:
        v = rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], size=s)
        out.append(np.asarray(v, dtype=dtype))
    return out


def _zeros_at(*positions: int):
    """Inputs away from zero with exact zeros at the given flat positions."""

    def make(rng, shapes, dtype):
        out = _away_from_zero(rng, shapes, dtype)
        for a in out:
            flat = a.reshape(-1)
            for p in positions:
                if p < flat.size:
                    flat[p] = 0
        return out

    return make


def _zeros_by_row(rng, shapes, dtype):
    """Rows (along the last dim) with no zero, one zero, two zeros, and all zeros."""
    (shape,) = shapes
    a = _away_from_zero(rng, shapes, dtype)[0].reshape(-1, shape[-1])
    a[1 % len(a), 1] = 0
    a[2 % len(a), 0] = 0
    a[2 % len(a), 3] = 0
    if len(a) > 3:
        a[3] = 0
    return [a.reshape(shape)]


def _nonnegative_with_zeros(rng, shapes, dtype):
    out = _away_from_zero(rng, shapes, dtype)
    for a in out:
        a.reshape(-1)[::3] = 0
    return out


def _op(name, fn, shapes, **kw) -> OpInfo:
    return OpInfo(name, fn, shapes, **kw)


OPS = [
    # sum and mean (the reductions other ops' derivatives are built on)
    _op("sum_all", lambda lib, x: x.sum(), WITH_EMPTY),
    _op("sum_dim", lambda lib, x: x.sum(1), ONE),
    _op("sum_dims_keepdim", lambda lib, x: lib.sum(x, (0, -1), keepdim=True), ONE),
    _op("sum_0d_dim", lambda lib, x: x.sum(0), ZERO_D),
    _op("mean_all", lambda lib, x: x.mean(), WITH_SCALAR),
    _op("mean_dims_keepdim", lambda lib, x: x.mean((-1, 0), keepdim=True), ONE),
    # prod
    _op("prod_all", lambda lib, x: x.prod(), WITH_EMPTY, make_inputs=_away_from_zero),
    _op("prod_dim", lambda lib, x: x.prod(1), ONE, make_inputs=_away_from_zero),
    _op("prod_dim_keepdim", lambda lib, x: lib.prod(x, -1, keepdim=True), ONE,
        make_inputs=_away_from_zero),
    _op("prod_0d_dim", lambda lib, x: x.prod(0), ZERO_D),
    _op("prod_empty_dim", lambda lib, x: x.prod(0), [((0, 3),)]),
    _op("prod_one_zero", lambda lib, x: x.prod(), ONE, make_inputs=_zeros_at(5)),
    _op("prod_two_zeros", lambda lib, x: x.prod(), ONE, make_inputs=_zeros_at(2, 7)),
    _op("prod_three_zeros", lambda lib, x: x.prod(), [((2, 3),)], make_inputs=_zeros_at(0, 1, 4)),
    _op("prod_dim_zeros", lambda lib, x: x.prod(-1), [((4, 5),)], make_inputs=_zeros_by_row),
    _op("prod_dim0_zeros", lambda lib, x: x.prod(0, keepdim=True), [((4, 5),)],
        make_inputs=_zeros_by_row),
    # cumsum, cumprod
    _op("cumsum", lambda lib, x: x.cumsum(1), ONE),
    _op("cumsum_neg_dim", lambda lib, x: lib.cumsum(x, -3), [((2, 3, 4),)]),
    _op("cumsum_0d", lambda lib, x: x.cumsum(0), ZERO_D),
    _op("cumsum_dtype", lambda lib, x: x.cumsum(0, dtype=lib.float64), ONE),
    _op("cumprod", lambda lib, x: x.cumprod(1), ONE, make_inputs=_away_from_zero),
    _op("cumprod_dim0", lambda lib, x: lib.cumprod(x, 0), [((5, 2),)],
        make_inputs=_away_from_zero),
    _op("cumprod_0d", lambda lib, x: x.cumprod(-1), ZERO_D),
    _op("cumprod_zeros", lambda lib, x: x.cumprod(-1), [((4, 5),)], make_inputs=_zeros_by_row),
    _op("cumprod_zeros_long", lambda lib, x: x.cumprod(0), [((9,),)],
        make_inputs=_zeros_at(2, 6)),
    # sort, argsort, msort (distinct values: the order of ties is the one thing PyTorch's
    # default, unstable sort leaves open)
    _op("sort", lambda lib, x: lib.sort(x), ONE, make_inputs=_distinct),
    _op("sort_descending_dim0", lambda lib, x: x.sort(0, descending=True), ONE,
        make_inputs=_distinct),
    _op("sort_stable_values", lambda lib, x: x.sort(dim=-1, stable=True).values * 2, ONE,
        make_inputs=_distinct),
    _op("sort_0d", lambda lib, x: lib.sort(x, 0), ZERO_D),
    _op("argsort", lambda lib, x: lib.argsort(x, 1, descending=True), ONE,
        make_inputs=_distinct, grad=False),
    _op("argsort_method", lambda lib, x: x.argsort(), ONE, make_inputs=_distinct, grad=False),
    _op("msort", lambda lib, x: lib.msort(x), ONE, make_inputs=_distinct),
    _op("msort_method", lambda lib, x: x.msort(), ONE, make_inputs=_distinct),
    _op("topk", lambda lib, x: lib.topk(x, 2), ONE, make_inputs=_distinct),
    _op("topk_smallest_dim0", lambda lib, x: x.topk(2, dim=0, largest=False), ONE,
        make_inputs=_distinct),
    _op("topk_values", lambda lib, x: x.topk(3, sorted=True).values * 2, ONE,
        make_inputs=_distinct),
    _op("topk_0d", lambda lib, x: lib.topk(x, 1), ZERO_D),
    _op("kthvalue", lambda lib, x: lib.kthvalue(x, 2), ONE, make_inputs=_distinct),
    _op("kthvalue_keepdim", lambda lib, x: x.kthvalue(1, 0, True), ONE, make_inputs=_distinct),
    _op("kthvalue_0d", lambda lib, x: lib.kthvalue(x, 1), ZERO_D),
    # max, min
    _op("max_all", lambda lib, x: x.max(), WITH_SCALAR, make_inputs=_distinct),
    _op("min_all", lambda lib, x: lib.min(x), WITH_SCALAR, make_inputs=_distinct),
    _op("max_dim", lambda lib, x: x.max(1), ONE, make_inputs=_distinct),
    _op("max_dim_keepdim", lambda lib, x: lib.max(x, -1, keepdim=True), ONE,
        make_inputs=_distinct),
    _op("min_dim", lambda lib, x: x.min(0), ONE, make_inputs=_distinct),
    _op("min_dim_kwargs", lambda lib, x: lib.min(x, dim=1, keepdim=True), ONE,
        make_inputs=_distinct),
    _op("max_dim_0d", lambda lib, x: x.max(0), ZERO_D),
    _op("max_values_only", lambda lib, x: x.max(1).values * 2, ONE, make_inputs=_distinct),
    _op("max_binary", lambda lib, x, y: lib.max(x, y), [((3, 4), (3, 4)), ((3, 1), (4,))],
        make_inputs=_distinct),
    _op("min_binary", lambda lib, x, y: x.min(y), [((3, 4), (3, 4))], make_inputs=_distinct),
    # amax, amin
    _op("amax_all", lambda lib, x: x.amax(), WITH_SCALAR, make_inputs=_distinct),
    _op("amax_dim", lambda lib, x: x.amax(1), ONE, make_inputs=_distinct),
    _op("amax_dims_keepdim", lambda lib, x: lib.amax(x, (0, -1), keepdim=True), ONE,
        make_inputs=_distinct),
    _op("amin_dims", lambda lib, x: x.amin((1, 0)), ONE, make_inputs=_distinct),
    _op("amin_empty_other_dim", lambda lib, x: x.amin(1), [((0, 3),)]),
    # argmax, argmin (no gradient)
    _op("argmax", lambda lib, x: x.argmax(), WITH_SCALAR, make_inputs=_distinct, grad=False),
    _op("argmax_dim_keepdim", lambda lib, x: x.argmax(1, keepdim=True), ONE,
        make_inputs=_distinct, grad=False),
    _op("argmin_dim", lambda lib, x: lib.argmin(x, -1), ONE, make_inputs=_distinct, grad=False),
    _op("argmin_keepdim_all", lambda lib, x: x.argmin(keepdim=True), ONE,
        make_inputs=_distinct, grad=False),
    # var, std, var_mean, std_mean
    _op("var_all", lambda lib, x: x.var(), ONE),
    _op("var_dim", lambda lib, x: x.var(1), ONE),
    _op("var_dims_keepdim", lambda lib, x: x.var((0, -1), keepdim=True), ONE),
    _op("var_correction", lambda lib, x: lib.var(x, 0, correction=0), ONE),
    _op("var_correction_half", lambda lib, x: x.var(1, correction=1.5), ONE),
    _op("var_unbiased_false", lambda lib, x: x.var(1, False), ONE),
    _op("var_positional_unbiased", lambda lib, x: x.var(False), ONE),
    _op("std_all", lambda lib, x: x.std(), ONE),
    _op("std_dim_keepdim", lambda lib, x: lib.std(x, -1, keepdim=True), ONE),
    _op("std_correction", lambda lib, x: x.std((0, 1), correction=2), ONE),
    _op("var_mean_all", lambda lib, x: lib.var_mean(x), ONE),
    _op("var_mean_dim", lambda lib, x: lib.var_mean(x, 1, keepdim=True), ONE),
    _op("var_mean_mean_only", lambda lib, x: lib.var_mean(x, 0)[1] * 3, ONE),
    _op("std_mean_dim", lambda lib, x: lib.std_mean(x, (0, 1), correction=0), ONE),
    _op("std_mean_std_only", lambda lib, x: lib.std_mean(x, -1)[0], ONE),
    # norm (Tensor.norm / torch.norm: LinalgVectorNormBackward0)
    _op("norm_fro", lambda lib, x: x.norm(), WITH_EMPTY),
    _op("norm_2_dim", lambda lib, x: x.norm(2, dim=1), ONE),
    _op("norm_fro_dims_keepdim", lambda lib, x: lib.norm(x, "fro", (0, -1), keepdim=True), ONE),
    _op("norm_1", lambda lib, x: x.norm(1), ONE, make_inputs=_away_from_zero),
    _op("norm_1_dim", lambda lib, x: x.norm(p=1, dim=0), ONE, make_inputs=_away_from_zero),
    _op("norm_inf", lambda lib, x: x.norm(math.inf), ONE, make_inputs=_distinct_magnitudes),
    _op("norm_inf_dim", lambda lib, x: x.norm(math.inf, dim=1, keepdim=True), ONE,
        make_inputs=_distinct_magnitudes),
    _op("norm_neg_inf_dim", lambda lib, x: x.norm(-math.inf, dim=-1), ONE,
        make_inputs=_distinct_magnitudes),
    _op("norm_0", lambda lib, x: x.norm(0), ONE, make_inputs=_nonnegative_with_zeros),
    _op("norm_3", lambda lib, x: x.norm(3), ONE),
    _op("norm_3_dim", lambda lib, x: x.norm(3, dim=(1,)), ONE),
    _op("norm_1_5", lambda lib, x: x.norm(1.5, dim=1), ONE, make_inputs=_away_from_zero),
    _op("norm_0_5", lambda lib, x: x.norm(0.5), ONE, make_inputs=_distinct_magnitudes),
    _op("norm_neg_1", lambda lib, x: x.norm(-1, dim=0), ONE, make_inputs=_distinct_magnitudes),
    _op("norm_0d", lambda lib, x: x.norm(), ZERO_D, make_inputs=_away_from_zero),
    _op("norm_dtype", lambda lib, x: x.norm(dtype=lib.float64), ONE),
    # logsumexp
    _op("logsumexp_dim", lambda lib, x: x.logsumexp(1), ONE, low=-5.0, high=5.0),
    _op("logsumexp_dims_keepdim", lambda lib, x: lib.logsumexp(x, (0, -1), keepdim=True), ONE),
    _op("logsumexp_0d", lambda lib, x: x.logsumexp(0), ZERO_D),
    _op("logsumexp_large", lambda lib, x: (x * 400).logsumexp(0), ONE),
    _op("logsumexp_empty_dim", lambda lib, x: x.logsumexp(0), [((0, 3),)]),
    # median
    _op("median_all", lambda lib, x: x.median(), WITH_SCALAR, make_inputs=_distinct),
    _op("median_dim", lambda lib, x: x.median(1), ONE, make_inputs=_distinct),
    _op("median_dim_keepdim", lambda lib, x: lib.median(x, 0, keepdim=True), ONE,
        make_inputs=_distinct),
    _op("median_0d", lambda lib, x: x.median(0), ZERO_D),
    # all, any, count_nonzero (no gradient)
    _op("all", lambda lib, x: (x > -1.5).all(), WITH_EMPTY, grad=False),
    _op("all_dim_keepdim", lambda lib, x: (x > -1.5).all(1, keepdim=True), ONE, grad=False),
    _op("any_dims", lambda lib, x: lib.any(x > 1.5, (0, -1)), ONE, grad=False),
    _op("any_float", lambda lib, x: x.any(0), ONE, make_inputs=_nonnegative_with_zeros,
        grad=False),
    _op("count_nonzero", lambda lib, x: x.count_nonzero(), ONE,
        make_inputs=_nonnegative_with_zeros, grad=False),
    _op("count_nonzero_dims", lambda lib, x: lib.count_nonzero(x, (0, 1)), ONE,
        make_inputs=_nonnegative_with_zeros, grad=False),
    # reductions composed with other ops (gradients flowing through several reductions)
    _op("chain_normalize", lambda lib, x: (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True),
        ONE),
    _op("chain_logsumexp_max", lambda lib, x: x.logsumexp(1) - x.amax(1), ONE,
        make_inputs=_distinct),
]

# The special functions exposed as ops (ops/special_ops.py): their derivatives are the next
# function of the family, so second order is checked too.
OPS += [
    _op("erfinv", lambda lib, x: lib.erfinv(x), WITH_SCALAR, low=-0.9, high=0.9),
    _op("lgamma", lambda lib, x: x.lgamma(), WITH_SCALAR, low=0.2, high=5.0),
    _op("lgamma_negative", lambda lib, x: lib.lgamma(x - 3.0), ONE[:1], low=0.1, high=0.9),
    _op("digamma", lambda lib, x: lib.digamma(x), WITH_SCALAR, low=0.3, high=5.0),
    _op("polygamma_1", lambda lib, x: lib.polygamma(1, x), ONE[:1], low=0.3, high=5.0),
    _op("polygamma_2_method", lambda lib, x: x.polygamma(2), ONE[:1], low=0.5, high=5.0),
]

# dist: the p-norm of a broadcast difference (DistBackward0)
OPS += [
    OpInfo("dist", lambda lib, x, y: lib.dist(x, y), [((3, 4), (3, 4)), ((3, 4), (4,))]),
    OpInfo("dist_p3", lambda lib, x, y: lib.dist(x, y, 3), [((3, 4), (3, 4))]),
    OpInfo("dist_p1", lambda lib, x, y: x.dist(y, 1), [((3, 4), (3, 4))],
           make_inputs=_away_from_zero),
]


def _with_nans(rng, shapes, dtype):
    """Random values with NaN at a few positions (nansum/nanmean skip them); a one-element
    input stays finite (all NaN, its nanmean and gradient are NaN: no gradcheck passes)."""
    out = [rng.uniform(-2, 2, s).astype(dtype) for s in shapes]
    for a in out:
        if a.size > 1:
            a.reshape(-1)[::5] = np.nan
    return out


OPS += [
    OpInfo("nansum", lambda lib, x: lib.nansum(x), WITH_EMPTY, make_inputs=_with_nans),
    OpInfo("nansum_dim", lambda lib, x: x.nansum(1, keepdim=True), ONE, make_inputs=_with_nans),
    OpInfo("nansum_dims", lambda lib, x: lib.nansum(x, (0, -1)), ONE, make_inputs=_with_nans),
    OpInfo("nanmean", lambda lib, x: lib.nanmean(x), WITH_SCALAR, make_inputs=_with_nans),
    OpInfo("nanmean_dim", lambda lib, x: x.nanmean(dim=1, keepdim=True), ONE,
           make_inputs=_with_nans),
]
