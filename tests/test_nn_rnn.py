"""RNN, LSTM, GRU and their cells against PyTorch (same weights): outputs, final states and
gradients, for every layout option."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _copy(ours, theirs) -> None:
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _flatten(out):
    if isinstance(out, tuple):
        result = []
        for o in out:
            result.extend(_flatten(o))
        return result
    return [out]


CONFIGS = {
    "rnn": ("RNN", {}, (5, 2, 3)),
    "rnn_relu_2layers": ("RNN", {"num_layers": 2, "nonlinearity": "relu"}, (4, 3, 3)),
    "rnn_batch_first_bidirectional": ("RNN", {"batch_first": True, "bidirectional": True},
                                      (2, 5, 3)),
    "lstm": ("LSTM", {}, (5, 2, 3)),
    "lstm_2layers_bidirectional": ("LSTM", {"num_layers": 2, "bidirectional": True},
                                   (4, 2, 3)),
    "lstm_proj_no_bias": ("LSTM", {"proj_size": 2, "bias": False}, (4, 2, 3)),
    "lstm_unbatched": ("LSTM", {}, (5, 3)),
    "gru": ("GRU", {}, (5, 2, 3)),
    "gru_batch_first_2layers": ("GRU", {"batch_first": True, "num_layers": 2}, (2, 4, 3)),
    "gru_bidirectional_unbatched": ("GRU", {"bidirectional": True}, (4, 3)),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_recurrent_layer_matches_torch(name: str) -> None:
    kind, options, shape = CONFIGS[name]
    chainrule.manual_seed(0)
    ours = getattr(chainrule.nn, kind)(3, 4, **options)
    theirs = getattr(torch.nn, kind)(3, 4, **options)
    _copy(ours, theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    x = _x(shape)
    a_in = chainrule.from_numpy(x.copy()).requires_grad_()
    b_in = torch.from_numpy(x.copy()).requires_grad_()
    a_out = _flatten(ours(a_in))
    b_out = _flatten(theirs(b_in))
    assert len(a_out) == len(b_out)
    total_a = 0
    total_b = 0
    for k, (a, b) in enumerate(zip(a_out, b_out, strict=True)):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        weight = _x(tuple(b.shape), seed=k + 1)
        total_a = total_a + (a * chainrule.from_numpy(weight.copy())).sum()
        total_b = total_b + (b * torch.from_numpy(weight.copy())).sum()
    total_a.backward()
    total_b.backward()
    np.testing.assert_allclose(a_in.grad.numpy(), b_in.grad.numpy(), rtol=1e-3, atol=1e-5)
    for (pname, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(),
                                  strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-5,
                                   err_msg=pname)


def test_initial_states_are_used() -> None:
    chainrule.manual_seed(0)
    ours = chainrule.nn.LSTM(3, 4, num_layers=2)
    theirs = torch.nn.LSTM(3, 4, num_layers=2)
    _copy(ours, theirs)
    x, h0, c0 = _x((3, 2, 3)), _x((2, 2, 4), 1), _x((2, 2, 4), 2)
    a, (ha, ca) = ours(chainrule.from_numpy(x), (chainrule.from_numpy(h0),
                                                 chainrule.from_numpy(c0)))
    b, (hb, cb) = theirs(torch.from_numpy(x), (torch.from_numpy(h0), torch.from_numpy(c0)))
    for p, q in ((a, b), (ha, hb), (ca, cb)):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(kind: str) -> None:
    chainrule.manual_seed(0)
    ours = getattr(chainrule.nn, kind)(3, 4)
    theirs = getattr(torch.nn, kind)(3, 4)
    _copy(ours, theirs)
    x = _x((2, 3))
    hidden = _x((2, 4), 1)
    states_a = chainrule.from_numpy(hidden.copy())
    states_b = torch.from_numpy(hidden.copy())
    if kind == "LSTMCell":
        states_a = (states_a, chainrule.from_numpy(hidden.copy() * 0.5))
        states_b = (states_b, torch.from_numpy(hidden.copy() * 0.5))
    for a, b in ((ours(chainrule.from_numpy(x)), theirs(torch.from_numpy(x))),
                 (ours(chainrule.from_numpy(x), states_a), theirs(torch.from_numpy(x), states_b)),
                 (ours(chainrule.from_numpy(x[0])), theirs(torch.from_numpy(x[0])))):
        for p, q in zip(_flatten(a), _flatten(b), strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4,
                                       atol=1e-5)


def test_dropout_between_layers_only_in_training() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rnn = chainrule.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = chainrule.from_numpy(_x((5, 2, 3)))
    rnn.eval()
    first = rnn(x)[0].detach().numpy()
    np.testing.assert_array_equal(first, rnn(x)[0].detach().numpy())
    rnn.train()
    assert not np.allclose(first, rnn(x)[0].detach().numpy())
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        chainrule.nn.LSTM(3, 4, dropout=0.2)
