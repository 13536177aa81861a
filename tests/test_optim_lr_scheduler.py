"""Learning-rate schedulers against ``torch.optim.lr_scheduler``: the learning rates (and cycled
momenta) of every epoch, ``get_last_lr``, ``state_dict`` and warnings."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _optimizer(lib, kind="SGD"):
    a = lib.nn.Parameter(lib.ones(2))
    b = lib.nn.Parameter(lib.ones(3))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.5}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


SCHEDULERS = {
    "step": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    "multistep": lambda lib, opt: lib.optim.lr_scheduler.MultiStepLR(opt, [2, 5, 5, 9], 0.3),
    "exponential": lambda lib, opt: lib.optim.lr_scheduler.ExponentialLR(opt, 0.9),
    "cosine": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5,
                                                                         eta_min=0.01),
    "cosine_long": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7),
    "linear": lambda lib, opt: lib.optim.lr_scheduler.LinearLR(opt, 0.25, 1.0, 4),
    "constant": lambda lib, opt: lib.optim.lr_scheduler.ConstantLR(opt, 0.5, 3),
    "polynomial": lambda lib, opt: lib.optim.lr_scheduler.PolynomialLR(opt, 6, 2.0),
    "lambda": lambda lib, opt: lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 1 / (e + 1)),
    "multiplicative": lambda lib, opt: lib.optim.lr_scheduler.MultiplicativeLR(
        opt, lambda e: 0.95),
    "one_cycle_sgd": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(opt, 1.0,
                                                                        total_steps=20),
    "one_cycle_three_phase_linear": lambda lib, opt: lib.optim.lr_scheduler.OneCycleLR(
        opt, [1.0, 2.0], epochs=4, steps_per_epoch=5, three_phase=True,
        anneal_strategy="linear"),
}


def _trace(lib, name, kind="SGD", epochs=19):
    opt = _optimizer(lib, kind)
    sched = SCHEDULERS[name](lib, opt)
    trace = [(sched.get_last_lr(), [g.get("momentum", g.get("betas")) for g in opt.param_groups])]
    for _ in range(epochs):
        opt.step()
        sched.step()
        trace.append((sched.get_last_lr(),
                      [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    return trace, sched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_schedule_matches_torch(name: str) -> None:
    for kind in ("SGD", "Adam"):
        ours, sched = _trace(chainrule, name, kind)
        theirs, ref = _trace(torch, name, kind)
        for (lr_a, m_a), (lr_b, m_b) in zip(ours, theirs, strict=True):
            assert lr_a == pytest.approx(lr_b, rel=1e-12, abs=1e-15)
            assert m_a == m_b or m_a == pytest.approx(m_b)
        a = {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"}
        b = {k: v for k, v in ref.state_dict().items() if k != "lr_lambdas"}
        assert sorted(a) == sorted(b)
        assert a["last_epoch"] == b["last_epoch"] and a["base_lrs"] == pytest.approx(b["base_lrs"])


def test_reduce_lr_on_plateau_matches_torch() -> None:
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.61, 0.62, 0.63, 0.64, 0.65]
    for options in ({"patience": 2}, {"mode": "max", "factor": 0.5, "patience": 1,
                                      "threshold_mode": "abs", "cooldown": 2, "min_lr": 0.02}):
        traces = []
        for lib in (chainrule, torch):
            opt = _optimizer(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **options)
            trace = []
            for m in metrics:
                opt.step()
                sched.step(m)
                trace.append(sched.get_last_lr())
            traces.append((trace, sched.num_bad_epochs, sched.best, sched.cooldown_counter))
        assert traces[0] == traces[1]
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        chainrule.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(chainrule), factor=1.0)


def test_state_dict_resume() -> None:
    opt = _optimizer(chainrule)
    sched = chainrule.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(4):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 4
    opt2 = _optimizer(chainrule)
    opt2.load_state_dict(opt.state_dict())
    resumed = chainrule.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=10, last_epoch=3)
    resumed.load_state_dict(state)
    for _ in range(3):
        opt.step()
        sched.step()
        opt2.step()
        resumed.step()
    assert sched.get_last_lr() == resumed.get_last_lr()
    assert math.isclose(opt2.param_groups[0]["lr"], opt.param_groups[0]["lr"])


def test_warnings_like_torch() -> None:
    for lib in (chainrule, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before "
                                             "`optimizer.step\\(\\)`"):
            sched.step()
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
            lib.optim.lr_scheduler.StepLR(_optimizer(lib), 2, last_epoch=3)
        with pytest.raises(ValueError, match="Tried to step 3 times"):
            o = _optimizer(lib)
            s = lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=2)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(3):
                    o.step()
                    s.step()


_TENSOR_LR_SCHEDULERS = {
    "StepLR": {"step_size": 1, "gamma": 0.5},
    "ExponentialLR": {"gamma": 0.5},
    "CosineAnnealingLR": {"T_max": 3},
    "LambdaLR": {"lr_lambda": lambda epoch: 0.5 ** epoch},
    "OneCycleLR": {"max_lr": 0.5, "total_steps": 5},
    "ReduceLROnPlateau": {"patience": 0},
}


@pytest.mark.parametrize("name", sorted(_TENSOR_LR_SCHEDULERS))
def test_tensor_lr_is_updated_in_place_like_torch(name: str) -> None:
    """A tensor ``lr`` stays the same tensor (filled in place), as PyTorch keeps it."""
    results = []
    for lib in (chainrule, torch):
        p = lib.nn.Parameter(lib.ones(2))
        lr = lib.tensor(0.1)
        opt = lib.optim.SGD([p], lr=lr, momentum=0.9)
        scheduler = getattr(lib.optim.lr_scheduler, name)(opt, **_TENSOR_LR_SCHEDULERS[name])
        seen = []
        for _ in range(3):
            p.grad = lib.ones(2)
            opt.step()
            scheduler.step(1.0) if name == "ReduceLROnPlateau" else scheduler.step()
            group_lr = opt.param_groups[0]["lr"]
            last = scheduler.get_last_lr()[0]
            seen.append((group_lr is lr, round(float(group_lr), 6), type(last).__name__,
                         last is lr))
        results.append((seen, p.detach().tolist()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
