"""Every loss module against PyTorch, with every reduction: values, ``grad_fn`` names, gradients
(of the input, and of the target where it is differentiable), warnings and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch

REDUCTIONS = ("mean", "sum", "none")


def _logits(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _classes(shape, n, seed=1, ignore=False):
    t = np.random.default_rng(seed).integers(0, n, shape).astype(np.int64)
    if ignore:
        t.reshape(-1)[::3] = -100
    return t


def _probabilities(shape, seed=2, axis=1):
    p = np.random.default_rng(seed).uniform(0.05, 1.0, shape)
    return (p / p.sum(axis=axis, keepdims=True)).astype(np.float32)


def _run(lib, make_loss, arrays, grad_target=False):
    tensors = [lib.from_numpy(a.copy()) for a in arrays]
    tensors[0].requires_grad_()
    if grad_target:
        tensors[1].requires_grad_()
    loss = make_loss(lib)(*tensors)
    loss.backward(lib.ones_like(loss))
    grads = [t.grad.numpy().copy() if t.grad is not None else None for t in tensors]
    return loss, grads


def _check(make_loss, arrays, grad_target=False, rtol=1e-5, atol=1e-6):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, ga = _run(chainrule, make_loss, arrays, grad_target)
        b, gb = _run(torch, make_loss, arrays, grad_target)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    assert a.shape == b.shape
    assert a.grad_fn.name() == b.grad_fn.name()
    for x, y in zip(ga, gb, strict=True):
        if y is None:
            assert x is None
        else:
            np.testing.assert_allclose(x, y, rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(reduction: str) -> None:
    x, y = _logits((4, 5)), _logits((4, 5), 1)
    _check(lambda lib: lib.nn.MSELoss(reduction=reduction), [x, y], grad_target=True)
    _check(lambda lib: lib.nn.L1Loss(reduction=reduction), [x, y], grad_target=True)
    _check(lambda lib: lib.nn.SmoothL1Loss(reduction=reduction, beta=0.5), [x, y],
           grad_target=True)
    _check(lambda lib: lib.nn.SmoothL1Loss(reduction=reduction, beta=0.0), [x, y])
    _check(lambda lib: lib.nn.HuberLoss(reduction=reduction, delta=0.7), [x, y],
           grad_target=True)


def test_regression_losses_broadcast_and_weight() -> None:
    x, y = _logits((3, 1)), _logits((3,), 1)
    _check(lambda lib: lib.nn.MSELoss(), [x, y])
    _check(lambda lib: lib.nn.L1Loss(reduction="sum"), [x, y])
    w = np.random.default_rng(3).uniform(0.5, 2, (3, 4)).astype(np.float32)
    x, y = _logits((3, 4)), _logits((3, 4), 1)
    for reduction in REDUCTIONS:
        _check(lambda lib, r=reduction: (lambda a, b: lib.nn.functional.mse_loss(
            a, b, reduction=r, weight=lib.from_numpy(w.copy()))), [x, y])
        _check(lambda lib, r=reduction: (lambda a, b: lib.nn.functional.l1_loss(
            a, b, reduction=r, weight=lib.from_numpy(w.copy()))), [x, y])
        _check(lambda lib, r=reduction: (lambda a, b: lib.nn.functional.huber_loss(
            a, b, reduction=r, weight=lib.from_numpy(w.copy()))), [x, y])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_class_indices(reduction: str) -> None:
    weight = np.linspace(0.5, 2.0, 5).astype(np.float32)
    cases = [
        ((6, 5), (6,), {}),
        ((6, 5), (6,), {"ignore_index": -100}),
        ((6, 5), (6,), {"weight": weight}),
        ((6, 5), (6,), {"weight": weight, "label_smoothing": 0.2}),
        ((6, 5), (6,), {"label_smoothing": 0.1}),
        ((2, 5, 3, 2), (2, 3, 2), {"weight": weight}),
        ((2, 5, 4), (2, 4), {"label_smoothing": 0.05}),
        ((2, 5, 2, 2, 2), (2, 2, 2, 2), {}),
        ((5,), (), {}),
    ]
    for x_shape, t_shape, options in cases:
        for ignore in (False, True):
            if ignore and not t_shape:
                continue
            target = _classes(t_shape, 5, ignore=ignore)

            def make(lib, o=options):
                o = {k: lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v
                     for k, v in o.items()}
                return lib.nn.CrossEntropyLoss(reduction=reduction, **o)

            _check(make, [_logits(x_shape), target])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probabilities(reduction: str) -> None:
    weight = np.linspace(0.5, 2.0, 4).astype(np.float32)
    for options in ({}, {"label_smoothing": 0.3}, {"weight": weight}):
        def make(lib, o=options):
            o = {k: lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v
                 for k, v in o.items()}
            return lib.nn.CrossEntropyLoss(reduction=reduction, **o)

        _check(make, [_logits((5, 4)), _probabilities((5, 4))], grad_target=True)
        _check(make, [_logits((2, 4, 3)), _probabilities((2, 4, 3))])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction: str) -> None:
    weight = np.linspace(0.5, 2.0, 5).astype(np.float32)
    logp = np.log(_probabilities((6, 5)))
    _check(lambda lib: lib.nn.NLLLoss(reduction=reduction), [logp, _classes((6,), 5, ignore=True)])
    _check(lambda lib: lib.nn.NLLLoss(weight=lib.from_numpy(weight.copy()), reduction=reduction,
                                      ignore_index=2), [logp, _classes((6,), 5)])
    _check(lambda lib: lib.nn.NLLLoss(reduction=reduction),
           [np.log(_probabilities((2, 5, 3, 3))), _classes((2, 3, 3), 5)])


def test_all_ignored_mean_is_nan_like_torch() -> None:
    _check(lambda lib: lib.nn.CrossEntropyLoss(),
           [_logits((3, 4)), np.full(3, -100, np.int64)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_losses(reduction: str) -> None:
    p = np.random.default_rng(0).uniform(0.02, 0.98, (4, 3)).astype(np.float32)
    t = np.random.default_rng(1).uniform(0, 1, (4, 3)).astype(np.float32)
    w = np.linspace(0.5, 1.5, 3).astype(np.float32)
    _check(lambda lib: lib.nn.BCELoss(reduction=reduction), [p, t], grad_target=True)
    _check(lambda lib: lib.nn.BCELoss(weight=lib.from_numpy(w.copy()), reduction=reduction),
           [p, t])
    x = _logits((4, 3))
    _check(lambda lib: lib.nn.BCEWithLogitsLoss(reduction=reduction), [x, t], grad_target=True)
    _check(lambda lib: lib.nn.BCEWithLogitsLoss(weight=lib.from_numpy(w.copy()),
                                                pos_weight=lib.from_numpy(w[::-1].copy()),
                                                reduction=reduction), [x, t])


def test_binary_cross_entropy_clamps_log_like_torch() -> None:
    p = np.array([0.0, 1.0, 0.5, 1e-30], np.float32)
    t = np.array([1.0, 0.0, 1.0, 1.0], np.float32)
    _check(lambda lib: lib.nn.BCELoss(reduction="none"), [p, t])


@pytest.mark.parametrize("reduction", ("batchmean", "mean", "sum", "none"))
def test_kl_div(reduction: str) -> None:
    logp = np.log(_probabilities((4, 5)))
    target = _probabilities((4, 5), seed=5)
    target[0, 0] = 0.0
    _check(lambda lib: lib.nn.KLDivLoss(reduction=reduction), [logp, target], grad_target=True)
    _check(lambda lib: lib.nn.KLDivLoss(reduction=reduction, log_target=True),
           [logp, np.log(_probabilities((4, 5), seed=6))], grad_target=True)


def test_loss_module_buffers_and_legacy_arguments() -> None:
    for lib in (chainrule, torch):
        loss = lib.nn.CrossEntropyLoss(weight=lib.ones(3))
        assert list(loss.state_dict()) == ["weight"]
        assert list(lib.nn.BCEWithLogitsLoss(pos_weight=lib.ones(2)).state_dict()) == [
            "pos_weight"]
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            legacy = lib.nn.MSELoss(size_average=False)
        assert legacy.reduction == "sum"


def _error(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, normalise_output(str(e)).split("\n")[0]
    return None


ERRORS = {
    "target_out_of_bounds": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.tensor([0, 3])),
    "negative_target": lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([0, -1])),
    "batch_size": lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0])),
    "float_target": lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([0., 1.])),
    "int32_target": lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3),
                                                           lib.tensor([0, 1], dtype=lib.int32)),
    "reduction": lambda lib: lib.nn.functional.mse_loss(lib.ones(2), lib.ones(2),
                                                        reduction="foo"),
    "mse_broadcast": lambda lib: lib.nn.functional.mse_loss(lib.ones(3, 2), lib.ones(4)),
    "bce_size": lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(3) / 2, lib.ones(4)),
    "bce_range": lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(3) * 2,
                                                                    lib.ones(3)),
    "bce_logits_size": lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.ones(3), lib.ones(4)),
    "multi_target": lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3),
                                                           lib.zeros(2, 1, dtype=lib.long)),
    "nd_target_size": lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3, 4),
                                                             lib.zeros(2, 5, dtype=lib.long)),
    "label_smoothing": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.tensor([0, 1]), label_smoothing=1.5),
    "prob_target_int": lambda lib: lib.nn.functional.cross_entropy(
        lib.ones(2, 3), lib.zeros(2, 3, dtype=lib.long)),
    "kl_reduction": lambda lib: lib.nn.functional.kl_div(lib.ones(2), lib.ones(2),
                                                         reduction="foo"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_loss_errors_match_torch(name: str) -> None:
    ours = _error(ERRORS[name], chainrule)
    theirs = _error(ERRORS[name], torch)
    assert theirs is not None
    assert ours == theirs


def test_size_mismatch_warning_like_torch() -> None:
    for lib in (chainrule, torch):
        with pytest.warns(UserWarning, match="Using a target size .* that is different to the "
                                             "input size"):
            lib.nn.functional.mse_loss(lib.ones(3, 1), lib.ones(3))
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            lib.nn.functional.kl_div(lib.ones(2), lib.ones(2))
