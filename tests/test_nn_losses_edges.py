"""Losses at the edges, against PyTorch: the deprecated ``size_average``/``reduce`` flags (every
loss, module and functional, with PyTorch's warnings), ``'elementwise_mean'``, float16 results
(dtype and values), NaN/inf inputs, ignored targets, zero weights, label smoothing at 0 and 1,
empty batches, signed zeros of gradients, and the range checks of binary cross-entropy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import torch

NAN, INF = np.nan, np.inf
X = np.random.default_rng(0).random((3, 4)).astype(np.float32)
Y = (np.random.default_rng(1).random((3, 4)) > 0.5).astype(np.float32)
IDX = np.array([1, 0, 3])

# name -> loss(lib, kwargs): each called with the same arrays in both libraries
LOSSES = {
    "BCEWithLogitsLoss": lambda lib, k: lib.nn.BCEWithLogitsLoss(**k)(lib.tensor(X),
                                                                      lib.tensor(Y)),
    "BCELoss": lambda lib, k: lib.nn.BCELoss(**k)(lib.tensor(X), lib.tensor(Y)),
    "MSELoss": lambda lib, k: lib.nn.MSELoss(**k)(lib.tensor(X), lib.tensor(Y)),
    "L1Loss": lambda lib, k: lib.nn.L1Loss(**k)(lib.tensor(X), lib.tensor(Y)),
    "SmoothL1Loss": lambda lib, k: lib.nn.SmoothL1Loss(**k)(lib.tensor(X), lib.tensor(Y)),
    "KLDivLoss": lambda lib, k: lib.nn.KLDivLoss(**k)(lib.tensor(X), lib.tensor(Y)),
    "NLLLoss": lambda lib, k: lib.nn.NLLLoss(**k)(lib.tensor(X), lib.tensor(IDX)),
    "CrossEntropyLoss": lambda lib, k: lib.nn.CrossEntropyLoss(**k)(lib.tensor(X),
                                                                    lib.tensor(IDX)),
    "binary_cross_entropy_with_logits": lambda lib, k: (
        lib.nn.functional.binary_cross_entropy_with_logits(lib.tensor(X), lib.tensor(Y), **k)),
    "binary_cross_entropy": lambda lib, k: lib.nn.functional.binary_cross_entropy(
        lib.tensor(X), lib.tensor(Y), **k),
    "mse_loss": lambda lib, k: lib.nn.functional.mse_loss(lib.tensor(X), lib.tensor(Y), **k),
    "l1_loss": lambda lib, k: lib.nn.functional.l1_loss(lib.tensor(X), lib.tensor(Y), **k),
    "smooth_l1_loss": lambda lib, k: lib.nn.functional.smooth_l1_loss(lib.tensor(X),
                                                                      lib.tensor(Y), **k),
    "kl_div": lambda lib, k: lib.nn.functional.kl_div(lib.tensor(X), lib.tensor(Y), **k),
    "nll_loss": lambda lib, k: lib.nn.functional.nll_loss(lib.tensor(X), lib.tensor(IDX), **k),
    "cross_entropy": lambda lib, k: lib.nn.functional.cross_entropy(lib.tensor(X),
                                                                    lib.tensor(IDX), **k),
}

LEGACY = [
    {"reduce": False}, {"size_average": False}, {"size_average": True, "reduce": False},
    {"size_average": False, "reduce": True}, {"reduce": True}, {"size_average": True},
    {"reduce": False, "reduction": "sum"}, {"size_average": False, "reduction": "none"},
    {"size_average": False, "reduction": "elementwise_mean"},
    {"reduce": False, "reduction": "bogus"}, {"reduction": "elementwise_mean"},
    {"reduction": "bogus"}, {"size_average": None, "reduce": None, "reduction": "sum"},
]


def _outcome(fn, lib, *args):
    """What ``fn`` gives in ``lib``: (shape, dtype, values) or (error type, message), and the
    warning messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(lib, *args)
            result = (tuple(out.shape), str(out.dtype).split(".")[-1],
                      out.detach().numpy().astype(np.float64))
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            result = (type(e).__name__, str(e), None)
    return result, [str(w.message) for w in caught if w.category is not ResourceWarning]


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("options", LEGACY, ids=lambda o: "-".join(f"{k}={v}"
                                                                  for k, v in o.items()))
def test_legacy_reduction_arguments_like_torch(name: str, options: dict) -> None:
    (ours, our_warnings) = _outcome(LOSSES[name], chainrule, options)
    (theirs, their_warnings) = _outcome(LOSSES[name], torch, options)
    assert ours[:2] == theirs[:2]
    if theirs[2] is not None:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
    assert our_warnings == their_warnings


def test_kl_div_batchmean_divides_after_the_legacy_reduction() -> None:
    for options in ({"reduce": False, "reduction": "batchmean"},
                    {"size_average": False, "reduction": "batchmean"}):
        (ours, w1), (theirs, w2) = (_outcome(LOSSES["kl_div"], lib, options)
                                    for lib in (chainrule, torch))
        assert ours[:2] == theirs[:2] and w1 == w2
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# float16: the input's dtype and PyTorch's values (sums accumulated in float32, rounded once)


def _half_case(lib, name, reduction):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((64, 10)) * 3).astype(np.float16)
    t = rng.uniform(0, 1, (64, 10)).astype(np.float16)
    p = rng.uniform(0.01, 0.99, (64, 10)).astype(np.float16)
    F = lib.nn.functional
    a = lib.from_numpy(x).requires_grad_()
    calls = {
        "mse_loss": lambda: F.mse_loss(a, lib.from_numpy(t), reduction=reduction),
        "smooth_l1_loss": lambda: F.smooth_l1_loss(a, lib.from_numpy(t), reduction=reduction),
        "smooth_l1_loss_beta": lambda: F.smooth_l1_loss(a, lib.from_numpy(t),
                                                        reduction=reduction, beta=0.7),
        "huber_loss": lambda: F.huber_loss(a, lib.from_numpy(t), reduction=reduction,
                                           delta=0.7),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(
            lib.from_numpy(p).requires_grad_(), lib.from_numpy(t), reduction=reduction),
        "kl_div": lambda: F.kl_div(a, lib.from_numpy(p), reduction=reduction),
    }
    return calls[name]()


@pytest.mark.parametrize("reduction", ("none", "mean", "sum"))
@pytest.mark.parametrize("name", ["mse_loss", "smooth_l1_loss", "smooth_l1_loss_beta",
                                  "huber_loss", "binary_cross_entropy", "kl_div"])
def test_float16_losses_keep_the_dtype_and_torch_values(name: str, reduction: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _half_case(chainrule, name, reduction)
        theirs = _half_case(torch, name, reduction)
    assert str(ours.dtype) == "chainrule.float16" and str(theirs.dtype) == "torch.float16"
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


# ----------------------------------------------------------------------------------------------
# Edge values: NaN and inf, ignored targets, zero weights, label smoothing, empty batches


XF = np.array([[1., 2., -2.], [3., 0., 1.], [0.5, -1, 2.]], np.float32)
XNAN = np.array([[1., NAN, -2.], [INF, 0., 1.], [0.5, -INF, 2.]], np.float32)
WEIGHT = np.array([1., 2., 0.5], np.float32)
SOME_IGNORED = np.array([0, -100, 2])
ALL_IGNORED = np.array([-100, -100, -100])
FOUR_D = np.random.default_rng(0).standard_normal((2, 3, 2, 2)).astype(np.float32)
FOUR_D_TARGET = np.array([[[0, -100], [2, 1]], [[-100, -100], [1, 1]]])


def _ce(**fixed):
    def loss(lib, r, x, t, *w):
        options = {**fixed, **r}
        if w:
            options["weight"] = w[0]
        return lib.nn.functional.cross_entropy(x, t, **options)
    return loss


def _plain(name, **fixed):
    """A functional loss ``name`` taking only the reduction (no label smoothing)."""
    def loss(lib, r, *tensors):
        r = {k: v for k, v in r.items() if k != "label_smoothing"}
        return getattr(lib.nn.functional, name)(*tensors, **fixed, **r)
    return loss


EMPTY = [np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)]
EDGES = {
    "ce_all_ignored": (_ce(), [XF, ALL_IGNORED]),
    "ce_all_ignored_weight": (_ce(), [XF, ALL_IGNORED, WEIGHT]),
    "ce_some_ignored_weight": (_ce(), [XF, SOME_IGNORED, WEIGHT]),
    "ce_zero_weights": (_ce(), [XF, SOME_IGNORED, np.zeros(3, np.float32)]),
    "ce_nan_inf": (_ce(), [XNAN, np.array([0, 1, 2])]),
    "ce_ignore_index_1": (_ce(ignore_index=1), [XF, np.array([0, 1, 2])]),
    "ce_unbatched_ignored": (_ce(), [XF[0], np.array(-100)]),
    "ce_empty": (_ce(), [np.zeros((0, 3), np.float32), np.zeros(0, np.int64)]),
    "ce_4d_ignored_weight": (_ce(), [FOUR_D, FOUR_D_TARGET, WEIGHT]),
    "ce_probabilities_weight": (_ce(), [XF, np.abs(XF) / np.abs(XF).sum(1, keepdims=True),
                                        WEIGHT]),
    "nll_all_ignored": (_plain("nll_loss"), [XF, ALL_IGNORED]),
    "nll_nan": (_plain("nll_loss"), [XNAN, np.array([1, 0, 1])]),
    "nll_empty": (_plain("nll_loss"), [np.zeros((0, 3), np.float32), np.zeros(0, np.int64)]),
    "mse_nan_inf": (_plain("mse_loss"), [XNAN, XF]),
    "mse_empty": (_plain("mse_loss"), EMPTY),
    "smooth_l1_nan_inf": (_plain("smooth_l1_loss", beta=0.5), [XNAN, XF]),
    "smooth_l1_empty": (_plain("smooth_l1_loss"), EMPTY),
    "huber_nan_inf": (_plain("huber_loss", delta=0.5), [XNAN, XF]),
    "bce_at_0_and_1": (_plain("binary_cross_entropy"),
                       [np.array([0., 1., 0.5, 1e-30, 1 - 1e-7], np.float32),
                        np.array([1., 0., 0.5, 0., 1.], np.float32)]),
    "bce_empty": (_plain("binary_cross_entropy"), EMPTY),
    "bce_logits_inf_nan": (_plain("binary_cross_entropy_with_logits"),
                           [np.array([INF, -INF, 0., NAN, 100], np.float32),
                            np.array([1., 0., NAN, 0.5, 0.], np.float32)]),
    "kl_inf_nan": (_plain("kl_div"), [np.array([[-INF, 0., NAN, -1]], np.float32),
                                      np.array([[0., 0., 0.5, INF]], np.float32)]),
}


def _edge_run(lib, fn, arrays, reduction, smoothing):
    tensors = [lib.from_numpy(a.copy()) for a in arrays]
    differentiable = [i for i, a in enumerate(arrays[:2]) if a.dtype.kind == "f"]
    for i in differentiable:
        tensors[i].requires_grad_()
    out = fn(lib, {"reduction": reduction, "label_smoothing": smoothing}, *tensors)
    out.backward(lib.ones_like(out))
    return [out.detach().numpy()] + [tensors[i].grad.numpy() for i in differentiable]


def _same(ours, theirs, what):
    assert ours.shape == theirs.shape, what
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=what)
    zeros = theirs == 0
    np.testing.assert_array_equal(np.signbit(ours[zeros]), np.signbit(theirs[zeros]),
                                  err_msg=f"{what}: signed zeros")


@pytest.mark.parametrize("reduction", ("mean", "sum", "none"))
@pytest.mark.parametrize("name", sorted(EDGES))
def test_loss_edges_like_torch(name: str, reduction: str) -> None:
    fn, arrays = EDGES[name]
    smoothings = (0.0, 0.3, 1.0) if name.startswith("ce_") else (0.0,)
    for smoothing in smoothings:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = _edge_run(chainrule, fn, arrays, reduction, smoothing)
            theirs = _edge_run(torch, fn, arrays, reduction, smoothing)
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _same(a, b, f"{name} {reduction} smoothing={smoothing} output {k}")


@pytest.mark.parametrize("inputs", [
    ([0.5, NAN, 2.0], [0.5, 3.0, 0.5]),    # NaN input comes first
    ([0.5, 0.5, 2.0], [0.5, 3.0, 0.5]),    # a target out of range before an input
    ([0.5, 0.5], [NAN, 0.5]),              # NaN target
    ([-0.0, 1.0], [1.0, 0.0]),             # the bounds themselves are fine
])
def test_binary_cross_entropy_range_checks_like_torch(inputs) -> None:
    x, t = (np.array(v, np.float32) for v in inputs)
    results = []
    for lib in (chainrule, torch):
        try:
            results.append(lib.nn.functional.binary_cross_entropy(
                lib.from_numpy(x), lib.from_numpy(t)).item())
        except RuntimeError as e:
            results.append(str(e))
    assert results[0] == results[1]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nll_loss_sum_is_pytorchs_cascade_at_every_length(dtype: str) -> None:
    """The cascade's fast path (nothing ignored) at lengths around each group boundary."""
    rng = np.random.default_rng(8)
    for n in [*range(1, 40), 127, 128, 129, 255, 256, 257, 4097, 70000]:
        values = rng.standard_normal((n, 1)).astype(dtype)
        target = np.zeros(n, np.int64)
        ours = chainrule.nn.functional.nll_loss(
            chainrule.from_numpy(values), chainrule.from_numpy(target), reduction="sum")
        theirs = torch.nn.functional.nll_loss(
            torch.from_numpy(values), torch.from_numpy(target), reduction="sum")
        assert ours.numpy().tobytes() == theirs.numpy().tobytes(), n
