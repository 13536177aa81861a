"""The schedulers chainrule lacked (issue 16, optim.lr_scheduler): CosineAnnealingWarmRestarts,
CyclicLR, SequentialLR and ChainedScheduler, against PyTorch: the learning rates (and
momenta) step by step, explicit epochs, state_dict, and the errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import chainrule

from .conftest import torch


def _optimizer(lib: ModuleType, kind: str = "sgd", groups: int = 2) -> Any:
    params = [lib.nn.Parameter(lib.ones(2)) for _ in range(groups)]
    param_groups = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if kind == "adam":
        return lib.optim.Adam(param_groups, lr=0.1)
    return lib.optim.SGD(param_groups, lr=0.1, momentum=0.9)


def _trace(lib: ModuleType, make: Callable[[ModuleType, Any], Any], steps: int = 25,
           kind: str = "sgd", epochs: list[Any] | None = None) -> Any:
    """The learning rates (and momenta) after construction and each step, or the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimizer = _optimizer(lib, kind)
            scheduler = make(lib, optimizer)
            seen = [_snapshot(optimizer, scheduler)]
            for i in range(steps):
                optimizer.step()
                if epochs is None:
                    scheduler.step()
                else:
                    scheduler.step(epochs[i % len(epochs)])
                seen.append(_snapshot(optimizer, scheduler))
    except (ValueError, TypeError, KeyError, RuntimeError) as error:
        return type(error).__name__, str(error).replace("torch.", "chainrule.")
    return seen


def _snapshot(optimizer: Any, scheduler: Any) -> Any:
    groups = [(round(float(g["lr"]), 12), round(float(g.get("momentum", 0.0)), 12),
               tuple(round(float(b), 12) for b in g.get("betas", ())))
              for g in optimizer.param_groups]
    return (groups, [round(float(v), 12) for v in scheduler.get_last_lr()],
            getattr(scheduler, "last_epoch", None))


CASES: dict[str, Callable[[ModuleType, Any], Any]] = {
    "warm restarts": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 5),
    "warm restarts mult": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01),
    "warm restarts bad T_0": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, 0),
    "warm restarts float T_0": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, 2.5),
    "warm restarts bad T_mult": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, 3, T_mult=0),
    "warm restarts bad eta_min": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        o, 3, eta_min="x"),
    "cyclic triangular": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "cyclic triangular2": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.2], step_size_up=3, step_size_down=5,
        mode="triangular2"),
    "cyclic exp_range": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.9),
    "cyclic scale_fn": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 1 / (x + 1),
        scale_mode="iterations"),
    "cyclic no momentum": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, cycle_momentum=False),
    "cyclic bad mode": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, mode="nope"),
    "cyclic base_lr list length": lambda lib, o: lib.optim.lr_scheduler.CyclicLR(
        o, base_lr=[0.01], max_lr=0.1),
    "sequential": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=3),
            lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)], milestones=[4]),
    "sequential three": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=3),
            lib.optim.lr_scheduler.StepLR(o, step_size=2, gamma=0.5),
            lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5)], milestones=[3, 8]),
    "sequential bad milestones": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.ConstantLR(o), lib.optim.lr_scheduler.ConstantLR(o)],
        milestones=[1, 2]),
    "sequential empty": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(o, [], milestones=[]),
    "chained": lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ConstantLR(o, factor=0.5, total_iters=4),
         lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)]),
    "chained with optimizer": lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
         lib.optim.lr_scheduler.LinearLR(o, start_factor=0.5, total_iters=4)], optimizer=o),
}


@pytest.mark.parametrize("case", list(CASES))
def test_schedule_against_pytorch(case: str) -> None:
    assert _trace(chainrule, CASES[case]) == _trace(torch, CASES[case])


def test_cyclic_cycles_adam_betas() -> None:
    make = CASES["cyclic triangular"]
    assert _trace(chainrule, make, kind="adam") == _trace(torch, make, kind="adam")


@pytest.mark.parametrize("epochs", [[0, 1, 2, 7, 3], [2.5, 11, 0.5], [4, 9, 20, 1]])
def test_warm_restarts_explicit_epochs(epochs: list[Any]) -> None:
    for case in ("warm restarts", "warm restarts mult"):
        assert _trace(chainrule, CASES[case], steps=8, epochs=epochs) == _trace(
            torch, CASES[case], steps=8, epochs=epochs)


def test_warm_restarts_negative_epoch() -> None:
    assert _trace(chainrule, CASES["warm restarts"], steps=1, epochs=[-1]) == _trace(
        torch, CASES["warm restarts"], steps=1, epochs=[-1])


@pytest.mark.parametrize("case", ["warm restarts mult", "cyclic triangular2", "sequential",
                                  "chained"])
def test_state_dict_round_trip(case: str) -> None:
    """Saved after 5 steps, loaded into a fresh scheduler: the next steps are the same, and
    the saved keys are PyTorch's."""
    def run(lib: ModuleType) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimizer = _optimizer(lib)
            scheduler = CASES[case](lib, optimizer)
            for _ in range(5):
                optimizer.step()
                scheduler.step()
            state = scheduler.state_dict()
            fresh_optimizer = _optimizer(lib)
            fresh_optimizer.load_state_dict(optimizer.state_dict())
            fresh = CASES[case](lib, fresh_optimizer)
            fresh.load_state_dict(state)
            after = []
            for _ in range(6):
                fresh_optimizer.step()
                fresh.step()
                after.append(_snapshot(fresh_optimizer, fresh))
            return sorted(k for k in state if not k.startswith("_scale_fn")), after

    assert run(chainrule) == run(torch)


@pytest.mark.parametrize("case", ["cyclic bad mode", "cyclic base_lr list length"])
def test_refused_arguments_change_nothing(case: str) -> None:
    """A refused scheduler leaves the optimizer's groups as they were (PyTorch's CyclicLR has
    already written the base rates and momenta when it raises; the project's rule is
    stricter)."""
    optimizer = _optimizer(chainrule)
    before = [dict(g, params=None) for g in optimizer.param_groups]
    with pytest.raises(ValueError):
        CASES[case](chainrule, optimizer)
    assert [dict(g, params=None) for g in optimizer.param_groups] == before
