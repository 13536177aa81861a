"""The margin and likelihood losses against PyTorch (margin ranking, hinge embedding, cosine
embedding, soft margin, multi-label soft margin, triplet margin with and without a distance
function, Poisson and Gaussian NLL): values, gradients of every input that PyTorch
differentiates, the whole graph (node by node) for each reduction, errors, warnings and the
modules' reprs and options."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _graph(t: Any) -> list[str]:
    names, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().split("::")[-1])
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


_RNG = np.random.default_rng(0)
X, Y, Z = (_RNG.standard_normal((3, 4)) for _ in range(3))
T = np.array([1.0, -1.0, 1.0])
S = np.sign(_RNG.standard_normal((3, 4)))


def _f(lib: Any) -> Any:
    return lib.nn.functional


CASES: dict[str, tuple[Any, list[np.ndarray], list[bool]]] = {
    "margin_ranking": (
        lambda lib, a, b, t, r: _f(lib).margin_ranking_loss(a, b, t, margin=0.1, reduction=r),
        [X[0], Y[0], np.array([1.0, -1, 1, -1])],
        [True, True, False],
    ),
    "hinge_embedding": (
        lambda lib, a, t, r: _f(lib).hinge_embedding_loss(a, t, margin=0.5, reduction=r),
        [X, S],
        [True, False],
    ),
    "soft_margin": (
        lambda lib, a, t, r: _f(lib).soft_margin_loss(a, t, reduction=r),
        [X, S],
        [True, False],
    ),
    "cosine_embedding": (
        lambda lib, a, b, t, r: _f(lib).cosine_embedding_loss(a, b, t, margin=0.2, reduction=r),
        [X, Y, T],
        [True, True, False],
    ),
    "cosine_embedding_1d": (
        lambda lib, a, b, t, r: _f(lib).cosine_embedding_loss(a, b, t, reduction=r),
        [X[0], Y[0], np.array(-1.0)],
        [True, True, False],
    ),
    "multilabel_soft_margin": (
        lambda lib, a, t, r: _f(lib).multilabel_soft_margin_loss(a, t, reduction=r),
        [X, (Y > 0) * 1.0],
        [True, False],
    ),
    "multilabel_soft_margin_weight": (
        lambda lib, a, t, w, r: _f(lib).multilabel_soft_margin_loss(a, t, w, reduction=r),
        [X, (Y > 0) * 1.0, np.arange(4.0)],
        [True, False, False],
    ),
    "triplet": (
        lambda lib, a, p, n, r: _f(lib).triplet_margin_loss(a, p, n, reduction=r),
        [X, Y, Z],
        [True, True, True],
    ),
    "triplet_swap_p1": (
        lambda lib, a, p, n, r: _f(lib).triplet_margin_loss(a, p, n, p=1, swap=True, reduction=r),
        [X, Y, Z],
        [True, True, True],
    ),
    "triplet_distance": (
        lambda lib, a, p, n, r: _f(lib).triplet_margin_with_distance_loss(
            a, p, n, swap=True, reduction=r
        ),
        [X, Y, Z],
        [True, True, True],
    ),
    "triplet_cosine_distance": (
        lambda lib, a, p, n, r: _f(lib).triplet_margin_with_distance_loss(
            a, p, n, distance_function=lambda u, v: 1 - _f(lib).cosine_similarity(u, v), reduction=r
        ),
        [X, Y, Z],
        [True, True, True],
    ),
    "poisson": (
        lambda lib, a, t, r: _f(lib).poisson_nll_loss(a, t, reduction=r),
        [X, np.abs(Y)],
        [True, True],
    ),
    "poisson_full": (
        lambda lib, a, t, r: _f(lib).poisson_nll_loss(
            a, t, log_input=False, full=True, reduction=r
        ),
        [np.abs(X), np.abs(Y) * 3],
        [True, True],
    ),
    "gaussian": (
        lambda lib, a, t, v, r: _f(lib).gaussian_nll_loss(a, t, v, reduction=r),
        [X, Y, np.abs(Z)],
        [True, True, True],
    ),
    "gaussian_full_heteroscedastic": (
        lambda lib, a, t, v, r: _f(lib).gaussian_nll_loss(a, t, v, full=True, reduction=r),
        [X, Y, np.abs(Z[:, :1])],
        [True, True, True],
    ),
    "gaussian_var_missing_dim": (
        lambda lib, a, t, v, r: _f(lib).gaussian_nll_loss(a, t, v, reduction=r),
        [X, Y, np.abs(Z[:, 0])],
        [True, True, True],
    ),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_losses_match_torch(name: str, reduction: str) -> None:
    fn, arrays, needs = CASES[name]
    results = []
    for lib in (torch, chainrule):
        leaves = [lib.tensor(a, requires_grad=n) for a, n in zip(arrays, needs, strict=True)]
        out = fn(lib, *leaves, reduction)
        out.backward(lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))))
        results.append(
            (
                out.detach().numpy(),
                [t.grad.numpy() for t in leaves if t.grad is not None],
                _graph(out),
            )
        )
    (t_out, t_grads, t_graph), (c_out, c_grads, c_graph) = results
    np.testing.assert_allclose(c_out, t_out, atol=1e-12)
    assert len(c_grads) == len(t_grads)
    for c, t in zip(c_grads, t_grads, strict=True):
        np.testing.assert_allclose(c, t, atol=1e-12)
    assert c_graph == t_graph


ERRORS = {
    "ranking_dims": lambda lib: _f(lib).margin_ranking_loss(
        lib.ones(3), lib.ones(3, 1), lib.ones(3)
    ),
    "cosine_target_0d": lambda lib: _f(lib).cosine_embedding_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.tensor(1.0)
    ),
    "cosine_target_1d": lambda lib: _f(lib).cosine_embedding_loss(
        lib.ones(3), lib.ones(3), lib.ones(3)
    ),
    "cosine_target_2d": lambda lib: _f(lib).cosine_embedding_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3)
    ),
    "soft_margin_sizes": lambda lib: _f(lib).soft_margin_loss(lib.ones(3), lib.ones(2, 3)),
    "triplet_dims": lambda lib: _f(lib).triplet_margin_loss(
        lib.ones(3), lib.ones(2, 3), lib.ones(2, 3)
    ),
    "triplet_distance_margin": lambda lib: _f(lib).triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0
    ),
    "triplet_distance_reduction": lambda lib: _f(lib).triplet_margin_with_distance_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), reduction="max"
    ),
    "poisson_reduction": lambda lib: _f(lib).poisson_nll_loss(
        lib.ones(3), lib.ones(3), reduction="max"
    ),
    "gaussian_negative_var": lambda lib: _f(lib).gaussian_nll_loss(
        lib.ones(3), lib.ones(3), -lib.ones(3)
    ),
    "gaussian_negative_float": lambda lib: _f(lib).gaussian_nll_loss(
        lib.ones(3), lib.ones(3), -1.0
    ),
    "gaussian_var_size": lambda lib: _f(lib).gaussian_nll_loss(
        lib.ones(2, 3), lib.ones(2, 3), lib.ones(3, 2)
    ),
    "gaussian_float_var": lambda lib: _f(lib).gaussian_nll_loss(lib.ones(3), lib.zeros(3), 2.0),
    "legacy_size_average": lambda lib: _f(lib).soft_margin_loss(
        lib.ones(3), lib.ones(3), size_average=False
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


MODULES = [
    lambda lib: lib.nn.MarginRankingLoss(margin=0.5),
    lambda lib: lib.nn.HingeEmbeddingLoss(reduction="sum"),
    lambda lib: lib.nn.CosineEmbeddingLoss(0.1),
    lambda lib: lib.nn.SoftMarginLoss(),
    lambda lib: lib.nn.MultiLabelSoftMarginLoss(weight=lib.ones(2)),
    lambda lib: lib.nn.TripletMarginLoss(p=1.0, swap=True),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=2.0),
    lambda lib: lib.nn.PoissonNLLLoss(log_input=False, full=True),
    lambda lib: lib.nn.GaussianNLLLoss(full=True, eps=1e-3),
]


@pytest.mark.parametrize("index", range(len(MODULES)))
def test_modules_match_torch(index: int) -> None:
    t_mod, c_mod = MODULES[index](torch), MODULES[index](chainrule)
    assert repr(c_mod) == repr(t_mod)
    assert list(c_mod.state_dict()) == list(t_mod.state_dict())
    options = {k: v for k, v in vars(t_mod).items() if not k.startswith("_") and k != "training"}
    for key, value in options.items():
        assert getattr(c_mod, key) == value, key


def test_module_margin_errors_match_torch() -> None:
    same_outcome(lambda lib: lib.nn.TripletMarginLoss(margin=0))
    same_outcome(lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1))
