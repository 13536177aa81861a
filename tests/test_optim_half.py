"""Optimizer steps on float16 and bfloat16 parameters, bit for bit against PyTorch.

PyTorch updates half-precision parameters with tensor operations (``add_(alpha=)``,
``addcmul_``, ``addcdiv_``, ``lerp_`` ...), each computed in float32 and rounded once to the
parameter's type; chainrule's array step did the arithmetic in NumPy, rounding differently
(an SGD step with momentum was 8 ulps off after three steps in bfloat16, Adagrad and RMSprop
in float16 too). The tensors here are shorter than PyTorch's vector width, so its element loop
runs: on long tensors its vectorised loop fuses ``a + alpha * b`` into one rounding, which
chainrule (like the element loop) rounds twice, an ulp apart at most per step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .sweep_tools import torch_to_numpy

CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd_momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "sgd_nesterov_decay": ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True,
                                   "weight_decay": 0.01}),
    "sgd_dampening_maximize": ("SGD", {"lr": 0.1, "momentum": 0.5, "dampening": 0.3,
                                       "maximize": True}),
    "adam": ("Adam", {"lr": 0.01}),
    "adam_amsgrad_decay": ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    "adamw": ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adagrad_decay": ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop_centered_momentum": ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5,
                                              "weight_decay": 0.1}),
}

_RNG = np.random.default_rng(0)
START = _RNG.uniform(-3, 3, 12).astype(np.float32)
GRADIENTS = [_RNG.uniform(-2, 2, 12).astype(np.float32) for _ in range(10)]


def _steps(lib: Any, config: str, dtype: str, backward: bool) -> Any:
    cls, options = CONFIGS[config]
    p = lib.nn.Parameter(lib.tensor(START.tolist(), dtype=getattr(lib, dtype)))
    opt = getattr(lib.optim, cls)([p], **options)
    for g in GRADIENTS:
        opt.zero_grad()
        if backward:  # the gradient computed in the half type too
            (p * p * 0.5 + p.sin() * lib.tensor(g.tolist(), dtype=p.dtype)).sum().backward()
        else:
            p.grad = lib.tensor(g.tolist(), dtype=getattr(lib, dtype))
        opt.step()
    return p, opt.state[p]


def _bits(t: Any) -> np.ndarray:
    """The 16-bit patterns, every NaN as one (the libraries' NaN payloads differ)."""
    data = t.detach()._data if isinstance(t, chainrule.Tensor) else torch_to_numpy(t.detach())
    return np.where(np.isnan(data.astype(np.float32)), -1, data.view(np.int16))


@pytest.mark.parametrize("backward", [False, True], ids=["given_grads", "backward"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_step_matches_pytorch_bit_for_bit(config: str, dtype: str, backward: bool) -> None:
    ours, our_state = _steps(chainrule, config, dtype, backward)
    theirs, their_state = _steps(torch, config, dtype, backward)
    assert ours.dtype is getattr(chainrule, dtype)
    np.testing.assert_array_equal(_bits(ours), _bits(theirs))
    assert sorted(our_state) == sorted(their_state)
    for key, value in their_state.items():
        if key != "step":  # the step count is a float32 tensor in both
            assert our_state[key].dtype is ours.dtype, key
            np.testing.assert_array_equal(_bits(our_state[key]), _bits(value), err_msg=key)


def test_float32_parameters_of_a_mixed_group_step_as_pytorch() -> None:
    """A group holding a half and a float32 parameter: both step as PyTorch's."""
    def run(lib: Any) -> Any:
        half = lib.nn.Parameter(lib.tensor(START.tolist(), dtype=lib.bfloat16))
        single = lib.nn.Parameter(lib.tensor(START.tolist()))
        opt = lib.optim.Adam([half, single], lr=0.01)
        for g in GRADIENTS[:4]:
            half.grad = lib.tensor(g.tolist(), dtype=lib.bfloat16)
            single.grad = lib.tensor(g.tolist())
            opt.step()
        return half, single

    (our_half, our_single), (their_half, their_single) = run(chainrule), run(torch)
    np.testing.assert_array_equal(_bits(our_half), _bits(their_half))
    np.testing.assert_allclose(our_single.detach()._data, torch_to_numpy(their_single.detach()),
                               rtol=0, atol=1e-6)
