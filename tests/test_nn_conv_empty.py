"""Convolutions of empty inputs against PyTorch: no samples or no input channels give an empty
output of PyTorch's shape (0 channels for 0 input channels) and zero gradients of the right
shapes for the input, the weight and the bias; other empty inputs and too-few weights are
PyTorch's errors; a layer with no input channels gets a zero bias."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

CASES = {
    "no input channels": ("conv2d", (2, 0, 5, 5), (3, 0, 3, 3), {}),
    "no input channels, no bias": ("conv2d", (2, 0, 5, 5), (3, 0, 3, 3), {"bias": False}),
    "no input channels, padding": ("conv2d", (2, 0, 5, 5), (3, 0, 3, 3), {"padding": 1}),
    "no input channels, same": ("conv2d", (2, 0, 5, 5), (3, 0, 3, 3), {"padding": "same"}),
    "no input channels, stride": ("conv2d", (2, 0, 5, 5), (3, 0, 3, 3), {"stride": 2}),
    "no input channels, groups": ("conv2d", (2, 0, 5, 5), (4, 0, 3, 3),
                                  {"groups": 2, "stride": 2, "dilation": 2}),
    "no input channels, 1x1": ("conv2d", (2, 0, 5, 5), (3, 0, 1, 1), {}),
    "no input channels, 1-d": ("conv1d", (2, 0, 5), (3, 0, 3), {}),
    "no samples nor channels": ("conv2d", (0, 0, 5, 5), (3, 0, 3, 3), {}),
    "no samples": ("conv2d", (0, 2, 5, 5), (3, 2, 3, 3), {}),
    "no samples, strided": ("conv2d", (0, 2, 5, 5), (3, 2, 3, 3), {"padding": 1, "stride": 2}),
    "no samples, groups": ("conv2d", (0, 4, 5, 5), (4, 2, 3, 3), {"groups": 2}),
    "no samples, 1-d": ("conv1d", (0, 2, 5), (3, 2, 3), {}),
    "no samples, 3-d": ("conv3d", (0, 2, 4, 4, 4), (3, 2, 3, 3, 3), {}),
    "no samples, transposed": ("conv_transpose2d", (0, 2, 5, 5), (2, 3, 3, 3),
                               {"stride": 2, "output_padding": 1}),
    "no samples, transposed groups": ("conv_transpose2d", (0, 4, 5, 5), (4, 3, 3, 3),
                                      {"groups": 2}),
    "no height": ("conv2d", (2, 2, 0, 5), (3, 2, 1, 1), {"padding": 1}),
    "no height, kernel too big": ("conv2d", (2, 2, 0, 5), (3, 2, 3, 3), {}),
    "weight without output channels": ("conv2d", (2, 0, 5, 5), (0, 0, 3, 3), {}),
    "transposed without channels": ("conv_transpose2d", (2, 0, 5, 5), (0, 3, 3, 3), {}),
    "groups above output channels": ("conv2d", (1, 0, 5, 5), (1, 0, 3, 3), {"groups": 2}),
}


def _run(lib, name, x_shape, w_shape, options):
    options = dict(options)
    with_bias = options.pop("bias", True)
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal(x_shape).astype(np.float32)).requires_grad_()
    w = lib.from_numpy(rng.standard_normal(w_shape).astype(np.float32)).requires_grad_()
    out_channels = w_shape[1] * options.get("groups", 1) if "transpose" in name else w_shape[0]
    b = (lib.from_numpy(rng.standard_normal(out_channels).astype(np.float32)).requires_grad_()
         if with_bias else None)
    try:
        out = getattr(lib.nn.functional, name)(x, w, b, **options)
    except RuntimeError as e:
        return str(e)
    out.sum().backward()
    grads = [t.grad.numpy() if t is not None else None for t in (x, w, b)]
    return tuple(out.shape), out.grad_fn.name(), grads


@pytest.mark.parametrize("case", sorted(CASES))
def test_empty_convolutions_like_torch(case: str) -> None:
    ours = _run(chainrule, *CASES[case])
    theirs = _run(torch, *CASES[case])
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2], theirs[2], strict=True):
        if b is None:
            assert a is None
        else:
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)


def test_empty_convolution_gradients_with_create_graph_like_torch() -> None:
    results = []
    for lib in (chainrule, torch):
        x = lib.zeros(2, 0, 5, 5, requires_grad=True)
        w = lib.ones(3, 0, 3, 3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        out = lib.nn.functional.conv2d(x, w, b)
        seed = lib.ones(tuple(out.shape), requires_grad=True)
        grads = lib.autograd.grad(out, (x, w, b), seed, create_graph=True)
        results.append([(tuple(g.shape), g.tolist(), g.requires_grad) for g in grads])
    assert results[0] == results[1]


def test_layer_without_input_channels_has_a_zero_bias() -> None:
    for lib in (chainrule, torch):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            layer = lib.nn.Conv2d(0, 3, 3)
        assert layer.bias.tolist() == [0.0, 0.0, 0.0]
        out = layer(lib.ones(2, 0, 5, 5))
        assert tuple(out.shape) == (2, 0, 3, 3)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transposed_convolution_with_a_negative_output_size_is_refused(d: int, dtype: str) -> None:
    messages = []
    for lib in (torch, chainrule):
        f = getattr(lib.nn.functional, f"conv_transpose{d}d")
        x = lib.ones((1, 4) + (4, 6, 5)[:d], dtype=getattr(lib, dtype))
        w = lib.ones((4, 2) + (1,) * d, dtype=getattr(lib, dtype))
        with pytest.raises(RuntimeError) as info:
            f(x, w, padding=3, groups=2)
        messages.append(str(info.value))
    if dtype == "float64":  # (PyTorch's float32 oneDNN kernel words it its own way)
        assert messages[1] == messages[0]
    assert messages[1].endswith("Output size is too small")
