"""``optim.swa_utils`` (issue 16): AveragedModel (SWA, EMA, custom averages, buffers),
update_bn, SWALR and the averaging functions, against PyTorch."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _model(lib: ModuleType) -> Any:
    layer = lib.nn.Linear(3, 2)
    norm = lib.nn.BatchNorm1d(2)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor([[0.5, -1.0, 0.25], [2.0, 0.0, -0.5]]))
        layer.bias.copy_(lib.tensor([0.1, -0.2]))
    return lib.nn.Sequential(layer, norm)


def _nudge(lib: ModuleType, model: Any, k: int) -> None:
    """Change the model as a training step would (deterministically)."""
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.mul_(0.9).add_(0.1 * (k + 1) * (i + 1))
        model[1].running_mean.add_(0.3 * k)
        model[1].num_batches_tracked.add_(1)


AVERAGES: dict[str, Callable[[ModuleType], dict[str, Any]]] = {
    "swa": lambda lib: {},
    "ema avg_fn": lambda lib: {"avg_fn": lib.optim.swa_utils.get_ema_avg_fn(0.9)},
    "ema multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)},
    "swa multi": lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_swa_multi_avg_fn()},
    "swa avg_fn": lambda lib: {"avg_fn": lib.optim.swa_utils.get_swa_avg_fn()},
    "custom": lambda lib: {"avg_fn": lambda a, c, n: 0.5 * a + 0.5 * c},
    "swa with buffers": lambda lib: {"use_buffers": True},
    "ema with buffers": lambda lib: {"use_buffers": True,
                                     "multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn()},
}


def _values(module: Any) -> list[Any]:
    return [np.round(t.detach().numpy().astype(np.float64), 6).tolist()
            for t in [*module.parameters(), *module.buffers()]]


@pytest.mark.parametrize("average", list(AVERAGES))
def test_averaged_model(average: str) -> None:
    def run(lib: ModuleType) -> Any:
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model, **AVERAGES[average](lib))
        seen = []
        for k in range(4):
            _nudge(lib, model, k)
            averaged.update_parameters(model)
            seen.append((_values(averaged), int(averaged.n_averaged)))
        averaged.eval()
        out = averaged(lib.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]]))
        names = [n for n, _ in averaged.named_parameters()] + [
            n for n, _ in averaged.named_buffers()]
        return seen, out.detach().numpy(), names, sorted(averaged.state_dict())

    ours, theirs = run(chainrule), run(torch)
    assert (ours[0], ours[2], ours[3]) == (theirs[0], theirs[2], theirs[3])
    # (Linear's sums may end an ulp apart, which the batch norm's cancellation magnifies)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-6)


def test_both_average_functions_refused() -> None:
    for lib in (chainrule, torch):
        with pytest.raises(AssertionError):
            lib.optim.swa_utils.AveragedModel(
                _model(lib), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
                multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn())


def test_update_bn() -> None:
    """Running statistics recomputed as a plain average over the loader's batches (first
    element of tuples), momentum and training mode restored."""
    def run(lib: ModuleType) -> Any:
        model = _model(lib)
        model.eval()
        model[1].momentum = 0.3
        batches = [lib.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]]),
                   lib.tensor([[4.0, -2.0, 0.5], [1.0, 1.0, 1.0], [2.0, 0.0, 0.0]])]
        loader = [(b, lib.zeros(len(b))) for b in batches]
        lib.optim.swa_utils.update_bn(loader, model)
        norm = model[1]
        return (np.round(norm.running_mean.numpy(), 5).tolist(),
                np.round(norm.running_var.numpy(), 5).tolist(), int(norm.num_batches_tracked),
                norm.momentum, model.training)

    assert run(chainrule) == run(torch)
    for lib in (chainrule, torch):  # (no batch norm: nothing happens)
        lib.optim.swa_utils.update_bn([lib.ones(1, 3)], lib.nn.Linear(3, 1))


SWALR_CASES: dict[str, Callable[[ModuleType, Any], Any]] = {
    "cos": lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.05, anneal_epochs=3),
    "linear": lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=[0.05, 0.01], anneal_epochs=4,
                                                       anneal_strategy="linear"),
    "no annealing": lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.05, anneal_epochs=0),
    "bad strategy": lambda lib, o: lib.optim.swa_utils.SWALR(o, 0.05, anneal_strategy="exp"),
    "bad epochs": lambda lib, o: lib.optim.swa_utils.SWALR(o, 0.05, anneal_epochs=-1),
    "float epochs": lambda lib, o: lib.optim.swa_utils.SWALR(o, 0.05, anneal_epochs=2.5),
    "wrong length": lambda lib, o: lib.optim.swa_utils.SWALR(o, [0.1, 0.2, 0.3]),
}


@pytest.mark.parametrize("case", list(SWALR_CASES))
def test_swalr(case: str) -> None:
    def run(lib: ModuleType) -> Any:
        params = [lib.nn.Parameter(lib.ones(1)) for _ in range(2)]
        optimizer = lib.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)}
                                   for i, p in enumerate(params)], lr=0.1)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scheduler = SWALR_CASES[case](lib, optimizer)
                lrs = [[round(g["lr"], 12) for g in optimizer.param_groups]]
                for _ in range(7):
                    optimizer.step()
                    scheduler.step()
                    lrs.append([round(g["lr"], 12) for g in optimizer.param_groups])
        except ValueError as error:
            return "ValueError", str(error)
        return lrs, sorted(scheduler.state_dict())

    assert run(chainrule) == run(torch)


@pytest.mark.parametrize("case", ["bad strategy", "bad epochs", "float epochs"])
def test_refused_swalr_changes_nothing(case: str) -> None:
    """No ``swa_lr`` is written into the groups when SWALR refuses its arguments."""
    optimizer = chainrule.optim.SGD([chainrule.nn.Parameter(chainrule.ones(1))], lr=0.1)
    with pytest.raises(ValueError):
        SWALR_CASES[case](chainrule, optimizer)
    assert "swa_lr" not in optimizer.param_groups[0]


def test_update_bn_restores_momentum_when_the_model_raises() -> None:
    model = _model(chainrule)
    model.eval()

    def loader() -> Any:
        yield chainrule.ones(2, 3)
        raise RuntimeError("broken batch")

    with pytest.raises(RuntimeError, match="broken batch"):
        chainrule.optim.swa_utils.update_bn(loader(), model)
    assert model[1].momentum == 0.1 and not model.training
