"""Ops whose PyTorch CPU kernels have no complex version raise PyTorch's errors on complex
tensors, instead of NumPy computing a value PyTorch refuses (complex numbers have no order, so
``<``, ``max``, ``maximum``, ``clamp``, ``argmax``, ``median``, ``kthvalue`` used NumPy's
lexicographic order; the activations, losses and softmax computed formulas PyTorch does not
define for them; ``floor``, ``%``, ``atan2`` ... leaked NumPy's TypeError)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

CASES: dict[str, Callable[[Any, Any], Any]] = {
    # reductions that order values
    "max": lambda lib, z: z.max(),
    "min": lambda lib, z: lib.min(z),
    "max_dim": lambda lib, z: z.max(0),
    "min_dim_keepdim": lambda lib, z: z.min(1, keepdim=True),
    "amax": lambda lib, z: z.amax(),
    "amin_dims": lambda lib, z: lib.amin(z, (0, 1)),
    "argmax": lambda lib, z: z.argmax(),
    "argmin_dim": lambda lib, z: z.argmin(1),
    "median": lambda lib, z: z.median(),
    "median_dim": lambda lib, z: z.median(0),
    "kthvalue": lambda lib, z: z.kthvalue(1, 0),
    # softmax along the last dim and another (PyTorch's two kernels)
    "softmax_last": lambda lib, z: lib.softmax(z, 1),
    "softmax_first": lambda lib, z: z.softmax(0),
    "log_softmax_last": lambda lib, z: lib.log_softmax(z, -1),
    "log_softmax_first": lambda lib, z: lib.nn.functional.log_softmax(z, 0),
    "softmin": lambda lib, z: lib.nn.functional.softmin(z, 1),
    # activations
    "gelu": lambda lib, z: lib.nn.functional.gelu(z),
    "gelu_tanh": lambda lib, z: lib.nn.functional.gelu(z, approximate="tanh"),
    "mish": lambda lib, z: lib.nn.functional.mish(z),
    "elu": lambda lib, z: lib.nn.functional.elu(z),
    "elu_inplace": lambda lib, z: lib.nn.functional.elu(z, inplace=True),
    "celu": lambda lib, z: lib.nn.functional.celu(z),
    "selu": lambda lib, z: lib.nn.functional.selu(z),
    "leaky_relu": lambda lib, z: lib.nn.functional.leaky_relu(z),
    "leaky_relu_inplace": lambda lib, z: lib.nn.functional.leaky_relu_(z),
    "hardtanh": lambda lib, z: lib.nn.functional.hardtanh(z),
    "relu6": lambda lib, z: lib.nn.functional.relu6(z),
    "hardsigmoid": lambda lib, z: lib.nn.functional.hardsigmoid(z),
    "hardswish": lambda lib, z: lib.nn.functional.hardswish(z),
    "hardshrink": lambda lib, z: lib.nn.functional.hardshrink(z),
    "softshrink": lambda lib, z: lib.nn.functional.softshrink(z),
    "softplus": lambda lib, z: lib.nn.functional.softplus(z),
    "logsigmoid": lambda lib, z: lib.nn.functional.logsigmoid(z),
    "glu": lambda lib, z: lib.nn.functional.glu(z, 1),
    "threshold": lambda lib, z: lib.nn.functional.threshold(z, 0.5, 0.0),
    "threshold_inplace": lambda lib, z: lib.nn.functional.threshold_(z, 0.5, 0.0),
    "prelu": lambda lib, z: lib.nn.functional.prelu(z, lib.tensor([0.25], dtype=z.dtype)),
    # element-wise ops that order, round or divide with remainders
    "gt": lambda lib, z: z > 0,
    "lt_tensors": lambda lib, z: z < z,
    "ge_method": lambda lib, z: z.ge(1.0),
    "le_function": lambda lib, z: lib.le(z, z),
    "lt_real_with_complex_number": lambda lib, z: z.real.lt(1j),
    "gt_in_place": lambda lib, z: z.gt_(0),
    "maximum": lambda lib, z: lib.maximum(z, z),
    "minimum_mixed": lambda lib, z: lib.minimum(z.real, z),
    "max_binary": lambda lib, z: lib.max(z, z),
    "fmax": lambda lib, z: lib.fmax(z, z),
    "fmin": lambda lib, z: lib.fmin(z, z),
    "clamp": lambda lib, z: z.clamp(0, 1),
    "clamp_min": lambda lib, z: z.clamp_min(0),
    "clamp_max_tensor": lambda lib, z: z.clamp(max=z),
    "clip_in_place": lambda lib, z: z.clip_(0, 1),
    "relu": lambda lib, z: lib.relu(z),
    "relu_in_place": lambda lib, z: z.relu_(),
    "sign": lambda lib, z: z.sign(),
    "floor": lambda lib, z: z.floor(),
    "ceil_in_place": lambda lib, z: z.ceil_(),
    "trunc": lambda lib, z: lib.trunc(z),
    "frac": lambda lib, z: z.frac(),
    "remainder": lambda lib, z: z % 2,
    "remainder_number_self": lambda lib, z: 2 % z,
    "fmod": lambda lib, z: lib.fmod(z, z),
    "floor_divide": lambda lib, z: z // 2,
    "div_floor": lambda lib, z: lib.div(z, 2, rounding_mode="floor"),
    "div_trunc": lambda lib, z: z.div(z, rounding_mode="trunc"),
    "atan2": lambda lib, z: lib.atan2(z, z),
    "hypot": lambda lib, z: lib.hypot(z, z),
    "xlogy": lambda lib, z: lib.xlogy(z, z),
    "xlogy_number": lambda lib, z: lib.xlogy(2, z),
    "heaviside": lambda lib, z: lib.heaviside(z, z),
    # losses
    "mse_loss": lambda lib, z: lib.nn.functional.mse_loss(z, z * 2),
    "smooth_l1_loss": lambda lib, z: lib.nn.functional.smooth_l1_loss(z, z * 2),
    "huber_loss": lambda lib, z: lib.nn.functional.huber_loss(z, z * 2),
    "binary_cross_entropy": lambda lib, z: lib.nn.functional.binary_cross_entropy(z, z),
    "bce_with_logits": lambda lib, z: lib.nn.functional.binary_cross_entropy_with_logits(z, z),
}

VALUES = np.array([[1 + 1j, 2 - 1j, -0.5j], [0.25 + 0j, -3 + 2j, 1j]])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_as_pytorch(name: str, dtype: str) -> None:
    errors = []
    for lib in (chainrule, torch):
        z = lib.tensor(VALUES, dtype=getattr(lib, dtype))
        before = z.clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                CASES[name](lib, z)
        errors.append((type(info.value), str(info.value)))
        assert bool((z == before).all()) and z._version == 0  # nothing written
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ["gelu", "softmax_last", "max_dim", "mse_loss", "elu"])
def test_refused_with_grad_and_the_leaf_untouched(name: str) -> None:
    z = chainrule.tensor(VALUES, requires_grad=True)
    with pytest.raises((NotImplementedError, RuntimeError)):
        CASES[name](chainrule, z * 1)
    assert z.grad is None


@pytest.mark.parametrize("name", ["max", "max_dim", "amax", "argmax", "median", "median_dim",
                                  "kthvalue", "softmax_last", "gelu", "mse_loss", "leaky_relu",
                                  "hardtanh", "threshold", "softplus", "gt", "lt_tensors",
                                  "maximum", "clamp", "relu", "sign", "floor", "frac",
                                  "remainder", "fmod", "floor_divide", "div_floor", "atan2",
                                  "hypot", "xlogy", "heaviside", "fmax"])
def test_real_inputs_unchanged(name: str) -> None:
    real = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = CASES[name](chainrule, chainrule.tensor(real))
        theirs = CASES[name](torch, torch.tensor(real))
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a._data), b.numpy(), rtol=1e-12)


def test_bool_median_and_kthvalue_messages() -> None:
    for call in (lambda lib, b: b.median(), lambda lib, b: b.median(0),
                 lambda lib, b: b.kthvalue(1)):
        messages = []
        for lib in (chainrule, torch):
            with pytest.raises(NotImplementedError) as info:
                call(lib, lib.tensor([True, False]))
            messages.append(str(info.value))
        assert messages[0] == messages[1]


@pytest.mark.parametrize(("first", "second"), [("complex64", "complex64"),
                                               ("float32", "complex128"),
                                               ("complex128", "float64")])
def test_cosine_similarity_refuses_complex_as_pytorch(first: str, second: str) -> None:
    # (it computed a complex "cosine" PyTorch refuses)
    messages = []
    for lib in (chainrule, torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.cosine_similarity(lib.ones(2, 3, dtype=getattr(lib, first)),
                                                lib.ones(2, 3, dtype=getattr(lib, second)))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
