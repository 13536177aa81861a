"""rrelu / RReLU, feature_alpha_dropout / FeatureAlphaDropout and gumbel_softmax against
PyTorch. Their random draws are chainrule's own, so training-mode results are checked by their
definition (slopes within [lower, upper], gradient = the slope used, whole channels dropped,
one-hot samples with the soft gradient); eval mode, nodes, errors and reprs against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

X = np.random.default_rng(0).standard_normal((3, 5))


def test_rrelu_eval_matches_torch() -> None:
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(X, requires_grad=True)
        out = lib.nn.functional.rrelu(leaf, 0.1, 0.4)
        out.backward(lib.ones(3, 5, dtype=lib.float64))
        saved = (out.grad_fn._saved_lower, out.grad_fn._saved_upper, out.grad_fn._saved_training)
        results.append((out.detach().numpy(), leaf.grad.numpy(), out.grad_fn.name(), saved))
    (t_out, t_grad, t_name, t_saved), (c_out, c_grad, c_name, c_saved) = results
    np.testing.assert_allclose(c_out, t_out)
    np.testing.assert_allclose(c_grad, t_grad)
    assert (c_name, c_saved) == (t_name, t_saved)


def test_rrelu_training_slopes_and_gradient() -> None:
    leaf = chainrule.tensor(X, requires_grad=True)
    out = chainrule.nn.functional.rrelu(leaf, 0.1, 0.4, training=True)
    out.backward(chainrule.ones(3, 5, dtype=chainrule.float64))
    slopes = out.detach().numpy() / X
    negative = X < 0
    assert np.all(slopes[~negative] == 1)
    assert np.all((slopes[negative] >= 0.1) & (slopes[negative] <= 0.4))
    np.testing.assert_allclose(leaf.grad.numpy(), slopes)


def test_rrelu_in_place_matches_torch() -> None:
    def run(lib: Any) -> Any:
        x = lib.tensor(X)
        y = lib.nn.functional.rrelu_(x)
        return y is x, x._version if hasattr(x, "_version") else None, x.numpy().round(6)

    t, c = run(torch), run(chainrule)
    assert c[0] and t[0] and c[1] == t[1]
    np.testing.assert_array_equal(c[2], t[2])


ERRORS = {
    "rrelu_bounds": lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.5, 0.1),
    "rrelu_leaf_in_place": lambda lib: lib.nn.functional.rrelu_(lib.ones(3, requires_grad=True)),
    "feature_alpha_p": lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(3), 1.5),
    "feature_alpha_eval": lambda lib: lib.nn.functional.feature_alpha_dropout(
        lib.ones(2, 3), 0.5, False
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


def test_feature_alpha_dropout_drops_whole_channels() -> None:
    chainrule.manual_seed(0)
    x = chainrule.tensor(np.random.default_rng(1).standard_normal((4, 6, 5)), requires_grad=True)
    out = chainrule.nn.functional.feature_alpha_dropout(x, 0.5, True)
    assert (
        out.grad_fn.name()
        == torch.nn.functional.feature_alpha_dropout(
            torch.ones(2, 3, 2, requires_grad=True), 0.5, True
        ).grad_fn.name()
    )
    alpha = 1.7580993408473766
    a = 1.0 / np.sqrt((alpha * alpha * 0.5 + 1) * 0.5)
    values = out.detach().numpy()
    dropped = np.isclose(values, -alpha * a + alpha * a * 0.5)
    per_channel = dropped.all(axis=2) | ~dropped.any(axis=2)
    assert per_channel.all() and dropped.any() and not dropped.all()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(dropped, 0.0, a))


def test_gumbel_softmax_samples_and_gradient() -> None:
    chainrule.manual_seed(0)
    logits = chainrule.tensor(X, requires_grad=True)
    soft = chainrule.nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0)
    hard = chainrule.nn.functional.gumbel_softmax(logits, hard=True, dim=0)
    values = hard.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0} and np.all(values.sum(0) == 1)
    t_logits = torch.tensor(X, requires_grad=True)
    t_hard = torch.nn.functional.gumbel_softmax(t_logits, hard=True, dim=0)

    def graph(t: Any) -> list[str]:
        return [t.grad_fn.name()] + [n.name() for n, _ in t.grad_fn.next_functions if n]

    assert graph(hard) == graph(t_hard)


def test_modules_match_torch() -> None:
    for make in (
        lambda lib: lib.nn.RReLU(),
        lambda lib: lib.nn.RReLU(0.1, 0.3, True),
        lambda lib: lib.nn.FeatureAlphaDropout(0.3),
    ):
        assert repr(make(chainrule)) == repr(make(torch))
    t_mod, c_mod = torch.nn.RReLU(0.2, 0.3).eval(), chainrule.nn.RReLU(0.2, 0.3).eval()
    np.testing.assert_allclose(c_mod(chainrule.tensor(X)).numpy(), t_mod(torch.tensor(X)).numpy())
