"""nn.utils fusion helpers and skip_init against PyTorch: a convolution (or linear layer)
with an eval-mode batch norm folded in gives PyTorch's fused weights and the unfused
output; the weight-level forms, errors, and skip_init's signature check."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _layers(lib: Any, kind: str) -> tuple[Any, Any]:
    if kind == "conv":
        layer, bn = lib.nn.Conv2d(2, 3, 2), lib.nn.BatchNorm2d(3)
    elif kind == "conv_transpose":
        layer, bn = lib.nn.ConvTranspose2d(2, 3, 2, bias=False), lib.nn.BatchNorm2d(3)
    else:
        layer, bn = lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3)
    return layer.double(), bn.double()


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "linear"])
def test_fused_layers_match_torch(kind: str) -> None:
    pairs = [_layers(torch, kind), _layers(chainrule, kind)]
    for t_mod, c_mod in zip(pairs[0], pairs[1], strict=True):
        c_mod.load_state_dict(
            {k: chainrule.tensor(v.numpy()) for k, v in t_mod.state_dict().items()}
        )
    for (layer, bn), lib in zip(pairs, (torch, chainrule), strict=True):
        bn.running_mean.copy_(lib.tensor(np.arange(3.0)))
        bn.running_var.copy_(lib.tensor(np.arange(1.0, 4.0)))
        bn.weight.data.copy_(lib.tensor(np.array([0.5, 2.0, 3.0])))
        layer.eval()
        bn.eval()
    x = np.random.default_rng(0).standard_normal((2, 2, 4, 4) if kind != "linear" else (2, 4))
    results = []
    for (layer, bn), lib in zip(pairs, (torch, chainrule), strict=True):
        if kind == "linear":
            fused = lib.nn.utils.fuse_linear_bn_eval(layer, bn)
        else:
            fused = lib.nn.utils.fuse_conv_bn_eval(layer, bn, transpose=kind != "conv")
        out = fused(lib.tensor(x)).detach().numpy()
        reference = bn(layer(lib.tensor(x))).detach().numpy()
        results.append(
            (
                out,
                reference,
                fused.weight.detach().numpy(),
                fused.bias.detach().numpy(),
                type(fused.weight).__name__,
                fused.bias.requires_grad,
                layer.bias is None,
            )
        )
    t, c = results
    np.testing.assert_allclose(c[0], c[1], atol=1e-12)
    for a, b in zip(c[:4], t[:4], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert c[4:] == t[4:]


ERRORS = {
    "conv_training": lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(1, 1, 1), lib.nn.BatchNorm2d(1)
    ),
    "linear_training": lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)
    ),
    "linear_features": lambda lib: lib.nn.utils.fuse_linear_bn_eval(
        lib.nn.Linear(2, 2).eval(), lib.nn.BatchNorm1d(3).eval()
    ),
    "skip_init_no_device": lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU),
    "skip_init": lambda lib: tuple(lib.nn.utils.skip_init(lib.nn.Linear, 2, 3).weight.shape),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])
