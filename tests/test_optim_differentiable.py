"""Optimizers against ``torch.optim`` beyond plain floats: ``differentiable=True`` steps (their
values and gradients with respect to the parameters, the gradients, the state and a tensor
``lr``, as PyTorch's own tests check them, plus a finite-difference gradcheck), tensor
learning rates, state dicts from older versions (no ``maximize``, a number as ``step``), and
state dicts moving between chainrule and PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import torch

# (optimizer, options, state tensors given to the step, lr as a tensor needing grad)
CASES = {
    "sgd": ("SGD", {"lr": 0.9}, [], False),
    "sgd_momentum": ("SGD", {"lr": 0.9, "momentum": 0.9, "dampening": 0.2,
                             "weight_decay": 0.1}, ["momentum_buffer"], False),
    "sgd_nesterov_maximize": ("SGD", {"lr": 0.9, "momentum": 0.9, "nesterov": True,
                                      "weight_decay": 0.1, "maximize": True},
                              ["momentum_buffer"], False),
    "sgd_tensor_lr": ("SGD", {"lr": 0.9}, [], True),
    "sgd_momentum_tensor_lr": ("SGD", {"lr": 0.9, "momentum": 0.5}, ["momentum_buffer"], True),
    "adam": ("Adam", {"lr": 0.9}, ["exp_avg", "exp_avg_sq"], False),
    "adam_amsgrad_wd": ("Adam", {"lr": 0.9, "amsgrad": True, "weight_decay": 0.1},
                        ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"], False),
    "adam_decoupled_maximize": ("Adam", {"lr": 0.9, "maximize": True, "weight_decay": 0.1,
                                         "decoupled_weight_decay": True},
                                ["exp_avg", "exp_avg_sq"], False),
    "adam_tensor_lr": ("Adam", {"lr": 0.9}, ["exp_avg", "exp_avg_sq"], True),
    "adamw_amsgrad": ("AdamW", {"lr": 0.9, "amsgrad": True},
                      ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"], False),
    "adamw_tensor_lr": ("AdamW", {"lr": 0.9, "weight_decay": 0.3}, ["exp_avg", "exp_avg_sq"],
                        True),
    "adagrad": ("Adagrad", {"lr": 0.9}, ["sum"], False),
    "adagrad_options": ("Adagrad", {"lr": 0.9, "lr_decay": 0.1, "weight_decay": 0.2,
                                    "maximize": True}, ["sum"], False),
    "adagrad_tensor_lr": ("Adagrad", {"lr": 0.9}, ["sum"], True),
    "rmsprop": ("RMSprop", {"lr": 0.9}, ["square_avg"], False),
    "rmsprop_centered_momentum": ("RMSprop", {"lr": 0.9, "momentum": 0.9, "centered": True,
                                              "weight_decay": 0.1},
                                  ["square_avg", "momentum_buffer", "grad_avg"], False),
    "rmsprop_tensor_lr": ("RMSprop", {"lr": 0.9, "maximize": True}, ["square_avg"], True),
    "rmsprop_momentum_tensor_lr": ("RMSprop", {"lr": 0.9, "momentum": 0.5},
                                   ["square_avg", "momentum_buffer"], True),
}
WITH_STEP = ("Adam", "AdamW", "Adagrad", "RMSprop")


def _inputs(lib, case):
    """Float64 leaves: the parameter, its gradient, the given state tensors (and ``lr``)."""
    name, options, state_keys, tensor_lr = CASES[case]
    rng = np.random.default_rng(0)

    def leaf(low=0.0, high=1.0):
        return lib.from_numpy(rng.uniform(low, high, 10)).requires_grad_()

    # A square average above the squared gradient average keeps RMSprop's centred root real.
    ranges = {"square_avg": (0.5, 1.0), "grad_avg": (0.0, 0.3)}
    p, grad = leaf(), leaf()
    state = {key: leaf(*ranges.get(key, (0.0, 1.0))) for key in state_keys}
    options = dict(options, differentiable=True)
    if tensor_lr:
        options["lr"] = lib.tensor(options["lr"], dtype=lib.float64, requires_grad=True)
    return name, p, grad, state, options


def _differentiable_step(lib, name, p, grad, state, options, steps=1):
    """PyTorch's ``_diff_fn``: step a clone of ``p`` whose gradient is ``grad``, from a copy of
    ``state``; return the new parameter and the state tensors that need grad."""
    p = p.clone()
    p.grad = grad
    opt = getattr(lib.optim, name)([p], **options)
    opt.state[p].update({k: v.clone() for k, v in state.items()})
    if name in WITH_STEP:
        opt.state[p]["step"] = lib.tensor(1.0, dtype=lib.float64)
    for _ in range(steps):
        opt.step()
    return (p,) + tuple(v for v in opt.state[p].values()
                        if isinstance(v, lib.Tensor) and v.requires_grad)


def _values_and_gradients(lib, case, steps=1):
    name, p, grad, state, options = _inputs(lib, case)
    inputs = [p, grad, *state.values()]
    if isinstance(options["lr"], lib.Tensor):
        inputs.append(options["lr"])
    try:
        outputs = _differentiable_step(lib, name, p, grad, state, options, steps)
    except TypeError as e:
        return str(e)
    total = sum((out * (k + 1)).sum() for k, out in enumerate(outputs))
    grads = lib.autograd.grad(total, inputs, allow_unused=True)
    return ([out.detach().numpy() for out in outputs],
            [None if g is None else g.numpy() for g in grads])


@pytest.mark.parametrize("case", sorted(CASES))
def test_differentiable_step_values_and_gradients_like_torch(case: str) -> None:
    ours = _values_and_gradients(chainrule, case)
    theirs = _values_and_gradients(torch, case)
    if isinstance(theirs, str):  # PyTorch cannot pass a tensor needing grad as a number
        assert ours == theirs
        return
    for a, b in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["sgd", "sgd_momentum", "adam", "adam_decoupled_maximize",
                                  "adam_tensor_lr", "adagrad_options", "rmsprop"])
def test_two_differentiable_steps_like_torch(case: str) -> None:
    ours = _values_and_gradients(chainrule, case, steps=2)
    theirs = _values_and_gradients(torch, case, steps=2)
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", [c for c in sorted(CASES)
                                  if not (CASES[c][3] and CASES[c][0] in ("Adagrad", "RMSprop"))])
def test_differentiable_step_passes_gradcheck(case: str) -> None:
    name, p, grad, state, options = _inputs(chainrule, case)
    keys = list(state)
    lr = options["lr"] if isinstance(options["lr"], chainrule.Tensor) else None

    def step(p, grad, *rest):
        given = dict(zip(keys, rest[:len(keys)], strict=True))
        if lr is not None:
            options["lr"] = rest[len(keys)]
        return _differentiable_step(chainrule, name, p, grad, given, options)

    inputs = (p, grad, *state.values()) + ((lr,) if lr is not None else ())
    assert chainrule.autograd.gradcheck(step, inputs)


def test_step_is_recorded_only_when_differentiable() -> None:
    names = []
    for lib in (chainrule, torch):
        leaf = lib.ones(3, requires_grad=True)
        leaf.grad = lib.ones(3)
        lib.optim.SGD([leaf], lr=0.1).step()
        p = lib.ones(3, requires_grad=True).clone()
        p.grad = lib.ones(3)
        lib.optim.SGD([p], lr=0.1, differentiable=True).step()
        names.append((leaf.grad_fn, p.grad_fn.name(), lib.is_grad_enabled()))
    assert names[0] == names[1] == (None, "AddBackward0", True)


# ----------------------------------------------------------------------------------------------
# Tensor learning rates, older state dicts, state dicts moving between the two libraries

CONFIGS = {
    "sgd_momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "sgd": ("SGD", {"lr": 0.1, "weight_decay": 0.01}),
    "adam_amsgrad": ("Adam", {"amsgrad": True}),
    "adamw": ("AdamW", {}),
    "adagrad": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    "rmsprop_centered": ("RMSprop", {"momentum": 0.5, "centered": True}),
    "sgd_tensor_lr": ("SGD", {"lr": "tensor", "momentum": 0.9}),
    "adam_tensor_lr": ("Adam", {"lr": "tensor"}),
    "adamw_tensor_lr": ("AdamW", {"lr": "tensor", "weight_decay": 0.1}),
    "adagrad_tensor_lr": ("Adagrad", {"lr": "tensor"}),
    "rmsprop_tensor_lr": ("RMSprop", {"lr": "tensor", "momentum": 0.3}),
}


def _optimizer(lib, config, params):
    name, options = CONFIGS[config]
    options = {k: lib.tensor(0.01) if v == "tensor" else v for k, v in options.items()}
    return getattr(lib.optim, name)(params, **options)


def _convert(value, to):
    """State-dict values moved to the other library (tensors copied)."""
    if isinstance(value, chainrule.Tensor | torch.Tensor):
        array = value.detach().numpy().copy()
        return to.from_numpy(array) if array.ndim else to.tensor(array.item(),
                                                                  dtype=_dtype(to, array))
    if isinstance(value, dict):
        return {k: _convert(v, to) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_convert(v, to) for v in value)
    return value


def _dtype(lib, array):
    return getattr(lib, str(array.dtype))


def _structure(state_dict):
    """Everything but tensor values: group keys in order with their values, state keys in
    order with each tensor's type, shape and dtype."""
    groups = [[(k, v if not isinstance(v, chainrule.Tensor | torch.Tensor) else "Tensor")
               for k, v in group.items()] for group in state_dict["param_groups"]]
    state = {index: [(k, type(v).__name__, tuple(v.shape), str(v.dtype).split(".")[-1])
                     for k, v in entry.items()]
             for index, entry in state_dict["state"].items()}
    return groups, state


def _two_groups(lib, config, dtype):
    params = [lib.nn.Parameter(lib.ones(3, dtype=dtype)),
              lib.nn.Parameter(lib.ones(2, 2, dtype=dtype))]
    name, _ = CONFIGS[config]
    opt = _optimizer(lib, config, [{"params": params[:1]},
                                   {"params": params[1:], "weight_decay": 0.1}])
    return params, opt


def _steps(lib, params, opt, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        for p in params:
            p.grad = lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(
                p.detach().numpy().dtype))
        opt.step()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trajectory_and_state_dict_like_torch(config: str, dtype: str) -> None:
    ours, theirs = (_two_groups(lib, config, getattr(lib, dtype)) for lib in (chainrule, torch))
    for (params, opt), lib in ((ours, chainrule), (theirs, torch)):
        _steps(lib, params, opt, 5, seed=1)
    for a, b in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert _structure(ours[1].state_dict()) == _structure(theirs[1].state_dict())


def _older(state_dict):
    """A state dict as older versions wrote it: no maximize/foreach/differentiable/fused keys,
    ``step`` a number."""
    groups = [{k: v for k, v in g.items()
               if k not in ("maximize", "foreach", "differentiable", "fused", "capturable",
                            "decoupled_weight_decay")}
              for g in state_dict["param_groups"]]
    state = {i: {k: (float(v.item()) if k == "step" else v) for k, v in entry.items()}
             for i, entry in state_dict["state"].items()}
    return {"state": state, "param_groups": groups}


@pytest.mark.parametrize("older", (False, True), ids=("current", "older"))
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_loading_torch_state_dict_and_back(config: str, older: bool) -> None:
    source_params, source = _two_groups(torch, config, torch.float32)
    _steps(torch, source_params, source, 2, seed=2)
    saved = source.state_dict()
    if older:
        saved = _older(saved)
    params, opt = _two_groups(chainrule, config, chainrule.float32)
    for p, q in zip(params, source_params, strict=True):
        p.data = chainrule.from_numpy(q.detach().numpy().copy())
    opt.load_state_dict(_convert(saved, chainrule))
    reference_params, reference = _two_groups(torch, config, torch.float32)
    for p, q in zip(reference_params, source_params, strict=True):
        p.data = q.detach().clone()
    reference.load_state_dict(saved)
    assert _structure(opt.state_dict()) == _structure(reference.state_dict())
    _steps(chainrule, params, opt, 3, seed=3)
    _steps(torch, reference_params, reference, 3, seed=3)
    for a, b in zip(params, reference_params, strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    # ... and back into PyTorch.
    back_params, back = _two_groups(torch, config, torch.float32)
    back.load_state_dict(_convert(opt.state_dict(), torch))
    assert _structure(back.state_dict()) == _structure(reference.state_dict())


ERRORS = {
    "lr of two elements": lambda lib, p: lib.optim.SGD([p], lr=lib.tensor([0.1, 0.2])),
    "adam lr of two elements": lambda lib, p: lib.optim.Adam([p], lr=lib.tensor([0.1, 0.2])),
    "adam mixed betas": lambda lib, p: lib.optim.Adam([p], betas=(lib.tensor(0.9), 0.99)),
    "adam beta of two elements": lambda lib, p: lib.optim.Adam(
        [p], betas=(lib.tensor([0.9, 0.8]), lib.tensor(0.99))),
    "adam foreach tensor lr": lambda lib, p: lib.optim.Adam([p], lr=lib.tensor(0.1),
                                                            foreach=True),
    "fused differentiable": lambda lib, p: lib.optim.Adam([p], fused=True, differentiable=True),
    "sgd fused foreach": lambda lib, p: lib.optim.SGD([p], fused=True, foreach=True),
    "adam differentiable step needing grad": lambda lib, p: _step_needing_grad(lib, p),
}


def _step_needing_grad(lib, p):
    p = p.clone()
    p.grad = lib.ones(3)
    opt = lib.optim.Adam([p], differentiable=True)
    opt.state[p].update({"step": lib.tensor(1.0, requires_grad=True),
                         "exp_avg": lib.zeros(3), "exp_avg_sq": lib.zeros(3)})
    opt.step()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_optimizer_errors_like_torch(name: str) -> None:
    outcomes = []
    for lib in (chainrule, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ERRORS[name](lib, lib.ones(3, requires_grad=True))
                outcomes.append(None)
            except (ValueError, RuntimeError, TypeError) as e:
                outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] is not None
    assert outcomes[0] == outcomes[1]
