"""A convolution's input gradient stays connected to the input under create_graph.

PyTorch's ``convolution_backward(grad_output, input, weight, ...)`` takes the input itself, so
the input gradient it gives under ``create_graph=True`` (node ``ConvolutionBackwardBackward0``
with edges to the upstream gradient, the input and the weight) requires grad even with a frozen
weight and a constant upstream gradient; no gradient flows back to the input through it
(``allow_unused=True`` gives None; without it, the "not used in the graph" error). chainrule's
adjoint took only the input's spatial size, so that gradient did not require grad.
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

CASES = {
    "conv1d_groups_stride": ("conv1d", (2, 4, 7), (6, 2, 3), {"groups": 2, "stride": 2}),
    "conv2d_dilation_padding": (
        "conv2d",
        (2, 4, 6, 5),
        (6, 2, 3, 2),
        {"groups": 2, "dilation": 2, "padding": 1},
    ),
    "conv2d_same": ("conv2d", (1, 3, 5, 5), (2, 3, 3, 3), {"padding": "same"}),
    "conv3d": ("conv3d", (1, 2, 5, 4, 4), (3, 2, 2, 2, 2), {"stride": (1, 2, 1)}),
    "conv_transpose1d_cut": (
        "conv_transpose1d",
        (2, 2, 5),
        (2, 3, 3),
        {"stride": 2, "output_padding": 2, "dilation": 3},
    ),
    "conv_transpose2d_groups": (
        "conv_transpose2d",
        (2, 4, 5, 5),
        (4, 3, 3, 3),
        {"stride": 2, "output_padding": 1, "groups": 2},
    ),
    "conv_transpose3d": ("conv_transpose3d", (1, 2, 3, 3, 3), (2, 2, 2, 2, 2), {"padding": 1}),
}


def _names(node) -> list:
    return [None if n is None else type(n).__name__ for n, _ in node.next_functions]


def _run(lib, case: str, weight_grad: bool, bias: bool):
    name, xs, ws, options = CASES[case]
    rng = np.random.default_rng(len(case))
    x = lib.tensor(rng.standard_normal(xs), requires_grad=True)
    w = lib.tensor(rng.standard_normal(ws), requires_grad=weight_grad)
    out_channels = ws[1] * options.get("groups", 1) if "transpose" in name else ws[0]
    b = lib.tensor(rng.standard_normal(out_channels), requires_grad=True) if bias else None
    y = getattr(lib.nn.functional, name)(x, w, b, **options)
    c = lib.tensor(rng.standard_normal(tuple(y.shape)))
    (gx,) = lib.autograd.grad((y * c).sum(), x, create_graph=True)
    node = gx.grad_fn
    (second,) = lib.autograd.grad((gx * gx).sum(), x, allow_unused=True, retain_graph=True)
    try:
        lib.autograd.grad((gx * gx).sum(), x, retain_graph=True)
        error = None
    except RuntimeError as e:
        error = str(e)
    through_w = None
    if weight_grad:
        (through_w,) = lib.autograd.grad((gx * gx).sum(), w)
        through_w = through_w.numpy()
    return (
        gx.requires_grad,
        node.name(),
        _names(node),
        gx.detach().numpy(),
        second,
        error,
        through_w,
    )


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("weight_grad", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_input_gradient_connected_to_the_input(case: str, weight_grad: bool, bias: bool) -> None:
    expected = _run(torch, case, weight_grad, bias)
    got = _run(chainrule, case, weight_grad, bias)
    assert got[:3] == expected[:3]
    assert expected[0] is True
    np.testing.assert_allclose(got[3], expected[3], rtol=1e-12, atol=1e-12)
    assert got[4] is None and expected[4] is None  # no gradient flows back to the input
    assert got[5] == expected[5]
    if weight_grad:
        np.testing.assert_allclose(got[6], expected[6], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_tensors_as_pytorch_with_a_frozen_weight(case: str) -> None:
    """ConvolutionBackward0 saves the input and the weight, as PyTorch's, also when only the
    input needs grad (the input gradient reads the input)."""
    seen = {}
    for lib in (torch, chainrule):
        name, xs, ws, options = CASES[case]
        x = lib.zeros(xs, dtype=lib.float64, requires_grad=True)
        w = lib.ones(ws, dtype=lib.float64)
        packed: list = []

        def pack(t, packed=packed):
            packed.append(tuple(t.shape))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            getattr(lib.nn.functional, name)(x, w, **options)
        seen[lib.__name__] = sorted(packed)
    assert seen["chainrule"] == seen["torch"]


def test_second_derivative_through_the_weight_gradient() -> None:
    """d/dx of a function of the weight's gradient (the weight adjoint's input derivative)."""
    results = []
    for lib in (torch, chainrule):
        rng = np.random.default_rng(3)
        x = lib.tensor(rng.standard_normal((2, 4, 6, 6)), requires_grad=True)
        w = lib.tensor(rng.standard_normal((6, 2, 3, 3)), requires_grad=True)
        y = lib.nn.functional.conv2d(x, w, groups=2, stride=2)
        (gw,) = lib.autograd.grad((y * y).sum(), w, create_graph=True)
        (hx,) = lib.autograd.grad((gw * gw).sum(), x)
        results.append(hx.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10)


@pytest.mark.parametrize("case", ["conv2d_dilation_padding", "conv_transpose1d_cut"])
def test_gradgradcheck(case: str) -> None:
    name, xs, ws, options = CASES[case]
    rng = np.random.default_rng(1)
    x = chainrule.tensor(rng.standard_normal(xs), requires_grad=True)
    w = chainrule.tensor(rng.standard_normal(ws), requires_grad=True)

    def f(x, w):
        return getattr(chainrule.nn.functional, name)(x, w, **options)

    assert chainrule.autograd.gradcheck(f, (x, w))
    assert chainrule.autograd.gradgradcheck(f, (x, w))


@pytest.mark.parametrize("weight_grad", [False, True])
def test_forward_over_reverse_through_the_adjoint(weight_grad: bool) -> None:
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor(np.linspace(-1, 1, 2 * 4 * 25).reshape(2, 4, 5, 5), requires_grad=True)
        w = lib.tensor(np.linspace(-2, 1, 4 * 2 * 9).reshape(4, 2, 3, 3), requires_grad=weight_grad)

        def first(t, w=w, lib=lib):
            y = lib.nn.functional.conv2d(t, w, groups=2, padding=1)
            (g,) = lib.autograd.grad((y * y).sum(), t, create_graph=True)
            return g

        results.append(lib.autograd.functional.jvp(first, x, lib.ones_like(x))[1].numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_forward_ad_of_the_adjoint_with_only_an_input_tangent() -> None:
    """The adjoint's ``input`` lends only its shape: a tangent there alone gives zeros."""
    import chainrule.autograd.forward_ad as fwad
    from chainrule.nn.functional import convolution_backward_input

    g = chainrule.ones(1, 2, 3, 3, dtype=chainrule.float64)
    w = chainrule.ones(2, 2, 2, 2, dtype=chainrule.float64)
    with fwad.dual_level():
        x = fwad.make_dual(
            chainrule.zeros(1, 2, 4, 4, dtype=chainrule.float64),
            chainrule.ones(1, 2, 4, 4, dtype=chainrule.float64),
        )
        out = convolution_backward_input(g, x, w, 1, 0, 1, 1)
        tangent = fwad.unpack_dual(out).tangent
    np.testing.assert_array_equal(tangent.numpy(), np.zeros((1, 2, 4, 4)))


@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0)])
@pytest.mark.parametrize("transposed", [False, True])
def test_vmap_of_the_input_gradient(transposed: bool, dims: tuple) -> None:
    """The batching rule of the input adjoints (the batch folded into N, or with batched
    weights into the channels), per-example gradients vs torch.func."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 2, 4, 5, 5))
    ws = rng.standard_normal((3, 4, 2, 3, 3))
    results = []
    for lib in (torch, chainrule):
        F = lib.nn.functional

        def per_example(x, w, lib=lib, F=F):
            def loss(x):
                if transposed:
                    y = F.conv_transpose2d(x, w, stride=2, groups=2, output_padding=1)
                else:
                    y = F.conv2d(x, w, stride=2, groups=2)
                return (y**2).sum()

            return lib.func.grad(loss)(x)

        x = lib.tensor(xs if dims[0] == 0 else xs[0])
        w = lib.tensor(ws if dims[1] == 0 else ws[0])
        results.append(lib.func.vmap(per_example, dims)(x, w).numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)
