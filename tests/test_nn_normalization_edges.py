"""Batch-norm layers on an empty batch, against PyTorch: the output is PyTorch's (a copy times
the first weight plus the first bias), the running statistics stay as they were (they became
NaN), ``num_batches_tracked`` still counts the call in training, and the gradients are zeros."""

from __future__ import annotations

import pytest

import chainrule

from .conftest import torch

LAYERS = [("BatchNorm1d", (0, 3)), ("BatchNorm1d", (0, 3, 4)), ("BatchNorm2d", (0, 3, 2, 2)),
          ("BatchNorm2d", (2, 3, 0, 2)), ("BatchNorm3d", (0, 3, 1, 2, 2))]


def _run(lib, name, shape, training, options):
    layer = getattr(lib.nn, name)(3, **options)
    if layer.weight is not None:
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([2.0, 3.0, 4.0]))
            layer.bias.copy_(lib.tensor([0.5, 0.25, 1.0]))
    layer.train(training)
    x = lib.zeros(shape, requires_grad=True)
    out = layer(x)
    out.sum().backward()
    chain = []
    node = out.grad_fn
    while node is not None:
        chain.append(node.name().split("::")[-1])
        node = node.next_functions[0][0] if node.next_functions else None
    buffers = {k: v.tolist() for k, v in layer.named_buffers()}
    grads = [None if p.grad is None else p.grad.tolist() for p in layer.parameters()]
    return tuple(out.shape), chain, buffers, grads, tuple(x.grad.shape)


@pytest.mark.parametrize("options", [{}, {"momentum": None}, {"affine": False},
                                     {"track_running_stats": False}],
                         ids=["default", "cumulative", "no-affine", "no-running-stats"])
@pytest.mark.parametrize("training", (True, False))
@pytest.mark.parametrize("name,shape", LAYERS)
def test_batch_norm_on_an_empty_batch_like_torch(name, shape, training, options) -> None:
    assert _run(chainrule, name, shape, training, options) == _run(torch, name, shape,
                                                                    training, options)
