"""Optimizers against ``torch.optim``: given the same gradients, the same parameter trajectory
(every step, every option); end-to-end training from the same weights; state dicts, parameter
groups, ``zero_grad``, printing and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import chainrule

from .conftest import torch

SHAPES = [(3, 4), (5,), (2, 2, 2)]

CONFIGS = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd_momentum": ("SGD", {"lr": 0.05, "momentum": 0.9}),
    "sgd_dampening_wd": ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3,
                                 "weight_decay": 0.01}),
    "sgd_nesterov": ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    "sgd_maximize": ("SGD", {"lr": 0.1, "momentum": 0.5, "maximize": True}),
    "adam": ("Adam", {"lr": 0.01}),
    "adam_amsgrad_wd": ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1,
                                 "betas": (0.8, 0.99)}),
    "adam_maximize": ("Adam", {"lr": 0.01, "maximize": True, "eps": 1e-6}),
    "adam_decoupled": ("Adam", {"lr": 0.01, "weight_decay": 0.1,
                                "decoupled_weight_decay": True}),
    "adamw": ("AdamW", {"lr": 0.01}),
    "adamw_amsgrad": ("AdamW", {"lr": 0.02, "amsgrad": True, "weight_decay": 0.05}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop_centered_momentum": ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9,
                                              "alpha": 0.9}),
    "rmsprop_wd_maximize": ("RMSprop", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adagrad_options": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.05,
                                    "initial_accumulator_value": 0.5, "eps": 1e-8}),
    "adagrad_maximize": ("Adagrad", {"lr": 0.1, "maximize": True}),
}


def _params(lib):
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.from_numpy(rng.standard_normal(s).astype(np.float32)))
            for s in SHAPES]


def _gradients(steps):
    rng = np.random.default_rng(1)
    return [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_same_gradients_same_trajectory(name: str) -> None:
    kind, options = CONFIGS[name]
    ours_p, theirs_p = _params(chainrule), _params(torch)
    ours = getattr(chainrule.optim, kind)(ours_p, **options)
    theirs = getattr(torch.optim, kind)(theirs_p, **options)
    for grads in _gradients(25):
        for p, q, g in zip(ours_p, theirs_p, grads, strict=True):
            p.grad = chainrule.from_numpy(g.copy())
            q.grad = torch.from_numpy(g.copy())
        ours.step()
        theirs.step()
        for p, q in zip(ours_p, theirs_p, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    a, b = ours.state_dict(), theirs.state_dict()
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys()
    for index, state in a["state"].items():
        assert list(state) == list(b["state"][index])
        for key, value in state.items():
            other = b["state"][index][key]
            assert str(value.dtype) == str(other.dtype).replace("torch", "chainrule")
            np.testing.assert_allclose(value.numpy(), other.numpy(), rtol=1e-5, atol=1e-6)


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))


@pytest.mark.parametrize("name", ["sgd_nesterov", "adam_amsgrad_wd", "adamw",
                                  "rmsprop_centered_momentum", "adagrad_options"])
def test_training_trajectory_matches_torch(name: str) -> None:
    kind, options = CONFIGS[name]
    chainrule.manual_seed(0)
    ours = _mlp(chainrule)
    theirs = _mlp(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    opt_a = getattr(chainrule.optim, kind)(ours.parameters(), **options)
    opt_b = getattr(torch.optim, kind)(theirs.parameters(), **options)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.integers(0, 3, 16)
    for _ in range(30):
        for model, opt, lib in ((ours, opt_a, chainrule), (theirs, opt_b, torch)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.from_numpy(x.copy())),
                                                   lib.from_numpy(y.copy()))
            loss.backward()
            opt.step()
        for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(),
                                  strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4,
                                       atol=1e-5, err_msg=n)


def test_param_groups_and_repr_match_torch() -> None:
    def build(lib):
        model = _mlp(lib)
        return lib.optim.SGD([
            {"params": model[0].parameters()},
            {"params": model[2].parameters(), "lr": 0.5, "momentum": 0.1},
        ], lr=0.01, momentum=0.9)

    ours, theirs = build(chainrule), build(torch)
    assert repr(ours) == repr(theirs)
    assert [list(g) for g in ours.param_groups] == [list(g) for g in theirs.param_groups]
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    assert repr(chainrule.optim.Adam(_mlp(chainrule).parameters())) == repr(
        torch.optim.Adam(_mlp(torch).parameters()))
    extra = chainrule.nn.Parameter(chainrule.ones(2))
    ours.add_param_group({"params": extra, "lr": 3.0})
    assert ours.param_groups[-1]["momentum"] == 0.9 and ours.param_groups[-1]["lr"] == 3.0
    named = chainrule.optim.Adam(_mlp(chainrule).named_parameters())
    assert named.param_groups[0]["param_names"] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_state_dict_round_trip_continues_identically() -> None:
    chainrule.manual_seed(0)
    model = _mlp(chainrule)
    opt = chainrule.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
    x = chainrule.randn(8, 4)

    def step(m, o):
        o.zero_grad()
        m(x).pow(2).mean().backward()
        o.step()

    for _ in range(3):
        step(model, opt)
    saved_model = copy.deepcopy(model.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    for _ in range(3):
        step(model, opt)
    clone = _mlp(chainrule)
    clone.load_state_dict(saved_model)
    clone_opt = chainrule.optim.Adam(clone.parameters(), lr=0.5)
    clone_opt.load_state_dict(saved_opt)
    assert clone_opt.param_groups[0]["lr"] == 0.01
    assert clone_opt.state[clone[0].weight]["step"].item() == 3
    for _ in range(3):
        step(clone, clone_opt)
    for p, q in zip(model.parameters(), clone.parameters(), strict=True):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    with pytest.raises(ValueError, match="different number of parameter groups"):
        clone_opt.load_state_dict({"state": {}, "param_groups": []})


def test_state_dict_file_round_trip(tmp_path) -> None:
    model = _mlp(chainrule)
    opt = chainrule.optim.RMSprop(model.parameters(), momentum=0.5)
    model(chainrule.randn(2, 4)).sum().backward()
    opt.step()
    chainrule.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 1},
                   tmp_path / "checkpoint.safetensors")
    checkpoint = chainrule.load(tmp_path / "checkpoint.safetensors")
    assert checkpoint["epoch"] == 1
    restored = chainrule.optim.RMSprop(_mlp(chainrule).parameters())
    restored.load_state_dict(checkpoint["optimizer"])
    assert restored.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for index, state in opt.state_dict()["state"].items():
        for key, value in state.items():
            np.testing.assert_array_equal(value.numpy(),
                                          restored.state_dict()["state"][index][key].numpy())


def test_zero_grad_and_closure() -> None:
    model = _mlp(chainrule)
    opt = chainrule.optim.SGD(model.parameters(), lr=0.1)
    model(chainrule.randn(2, 4)).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    x = chainrule.randn(3, 4)

    def closure():
        opt.zero_grad()
        loss = model(x).pow(2).sum()
        loss.backward()
        return loss

    with chainrule.no_grad():
        loss = opt.step(closure)
    assert loss.grad_fn is not None
    version = model[0].weight._version
    opt.step(closure)
    assert model[0].weight._version > version


def _error(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - comparing what each library raises
        return type(e).__name__, str(e).replace("torch.", "chainrule.")
    return None


ERRORS = {
    "lr": lambda lib: lib.optim.SGD(_mlp(lib).parameters(), lr=-1),
    "momentum": lambda lib: lib.optim.SGD(_mlp(lib).parameters(), momentum=-0.1),
    "nesterov": lambda lib: lib.optim.SGD(_mlp(lib).parameters(), nesterov=True),
    "betas": lambda lib: lib.optim.Adam(_mlp(lib).parameters(), betas=(1.0, 0.9)),
    "beta2": lambda lib: lib.optim.AdamW(_mlp(lib).parameters(), betas=(0.9, -0.1)),
    "eps": lambda lib: lib.optim.Adam(_mlp(lib).parameters(), eps=-1),
    "alpha": lambda lib: lib.optim.RMSprop(_mlp(lib).parameters(), alpha=-1),
    "lr_decay": lambda lib: lib.optim.Adagrad(_mlp(lib).parameters(), lr_decay=-1),
    "empty": lambda lib: lib.optim.SGD([], lr=0.1),
    "tensor": lambda lib: lib.optim.SGD(lib.ones(2, requires_grad=True), lr=0.1),
    "non_leaf": lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1),
    "not_tensor": lambda lib: lib.optim.SGD([1.0], lr=0.1),
    "set": lambda lib: lib.optim.SGD([{"params": {lib.ones(1, requires_grad=True)}}], lr=0.1),
    "overlap": lambda lib: lib.optim.SGD(
        [{"params": [p := lib.nn.Parameter(lib.ones(1))]}, {"params": [p]}], lr=0.1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    theirs = _error(ERRORS[name], torch)
    assert theirs is not None
    assert _error(ERRORS[name], chainrule) == theirs
