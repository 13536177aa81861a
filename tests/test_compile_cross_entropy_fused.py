"""chainrule.compile's fused cross-entropy backward (compiler.fused_losses): the logits'
gradient bit for bit as eager's (signs of zeros, NaN and infinities included) and as
PyTorch's within rounding, with and without the fusion applying."""

import numpy as np
import pytest
import torch

import chainrule
from chainrule.compiler import fused_losses

F = chainrule.nn.functional


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    keep = ~np.isnan(a)
    np.testing.assert_array_equal(a[keep], b[keep])
    np.testing.assert_array_equal(np.signbit(a[keep]), np.signbit(b[keep]))


def _logits(kind, dtype, n=16, c=5):
    rng = np.random.default_rng(11)
    x = rng.standard_normal((n, c)).astype(dtype)
    if kind == "large":
        x = x * np.asarray(1e4, dtype)  # (exp of the log-probabilities underflows to 0)
    elif kind == "inf":
        x[1, 2] = np.inf
        x[3, 0] = -np.inf
    elif kind == "nan":
        x[2, 1] = np.nan
    elif kind == "ties":
        x[:] = 1
    return x


def _targets(kind, n=16, c=5):
    t = np.random.default_rng(5).integers(0, c, n)
    if kind == "ignored":
        t[::3] = -100
    elif kind == "all_ignored":
        t[:] = -100
    return t


def _scaled(kind):
    return {"one": 1.0, "zero": 0.0, "negative": -2.5, "inf": float("inf"), "nan": float("nan")}[
        kind
    ]


def _loss_fn(scale, **options):
    def fn(x, t):
        return F.cross_entropy(x, t, **options) * scale

    return fn


def _run(fn, x_data, t_data):
    x = chainrule.tensor(x_data, requires_grad=True)
    loss = fn(x, chainrule.tensor(t_data))
    loss.backward()
    return loss.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("logits", ["random", "large", "inf", "nan", "ties"])
@pytest.mark.parametrize("targets", ["random", "ignored", "all_ignored"])
@pytest.mark.parametrize("scale", ["one", "zero", "negative", "inf", "nan"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_backward_bit_for_bit_as_eager(logits, targets, scale, dtype):
    x, t = _logits(logits, dtype), _targets(targets)
    fn = _loss_fn(_scaled(scale))
    compiled = chainrule.compile(fn)
    eager = _run(fn, x, t)
    ours = _run(compiled, x, t)
    assert compiled.fallback_reasons == []
    assert "call_log_softmax_nll_backward(" in compiled.code
    _same_bits(ours[0], eager[0])
    _same_bits(ours[1], eager[1])


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"ignore_index": 2},
        {"reduction": "sum"},
        {"label_smoothing": 0.1},
        {"weight": "w"},
    ],
)
def test_against_pytorch_fused_or_not(options):
    x, t = _logits("random", np.float32), _targets("random")
    w = np.linspace(0.5, 2, 5, dtype=np.float32)
    ours_options = {k: chainrule.tensor(w) if v == "w" else v for k, v in options.items()}
    theirs_options = {k: torch.tensor(w) if v == "w" else v for k, v in options.items()}
    compiled = chainrule.compile(_loss_fn(1.0, **ours_options))
    eager = _run(_loss_fn(1.0, **ours_options), x, t)
    ours = _run(compiled, x, t)
    tx = torch.tensor(x, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(tx, torch.tensor(t), **theirs_options)
    loss.backward()
    _same_bits(ours[0], eager[0])
    _same_bits(ours[1], eager[1])
    np.testing.assert_allclose(ours[0], loss.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours[1], tx.grad.numpy(), rtol=1e-5, atol=1e-7)
    fused = "call_log_softmax_nll_backward(" in compiled.code
    assert fused == (options in ({}, {"ignore_index": 2}))


def test_one_class_is_not_fused():
    x, t = np.array([[0.5], [2.0]], np.float32), np.array([0, 0])
    fn = _loss_fn(1.0)
    compiled = chainrule.compile(fn)
    ours, eager = _run(compiled, x, t), _run(fn, x, t)
    assert "call_log_softmax_nll_backward(" not in compiled.code
    _same_bits(ours[1], eager[1])


def test_logits_of_a_model_and_input_gradient():
    """The fused node inside an MLP's backward (the logits are an intermediate)."""
    chainrule.manual_seed(0)
    model = chainrule.nn.Sequential(
        chainrule.nn.Linear(6, 8), chainrule.nn.ReLU(), chainrule.nn.Linear(8, 4)
    )

    def fn(x, t):
        return F.cross_entropy(model(x), t)

    x = np.random.default_rng(2).standard_normal((10, 6)).astype(np.float32)
    t = np.random.default_rng(3).integers(0, 4, 10)
    eager = _run(fn, x, t)
    grads_eager = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    compiled = chainrule.compile(fn)
    ours = _run(compiled, x, t)
    assert "call_log_softmax_nll_backward(" in compiled.code
    _same_bits(ours[1], eager[1])
    for p, g in zip(model.parameters(), grads_eager, strict=True):
        _same_bits(p.grad.numpy(), g)


def test_arrays_function_direct():
    """The array function against the four kernels it replaces, on a zero gradient (the
    -0.0 row value) and an ignored target."""
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((6, 3)).astype(np.float32)
    log_probs = F.log_softmax(chainrule.tensor(logits), 1).numpy()
    probs = np.exp(log_probs)
    for grad in (np.float32(1), np.float32(0), np.float32(-0.0)):
        for target in (np.array([0, 1, 2, 0, 1, 2]), np.array([0, -100, 2, 0, 1, 2])):
            total = np.asarray((target != -100).sum(), np.float32)
            g = np.asarray(grad)
            fused = fused_losses._log_softmax_nll_backward_arrays(
                g, probs, log_probs, target, total, -100
            )
            picked = fused_losses.nll_backward_kernel(
                g, log_probs, target, None, "mean", -100, total
            )
            reference = picked - probs * picked.sum(1, keepdims=True)
            _same_bits(fused, reference)
