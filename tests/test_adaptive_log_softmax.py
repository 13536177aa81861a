"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch's, with PyTorch's parameters loaded: the
named-tuple output and loss, gradients in the input and every parameter, ``log_prob``,
``predict`` (shortlist only, clusters only, mixed), batched and unbatched input, a batch of
one, the structure (repr, state_dict) and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _pair(**kw):
    """The same module in both libraries (PyTorch's initial parameters copied)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (zero-sized tail layers: "Initializing zero-element")
        theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(**kw)
        ours = chainrule.nn.AdaptiveLogSoftmaxWithLoss(**kw)
    ours.load_state_dict({k: chainrule.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(a, b, tol: float = 1e-6) -> None:
    x = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    y = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert x.shape == y.shape and x.dtype == y.dtype
    np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


_CONFIGS = [
    {"in_features": 8, "n_classes": 12, "cutoffs": [4, 8]},
    {"in_features": 16, "n_classes": 20, "cutoffs": [3], "div_value": 2.0, "head_bias": True},
    {"in_features": 10, "n_classes": 30, "cutoffs": [5, 10, 20], "div_value": 1.5},
]


@pytest.mark.parametrize("config", range(len(_CONFIGS)))
def test_forward_gradients_log_prob_and_predict(config: int) -> None:
    kw = _CONFIGS[config]
    ours, theirs = _pair(**kw)
    rng = np.random.default_rng(config)
    x = rng.standard_normal((9, kw["in_features"])).astype(np.float32)
    target = rng.integers(0, kw["n_classes"], 9)
    results = []
    for lib, module in ((chainrule, ours), (torch, theirs)):
        xi = lib.tensor(x, requires_grad=True)
        out = module(xi, lib.tensor(target))
        grads = lib.autograd.grad(out.loss, [xi, *module.parameters()])
        results.append(
            (
                out,
                grads,
                module.log_prob(lib.tensor(x)),
                module.predict(lib.tensor(x)),
                type(out).__name__,
                out._fields,
                type(out.output.grad_fn).__name__,
                type(out.loss.grad_fn).__name__,
            )
        )
    (o, g, lp, pr, *names), (to, tg, tlp, tpr, *tnames) = results
    _close(o.output, to.output)
    _close(o.loss, to.loss)
    for a, b in zip(g, tg, strict=True):
        _close(a, b)
    _close(lp, tlp)
    _close(pr, tpr)
    assert names == tnames


def test_predict_paths() -> None:
    ours, theirs = _pair(in_features=4, n_classes=10, cutoffs=[3, 6], head_bias=True)
    for bias in ([9, 9, 9, -9, -9], [-9, -9, -9, 9, 9], [0, 0, 0, 0, 0]):
        # (the head's bias decides whether rows go to the shortlist, the clusters, or both)
        for module, lib in ((ours, chainrule), (theirs, torch)):
            with lib.no_grad():
                module.head.bias.copy_(lib.tensor(bias, dtype=lib.float32))
        x = np.random.default_rng(5).standard_normal((7, 4)).astype(np.float32) * 3
        _close(ours.predict(chainrule.tensor(x)), theirs.predict(torch.tensor(x)))


def test_unbatched_and_single_row() -> None:
    ours, theirs = _pair(in_features=6, n_classes=9, cutoffs=[2, 5], div_value=2.0)
    x = np.random.default_rng(6).standard_normal((1, 6))
    for target in (0, 3, 8):
        for inputs, targets in ((x[0], np.array(target)), (x, np.array([target]))):
            results = []
            for lib, module in ((chainrule, ours), (torch, theirs)):
                xi = lib.tensor(inputs, dtype=lib.float32, requires_grad=True)
                out = module(xi, lib.tensor(targets))
                (grad,) = lib.autograd.grad(out.loss, xi)
                results.append((out.output, out.loss, grad))
            for a, b in zip(*results, strict=True):
                _close(a, b)


def test_structure_double_precision_and_reset() -> None:
    kw = {"in_features": 8, "n_classes": 12, "cutoffs": [4, 8], "dtype": None}
    ours, theirs = _pair(**kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name in (
        "in_features",
        "n_classes",
        "cutoffs",
        "div_value",
        "head_bias",
        "shortlist_size",
        "n_clusters",
        "head_size",
    ):
        assert getattr(ours, name) == getattr(theirs, name), name
    double = chainrule.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [4], dtype=chainrule.float64)
    assert double.head.weight.dtype == chainrule.float64
    out = double(chainrule.randn(3, 8, dtype=chainrule.float64), chainrule.tensor([0, 5, 11]))
    assert out.output.dtype == chainrule.float64
    before = ours.head.weight.detach().clone()
    ours.reset_parameters()
    assert not chainrule.equal(before, ours.head.weight.detach())


def _error(lib, call) -> tuple[type, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            call(lib)
    # (sizes print as chainrule.Size, as everywhere in chainrule)
    return info.type, str(info.value).replace("chainrule.Size", "torch.Size")


def _module(lib):
    lib.manual_seed(0)
    return lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 6])


_BAD_CALLS = {
    "no_cutoffs": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
    "unsorted": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
    "repeated": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 3]),
    "zero": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [0, 3]),
    "too_large": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10]),
    "not_integer": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2.5]),
    "batch": lambda lib: _module(lib)(lib.zeros(3, 4), lib.tensor([1, 2])),
    "input_dims": lambda lib: _module(lib)(lib.zeros(2, 1, 4), lib.tensor([1, 2])),
    "unbatched_input_dims": lambda lib: _module(lib)(lib.zeros(2, 4), lib.tensor(1)),
    "target_dims": lambda lib: _module(lib)(lib.zeros(2, 4), lib.tensor([[1, 2]])),
    "target_range": lambda lib: _module(lib)(lib.zeros(3, 4), lib.tensor([1, 10, -1])),
}


@pytest.mark.parametrize("case", sorted(_BAD_CALLS))
def test_errors_as_pytorchs(case: str) -> None:
    assert _error(chainrule, _BAD_CALLS[case]) == _error(torch, _BAD_CALLS[case])
