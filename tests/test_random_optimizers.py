"""Random optimizer programs compared with PyTorch: every ``torch.optim`` optimizer with random
hyper-parameters (weight decay, momentum, Nesterov, dampening, amsgrad, maximize, centered,
foreach/fused flags), 0-3 parameters of 0-3 dims in float32 or float64, gradients missing on
some steps, a second parameter group, a group added after some steps, the state saved and
loaded into a new optimizer mid-training, and a learning-rate schedule (each scheduler,
chained, sequential, ReduceLROnPlateau). After every step the parameters, every state tensor
(values, dtype, shape) and the groups' learning rates must equal PyTorch's to rounding.

These found SGD's momentum buffer of a 0-dim parameter never updated after its first step
(a NumPy scalar copied in place of an array) and Adagrad failing (KeyError 'step') on a
parameter of a group added after construction.

Left out: ``SGD(fused=True)`` with momentum when some parameter gets its first gradient later
than the others raises a TypeError in PyTorch 2.13 (its fused kernel is handed a list holding
``None`` momentum buffers), a PyTorch bug chainrule does not copy.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

NAMES = [
    "SGD",
    "Adam",
    "AdamW",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "ASGD",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Rprop",
    "Adafactor",
    "Muon",
]
SCHEDULERS = [
    "none",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LinearLR",
    "ConstantLR",
    "PolynomialLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "OneCycleLR",
    "Chained",
    "Sequential",
    "Plateau",
    "LambdaLR",
    "MultiplicativeLR",
]


class _Draw:
    """Random choices from one seed."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def real(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high))

    def pick(self, options: list[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def flag(self) -> bool:
        return bool(self.rng.integers(2))

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high))


def _betas(d: _Draw) -> tuple[float, float]:
    return d.real(0.5, 0.99), d.real(0.8, 0.9999)


def _hyper_parameters(d: _Draw, name: str) -> dict[str, Any]:
    decay = d.pick([0, d.real(0, 0.1)])
    eps = d.pick([1e-8, d.real(1e-6, 1e-2)])
    common = {"maximize": d.flag(), "foreach": d.pick([None, True, False])}
    if name == "SGD":
        kw = {
            "lr": d.real(0.001, 0.5),
            "momentum": d.pick([0, 0.9, d.real(0, 1)]),
            "weight_decay": decay,
            **common,
        }
        if kw["momentum"] and d.flag():
            kw["nesterov"] = True
        else:
            kw["dampening"] = d.pick([0, d.real(0, 1)])
        if not kw["momentum"] and d.flag():
            kw["fused"] = d.flag()
            del kw["foreach"]
        return kw
    if name in ("Adam", "AdamW"):
        kw = {
            "lr": d.real(0.001, 0.3),
            "betas": _betas(d),
            "eps": eps,
            "weight_decay": decay,
            "amsgrad": d.flag(),
            **common,
        }
        if name == "Adam" and d.flag():
            kw["decoupled_weight_decay"] = True
        if d.flag():
            kw["fused"] = d.flag()
            del kw["foreach"]
        return kw
    if name == "Adagrad":
        kw = {
            "lr": d.real(0.01, 0.5),
            "lr_decay": d.pick([0, d.real(0, 0.1)]),
            "weight_decay": decay,
            "initial_accumulator_value": d.pick([0, d.real(0, 1)]),
            "eps": d.pick([1e-10, d.real(1e-6, 1e-2)]),
            **common,
        }
        if d.flag():
            kw["fused"] = d.flag()
            del kw["foreach"]
        return kw
    if name == "Adadelta":
        return {
            "lr": d.real(0.1, 2),
            "rho": d.real(0.5, 0.99),
            "eps": eps,
            "weight_decay": decay,
            **common,
        }
    if name == "Adamax":
        return {
            "lr": d.real(0.001, 0.3),
            "betas": _betas(d),
            "eps": eps,
            "weight_decay": decay,
            **common,
        }
    if name == "ASGD":
        return {
            "lr": d.real(0.001, 0.3),
            "lambd": d.pick([1e-4, d.real(0, 0.1)]),
            "alpha": d.real(0.5, 1),
            "t0": d.pick([1e6, float(d.integer(0, 5))]),
            "weight_decay": decay,
            **common,
        }
    if name == "NAdam":
        return {
            "lr": d.real(0.001, 0.3),
            "betas": _betas(d),
            "eps": eps,
            "weight_decay": decay,
            "momentum_decay": d.pick([4e-3, d.real(0, 0.1)]),
            "decoupled_weight_decay": d.flag(),
            **common,
        }
    if name == "RAdam":
        return {
            "lr": d.real(0.001, 0.3),
            "betas": _betas(d),
            "eps": eps,
            "weight_decay": decay,
            "decoupled_weight_decay": d.flag(),
            **common,
        }
    if name == "RMSprop":
        return {
            "lr": d.real(0.001, 0.1),
            "alpha": d.real(0.5, 0.999),
            "eps": eps,
            "weight_decay": decay,
            "momentum": d.pick([0, d.real(0, 0.95)]),
            "centered": d.flag(),
            **common,
        }
    if name == "Rprop":
        return {
            "lr": d.real(0.001, 0.3),
            "etas": (d.real(0.1, 0.9), d.real(1.01, 2)),
            "step_sizes": (d.pick([1e-6, d.real(1e-4, 1e-2)]), d.pick([50, d.real(0.05, 1)])),
            **common,
        }
    if name == "Adafactor":
        return {
            "lr": d.real(0.001, 0.3),
            "beta2_decay": d.real(-1, -0.1),
            "eps": (d.pick([None, d.real(1e-8, 1e-3)]), d.real(1e-4, 1e-2)),
            "d": d.real(0.5, 2),
            "weight_decay": decay,
            "maximize": common["maximize"],
            "foreach": d.pick([None, False]),
        }
    return {
        "lr": d.real(0.001, 0.1),
        "weight_decay": decay,
        "momentum": d.real(0.5, 0.99),
        "nesterov": d.flag(),
        "ns_steps": d.integer(1, 7),
        "adjust_lr_fn": d.pick([None, "original", "match_rms_adamw"]),
    }


def _scheduler(lib: Any, opt: Any, kind: str, seed: int) -> Any:
    d = _Draw(seed)
    s = lib.optim.lr_scheduler
    cycles_momentum = ("momentum" in opt.defaults or "betas" in opt.defaults) and d.flag()
    makers = {
        "none": lambda: None,
        "StepLR": lambda: s.StepLR(opt, step_size=d.integer(1, 4), gamma=d.real(0.1, 0.9)),
        "MultiStepLR": lambda: s.MultiStepLR(
            opt, milestones=sorted(d.rng.integers(1, 6, 3).tolist()), gamma=d.real(0.1, 0.9)
        ),
        "ExponentialLR": lambda: s.ExponentialLR(opt, gamma=d.real(0.5, 0.99)),
        "CosineAnnealingLR": lambda: s.CosineAnnealingLR(
            opt, T_max=d.integer(1, 6), eta_min=d.pick([0, d.real(0, 0.01)])
        ),
        "LinearLR": lambda: s.LinearLR(
            opt, start_factor=d.real(0.1, 1), end_factor=d.real(0.5, 1), total_iters=d.integer(1, 6)
        ),
        "ConstantLR": lambda: s.ConstantLR(opt, factor=d.real(0.1, 1), total_iters=d.integer(1, 6)),
        "PolynomialLR": lambda: s.PolynomialLR(
            opt, total_iters=d.integer(1, 6), power=d.real(0.5, 3)
        ),
        "CosineAnnealingWarmRestarts": lambda: s.CosineAnnealingWarmRestarts(
            opt, T_0=d.integer(1, 4), T_mult=d.integer(1, 3), eta_min=d.pick([0, d.real(0, 0.01)])
        ),
        "CyclicLR": lambda: s.CyclicLR(
            opt,
            base_lr=d.real(0.001, 0.01),
            max_lr=d.real(0.02, 0.1),
            step_size_up=d.integer(1, 4),
            mode=d.pick(["triangular", "triangular2", "exp_range"]),
            gamma=d.real(0.8, 1),
            cycle_momentum=cycles_momentum,
        ),
        "OneCycleLR": lambda: s.OneCycleLR(
            opt,
            max_lr=d.real(0.01, 0.2),
            total_steps=20,
            pct_start=d.real(0.1, 0.5),
            anneal_strategy=d.pick(["cos", "linear"]),
            cycle_momentum=cycles_momentum,
            three_phase=d.flag(),
        ),
        "Chained": lambda: s.ChainedScheduler(
            [
                s.ExponentialLR(opt, gamma=d.real(0.5, 0.99)),
                s.StepLR(opt, step_size=2, gamma=d.real(0.1, 0.9)),
            ]
        ),
        "Sequential": lambda: s.SequentialLR(
            opt,
            schedulers=[
                s.LinearLR(opt, start_factor=d.real(0.1, 1), total_iters=2),
                s.ExponentialLR(opt, gamma=d.real(0.5, 0.99)),
            ],
            milestones=[d.integer(1, 4)],
        ),
        "Plateau": lambda: s.ReduceLROnPlateau(
            opt,
            mode=d.pick(["min", "max"]),
            factor=d.real(0.1, 0.9),
            patience=d.integer(0, 3),
            threshold=d.real(0, 0.1),
            threshold_mode=d.pick(["rel", "abs"]),
            cooldown=d.integer(0, 2),
            min_lr=d.pick([0, d.real(0, 0.01)]),
        ),
        "LambdaLR": lambda: s.LambdaLR(opt, lr_lambda=lambda epoch: 0.9**epoch),
        "MultiplicativeLR": lambda: s.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95),
    }
    return makers[kind]()


def _program(seed: int) -> dict[str, Any]:
    d = _Draw(seed)
    name = d.pick(NAMES)
    dtype = d.pick(["float32", "float64"])
    shapes = []
    for _ in range(d.integer(1, 4)):
        if name == "Muon":
            shapes.append((d.integer(1, 5), d.integer(1, 5)))
        else:
            shapes.append(tuple(int(s) for s in d.rng.integers(1, 4, d.integer(0, 4))))
    extra_shape = tuple(int(s) for s in d.rng.integers(1, 4, 2))
    steps = d.integer(1, 7)
    return {
        "name": name,
        "dtype": dtype,
        "shapes": shapes,
        "init": [d.rng.standard_normal(s).astype(dtype) for s in shapes],
        "kw": _hyper_parameters(d, name),
        "scheduler": d.pick(SCHEDULERS),
        "steps": steps,
        "add_group_at": d.integer(0, steps + 2),
        "reload_at": d.integer(1, steps + 2),
        "extra_init": d.rng.standard_normal(extra_shape).astype(dtype),
        "grads": [
            [
                None if d.rng.random() < 0.15 else d.rng.standard_normal(s).astype(dtype)
                for s in [*shapes, extra_shape]
            ]
            for _ in range(steps)
        ],
        "metrics": [float(d.rng.standard_normal()) for _ in range(steps)],
        "scheduler_seed": d.integer(0, 1 << 30),
        "split": len(shapes) > 1 and d.rng.random() < 0.3,
        "group_lr": d.real(0.01, 0.2),
    }


def _snapshot(opt: Any, params: list[Any]) -> tuple[Any, ...]:
    values = [p.detach().numpy().copy() for p in params]
    states = [
        {
            k: v.detach().numpy().copy() if hasattr(v, "detach") else v
            for k, v in opt.state[p].items()
        }
        for p in params
    ]
    lrs = [float(g["lr"]) for g in opt.param_groups]
    return values, states, lrs


def _run(lib: Any, program: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The program's snapshots after each step, or the exception's type name."""
    kw, name, kind = program["kw"], program["name"], program["scheduler"]
    params = [lib.tensor(a.copy(), requires_grad=True) for a in program["init"]]
    groups: Any = params
    if program["split"]:
        groups = [{"params": params[:1]}, {"params": params[1:], "lr": program["group_lr"]}]
    opt = getattr(lib.optim, name)(groups, **kw)
    sched = _scheduler(lib, opt, kind, program["scheduler_seed"])
    extra = lib.tensor(program["extra_init"].copy(), requires_grad=True)
    added = False
    snapshots = []
    for i in range(program["steps"]):
        if i == program["add_group_at"] and kind == "none" and name != "Muon":
            opt.add_param_group({"params": [extra]})
            added = True
        if i == program["reload_at"]:
            saved = opt.state_dict()
            opt = getattr(lib.optim, name)(groups, **kw)
            if added:
                opt.add_param_group({"params": [extra]})
            opt.load_state_dict(saved)
            if sched is not None:
                saved_sched = sched.state_dict()
                for s in [sched, *getattr(sched, "_schedulers", [])]:
                    s.optimizer = opt
                sched.load_state_dict(saved_sched)
        live = params + ([extra] if added else [])
        grads = program["grads"][i][: len(params)] + ([program["grads"][i][-1]] if added else [])
        for p, g in zip(live, grads, strict=True):
            p.grad = None if g is None else lib.tensor(g.copy())
        opt.step()
        if sched is not None:
            if kind == "Plateau":
                sched.step(program["metrics"][i])
            else:
                sched.step()
        snapshots.append(_snapshot(opt, live))
    return snapshots


def _outcome(lib: Any, program: dict[str, Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _run(lib, program)
    except Exception as error:  # noqa: BLE001 - the exception's type is compared
        return type(error).__name__


def _assert_close(expected: Any, got: Any, where: str) -> None:
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), where
        assert got.dtype == expected.dtype and got.shape == expected.shape, where
        tol = 1e-5 if expected.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=where)
    else:
        assert float(got) == pytest.approx(float(expected), rel=1e-6), where


@pytest.mark.parametrize("block", range(10))
def test_random_optimizer_programs(block: int) -> None:
    for seed in range(block * 30, block * 30 + 30):
        program = _program(seed)
        expected, got = _outcome(torch, program), _outcome(chainrule, program)
        if isinstance(expected, str) or isinstance(got, str):
            assert got == expected, f"seed {seed}: {program['name']} {program['kw']}"
            continue
        for step, ((pt, st, lt), (pc, sc, lc)) in enumerate(zip(expected, got, strict=True)):
            where = f"seed {seed} step {step}: {program['name']} {program['kw']}"
            for a, b in zip(pt, pc, strict=True):
                _assert_close(a, b, where)
            for state_t, state_c in zip(st, sc, strict=True):
                assert set(state_t) == set(state_c), where
                for key, value in state_t.items():
                    _assert_close(value, state_c[key], f"{where} state {key}")
            np.testing.assert_allclose(lc, lt, rtol=1e-6, err_msg=where)


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_of_a_0_dim_parameter_updates(nesterov: bool) -> None:
    results = []
    for lib in (torch, chainrule):
        p = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.5, nesterov=nesterov, weight_decay=0.1)
        for g in (0.7, -0.2, 0.4):
            p.grad = lib.tensor(g, dtype=lib.float64)
            opt.step()
        results.append((p.item(), opt.state[p]["momentum_buffer"].item()))
    assert results[1] == pytest.approx(results[0], rel=1e-14)


@pytest.mark.parametrize("fused", [None, False, True])
def test_adagrad_parameter_of_a_group_added_later(fused: bool | None) -> None:
    results = []
    for lib in (torch, chainrule):
        p = lib.zeros(2, requires_grad=True)
        q = lib.ones(2, requires_grad=True)
        opt = lib.optim.Adagrad([p], initial_accumulator_value=0.5, fused=fused)
        # the new parameter's accumulator starts at the optimizer's default, not the group's
        opt.add_param_group({"params": [q], "initial_accumulator_value": 2.0})
        for _ in range(2):
            q.grad = lib.tensor([1.0, -3.0])
            opt.step()
        state = opt.state[q]
        results.append(
            (
                q.tolist(),
                state["sum"].tolist(),
                state["step"].item(),
                str(state["step"].dtype).split(".")[-1],
                p.tolist(),
            )
        )
    assert results[1] == results[0]


@pytest.mark.parametrize("weight_decay", [0.0, 0.05])
@pytest.mark.parametrize("maximize", [False, True])
def test_asgd_foreach_rounds_as_pytorch(weight_decay: float, maximize: bool) -> None:
    """foreach=True computes the new eta from the float32 step tensor (float32 roundings):
    float64 parameters then differ from the single-tensor path by ~1e-7 relative."""
    rng = np.random.default_rng(0)
    init, grads = rng.standard_normal(3), [rng.standard_normal(3) for _ in range(6)]
    results = []
    for lib in (torch, chainrule):
        p = lib.tensor(init.copy(), requires_grad=True)
        opt = lib.optim.ASGD(
            [p],
            lr=0.2,
            lambd=0.01,
            alpha=0.8,
            t0=2.0,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=True,
        )
        for g in grads:
            p.grad = lib.tensor(g.copy())
            opt.step()
        results.append([p.detach().numpy(), *(v.numpy() for v in opt.state[p].values())])
    for expected, got in zip(*results, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)


def test_asgd_foreach_refuses_differentiable() -> None:
    for lib in (torch, chainrule):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.ASGD([p], foreach=True, differentiable=True)
        p.grad = lib.ones(2)
        with pytest.raises(AssertionError, match="_foreach ops don't support autograd"):
            opt.step()
        assert p.tolist() == [1.0, 1.0]
