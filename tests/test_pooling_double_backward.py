"""Pooling's first derivative stays connected to the pooled input under create_graph.

PyTorch's pooling adjoints (``avg_pool2d_backward``, ``max_pool2d_with_indices_backward``,
``adaptive_avg_pool2d_backward``, ``adaptive_max_pool2d_backward``) take the input itself, so
the gradient they give under ``create_graph=True`` requires grad and differentiating it again
with respect to the input gives zeros. chainrule's adjoints took only the input's shape: the
gradient of a pooled input with constant upstream gradients did not require grad, and a second
differentiation raised "element 0 of tensors does not require grad". (Found by random pooling
programs differentiated twice, compared with PyTorch: 192 of 420 differed.)
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

POOLS = {
    "avg_pool1d": lambda F, x: F.avg_pool1d(x, 2),
    "avg_pool2d": lambda F, x: F.avg_pool2d(x, 2, 1, ceil_mode=True),
    "avg_pool3d": lambda F, x: F.avg_pool3d(x, 2),
    "max_pool1d": lambda F, x: F.max_pool1d(x, 2),
    "max_pool2d": lambda F, x: F.max_pool2d(x, 2, padding=1),
    "max_pool3d": lambda F, x: F.max_pool3d(x, 2),
    "adaptive_avg_pool1d": lambda F, x: F.adaptive_avg_pool1d(x, 3),
    "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_avg_pool3d": lambda F, x: F.adaptive_avg_pool3d(x, 2),
    "adaptive_max_pool2d": lambda F, x: F.adaptive_max_pool2d(x, 3),
    "adaptive_max_pool3d": lambda F, x: F.adaptive_max_pool3d(x, 2),
    "interpolate_area": lambda F, x: F.interpolate(x, scale_factor=1.5, mode="area"),
}
DIMS = {"1d": 1, "2d": 2, "3d": 3, "area": 2}


def _run(lib, name: str):
    d = DIMS[name[-2:]] if name[-2:] in DIMS else DIMS["area"]
    rng = np.random.default_rng(len(name))
    x = lib.tensor(rng.standard_normal((2, 3) + (5,) * d), dtype=lib.float64,
                   requires_grad=True)
    y = POOLS[name](lib.nn.functional, x)
    weights = lib.tensor(rng.standard_normal(tuple(y.shape)), dtype=lib.float64)
    (gx,) = lib.autograd.grad((y * weights).sum(), x, create_graph=True)
    (ggx,) = lib.autograd.grad((gx * gx).sum(), x)
    return gx.requires_grad, gx.detach().numpy(), ggx.numpy()


@pytest.mark.parametrize("name", sorted(POOLS))
def test_first_derivative_connected_to_the_input(name: str) -> None:
    expected = _run(torch, name)
    got = _run(chainrule, name)
    assert got[0] is expected[0] is True
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[2], expected[2])  # zeros: the adjoint is linear


def test_forward_over_reverse_through_the_adjoint() -> None:
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(np.linspace(-1, 1, 2 * 3 * 16).reshape(2, 3, 4, 4), requires_grad=True)

        def first(t, lib=lib):
            (g,) = lib.autograd.grad(lib.nn.functional.avg_pool2d(t, 2).sum(), t,
                                     create_graph=True)
            return g

        tangent = lib.ones_like(x)
        results.append(lib.autograd.functional.jvp(first, x, tangent)[1].numpy())
    np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_padding_first_derivative_as_pytorch(mode: str, d: int) -> None:
    # (reflection/replication adjoints take the input, as PyTorch's; circular and constant
    # padding's adjoints are slices of the gradient: not connected, in both libraries)
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(np.linspace(-1, 1, 2 * 4**d).reshape((1, 2) + (4,) * d),
                       requires_grad=True)
        y = lib.nn.functional.pad(x, (1, 2) * d, mode=mode)
        weights = lib.arange(float(y.numel()), dtype=lib.float64).reshape(tuple(y.shape))
        (gx,) = lib.autograd.grad((y * weights).sum(), x, create_graph=True)
        results.append((gx.requires_grad, gx.detach().numpy()))
    assert results[1][0] is results[0][0]
    np.testing.assert_array_equal(results[1][1], results[0][1])
