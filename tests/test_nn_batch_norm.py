"""Functional batch norm against PyTorch: PyTorch's CPU kernel numbers (statistics, running
statistics, ``x * alpha + beta``) bit for bit, empty batches, checks and their order, and what
the node saves."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import attempt
from .test_numerics_harness import mismatches

CASES = [
    # (input dtype, parameter dtype, training, with running statistics, with weight)
    ("float32", "float32", True, True, True),
    ("float32", "float32", True, False, False),
    ("float32", "float32", False, True, True),
    ("float16", "float32", True, True, True),
    ("float16", "float32", True, True, False),
    ("float16", "float32", False, True, True),
    ("float16", "float16", False, True, True),
]


def _run(lib: Any, arrays: list[np.ndarray], training: bool, stats: bool,
         affine: bool) -> list[np.ndarray]:
    x, w, b, rm, rv = (lib.from_numpy(a.copy()) for a in arrays)
    rm_, rv_ = (rm, rv) if stats else (None, None)
    out = lib.nn.functional.batch_norm(x, rm_, rv_, w if affine else None,
                                       b if affine else None, training=training, momentum=0.3)
    results = [out.numpy(), rm.numpy(), rv.numpy()]
    return results


@pytest.mark.parametrize(("dtype", "param", "training", "stats", "affine"), CASES)
@pytest.mark.parametrize("shape", [(5, 3, 11), (2, 3, 4, 5), (4, 3)])
def test_batch_norm_values_are_pytorchs_to_the_bit(dtype, param, training, stats, affine,
                                                   shape) -> None:
    """Statistics in float64 (float32 input) or float32 (float16), saved in the parameters'
    dtype, running statistics updated with the momentum in that dtype, output ``x * alpha +
    beta`` as a fused multiply-add. (Float16 input with float16 parameters in training: see
    the next test.)

    Documented differences: for an input without spatial dimensions PyTorch's training kernel
    (its channels-last one) sums in one float32 buffer per thread, so its statistics depend on
    its thread count: there within a few ulps. Float16 input in training: its float32 sums run
    in vector lanes (their width is the machine's), so the float16 statistics can round the
    other way: within an ulp; so can its float32 running variance (within a few ulps when the
    statistics are float32; float16 ones round it away)."""
    rng = np.random.default_rng(sum(map(ord, f"{dtype}{param}{training}{stats}{affine}{shape}")))
    x = (rng.standard_normal(shape) * 3 + 20).astype(dtype)
    params = [rng.uniform(0.5, 2, shape[1]), rng.uniform(-1, 1, shape[1]),
              rng.standard_normal(shape[1]), rng.uniform(0.5, 2, shape[1])]
    arrays = [x] + [p.astype(param) for p in params]
    ours = _run(chainrule, arrays, training, stats, affine)
    theirs = _run(torch, arrays, training, stats, affine)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a.dtype == b.dtype
        if training and len(shape) == 2:
            scale = np.spacing(np.abs(b).max().astype(b.dtype)).astype(np.float64)
            assert np.abs(a.astype(np.float64) - b).max() <= 8 * scale
        elif dtype == "float16" and (i > 0 or training):
            np.testing.assert_array_max_ulp(a, b, maxulp=4 if i == 2 and param == "float32"
                                            else 0 if i else 1)
        else:
            np.testing.assert_array_equal(a, b)


def _half_batch_norm(lib: Any, x: np.ndarray, param: str, dtype: Any = None) -> list:
    t = lib.from_numpy(x.astype(dtype or x.dtype)).requires_grad_()
    w = lib.ones(x.shape[1], dtype=getattr(lib, param)) if dtype is None else None
    b = lib.zeros(x.shape[1], dtype=getattr(lib, param)) if dtype is None else None
    out = lib.nn.functional.batch_norm(t, None, None, w, b, training=True)
    g = np.random.default_rng(1).uniform(-1, 1, x.shape).astype(dtype or x.dtype)
    (grad,) = lib.autograd.grad(out, t, lib.from_numpy(g))
    return [out.detach().numpy(), grad.numpy()]


def test_float16_batch_norm_keeps_the_exact_answer() -> None:
    """Documented difference: with float16 parameters PyTorch's kernel keeps the batch mean
    and invstd in float16 and normalises with those, so for data far from 0 its output is
    many ulps off the correctly rounded one, and far from its own output for the same values
    with float32 parameters. chainrule normalises (and differentiates) with the float32
    statistics (and saves the float16 ones, as PyTorch): within 2 ulps of the exact result
    either way, as tests/test_numerics_reductions.py's test_half_against_exact requires."""
    x = np.random.default_rng(0).normal(100, 3, (300, 4, 2)).astype(np.float16)
    exact = [r.astype(np.float16) for r in _half_batch_norm(torch, x, "float64", np.float64)]
    theirs16 = _half_batch_norm(torch, x, "float16")
    theirs32 = _half_batch_norm(torch, x, "float32")
    # PyTorch against itself: more than 8 ulps apart somewhere
    assert not np.allclose(theirs16[0], theirs32[0], rtol=8 * 2.0 ** -10, atol=0)
    rtol, atol = 2 * float(np.finfo(np.float16).eps), float(np.finfo(np.float16).tiny)
    for param in ("float16", "float32"):
        ours = _half_batch_norm(chainrule, x, param)
        for a, b in zip(ours, exact, strict=True):
            assert not mismatches(a, b, rtol, atol).any()
    assert mismatches(theirs16[0], exact[0], rtol, atol).any()  # PyTorch's own is not


def test_saved_statistics_are_pytorchs() -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((6, 4, 3)) * 2 + 5).astype(np.float32)
    saved = []
    for lib in (chainrule, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out = lib.nn.functional.batch_norm(t, None, None, training=True)
        node = out.grad_fn
        saved.append([node._saved_result1.numpy(), node._saved_result2.numpy(),
                      node._saved_running_mean, node._saved_training, node._saved_eps])
    np.testing.assert_array_equal(saved[0][0], saved[1][0])
    np.testing.assert_array_equal(saved[0][1], saved[1][1])
    assert saved[0][2:] == saved[1][2:]


def _outcome(run: Any) -> tuple:
    return attempt(run, lambda out: (tuple(out.shape), type(out.grad_fn).__name__, out.stride()))


def _empty_and_checks(lib: Any) -> list:
    f = lib.nn.functional
    rm, rv = lib.zeros(3), lib.ones(3)
    x = lib.zeros(0, 3, 2, requires_grad=True)
    w = lib.ones(3, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    h, f32, f64 = lib.float16, lib.float32, lib.float64
    results = [
        _outcome(lambda: f.batch_norm(x, rm, rv, w, b, training=True)),
        (rm.tolist(), rv.tolist(), rm._version),
        _outcome(lambda: f.batch_norm(x, rm, rv, training=True)),
        _outcome(lambda: f.batch_norm(x, None, None, training=False)),
        _outcome(lambda: f.batch_norm(x, lib.zeros(4), rv, training=True)),
        _outcome(lambda: f.batch_norm(lib.zeros(0), rm, rv, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(3), rm, rv, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(3), None, None, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(()), None, None, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(1, 3, 1), rm, rv, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3), None, rv, training=False)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3), rm, None, training=False)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3), rm, None, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3), rm, rv, lib.ones(4))),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3, dtype=f64), rm, rv)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3), rm, rv, lib.ones(3, dtype=f64))),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3, dtype=h), rm, rv, lib.ones(3, dtype=h))),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3, dtype=h), rm.half(), rv, training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3, dtype=lib.int64), None, None,
                                      training=True)),
        _outcome(lambda: f.batch_norm(lib.ones(2, 3, dtype=f32), rm, rv, training=True)),
    ]
    y = f.batch_norm(x, rm, rv, w, b, training=True)
    y.sum().backward()
    results.append((w.grad.tolist(), b.grad.tolist(), tuple(x.grad.shape)))
    bn = lib.nn.BatchNorm1d(3)
    results.append(_outcome(lambda: bn(x)))
    results.append((bn.running_mean.tolist(), bn.num_batches_tracked.item()))
    return results


def test_empty_batches_and_checks_as_pytorch() -> None:
    """An empty batch returns ``input.clone() * weight[0] + bias[0]`` before any check, running
    statistics untouched; then PyTorch's checks in its order (sizes, evaluation-mode
    statistics, dtypes)."""
    assert _empty_and_checks(chainrule) == _empty_and_checks(torch)


def test_running_statistics_keep_their_version() -> None:
    """PyTorch's kernel updates the running statistics without bumping their version, so a
    graph that saved them can still run backward after another training step."""
    results = []
    for lib in (chainrule, torch):
        rm, rv = lib.zeros(3), lib.ones(3)
        x = lib.randn(4, 3, requires_grad=True) if lib is torch else lib.from_numpy(
            np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
        ).requires_grad_()
        y1 = lib.nn.functional.batch_norm(x, rm, rv, training=True)
        lib.nn.functional.batch_norm(x * 2, rm, rv, training=True)
        y1.sum().backward()
        results.append((rm._version, rv._version, x.grad is not None))
    assert results[0] == results[1]


def _bfloat16_batch_norm(lib: Any, x: np.ndarray, exact: bool = False) -> list[np.ndarray]:
    """Output and input gradient of a training batch norm of the bfloat16 values ``x`` (a
    float32 array of them), in bfloat16, or in float64 rounded to bfloat16 at the end."""
    dtype = lib.float64 if exact else lib.bfloat16
    t = lib.from_numpy(x.copy()).to(dtype).requires_grad_()
    w, b = lib.ones(x.shape[1], dtype=dtype), lib.zeros(x.shape[1], dtype=dtype)
    out = lib.nn.functional.batch_norm(t, None, None, w, b, training=True)
    g = np.random.default_rng(1).uniform(-1, 1, x.shape).astype(np.float32)
    (grad,) = lib.autograd.grad(out, t, lib.from_numpy(g).to(lib.bfloat16).to(dtype))
    return [r.detach().to(lib.bfloat16).float().numpy() for r in (out, grad)]


def test_bfloat16_batch_norm_gradient_keeps_the_exact_answer() -> None:
    """Documented difference (the sweep's batch_norm_train_bias-0 in bfloat16): PyTorch's
    bfloat16 backward kernel works from its statistics saved in bfloat16 and lands many ulps
    from the correctly rounded input gradient of data away from 0; chainrule's stays within 2
    ulps of it, as for float16."""
    x = np.random.default_rng(0).normal(10, 3, (300, 4, 2)).astype(np.float32)
    x = chainrule.from_numpy(x).to(chainrule.bfloat16).float().numpy()  # bfloat16 values
    exact = _bfloat16_batch_norm(torch, x, exact=True)
    ours, theirs = _bfloat16_batch_norm(chainrule, x), _bfloat16_batch_norm(torch, x)
    rtol, atol = 2 * 2.0**-8, 2.0**-126
    for a, b in zip(ours, exact, strict=True):
        assert not mismatches(a, b, rtol, atol).any()
    assert mismatches(theirs[1], exact[1], rtol, atol).any()  # PyTorch's gradient is not
