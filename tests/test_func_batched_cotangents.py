"""``vmap`` of a vjp function whose graph was recorded at other vmap levels (the cotangents
batched at a level entered after the ``vjp``, the outputs at the levels running when it
recorded), against ``torch.func``; and the batching rules of the convolution backward ops the
formulas call, against PyTorch's ``aten.convolution_backward`` under ``torch.func.vmap``."""

from __future__ import annotations

import numpy as np
import pytest

import chainrule
from chainrule.func._batched import FALLBACK_COUNTS
from chainrule.ops.nn_ops.convolution import (
    convolution_backward_input,
    convolution_backward_weight,
)

from .conftest import assert_close, torch

RNG = np.random.default_rng(5)


def _t(lib, array):
    return lib.tensor(np.array(array))


def _mlp(lib, w1, w2):
    def f(x):
        return (x @ w1).tanh() @ w2

    return f


def _vjp_inside_vmap(lib, x, w1, w2, basis):
    """vmap over the examples of ``vjp`` (outputs batched at level 1), then a vmap over the
    rows of ``basis`` (level 2) applying its vjp function."""
    func = lib.func

    def per_example(x):
        out, vjp_fn = func.vjp(_mlp(lib, w1, w2), x)
        return out, func.vmap(vjp_fn)(basis)[0]

    return func.vmap(per_example)(x)


def test_cotangents_at_a_later_level_than_the_outputs() -> None:
    arrays = [RNG.standard_normal(s) for s in ((4, 3), (3, 5), (5, 2))]
    basis = np.eye(2)
    theirs = _vjp_inside_vmap(torch, *(_t(torch, a) for a in arrays), _t(torch, basis))
    FALLBACK_COUNTS.clear()
    ours = _vjp_inside_vmap(chainrule, *(_t(chainrule, a) for a in arrays), _t(chainrule, basis))
    assert not FALLBACK_COUNTS
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=1e-10, atol=1e-12)
    assert ours[1].shape == (4, 2, 3)  # (examples, basis rows, x's shape)


def _vjp_of_params_nested(lib, params, x1, x2):
    """``vjp`` with respect to unbatched parameters inside two vmaps (the parameters' gradient
    is per pair), its vjp function vmapped over cotangents, the result pushed forward by
    ``jvp`` (the NTK tutorial's pattern, on an MLP with a closed-over input)."""
    func = lib.func

    def net(p, x):
        return (x @ p["w"] + p["b"]).sin() @ p["v"]

    def pair(x1, x2):
        out, vjp_fn = func.vjp(lambda p: net(p, x1), params)

        def row(vec):
            (pulled,) = vjp_fn(vec)
            return func.jvp(lambda p: net(p, x2), (params,), (pulled,))[1]

        return func.vmap(row)(lib.eye(out.numel(), dtype=out.dtype))

    return func.vmap(func.vmap(pair, (None, 0)), (0, None))(x1, x2)


def test_nested_vmaps_vjp_then_jvp() -> None:
    shapes = {"w": (3, 4), "b": (4,), "v": (4, 2)}
    params_np = {k: RNG.standard_normal(s) for k, s in shapes.items()}
    x1, x2 = RNG.standard_normal((3, 3)), RNG.standard_normal((2, 3))
    theirs = _vjp_of_params_nested(
        torch, {k: _t(torch, v) for k, v in params_np.items()}, _t(torch, x1), _t(torch, x2)
    )
    ours = _vjp_of_params_nested(
        chainrule,
        {k: _t(chainrule, v) for k, v in params_np.items()},
        _t(chainrule, x1),
        _t(chainrule, x2),
    )
    assert tuple(ours.shape) == tuple(theirs.shape) == (3, 2, 2, 2)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def _unbatched_cotangent_in_vmap(lib, x, scales):
    """A vjp recorded outside vmap, its function called inside one with a cotangent that is
    not batched (the gradient is the single example's, not summed over the batch)."""
    out, vjp_fn = lib.func.vjp(lambda x: x.exp() * 3, x)
    return lib.func.vmap(lambda s: vjp_fn(lib.ones_like(out))[0] * s)(scales)


def test_unbatched_cotangent_inside_vmap() -> None:
    x, scales = RNG.standard_normal(3), RNG.standard_normal(4)
    theirs = _unbatched_cotangent_in_vmap(torch, _t(torch, x), _t(torch, scales))
    ours = _unbatched_cotangent_in_vmap(chainrule, _t(chainrule, x), _t(chainrule, scales))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def _cotangent_batched_at_both(lib, x, w, cotangents):
    """Cotangents batched at the recording level and at a later one (in_dims 0 at both)."""
    func = lib.func

    def per_example(x, ct):
        out, vjp_fn = func.vjp(lambda x: (x * w).cumsum(0).abs(), x)
        return func.vmap(vjp_fn)(ct)[0]

    return func.vmap(per_example)(x, cotangents)


def test_cotangents_batched_at_the_recording_level_too() -> None:
    x, w = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    cotangents = RNG.standard_normal((3, 5, 4))
    theirs = _cotangent_batched_at_both(torch, _t(torch, x), _t(torch, w), _t(torch, cotangents))
    ours = _cotangent_batched_at_both(
        chainrule, _t(chainrule, x), _t(chainrule, w), _t(chainrule, cotangents)
    )
    assert tuple(ours.shape) == tuple(theirs.shape) == (3, 5, 4)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def _second_order_through_batched_cotangents(lib, x, w, basis):
    """``create_graph``: the batched vjp differentiated again (grad of a sum of the rows)."""
    func = lib.func

    def per_example(x):
        def rows(x):
            _, vjp_fn = func.vjp(lambda x: (x @ w).sigmoid(), x)
            return func.vmap(vjp_fn)(basis)[0].pow(2).sum()

        return func.grad(rows)(x)

    return func.vmap(per_example)(x)


def test_gradient_of_a_vmapped_vjp_inside_vmap() -> None:
    x, w, basis = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)), np.eye(2)
    args = (x, w, basis)
    theirs = _second_order_through_batched_cotangents(torch, *(_t(torch, a) for a in args))
    ours = _second_order_through_batched_cotangents(chainrule, *(_t(chainrule, a) for a in args))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12)


def _conv_vjp_rows(lib, x, weight, groups):
    """vmap of a conv's vjp function over the identity's rows, inside a vmap over examples."""
    func, F = lib.func, lib.nn.functional

    def per_example(x):
        out, vjp_fn = func.vjp(
            lambda x, w: F.conv2d(x.unsqueeze(0), w, padding=1, groups=groups), x, weight
        )
        basis = lib.eye(out.numel(), dtype=out.dtype).view(-1, *out.shape)
        return func.vmap(vjp_fn)(basis)

    return func.vmap(per_example)(x)


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_vjp_rows(groups: int) -> None:
    x, weight = RNG.standard_normal((2, 4, 3, 3)), RNG.standard_normal((2, 4 // groups, 2, 2))
    theirs = _conv_vjp_rows(torch, _t(torch, x), _t(torch, weight), groups)
    FALLBACK_COUNTS.clear()
    ours = _conv_vjp_rows(chainrule, _t(chainrule, x), _t(chainrule, weight), groups)
    assert not FALLBACK_COUNTS
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=1e-10, atol=1e-10)


# The convolution backward ops, vmapped with every combination of batched arguments, against
# PyTorch's aten.convolution_backward under torch.func.vmap.
CONV_CASES = {
    "plain": dict(stride=1, padding=0, dilation=1, groups=1),
    "strided": dict(stride=2, padding=1, dilation=1, groups=1),
    "grouped_dilated": dict(stride=1, padding=2, dilation=2, groups=2),
}


def _torch_conv_backward(which, grad, x, weight, opts):
    stride, padding, dilation = ([opts[k]] * 2 for k in ("stride", "padding", "dilation"))
    mask = [which == "input", which == "weight", False]
    result = torch.ops.aten.convolution_backward(
        grad, x, weight, None, stride, padding, dilation, False, [0, 0], opts["groups"], mask
    )
    return result[0] if which == "input" else result[1]


@pytest.mark.parametrize("case", sorted(CONV_CASES))
@pytest.mark.parametrize("batched", ["grad", "other", "both"])
@pytest.mark.parametrize("which", ["input", "weight"])
def test_convolution_backward_rules(case: str, batched: str, which: str) -> None:
    opts = CONV_CASES[case]
    groups = opts["groups"]
    size = 3
    x = RNG.standard_normal((size, 2, 4, 7, 7))
    weight = RNG.standard_normal((size, 6, 4 // groups, 3, 3))
    probe = torch.nn.functional.conv2d(
        _t(torch, x[0]),
        _t(torch, weight[0]),
        stride=opts["stride"],
        padding=opts["padding"],
        dilation=opts["dilation"],
        groups=groups,
    )
    grad = RNG.standard_normal((size, *probe.shape))
    other = x if which == "weight" else weight
    grad_dim = 0 if batched in ("grad", "both") else None
    other_dim = 0 if batched in ("other", "both") else None
    grad_arg = grad if grad_dim == 0 else grad[0]
    other_arg = other if other_dim == 0 else other[0]
    args = (opts["stride"], opts["padding"], opts["dilation"], groups)

    def theirs_fn(g, o):
        if which == "input":
            return _torch_conv_backward("input", g, _t(torch, x[0]), o, opts)
        return _torch_conv_backward("weight", g, o, _t(torch, weight[0]), opts)

    def ours_fn(g, o):
        if which == "input":
            return convolution_backward_input(g, chainrule.zeros(x.shape[1:]), o, *args)
        return convolution_backward_weight(o, g, weight.shape[1:], *args)

    theirs = torch.func.vmap(theirs_fn, (grad_dim, other_dim))(
        _t(torch, grad_arg), _t(torch, other_arg)
    )
    FALLBACK_COUNTS.clear()
    ours = chainrule.func.vmap(ours_fn, (grad_dim, other_dim))(
        _t(chainrule, grad_arg), _t(chainrule, other_arg)
    )
    assert not FALLBACK_COUNTS
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bmm_of_outer_products(dtype: str) -> None:
    """bmm with an inner size of 1 (a weight's per-example gradient under vmap) computes
    products element by element: PyTorch's values bit for bit, non-finite values included,
    and gradients."""
    a = RNG.standard_normal((3, 4, 1)).astype(dtype)
    b = RNG.standard_normal((3, 1, 5)).astype(dtype)
    a[0, 1, 0], a[1, 2, 0], b[2, 0, 3] = np.inf, np.nan, -np.inf
    b_strided = np.ascontiguousarray(b.transpose(0, 2, 1))
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b_strided).transpose(1, 2).requires_grad_()  # non-contiguous
        out = lib.bmm(x, y)
        out.backward(lib.ones_like(out))
        results.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    for ours, theirs in zip(results[0][1:], results[1][1:], strict=True):  # (sums of products)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_jacrev_inside_vmap_is_one_vectorized_pass(monkeypatch) -> None:
    """jacrev (and hessian) inside vmap push the identity's rows through the graph recorded at
    the enclosing vmap's level as cotangents batched at a level of their own (one backward
    pass, not one per row; hessian's under jacfwd's vmap of tangents); values as torch.func's."""
    import chainrule.func._forward as forward
    import chainrule.func._transforms as transforms

    done = []
    original = transforms._vectorized_rows

    def counting(*args):
        result = original(*args)
        done.append(1)
        return result

    monkeypatch.setattr(transforms, "_vectorized_rows", counting)
    w = RNG.standard_normal((5, 4))
    x = RNG.standard_normal((3, 4))

    def run(lib):
        weight = _t(lib, w)
        jac = lib.func.vmap(lib.func.jacrev(lambda v: (weight @ v).tanh() * v.sum()))
        hess = lib.func.vmap(lib.func.hessian(lambda v: (weight @ v).sin().pow(2).sum()))
        return jac(_t(lib, x)), hess(_t(lib, x))

    FALLBACK_COUNTS.clear()
    forward.VECTORIZED_FALLBACKS.clear()
    ours = run(chainrule)
    assert len(done) == 2 and not FALLBACK_COUNTS, (done, FALLBACK_COUNTS)
    assert not forward.VECTORIZED_FALLBACKS
    theirs = run(torch)
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=1e-10, atol=1e-12)
