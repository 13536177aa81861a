"""Adafactor (issue 16, torch.optim) against PyTorch: trajectories of matrices (factored
second moment), vectors and 3-d tensors over several steps with its options, state, state_dict
round trips, errors and repr."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

SHAPES = ((3, 4), (4,), (2, 3, 2), (1, 5))
OPTIONS = {
    "defaults": {}, "lr and decay": {"lr": 0.05, "weight_decay": 0.1},
    "maximize, d": {"maximize": True, "d": 2.0}, "eps": {"eps": (1e-3, 1e-2)},
    "beta2_decay": {"beta2_decay": -0.5}, "tensor lr": {"lr": "tensor"},
}


def _run(lib: ModuleType, dtype: str, options: dict[str, Any], steps: int = 5) -> Any:
    rng = np.random.default_rng(0)
    params = [lib.nn.Parameter(lib.from_numpy(rng.standard_normal(s).astype(dtype)))
              for s in SHAPES]
    kwargs = dict(options)
    if kwargs.get("lr") == "tensor":
        kwargs["lr"] = lib.tensor(0.02)
    optimizer = lib.optim.Adafactor(params, **kwargs)
    for _ in range(steps):
        for p, s in zip(params, SHAPES, strict=True):
            p.grad = lib.from_numpy(rng.standard_normal(s).astype(dtype))
        optimizer.step()
    state = [{k: (tuple(v.shape), str(v.dtype).split(".")[-1], v.numpy().astype(np.float64))
              for k, v in optimizer.state[p].items()} for p in params]
    return [p.detach().numpy().astype(np.float64) for p in params], state, optimizer


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trajectory(dtype: str, options: str) -> None:
    """Parameters and state within a few ulps of PyTorch's (norms and sums are ordered
    differently, and PyTorch fuses add's multiply-add), state keys, shapes and dtypes equal."""
    ours, ours_state, _ = _run(chainrule, dtype, OPTIONS[options])
    theirs, theirs_state, _ = _run(torch, dtype, OPTIONS[options])
    rtol = 1e-6 if dtype == "float32" else 1e-13
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    for a, b in zip(ours_state, theirs_state, strict=True):
        assert {k: v[:2] for k, v in a.items()} == {k: v[:2] for k, v in b.items()}
        for key in a:
            np.testing.assert_allclose(a[key][2], b[key][2], rtol=10 * rtol, atol=0)


def test_state_dict_round_trip_and_repr() -> None:
    seen = {}
    for name, lib in (("chainrule", chainrule), ("torch", torch)):
        _, _, optimizer = _run(lib, "float64", {"lr": 0.03})
        state = optimizer.state_dict()
        params = [lib.nn.Parameter(p.detach().clone()) for p in optimizer.param_groups[0][
            "params"]]
        fresh = lib.optim.Adafactor(params, lr=0.03)
        fresh.load_state_dict(state)
        for p in params:
            p.grad = lib.ones_like(p)
        fresh.step()
        seen[name] = ([np.round(p.detach().numpy(), 10).tolist() for p in params],
                      sorted(state["param_groups"][0]), repr(optimizer).replace("torch", ""),
                      float(fresh.state[params[0]]["step"]))
    assert seen["chainrule"] == seen["torch"]


@pytest.mark.parametrize("kwargs", [
    {"lr": -1.0}, {"beta2_decay": 0.5}, {"eps": (-1.0, 1e-3)}, {"eps": (None, -1.0)},
    {"d": 0.5}, {"weight_decay": -0.1}, {"lr": "2-element tensor"},
])
def test_errors(kwargs: dict[str, Any]) -> None:
    def outcome(lib: ModuleType) -> Any:
        args = dict(kwargs)
        if args.get("lr") == "2-element tensor":
            args["lr"] = lib.tensor([0.1, 0.2])
        try:
            lib.optim.Adafactor([lib.nn.Parameter(lib.ones(2))], **args)
        except ValueError as error:
            return str(error)
        return None

    assert outcome(chainrule) == outcome(torch) is not None
