"""Random torch.nn.functional calls with unusual arguments compared with PyTorch: values, dtypes
and the gradients of every differentiable argument (or the same exception type). Families:
losses (every reduction, class weights, ignore_index, label smoothing, probabilities as
targets, pos_weight, log_target, full, eps, margins, swap), pooling (max with dilation,
ceil_mode and return_indices, avg with count_include_pad and divisor_override, lp, adaptive,
1-3 dims, batched or not, ties and non-finite values), interpolate (every mode, size or scale
factors, recompute_scale_factor, align_corners), convolutions and transposed convolutions
(stride, "same"/"valid" and numeric padding, dilation, groups, output_padding) and F.pad
(constant with negative pads, reflect, replicate, circular).

This found nearest interpolation in 1-d and 3-d with a scale factor whose output size is the
input's or twice it (2.05, 1.05 ...): PyTorch's 1-d and 3-d forward kernels read
floor(i / scale), chainrule read i or i >> 1 as PyTorch's 2-d kernel does.

Left out, PyTorch bugs: max pooling whose window can lie wholly in the padding or past the
input (a dilated kernel longer than the input) corrupts PyTorch's heap; PyTorch's backward
of that 1-d/3-d nearest interpolation still uses i and i >> 1, a gradient that is not its
forward's (chainrule's is the forward's, checked below against PyTorch's index_select), nor
is its bicubic backward when a scale factor keeps every size (1.05 on sizes up to 19): it
copies the gradient, where its forward interpolated;
antialias=True is refused by chainrule (NotImplementedError). It also found adaptive pooling
(and area interpolation) to an empty output: PyTorch's backward refuses it, chainrule returned
zero gradients.

It also found linear interpolation (linear, bilinear, trilinear) along an axis whose size a
scale factor keeps (3 * 1.05 -> 3): PyTorch copies that axis, chainrule interpolated it at
1 / 1.05.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LOSSES = {
    "cross_entropy": "cross_entropy",
    "nll": "nll_loss",
    "bce": "binary_cross_entropy",
    "bce_logits": "binary_cross_entropy_with_logits",
    "kl_div": "kl_div",
    "mse": "mse_loss",
    "l1": "l1_loss",
    "smooth_l1": "smooth_l1_loss",
    "huber": "huber_loss",
    "soft_margin": "soft_margin_loss",
    "multilabel_soft_margin": "multilabel_soft_margin_loss",
    "poisson_nll": "poisson_nll_loss",
    "gaussian_nll": "gaussian_nll_loss",
    "cosine_embedding": "cosine_embedding_loss",
    "margin_ranking": "margin_ranking_loss",
    "hinge_embedding": "hinge_embedding_loss",
    "triplet": "triplet_margin_loss",
}
POSITIONAL = ("input", "input1", "input2", "anchor", "positive", "negative", "target", "var")


class _Case:
    """One call: arrays by argument name, which of them are differentiated, the call."""

    def __init__(self, seed: int) -> None:
        self.r = np.random.default_rng(seed)
        self.arrays: dict[str, np.ndarray] = {}
        self.diff: list[str] = ["input"]
        self.kw: dict[str, Any] = {}
        self.name = ""

    def pick(self, options: list[Any]) -> Any:
        return options[int(self.r.integers(len(options)))]

    def chance(self, p: float) -> bool:
        return bool(self.r.random() < p)

    def ints(self, low: int, high: int, n: int) -> list[int]:
        return [int(v) for v in self.r.integers(low, high, n)]

    def call(self, lib: Any, tensors: dict[str, Any]) -> Any:
        f = getattr(lib.nn.functional, self.name)
        if self.name in LOSSES.values():
            positional = [tensors[k] for k in POSITIONAL if k in tensors]
            named = {k: tensors[k] for k in ("weight", "pos_weight") if k in tensors}
            return f(*positional, **named, **self.kw)
        if self.name.startswith(("conv", "conv_transpose")):
            return f(tensors["input"], tensors["weight"], tensors.get("bias"), **self.kw)
        if self.name == "pad":
            kw = dict(self.kw)
            return f(tensors["input"], kw.pop("pad"), **kw)
        return f(tensors["input"], **self.kw)


def _class_loss(c: _Case, kind: str, n: int, classes: int, extra: list[int]) -> None:
    no_batch = c.chance(0.15)
    shape = (classes,) if no_batch else (n, classes, *extra)
    x = c.r.standard_normal(shape)
    c.arrays["input"] = -np.log(np.abs(x) + 0.1) if kind == "nll" else x
    if kind == "cross_entropy" and c.chance(0.3):
        t = c.r.random(shape)
        c.arrays["target"] = t / t.sum(axis=0 if no_batch else 1, keepdims=True)
        if c.chance(0.5):
            c.diff.append("target")
    else:
        tshape = () if no_batch else (n, *extra)
        target = c.r.integers(0, classes, tshape)
        if c.chance(0.5):
            ignore = c.pick([-100, int(c.r.integers(0, classes))])
            c.kw["ignore_index"] = ignore
            target = np.where(c.r.random(tshape) < 0.4, ignore, target)
        c.arrays["target"] = np.asarray(target, dtype=np.int64)
    if c.chance(0.5):
        c.arrays["weight"] = c.r.random(classes) - (0.5 if c.chance(0.2) else 0)
        if c.chance(0.3):
            c.diff.append("weight")
    if kind == "cross_entropy" and c.chance(0.5):
        c.kw["label_smoothing"] = float(c.pick([0.0, 0.1, c.r.random(), 1.0]))


def _loss(c: _Case) -> None:
    kind = c.pick(list(LOSSES))
    c.name = LOSSES[kind]
    c.kw["reduction"] = c.pick(["mean", "sum", "none"])
    n = int(c.r.integers(0, 5)) if c.chance(0.1) else int(c.r.integers(1, 5))
    classes = int(c.r.integers(1, 5))
    extra = c.ints(1, 3, int(c.r.integers(0, 3)))
    r, a = c.r, c.arrays
    if kind in ("cross_entropy", "nll"):
        _class_loss(c, kind, n, classes, extra)
    elif kind in ("bce", "bce_logits"):
        shape = (n, *extra)
        x = r.standard_normal(shape)
        a["input"] = 1 / (1 + np.exp(-x)) if kind == "bce" else x
        if kind == "bce" and c.chance(0.2):
            a["input"] = np.where(r.random(shape) < 0.3, c.pick([0.0, 1.0]), a["input"])
        a["target"] = r.random(shape) if c.chance(0.7) else (r.random(shape) < 0.5) * 1.0
        if c.chance(0.5):
            c.diff.append("target")
        if c.chance(0.4):
            a["weight"] = r.random(shape[-1:])
        if kind == "bce_logits" and c.chance(0.4):
            a["pos_weight"] = r.random(shape[-1:]) * 3
            if c.chance(0.3):
                c.diff.append("pos_weight")
    elif kind == "kl_div":
        shape = (n, classes, *extra)
        a["input"] = np.log(r.random(shape) + 1e-3)
        c.kw["log_target"] = c.chance(0.5)
        a["target"] = (
            np.log(r.random(shape) + 1e-3)
            if c.kw["log_target"]
            else r.random(shape) * c.pick([1, 0])
        )
        c.kw["reduction"] = c.pick(["mean", "sum", "none", "batchmean"])
        c.diff = ["input", "target"]
    elif kind in ("mse", "l1", "smooth_l1", "huber", "soft_margin"):
        shape = (n, *extra)
        a["input"] = r.standard_normal(shape)
        if kind == "soft_margin":
            a["target"] = np.sign(r.standard_normal(shape))
        else:
            a["target"] = a["input"].copy() if c.chance(0.3) else r.standard_normal(shape)
            c.diff = ["input", "target"]
        if kind == "smooth_l1":
            c.kw["beta"] = float(c.pick([1.0, 0.0, r.random() * 2]))
        if kind == "huber":
            c.kw["delta"] = float(c.pick([1.0, r.random() * 2 + 0.01]))
    elif kind == "multilabel_soft_margin":
        a["input"] = r.standard_normal((n, classes))
        a["target"] = (r.random((n, classes)) < 0.5) * 1.0
        if c.chance(0.4):
            a["weight"] = r.random(classes)
    elif kind == "poisson_nll":
        shape = (n, *extra)
        c.kw.update(log_input=c.chance(0.5), full=c.chance(0.5), eps=c.pick([1e-8, 0.1]))
        a["input"] = r.standard_normal(shape) if c.kw["log_input"] else r.random(shape) + 0.1
        a["target"] = np.floor(r.random(shape) * 4)
        c.diff = ["input", "target"]
    elif kind == "gaussian_nll":
        a["input"] = r.standard_normal((n, classes))
        a["target"] = r.standard_normal((n, classes))
        a["var"] = r.random(c.pick([(n, classes), (n, 1), (n,)])) + c.pick([0.0, 0.1])
        c.kw.update(full=c.chance(0.5), eps=c.pick([1e-6, 0.5]))
        c.diff = ["input", "target", "var"]
    elif kind == "cosine_embedding":
        a["input1"] = r.standard_normal((n, classes + 1))
        a["input2"] = r.standard_normal((n, classes + 1))
        if c.chance(0.2) and n:
            a["input2"][0] = 0
        a["target"] = np.sign(r.standard_normal(n))
        c.kw["margin"] = float(c.pick([0.0, r.random() - 0.5]))
        c.diff = ["input1", "input2"]
    elif kind == "margin_ranking":
        a["input1"], a["input2"] = r.standard_normal(n), r.standard_normal(n)
        a["target"] = np.sign(r.standard_normal(n))
        c.kw["margin"] = float(c.pick([0.0, r.random()]))
        c.diff = ["input1", "input2"]
    elif kind == "hinge_embedding":
        a["input"] = r.standard_normal((n, classes))
        a["target"] = np.sign(r.standard_normal((n, classes)))
        c.kw["margin"] = float(c.pick([1.0, r.random() * 2]))
    else:
        for k in ("anchor", "positive", "negative"):
            a[k] = r.standard_normal((n, classes + 1))
        c.kw.update(
            margin=float(c.pick([1.0, r.random() * 2])),
            p=float(c.pick([2.0, 1.0, 3.0])),
            swap=c.chance(0.5),
            eps=float(c.pick([1e-6, 0.1])),
        )
        c.diff = ["anchor", "positive", "negative"]


def _pool(c: _Case) -> None:
    d = int(c.r.integers(1, 4))
    kind = c.pick(["max", "avg", "lp", "adaptive_max", "adaptive_avg"])
    size = c.ints(1, 8, d)
    shape = ((int(c.r.integers(1, 3)),) if c.chance(0.8) else ()) + (int(c.r.integers(1, 3)), *size)
    x = c.r.standard_normal(shape)
    if c.chance(0.3):
        x = np.round(x)  # ties
    if c.chance(0.1):
        x.ravel()[int(c.r.integers(x.size))] = c.pick([np.inf, -np.inf, np.nan])
    k = c.ints(1, 4, d)
    stride = c.ints(1, 4, d) if c.chance(0.7) else None
    pad = [int(c.r.integers(0, kk // 2 + 1)) for kk in k]
    if kind == "max":
        dilation = c.ints(1, 3, d)
        for i in range(d):  # PyTorch's heap is corrupted by windows lying past the input
            if (k[i] - 1) * dilation[i] + 1 > size[i]:
                k[i], dilation[i], pad[i] = 1, 1, 0
        c.kw = dict(
            kernel_size=k,
            stride=stride,
            padding=pad,
            dilation=dilation,
            ceil_mode=c.chance(0.5),
            return_indices=c.chance(0.5),
        )
        c.name = f"max_pool{d}d"
    elif kind == "avg":
        c.kw = dict(
            kernel_size=k,
            stride=stride,
            padding=pad,
            ceil_mode=c.chance(0.5),
            count_include_pad=c.chance(0.5),
        )
        if d > 1 and c.chance(0.4):
            c.kw["divisor_override"] = int(c.r.integers(1, 5))
        c.name = f"avg_pool{d}d"
    elif kind == "lp":
        c.kw = dict(
            norm_type=float(c.pick([1.0, 2.0, 3.0, 1.5])),
            kernel_size=k,
            stride=stride,
            ceil_mode=c.chance(0.5),
        )
        x = np.abs(x) + 0.1 if c.chance(0.5) else x
        c.name = f"lp_pool{d}d"
    elif kind == "adaptive_max":
        c.kw = dict(output_size=c.ints(1, 6, d), return_indices=c.chance(0.5))
        c.name = f"adaptive_max_pool{d}d"
    else:
        c.kw = dict(output_size=c.ints(1, 6, d))
        c.name = f"adaptive_avg_pool{d}d"
    if d == 1:
        c.kw = {key: (v[0] if isinstance(v, list) else v) for key, v in c.kw.items()}
    c.arrays["input"] = x


def _interpolate(c: _Case) -> None:
    d = int(c.r.integers(1, 4))
    linear = {1: "linear", 2: "bilinear", 3: "trilinear"}[d]
    mode = c.pick(["nearest", "nearest-exact", linear, "area"] + (["bicubic"] if d == 2 else []))
    x = c.r.standard_normal((int(c.r.integers(1, 3)), int(c.r.integers(1, 3)), *c.ints(1, 7, d)))
    c.kw = {"mode": mode}
    if c.chance(0.5):
        c.kw["size"] = c.ints(1, 9, d) if c.chance(0.7) else int(c.r.integers(1, 9))
    else:
        factors = [
            float(c.pick([0.5, 1.5, 2.0, 0.3, 1.7, 3.0, 1.05, 2.05, c.r.uniform(0.2, 3)]))
            for _ in range(d)
        ]
        c.kw["scale_factor"] = factors if c.chance(0.6) else factors[0]
        if c.chance(0.5):
            c.kw["recompute_scale_factor"] = c.chance(0.5)
    if mode in ("linear", "bilinear", "bicubic", "trilinear") and c.chance(0.6):
        c.kw["align_corners"] = c.chance(0.5)
    c.name = "interpolate"
    c.arrays["input"] = x


def _conv(c: _Case) -> None:
    d = int(c.r.integers(1, 4))
    groups = int(c.pick([1, 1, 2, 3]))
    cin, cout = groups * int(c.r.integers(1, 3)), groups * int(c.r.integers(1, 3))
    size, k = c.ints(2, 7, d), c.ints(1, 4, d)
    stride, dilation = c.ints(1, 4, d), c.ints(1, 3, d)
    batch = (int(c.r.integers(1, 3)),) if c.chance(0.85) else ()
    c.arrays["input"] = c.r.standard_normal((*batch, cin, *size))
    if c.chance(0.4):
        out_pad = [int(c.r.integers(0, max(s, dl))) for s, dl in zip(stride, dilation, strict=True)]
        pad = c.ints(0, 3, d)
        for i in range(d):  # a negative output size: PyTorch's oneDNN message differs
            if (size[i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (k[i] - 1) + out_pad[i] < 0:
                pad[i] = 0
        c.arrays["weight"] = c.r.standard_normal((cin, cout // groups, *k))
        c.kw = dict(
            stride=stride, padding=pad, output_padding=out_pad, groups=groups, dilation=dilation
        )
        c.name = f"conv_transpose{d}d"
    else:
        padding = c.pick(["same", "valid", c.ints(0, 3, d), int(c.r.integers(0, 3))])
        c.arrays["weight"] = c.r.standard_normal((cout, cin // groups, *k))
        c.kw = dict(
            stride=[1] * d if padding == "same" else stride,
            padding=padding,
            dilation=dilation,
            groups=groups,
        )
        c.name = f"conv{d}d"
    if c.chance(0.6):
        c.arrays["bias"] = c.r.standard_normal(cout)
    c.diff = list(c.arrays)


def _pad(c: _Case) -> None:
    d = int(c.r.integers(1, 4))
    mode = c.pick(["constant", "reflect", "replicate", "circular"])
    size = c.ints(1, 6, d)
    c.arrays["input"] = c.r.standard_normal(((1,) if c.chance(0.7) else ()) + (2, *size))
    pads = []
    for n in reversed(size):
        high = {"reflect": n - 1, "circular": n}.get(mode, 3)
        low = -min(1, n - 1) if mode == "constant" else 0
        pads += c.ints(low, high + 1, 2)
    c.kw = {"pad": pads, "mode": mode}
    if mode == "constant":
        c.kw["value"] = float(c.pick([0.0, 1.5]))
    c.name = "pad"


FAMILIES = {"loss": _loss, "pool": _pool, "interpolate": _interpolate, "conv": _conv, "pad": _pad}


def _outcome(lib: Any, case: _Case, dtype: str, seed: int) -> Any:
    tensors = {}
    for key, a in case.arrays.items():
        t = lib.tensor(a.astype(dtype) if a.dtype.kind == "f" else a)
        tensors[key] = t.requires_grad_(True) if key in case.diff else t
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = case.call(lib, tensors)
            outs = out if isinstance(out, tuple) else (out,)
            grads: list[Any] = []
            if outs[0].requires_grad:
                cot = np.random.default_rng(seed).standard_normal(tuple(outs[0].shape))
                inputs = [tensors[k] for k in case.diff]
                got = lib.autograd.grad(
                    outs[0], inputs, lib.tensor(cot.astype(dtype)), allow_unused=True
                )
                grads = [None if g is None else g.numpy() for g in got]
    except Exception as error:  # noqa: BLE001 - the exception's type is compared
        return type(error).__name__
    return [o.detach().numpy() for o in outs], [str(o.dtype).split(".")[-1] for o in outs], grads


def _pytorch_backward_wrong(case: _Case) -> bool:
    """PyTorch's backward is not its forward's (gradcheck fails in PyTorch; see the module's
    docstring): nearest in 1-d/3-d with a scale factor, bicubic with a scale factor keeping
    every size."""
    kw = case.kw
    if case.name != "interpolate" or "scale_factor" not in kw or kw.get("recompute_scale_factor"):
        return False
    spatial = case.arrays["input"].shape[2:]
    if kw["mode"] == "nearest":
        return len(spatial) in (1, 3)
    factors = kw["scale_factor"]
    factors = factors if isinstance(factors, list) else [factors] * len(spatial)
    kept = all(math.floor(n * f) == n for n, f in zip(spatial, factors, strict=True))
    return kw["mode"] == "bicubic" and kept and not kw.get("align_corners")


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("block", range(2))
def test_random_functional_calls(family: str, block: int) -> None:
    for seed in range(block * 150, block * 150 + 150):
        case = _Case(seed)
        FAMILIES[family](case)
        dtype = case.pick(["float32", "float64"])
        expected = _outcome(torch, case, dtype, seed)
        got = _outcome(chainrule, case, dtype, seed)
        where = (
            f"seed {seed}: {dtype} {case.name} {case.kw} {[a.shape for a in case.arrays.values()]}"
        )
        if isinstance(expected, str) or isinstance(got, str):
            assert got == expected, where
            continue
        tol = 1e-4 if dtype == "float32" else 1e-8  # ill-conditioned cases (a zero vector)
        assert got[1] == expected[1], where
        for e, g in zip(expected[0], got[0], strict=True):
            assert e.shape == g.shape, where
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=where)
        if _pytorch_backward_wrong(case):
            continue
        assert len(got[2]) == len(expected[2]), where
        for e, g in zip(expected[2], got[2], strict=True):
            assert (e is None) == (g is None), where
            if e is not None:
                np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"{where} grad")


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize(
    ("length", "factor"), [(3, 2.05), (5, 2.05), (3, 1.05), (4, 2.16295), (4, 1.1)]
)
def test_nearest_scale_factor_near_1_and_2(rank: int, length: int, factor: float) -> None:
    """Values as PyTorch's; the gradient is its forward's (PyTorch's own 1-d/3-d backward uses
    other indices, compared here with the gradient of PyTorch's values through index_select)."""
    shape = (2, 3) + (2,) * (rank - 1) + (length,)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    factors = [1.0] * (rank - 1) + [factor]
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.nn.functional.interpolate(tx, scale_factor=factors, mode="nearest")
    cx = chainrule.tensor(x, requires_grad=True)
    cy = chainrule.nn.functional.interpolate(cx, scale_factor=factors, mode="nearest")
    np.testing.assert_array_equal(cy.detach().numpy(), ty.detach().numpy())
    # which input element PyTorch's forward read for each output element: x holds distinct values
    out = ty.shape[-1]
    read = [
        int(np.nonzero(x[(0, 0) + (0,) * (rank - 1)] == v)[0][0])
        for v in ty.detach().numpy()[(0, 0) + (0,) * (rank - 1)]
    ]
    cot = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
    rx = torch.tensor(x, requires_grad=True)
    ry = rx.index_select(1 + rank, torch.tensor(read))  # the other axes keep their size
    assert out == len(read)
    ry.backward(torch.tensor(cot))
    cy.backward(chainrule.tensor(cot))
    np.testing.assert_allclose(cx.grad.numpy(), rx.grad.numpy(), rtol=1e-6, atol=1e-6)
    if rank == 2:  # PyTorch's 2-d backward is its forward's
        ty.backward(torch.tensor(cot))
        np.testing.assert_allclose(cx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "shape", "size"),
    [
        ("adaptive_avg_pool1d", (1, 2, 3), 0),
        ("adaptive_avg_pool2d", (2, 3, 3), (0, 2)),
        ("adaptive_avg_pool2d", (1, 2, 3, 3), (2, 0)),
        ("adaptive_avg_pool3d", (2, 3, 3, 3), (2, 0, 2)),
        ("adaptive_max_pool1d", (1, 2, 3), 0),
        ("adaptive_max_pool2d", (2, 3, 3), (2, 0)),
        ("adaptive_max_pool3d", (1, 2, 3, 3, 3), (0, 1, 2)),
        ("adaptive_avg_pool2d", (0, 2, 3, 3), (1, 2)),  # an empty batch is accepted
    ],
)
def test_adaptive_pooling_backward_of_an_empty_output(name: str, shape: tuple, size: Any) -> None:
    outcomes = []
    for lib in (torch, chainrule):
        x = lib.ones(shape, requires_grad=True)
        y = getattr(lib.nn.functional, name)(x, size)
        try:
            y.sum().backward()
            outcomes.append(("ok", tuple(x.grad.shape)))
        except RuntimeError as error:
            outcomes.append(("RuntimeError", str(error)))
    assert outcomes[1] == outcomes[0]
