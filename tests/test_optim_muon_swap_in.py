"""torch.optim.Muon and torch.optim.swap_in_optimizer_params_and_state against PyTorch.

Muon: several steps on tall, wide and square matrices with and without Nesterov momentum,
weight decay and each learning-rate adjustment; the Newton-Schulz iterations run in bfloat16
in both libraries, so the float32 parameters agree to a few float32 ulps. Swap-in: steps on
stand-in parameters and state leave the live optimizer as it was, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

LIBS = (torch, chainrule)


def _muon_run(lib: Any, shape: tuple[int, int], steps: int, **options: Any) -> tuple:
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    w = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape).astype(np.float32)))
    opt = lib.optim.Muon([w], **options)
    for _ in range(steps):
        w.grad = lib.tensor(rng.standard_normal(shape).astype(np.float32))
        opt.step()
    buf = opt.state[w]["momentum_buffer"]
    return w.detach().numpy().copy(), buf.numpy().copy(), str(buf.dtype), sorted(opt.state[w])


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize(
    "options",
    [
        {"lr": 0.05},
        {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
        {"lr": 0.1, "adjust_lr_fn": "match_rms_adamw", "momentum": 0.9},
        {"lr": 0.1, "adjust_lr_fn": "original", "ns_steps": 3},
    ],
)
def test_muon_steps_match_torch(shape: tuple[int, int], options: dict[str, Any]) -> None:
    theirs = _muon_run(torch, shape, 4, **options)
    ours = _muon_run(chainrule, shape, 4, **options)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-7)
    assert ours[2].replace("chainrule", "torch") == theirs[2]
    assert ours[3] == theirs[3]


def test_muon_state_dict_and_repr() -> None:
    seen = []
    for lib in LIBS:
        w = lib.nn.Parameter(lib.ones(2, 3))
        opt = lib.optim.Muon([w], lr=0.01)
        w.grad = lib.ones(2, 3)
        opt.step()
        sd = opt.state_dict()
        seen.append((str(opt), sd["param_groups"], sorted(sd["state"][0])))
    assert seen[1] == seen[0]


def test_muon_errors() -> None:
    same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(3))]))
    same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], lr=-1.0))
    same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], momentum=-1.0))
    same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], weight_decay=-1.0))
    same_outcome(lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], adjust_lr_fn="x"))
    same_outcome(lambda lib: _step_with(lib, ns_steps=100))
    same_outcome(lambda lib: _step_with(lib, ns_coefficients=(1.0, 2.0)))


def _step_with(lib: Any, **options: Any) -> Any:
    w = lib.nn.Parameter(lib.ones(2, 2))
    opt = lib.optim.Muon([w], **options)
    w.grad = lib.ones(2, 2)
    opt.step()
    return w


def _swap_run(lib: Any) -> tuple:
    rng = np.random.default_rng(1)
    model = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    opt = lib.optim.Adam(model.parameters(), lr=0.1)
    model(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
    opt.step()
    live_params = opt.param_groups[0]["params"]
    live_weight = model.weight.detach().clone()
    stand_ins = {n: p.detach().clone() * 2 for n, p in model.named_parameters()}
    for t in stand_ins.values():
        t.grad = lib.ones_like(t)
    saved = opt.state_dict()
    saved["param_groups"][0]["lr"] = 0.5
    with lib.optim.swap_in_optimizer_params_and_state(opt, stand_ins, saved):
        inside_lr = opt.param_groups[0]["lr"]
        opt.step()
    after = opt.state_dict()
    return (
        [t.numpy().copy() for t in stand_ins.values()],
        inside_lr,
        opt.param_groups[0]["lr"],
        opt.param_groups[0]["params"] is live_params,
        bool((model.weight.detach() == live_weight).all()),
        [float(s["step"]) for s in after["state"].values()],
        [float(s["step"]) for s in saved["state"].values()],
    )


def test_swap_in_matches_torch() -> None:
    theirs, ours = _swap_run(torch), _swap_run(chainrule)
    for a, b in zip(theirs[0], ours[0], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    assert ours[1:] == theirs[1:]


def _swap_error(lib: Any, kind: str) -> Any:
    w = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    if kind != "empty":
        w.grad = lib.ones(2)
        opt.step()
    sd = opt.state_dict()
    if kind == "not_dict":
        sd = [sd]
    elif kind == "state_type":
        sd["state"] = []
    elif kind == "tensor_keys":
        sd["state"] = {w: {}}
    elif kind == "groups_type":
        sd["param_groups"] = ()
    elif kind == "groups_count":
        sd["param_groups"] = sd["param_groups"] * 2
    elif kind == "ids":
        sd["param_groups"][0]["params"] = ["a"]
    elif kind == "keys":
        sd["param_groups"][0]["extra"] = 1
    elif kind == "extra_state":
        sd["state"][5] = {}
    elif kind == "too_few":
        return _enter(lib, opt, {}, sd)
    return _enter(lib, opt, {"w": lib.ones(2)}, sd)


def _enter(lib: Any, opt: Any, params: dict, sd: Any) -> str:
    with lib.optim.swap_in_optimizer_params_and_state(opt, params, sd):
        pass
    return "entered"


@pytest.mark.parametrize(
    "kind",
    [
        "empty",
        "not_dict",
        "state_type",
        "tensor_keys",
        "groups_type",
        "groups_count",
        "ids",
        "keys",
        "extra_state",
        "too_few",
        "fine",
    ],
)
def test_swap_in_errors(kind: str) -> None:
    same_outcome(lambda lib: _swap_error(lib, kind))
