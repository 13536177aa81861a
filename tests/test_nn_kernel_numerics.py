"""Layer and loss kernels computed in PyTorch's order of operations, bit for bit.

The op sweeps allow a few ulps; these compare exactly where PyTorch's kernel has a defined
order that a plain NumPy reduction would not follow (float16 sums rounded at every step, ...).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .sweep_tools import PYTORCH_OWN_HALF_CONVOLUTION
from .test_numerics_harness import mismatches


def _both(fn, *arrays):
    ours = fn(chainrule, *[chainrule.from_numpy(a.copy()) for a in arrays])
    theirs = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays])
    return ours.detach().numpy(), theirs.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", [(300, 3), (5, 3, 7, 9), (4, 3, 50)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_nll_loss_sums_as_pytorchs_cascade(dtype, shape, weighted, reduction) -> None:
    """PyTorch's nll_loss kernels sum in the input's dtype with a cascade of partial sums (an
    ignored target skips its step): float16 results differ from a float32-accumulated sum."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 40).astype(dtype)
    target = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    target[rng.random(target.shape) < 0.2] = 1  # ignored
    w = rng.uniform(0.2, 3.0, shape[1]).astype(dtype)

    def run(lib, x, target, w):
        return lib.nn.functional.nll_loss(x, target, weight=w if weighted else None,
                                          ignore_index=1, reduction=reduction)

    ours, theirs = _both(run, x, target, w)
    assert ours.dtype == theirs.dtype
    assert ours.tobytes() == theirs.tobytes(), (ours, theirs)


def _layer_norm_float16(lib, arrays, threads=None, dtype=None):
    x, w, b, g = (lib.from_numpy(a.astype(dtype or a.dtype)) for a in arrays)
    xs = [t.requires_grad_() for t in (x, w, b)]
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        out = lib.nn.functional.layer_norm(xs[0], (x.shape[-1],), xs[1], xs[2])
        node = out.grad_fn
        saved = [node._saved_result1.numpy(), node._saved_result2.numpy()]
        grads = lib.autograd.grad(out, xs, g)
    finally:
        torch.set_num_threads(previous)
    return [out.detach().numpy(), *saved, *(t.numpy() for t in grads)]


def _float16_layer_norm_inputs():
    rng = np.random.default_rng(5)
    x = rng.normal(100, 3, (6, 40)).astype(np.float16)
    w = rng.uniform(0.5, 2, 40).astype(np.float16)
    b = rng.uniform(-1, 1, 40).astype(np.float16)
    g = rng.uniform(-1, 1, (6, 40)).astype(np.float16)
    return x, w, b, g


def test_layer_norm_float16_keeps_the_exact_gradient() -> None:
    """Documented difference: PyTorch's float16 layer norm normalises with float32 statistics
    but saves them rounded to float16, and its backward kernel reads those: for rows far from
    0 its input gradient is many ulps off the derivative of what it computed. chainrule saves
    the same float16 statistics and gives the same output (within an ulp), but differentiates
    with the float32 ones: within 2 ulps of PyTorch's float64 gradient (PyTorch's own is
    not)."""
    arrays = _float16_layer_norm_inputs()
    ours = _layer_norm_float16(chainrule, arrays)
    theirs = _layer_norm_float16(torch, arrays)
    for i, (a, b) in enumerate(zip(ours[:3], theirs[:3], strict=True)):
        assert a.dtype == b.dtype == np.float16
        # the saved statistics to the bit, the output within an ulp (PyTorch's float32 moments
        # come from its vectorised Welford recurrence, ours from two passes)
        np.testing.assert_array_max_ulp(a, b, maxulp=0 if i else 1)
    exact = _layer_norm_float16(torch, arrays, dtype=np.float64)
    rtol, atol = 2 * float(np.finfo(np.float16).eps), float(np.finfo(np.float16).tiny)
    for a, b in zip(ours[3:], exact[3:], strict=True):
        assert not mismatches(a, b.astype(np.float16), rtol, atol).any()
    assert mismatches(theirs[3], exact[3].astype(np.float16), rtol, atol).any()


def test_layer_norm_float16_weight_gradients_are_rounded_once() -> None:
    """Documented difference: PyTorch's CPU kernel sums the float16 weight and bias gradients
    in one float16 buffer per thread (rounding at every row), then adds the buffers, so its
    answer depends on its thread count. chainrule sums in float32 and rounds once: the bias
    gradient is then the correctly rounded sum."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((6, 40)).astype(np.float16) * 3 + 7] + list(
        _float16_layer_norm_inputs()[1:])
    one_thread = _layer_norm_float16(torch, arrays, threads=1)
    two_threads = _layer_norm_float16(torch, arrays, threads=2)
    assert not np.array_equal(one_thread[5], two_threads[5])  # PyTorch disagrees with itself
    ours = _layer_norm_float16(chainrule, arrays)
    g = arrays[3]
    np.testing.assert_array_equal(ours[5], g.astype(np.float64).sum(0).astype(np.float16))
    exact = _layer_norm_float16(torch, arrays, dtype=np.float64)
    rtol, atol = 2 * float(np.finfo(np.float16).eps), float(np.finfo(np.float16).tiny)
    assert not mismatches(ours[4], exact[4].astype(np.float16), rtol, atol).any()
    for theirs in (one_thread, two_threads):  # within a few ulps of either of PyTorch's
        for k in (4, 5):
            scale = np.spacing(np.abs(theirs[k]).max()).astype(np.float64)
            assert np.abs(ours[k].astype(np.float64) - theirs[k]).max() <= 4 * scale


POOLS = {
    "max_pool2d_overlap": lambda f, x: f.max_pool2d(x, 3, stride=1, padding=1),
    "max_pool3d_overlap": lambda f, x: f.max_pool3d(x.view(2, 3, 3, 7, 3), 2, stride=1),
    "avg_pool2d_pad_ceil": lambda f, x: f.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    "avg_pool2d_overlap": lambda f, x: f.avg_pool2d(x, (3, 2), stride=1),
    "adaptive_avg_pool2d": lambda f, x: f.adaptive_avg_pool2d(x, (3, 4)),
    "adaptive_avg_pool3d": lambda f, x: f.adaptive_avg_pool3d(x.view(2, 3, 3, 7, 3),
                                                              (2, 3, 2)),
    "adaptive_max_pool2d": lambda f, x: f.adaptive_max_pool2d(x, (4, 3)),
}


@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_pooling_sums_in_pytorchs_order(name, dtype) -> None:
    """Pooling forwards sum each window tap after tap, backwards add each output's share into
    the input gradient output after output, in the gradient's dtype (float16 rounding at every
    addition): values and gradients match PyTorch to the bit."""
    rng = np.random.default_rng(7)
    x = rng.permutation(2 * 3 * 7 * 9).reshape(2, 3, 7, 9).astype(dtype) * dtype(0.01)
    results = []
    for lib in (chainrule, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out = POOLS[name](lib.nn.functional, t)
        g = lib.from_numpy(rng.uniform(-1, 1, tuple(out.shape)).astype(dtype))
        rng = np.random.default_rng(7)  # the same cotangent for both
        rng.permutation(2 * 3 * 7 * 9)
        (grad,) = lib.autograd.grad(out, t, g)
        results.append((out.detach().numpy(), grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


CONVS = {
    "conv2d": lambda f, x, w, b: f.conv2d(x, w, b, padding=1),
    "conv2d_stride_groups": lambda f, x, w, b: f.conv2d(x, w[:, :2], b, stride=2, groups=2)
    if x.shape[1] == 4 else f.conv2d(x, w, b),
    "conv_transpose2d": lambda f, x, w, b: f.conv_transpose2d(x, w.transpose(0, 1), b[:4],
                                                              stride=2, padding=1,
                                                              output_padding=1),
}


@pytest.mark.parametrize("name", sorted(CONVS))
def test_float16_convolutions_round_as_pytorch(name) -> None:
    """PyTorch's float16 convolutions on the CPU: the forward accumulates in float32 and rounds
    once (bias included); the input gradient (and a transposed convolution's forward) is a
    float32-accumulated product rounded to float16, then added back window offset after window
    offset in float16; the weight gradient adds each sample's float32 product into a float16
    total. Values and gradients match to the bit. (PyTorch's own kernel: on CPUs with
    AVX512-FP16 or AMX PyTorch hands float16 convolutions to oneDNN, which accumulates in
    another order, so the comparison turns oneDNN off: ``PYTORCH_OWN_HALF_CONVOLUTION``.)"""
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (3, 4, 6, 5)).astype(np.float16)
    w = rng.uniform(-1, 1, (4, 4, 3, 3)).astype(np.float16)
    b = rng.uniform(-1, 1, (4,)).astype(np.float16)
    results = []
    for lib in (chainrule, torch):
        with PYTORCH_OWN_HALF_CONVOLUTION():
            ts = [lib.from_numpy(a.copy()).requires_grad_() for a in (x, w, b)]
            out = CONVS[name](lib.nn.functional, *ts)
            g = lib.from_numpy(np.random.default_rng(3).uniform(-1, 1, tuple(out.shape)).astype(
                np.float16))
            grads = lib.autograd.grad(out, ts[:2], g)
            results.append([out.detach().numpy()] + [t.numpy() for t in grads])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_conv_transpose2d_float32_special_values_follow_pytorchs_float64() -> None:
    """Documented difference (the reason ``conv_transpose2d-0-float32`` of the special-value
    sweep is compared with PyTorch's float64): with infinities and zeros among the inputs,
    PyTorch's float32 gradients of a transposed convolution have NaN at other places than its
    float64 ones on the same values (its float32 kernel skips some ``0 * inf`` products), so
    PyTorch disagrees with itself; chainrule computes every product in both dtypes and matches
    PyTorch's float64 results."""
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 2.5, 0.5])
    x = rng.choice(special, (2, 3, 3, 3))
    w = rng.choice(special, (3, 2, 3, 3))
    nan_masks = {}
    for lib, dtype in ((torch, "float32"), (torch, "float64"), (chainrule, "float32")):
        xs = [lib.from_numpy(a.astype(dtype)).requires_grad_() for a in (x, w)]
        out = lib.nn.functional.conv_transpose2d(xs[0], xs[1], stride=2, padding=1,
                                                 output_padding=1)
        cotangent = np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)).astype(dtype)
        grads = lib.autograd.grad(out, xs, lib.from_numpy(cotangent))
        nan_masks[(lib.__name__, dtype)] = [np.isnan(g.numpy()) for g in grads]
    torch32, torch64 = nan_masks[("torch", "float32")], nan_masks[("torch", "float64")]
    assert any(not np.array_equal(a, b) for a, b in zip(torch32, torch64, strict=True))
    for ours, theirs in zip(nan_masks[("chainrule", "float32")], torch64, strict=True):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(("loss", "dtype", "reduction"), [
    (loss, dtype, reduction)
    for loss in ("smooth_l1_loss", "huber_loss", "mse_loss")
    for dtype in (np.float16, np.float32, np.float64)
    for reduction in ("mean", "sum", "none")
    # (PyTorch's float16 huber kernel with a gradient per element rounds in an order not
    # reproduced: an ulp off at some elements)
    if not (loss == "huber_loss" and dtype == np.float16 and reduction == "none")
])
def test_regression_loss_gradients_round_as_pytorch(loss, dtype, reduction) -> None:
    """PyTorch's backward kernels for these losses, operation for operation (smooth L1 in
    float16: float32 arithmetic rounded once, ``norm * x * grad / beta``). 64 elements: whole
    vectors on any machine (PyTorch's scalar loop for the last elements of a row multiplies
    in another order, so a few ulps there would depend on the vector width)."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((8, 8)) * 2).astype(dtype)
    y = (rng.standard_normal((8, 8)) * 2).astype(dtype)
    g = rng.uniform(-1, 1, (8, 8) if reduction == "none" else ()).astype(dtype)
    kwargs = {"smooth_l1_loss": {"beta": 0.7}, "huber_loss": {"delta": 0.8}}.get(loss, {})
    results = []
    for lib in (chainrule, torch):
        a, b = (lib.from_numpy(v.copy()).requires_grad_() for v in (x, y))
        out = getattr(lib.nn.functional, loss)(a, b, reduction=reduction, **kwargs)
        results.append([t.numpy() for t in lib.autograd.grad(out, (a, b),
                                                             lib.from_numpy(g.copy()))])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize(("shape", "dim"), [
    ((50, 37), 1), ((4, 5, 33), 2), ((1000,), 0), ((50, 37), 0), ((4, 33, 5), 1),
    ((3, 4), -1),
])
def test_float16_log_softmax_rounds_as_pytorch(shape, dim) -> None:
    """PyTorch's last-dimension log_softmax kernel keeps the row's sum of exponentials and its
    log in half precision (other dimensions compute in float32 and round once): bit-exact values
    and gradients in both cases (a float32-throughout forward was an ulp off at a tenth of the
    elements, which cross-entropy with label smoothing amplified to 9 ulps)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 3).astype(np.float16)
    g = rng.standard_normal(shape).astype(np.float16)
    results = []
    for lib in (chainrule, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out = lib.log_softmax(t, dim)
        (grad,) = lib.autograd.grad(out, t, lib.from_numpy(g.copy()))
        results.append((out.detach().numpy(), grad.numpy()))
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_array_equal(ours, theirs)
