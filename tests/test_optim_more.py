"""Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD against ``torch.optim``.

Given the same parameters and gradients, the same trajectory (several steps, every option,
float32 and float64; float16 and bfloat16 bit for bit), the same state dicts (keys, order,
dtypes, values), state dicts loaded both ways, ``differentiable=True`` steps with PyTorch's
values and gradients, tensor learning rates, PyTorch's errors for bad hyper-parameters (and
nothing touched by a call that raises) and PyTorch's repr.

Tolerances: chainrule runs PyTorch's ``_single_tensor_*`` step as tensor operations, and most
trajectories are equal bit for bit, but PyTorch's CPU kernels of ``add(alpha=)``, ``lerp`` and
``div`` fuse a multiply-add into one rounding in their vectorised loops (and some of their
element loops, as compiled), where chainrule's ops round twice: a float32 or float64 step can
then be an ulp apart, which the following steps carry. Float32 and float64 are therefore
compared within a few ulps per step (``rtol`` 1e-5 and 1e-12); the half-precision cases use
tensors of 12 elements and are compared bit for bit, as in ``test_optim_half.py``.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .sweep_tools import torch_to_numpy

CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "adamax": ("Adamax", {}),
    "adamax_options": ("Adamax", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1,
                                  "eps": 1e-6}),
    "adamax_maximize": ("Adamax", {"lr": 0.05, "maximize": True}),
    "nadam": ("NAdam", {}),
    "nadam_options": ("NAdam", {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1,
                                "momentum_decay": 0.01}),
    "nadamw_maximize": ("NAdam", {"lr": 0.05, "weight_decay": 0.1,
                                  "decoupled_weight_decay": True, "maximize": True}),
    "radam": ("RAdam", {}),
    "radam_options": ("RAdam", {"lr": 0.05, "betas": (0.5, 0.7), "weight_decay": 0.1}),
    "radamw_maximize": ("RAdam", {"lr": 0.05, "weight_decay": 0.1,
                                  "decoupled_weight_decay": True, "maximize": True}),
    "adadelta": ("Adadelta", {}),
    "adadelta_options": ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-4,
                                      "weight_decay": 0.1}),
    "adadelta_maximize": ("Adadelta", {"maximize": True}),
    "rprop": ("Rprop", {}),
    "rprop_options": ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.1)}),
    "rprop_maximize": ("Rprop", {"lr": 0.05, "maximize": True}),
    "asgd": ("ASGD", {}),
    "asgd_averaging": ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 3,
                                "weight_decay": 0.1}),
    "asgd_maximize": ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
}
NAMES = sorted({kind for kind, _ in CONFIGS.values()})
SHAPES = [(3,), (2, 2), (7, 9)]


def _params(lib: Any, dtype: str, shapes: list[tuple[int, ...]] = SHAPES) -> list[Any]:
    rng = np.random.default_rng(0)
    return [lib.nn.Parameter(lib.tensor(rng.uniform(-2, 2, s).tolist(),
                                        dtype=getattr(lib, dtype))) for s in shapes]


def _set_grads(lib: Any, params: list[Any], rng: np.random.Generator) -> None:
    for p in params:
        p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)).tolist(), dtype=p.dtype)


def _run(lib: Any, config: str, dtype: str, steps: int = 12, **extra: Any) -> tuple[Any, Any]:
    kind, options = CONFIGS[config]
    params = _params(lib, dtype)
    opt = getattr(lib.optim, kind)(params, **options, **extra)
    rng = np.random.default_rng(1)
    for _ in range(steps):
        _set_grads(lib, params, rng)
        opt.step()
    return params, opt


def _numpy(t: Any) -> np.ndarray:
    t = t.detach()
    return t._data if isinstance(t, chainrule.Tensor) else torch_to_numpy(t)


def _assert_state_dicts_match(ours: dict, theirs: dict, rtol: float, atol: float) -> None:
    assert ours["param_groups"] == theirs["param_groups"]
    assert list(ours["state"]) == list(theirs["state"])
    for index, state in theirs["state"].items():
        assert list(ours["state"][index]) == list(state)
        for key, value in state.items():
            mine = ours["state"][index][key]
            assert isinstance(mine, chainrule.Tensor), key
            assert str(mine.dtype) == str(value.dtype).replace("torch", "chainrule"), key
            assert tuple(mine.shape) == tuple(value.shape), key
            np.testing.assert_allclose(_numpy(mine).astype(np.float64),
                                       _numpy(value).astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=key)


TOLERANCES = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-14)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trajectory_and_state_like_torch(config: str, dtype: str) -> None:
    ours, our_opt = _run(chainrule, config, dtype)
    theirs, their_opt = _run(torch, config, dtype)
    rtol, atol = TOLERANCES[dtype]
    for p, q in zip(ours, theirs, strict=True):
        assert p.dtype is getattr(chainrule, dtype)
        np.testing.assert_allclose(_numpy(p), _numpy(q), rtol=rtol, atol=atol)
    _assert_state_dicts_match(our_opt.state_dict(), their_opt.state_dict(), rtol, atol)


@pytest.mark.parametrize("config", ["adamax", "nadam", "radam", "rprop_options", "rprop_maximize"])
def test_small_float32_trajectory_bit_for_bit(config: str) -> None:
    """Where no fused multiply-add is involved, the float32 trajectory is PyTorch's exactly."""
    ours, _ = _run(chainrule, config, "float32")
    theirs, _ = _run(torch, config, "float32")
    for p, q in zip(ours[:2], theirs[:2], strict=True):
        np.testing.assert_array_equal(_numpy(p), _numpy(q))


_RNG = np.random.default_rng(0)
START = _RNG.uniform(-3, 3, 12).astype(np.float32)
GRADIENTS = [_RNG.uniform(-2, 2, 12).astype(np.float32) for _ in range(10)]


def _half_steps(lib: Any, config: str, dtype: str) -> tuple[Any, dict]:
    kind, options = CONFIGS[config]
    p = lib.nn.Parameter(lib.tensor(START.tolist(), dtype=getattr(lib, dtype)))
    opt = getattr(lib.optim, kind)([p], **options)
    for g in GRADIENTS:
        p.grad = lib.tensor(g.tolist(), dtype=getattr(lib, dtype))
        opt.step()
    return p, opt.state[p]


def _bits(t: Any) -> np.ndarray:
    data = _numpy(t)
    return np.where(np.isnan(data.astype(np.float32)), -1, data.view(np.int16))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_half_precision_bit_for_bit(config: str, dtype: str) -> None:
    ours, our_state = _half_steps(chainrule, config, dtype)
    theirs, their_state = _half_steps(torch, config, dtype)
    assert ours.dtype is getattr(chainrule, dtype)
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))
    assert list(our_state) == list(their_state)
    for key, value in their_state.items():
        mine = our_state[key]
        assert str(mine.dtype) == str(value.dtype).replace("torch", "chainrule"), key
        if value.dim():
            np.testing.assert_array_equal(_bits(mine), _bits(value), err_msg=key)
        else:
            assert mine.item() == value.item(), key


# ----------------------------------------------------------------------------------------------
# state dicts


def _convert(value: Any, to: Any) -> Any:
    """State-dict values moved to the other library (tensors copied, dtypes kept)."""
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        array = _numpy(value).copy()
        return to.tensor(array.tolist(), dtype=getattr(to, str(array.dtype)))
    if isinstance(value, dict):
        return {k: _convert(v, to) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_convert(v, to) for v in value)
    return value


def _groups(lib: Any, config: str) -> tuple[list[Any], Any]:
    kind, options = CONFIGS[config]
    params = _params(lib, "float32", [(3,), (2, 2)])
    opt = getattr(lib.optim, kind)([{"params": params[:1]},
                                    {"params": params[1:], "lr": 0.03}], **options)
    return params, opt


def _steps(lib: Any, params: list[Any], opt: Any, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(count):
        _set_grads(lib, params, rng)
        opt.step()


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_state_dict_round_trip_continues_identically(config: str) -> None:
    params, opt = _groups(chainrule, config)
    _steps(chainrule, params, opt, 3, seed=2)
    saved = copy.deepcopy(opt.state_dict())
    start = [p.detach().clone() for p in params]
    _steps(chainrule, params, opt, 3, seed=3)
    clone_params, clone = _groups(chainrule, config)
    for p, q in zip(clone_params, start, strict=True):
        p.data = q.clone()
    clone.load_state_dict(saved)
    _steps(chainrule, clone_params, clone, 3, seed=3)
    for p, q in zip(params, clone_params, strict=True):
        np.testing.assert_array_equal(_numpy(p), _numpy(q))
    _assert_state_dicts_match(clone.state_dict(), _convert(opt.state_dict(), torch), 0, 0)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_loading_torch_state_dict_and_back(config: str) -> None:
    source_params, source = _groups(torch, config)
    _steps(torch, source_params, source, 3, seed=2)
    saved = source.state_dict()
    params, opt = _groups(chainrule, config)
    for p, q in zip(params, source_params, strict=True):
        p.data = chainrule.tensor(_numpy(q).tolist())
    opt.load_state_dict(_convert(saved, chainrule))
    _assert_state_dicts_match(opt.state_dict(), saved, 0, 0)
    _steps(chainrule, params, opt, 3, seed=3)
    _steps(torch, source_params, source, 3, seed=3)
    for p, q in zip(params, source_params, strict=True):
        np.testing.assert_allclose(_numpy(p), _numpy(q), rtol=1e-6, atol=1e-7)
    back_params, back = _groups(torch, config)
    back.load_state_dict(_convert(opt.state_dict(), torch))
    _assert_state_dicts_match(opt.state_dict(), back.state_dict(), 0, 0)


OLDER_STATE = {"NAdam": ("step", "mu_product"), "ASGD": ("step", "eta", "mu")}


@pytest.mark.parametrize("name", NAMES)
def test_older_state_dict_numbers_become_tensors(name: str) -> None:
    """State dicts of older versions: no foreach/maximize/... keys, numbers for ``step``
    (and NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``)."""
    results = []
    for lib in (chainrule, torch):
        p = lib.nn.Parameter(lib.ones(3))
        opt = getattr(lib.optim, name)([p], lr=0.01)
        p.grad = lib.ones(3)
        opt.step()
        saved = opt.state_dict()
        for group in saved["param_groups"]:
            for key in ("foreach", "maximize", "differentiable", "capturable",
                        "decoupled_weight_decay"):
                group.pop(key, None)
        for key in OLDER_STATE.get(name, ("step",)):
            saved["state"][0][key] = float(saved["state"][0][key].item())
        fresh = getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(3))], lr=0.5)
        fresh.load_state_dict(saved)
        state = fresh.state_dict()
        results.append((state["param_groups"],
                        {k: (type(v).__name__, str(v.dtype).split(".")[-1], v.tolist())
                         for k, v in state["state"][0].items()}))
    assert results[0] == results[1]


# ----------------------------------------------------------------------------------------------
# differentiable=True, tensor learning rates, foreach

DIFFERENTIABLE = {
    "adamax": ("Adamax", {"lr": 0.9, "weight_decay": 0.1}, ["exp_avg", "exp_inf"]),
    "adamax_maximize": ("Adamax", {"lr": 0.9, "maximize": True}, ["exp_avg", "exp_inf"]),
    "nadam": ("NAdam", {"lr": 0.9, "weight_decay": 0.1}, ["exp_avg", "exp_avg_sq"]),
    "nadamw": ("NAdam", {"lr": 0.9, "weight_decay": 0.1, "decoupled_weight_decay": True,
                         "maximize": True}, ["exp_avg", "exp_avg_sq"]),
    "radam": ("RAdam", {"lr": 0.9, "weight_decay": 0.1}, ["exp_avg", "exp_avg_sq"]),
    "radam_rectified": ("RAdam", {"lr": 0.9, "betas": (0.5, 0.5)}, ["exp_avg", "exp_avg_sq"]),
    "adadelta": ("Adadelta", {"lr": 0.9, "weight_decay": 0.1, "maximize": True},
                 ["square_avg", "acc_delta"]),
    "rprop": ("Rprop", {"lr": 0.9}, ["prev", "step_size"]),
    "asgd": ("ASGD", {"lr": 0.9, "t0": 0, "weight_decay": 0.1}, ["ax"]),
}


SCALAR_STATE = {"NAdam": {"mu_product": 0.9}, "ASGD": {"eta": 0.9, "mu": 1.0}}


def _differentiable(lib: Any, case: str, steps: int) -> Any:
    """PyTorch's own check: step a clone of ``p`` whose gradient is ``grad``, from state tensors
    given as leaves; the outputs' values and their gradients with respect to the leaves."""
    name, options, keys = DIFFERENTIABLE[case]
    rng = np.random.default_rng(0)

    def leaf(low: float = 0.1, high: float = 1.0) -> Any:
        return lib.tensor(rng.uniform(low, high, 6).tolist(), dtype=lib.float64,
                          requires_grad=True)

    p0, grad = leaf(-1, 1), leaf(-1, 1)
    given = {key: leaf() for key in keys}
    p = p0.clone()
    p.grad = grad
    opt = getattr(lib.optim, name)([p], **options, differentiable=True)
    opt.state[p]["step"] = lib.tensor(1.0)
    for key, value in SCALAR_STATE.get(name, {}).items():
        opt.state[p][key] = lib.tensor(value)
    opt.state[p].update({k: v.clone() for k, v in given.items()})
    try:
        for _ in range(steps):
            opt.step()
        outputs = [p] + [v for v in opt.state[p].values()
                         if isinstance(v, lib.Tensor) and v.requires_grad]
        total = sum((out * (k + 1)).sum() for k, out in enumerate(outputs))
        grads = lib.autograd.grad(total, [p0, grad, *given.values()], allow_unused=True)
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e).split(":")[0]
    return ([_numpy(o) for o in outputs], [None if g is None else _numpy(g) for g in grads])


@pytest.mark.parametrize("steps", [1, 2])
@pytest.mark.parametrize("case", sorted(DIFFERENTIABLE))
def test_differentiable_steps_values_and_gradients_like_torch(case: str, steps: int) -> None:
    ours = _differentiable(chainrule, case, steps)
    theirs = _differentiable(torch, case, steps)
    if isinstance(theirs[0], str):  # an error (an in-place change of what was saved)
        assert ours == theirs
        return
    for a, b in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_step_is_recorded_only_when_differentiable(name: str) -> None:
    seen = []
    for lib in (chainrule, torch):
        leaf = lib.nn.Parameter(lib.ones(3))
        leaf.grad = lib.ones(3)
        getattr(lib.optim, name)([leaf]).step()
        p = lib.ones(3, requires_grad=True).clone()
        p.grad = lib.ones(3)
        getattr(lib.optim, name)([p], differentiable=True).step()
        seen.append((leaf.grad_fn, p.grad_fn is not None, lib.is_grad_enabled()))
    assert seen[0] == seen[1] == (None, True, True)


@pytest.mark.parametrize("config", ["adamax_options", "nadamw_maximize", "radam_options",
                                    "adadelta_options", "rprop_options", "asgd_averaging"])
def test_tensor_lr_like_torch(config: str) -> None:
    kind, options = CONFIGS[config]
    results = []
    for lib in (chainrule, torch):
        params = _params(lib, "float32", [(3,), (2, 2)])
        opt = getattr(lib.optim, kind)(params, **dict(options, lr=lib.tensor([0.05])))
        _steps(lib, params, opt, 6, seed=4)
        results.append(([_numpy(p) for p in params], opt.state_dict()))
    for a, b in zip(results[0][0], results[1][0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    ours, theirs = results[0][1], results[1][1]
    assert [g["lr"].tolist() for g in ours["param_groups"]] == [
        g["lr"].tolist() for g in theirs["param_groups"]]


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_foreach_accepted_and_close_to_torch(config: str) -> None:
    """``foreach=True`` runs PyTorch's multi-tensor kernels, which round a little otherwise;
    chainrule has one implementation, the single-tensor one."""
    ours, _ = _run(chainrule, config, "float32", steps=5, foreach=True)
    theirs, _ = _run(torch, config, "float32", steps=5, foreach=True)
    for p, q in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(_numpy(p), _numpy(q), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# errors and repr

ERRORS = {
    "adamax lr": ("Adamax", {"lr": -1.0}),
    "adamax eps": ("Adamax", {"eps": -1e-3}),
    "adamax beta0": ("Adamax", {"betas": (1.0, 0.9)}),
    "adamax beta1": ("Adamax", {"betas": (0.9, -0.5)}),
    "adamax weight_decay": ("Adamax", {"weight_decay": -0.1}),
    "adamax tensor lr": ("Adamax", {"lr": "two"}),
    "nadam lr": ("NAdam", {"lr": -0.5}),
    "nadam eps": ("NAdam", {"eps": -1.0}),
    "nadam beta0": ("NAdam", {"betas": (-0.1, 0.9)}),
    "nadam beta1": ("NAdam", {"betas": (0.9, 1.0)}),
    "nadam weight_decay": ("NAdam", {"weight_decay": -1}),
    "nadam momentum_decay": ("NAdam", {"momentum_decay": -0.1}),
    "nadam tensor lr": ("NAdam", {"lr": "two"}),
    "radam lr": ("RAdam", {"lr": -1}),
    "radam eps": ("RAdam", {"eps": -1}),
    "radam beta0": ("RAdam", {"betas": (1.5, 0.9)}),
    "radam beta1": ("RAdam", {"betas": (0.5, 1.5)}),
    "radam weight_decay": ("RAdam", {"weight_decay": -2.0}),
    "adadelta lr": ("Adadelta", {"lr": -1}),
    "adadelta rho": ("Adadelta", {"rho": 1.5}),
    "adadelta rho negative": ("Adadelta", {"rho": -0.1}),
    "adadelta eps": ("Adadelta", {"eps": -1}),
    "adadelta weight_decay": ("Adadelta", {"weight_decay": -1}),
    "adadelta tensor lr": ("Adadelta", {"lr": "two"}),
    "rprop lr": ("Rprop", {"lr": -1}),
    "rprop etas": ("Rprop", {"etas": (1.5, 1.2)}),
    "rprop etas low": ("Rprop", {"etas": (0.5, 0.9)}),
    "rprop etas zero": ("Rprop", {"etas": (0.0, 1.2)}),
    "asgd lr": ("ASGD", {"lr": -1}),
    "asgd weight_decay": ("ASGD", {"weight_decay": -1}),
    "asgd tensor lr": ("ASGD", {"lr": "two"}),
}


def _outcome(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_invalid_hyperparameters_like_torch(case: str) -> None:
    kind, options = ERRORS[case]

    def build(lib: Any) -> Any:
        given = {k: lib.tensor([0.1, 0.2]) if v == "two" else v for k, v in options.items()}
        return getattr(lib.optim, kind)([lib.nn.Parameter(lib.ones(2))], **given)

    theirs = _outcome(lambda: build(torch))
    assert theirs is not None
    assert _outcome(lambda: build(chainrule)) == theirs


CAPTURABLE_MESSAGES = {
    "Adamax": "params and state_steps", "NAdam": "params, mu_products and state_steps",
    "RAdam": "params and state_steps", "Adadelta": "params and state_steps",
    "Rprop": "params and state_steps", "ASGD": "params, mus, etas, and state_steps",
}


@pytest.mark.parametrize("name", NAMES)
def test_capturable_on_cpu_refused_like_torch_and_nothing_touched(name: str) -> None:
    outcomes = []
    for lib in (chainrule, torch):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3)
        opt = getattr(lib.optim, name)([p], capturable=True)
        outcomes.append(_outcome(opt.step))
        if lib is chainrule:
            assert p.tolist() == [1.0, 1.0, 1.0] and p._version == 0
            assert not opt.state
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] == "AssertionError" and CAPTURABLE_MESSAGES[name] in outcomes[0][1]


def _tensor_lr_needing_grad(lib: Any, name: str) -> Any:
    p = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True).clone()
    lr = lib.tensor(0.1, dtype=lib.float64, requires_grad=True)
    opt = getattr(lib.optim, name)([p], lr=lr, weight_decay=0.1, differentiable=True) if (
        name != "Rprop") else lib.optim.Rprop([p], lr=lr, differentiable=True)
    try:
        for g in ([1.0, -2.0, 0.5], [0.3, 0.2, -0.1]):
            p.grad = lib.tensor(g, dtype=lib.float64)
            opt.step()
        (d_lr,) = lib.autograd.grad(p.sum(), lr, allow_unused=True)
    except (TypeError, RuntimeError) as e:
        if lib is chainrule and isinstance(e, TypeError):  # raised before anything moved
            assert p.tolist() == [0.5, -1.0, 2.0] and not opt.state
        return type(e).__name__, str(e).split(":")[0].replace("torch.", "chainrule.")
    return p.tolist(), None if d_lr is None else d_lr.item()


@pytest.mark.parametrize("name", NAMES)
def test_differentiable_tensor_lr_needing_grad_like_torch(name: str) -> None:
    """Where PyTorch passes ``lr`` (or a product of it) as a number, a tensor needing grad is
    its TypeError (NAdam's in-place update of what it saved, its RuntimeError); elsewhere the
    step is differentiable in ``lr``."""
    ours, theirs = (_tensor_lr_needing_grad(lib, name) for lib in (chainrule, torch))
    if isinstance(theirs[0], str):
        assert ours == theirs
        return
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert (ours[1] is None) == (theirs[1] is None)
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_repr_like_torch(config: str) -> None:
    kind, options = CONFIGS[config]
    reprs = []
    for lib in (chainrule, torch):
        params = _params(lib, "float32", [(3,), (2,)])
        opt = getattr(lib.optim, kind)([{"params": params[:1]},
                                        {"params": params[1:], "lr": 0.5}], **options)
        reprs.append(repr(opt))
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("name", NAMES)
def test_exported_with_torch_signature(name: str) -> None:
    import inspect

    ours = inspect.signature(getattr(chainrule.optim, name))
    theirs = inspect.signature(getattr(torch.optim, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()]
    assert name in chainrule.optim.__all__


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta", "ASGD", "Rprop",
                                  "Adam", "AdamW", "RMSprop"])
def test_a_refused_step_moves_no_group(name: str) -> None:
    # Every group is checked before any parameter moves: the first group used to be updated
    # (and its state created) before the second group's refusal was raised; Adam, AdamW and
    # RMSprop stepped with capturable=True where PyTorch refuses it on the CPU.
    errors = []
    for lib in (chainrule, torch):
        first, second = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))
        opt = getattr(lib.optim, name)([{"params": [first]},
                                        {"params": [second], "capturable": True}])
        (first.sum() + second.sum()).backward()
        with pytest.raises(AssertionError) as info:
            opt.step()
        errors.append(str(info.value))
        if lib is chainrule:
            assert first.tolist() == [1.0, 1.0] and second.tolist() == [1.0, 1.0]
            assert not opt.state
    assert errors[0] == errors[1]
