"""``F.grid_sample`` / ``torch.grid_sampler*`` against PyTorch: values and gradients to the
third order in every mode, padding and ``align_corners``; pixel boundaries, non-finite grid
points and input values; half precision; argument errors; the graph's nodes. (The OpInfos in
tests/opinfos/grid_sample.py add the sweeps.)"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import chainrule

from .conftest import torch

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def _both(array: np.ndarray, requires_grad: bool = True) -> tuple:
    return (
        chainrule.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def _grads_to_third_order(lib, x, g, mode, padding, align) -> list:
    """The output, first-, second- and third-order gradients of a fixed scalar function."""
    y = lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align)
    weights = lib.linspace(-1.0, 1.0, y.numel(), dtype=y.dtype).reshape(y.shape)
    gx, gg = lib.autograd.grad((y * weights).sum(), (x, g), create_graph=True)
    second = lib.autograd.grad(
        (gx * gx).sum() + (gg * gg.sin()).sum(), (x, g), create_graph=True, allow_unused=True
    )
    total = (second[1] * second[1]).sum()
    if second[0] is not None:
        total = total + second[0].cos().sum()
    third = lib.autograd.grad(total, (x, g), allow_unused=True)
    return [y, gx, gg, *second, *third]


def _compare(ours: list, theirs: list, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a is None or b is None:
            # (PyTorch may return zeros where chainrule has no gradient, or the other way)
            other = b if a is None else a
            assert other is None or not other.detach().numpy().any(), f"result {i}"
            continue
        np.testing.assert_allclose(
            a.detach().numpy(),
            b.detach().numpy(),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=f"result {i}",
        )


@pytest.mark.parametrize(
    ("mode", "padding", "align"), list(itertools.product(MODES, PADDINGS, (False, True)))
)
def test_2d_values_and_gradients_to_third_order(mode: str, padding: str, align: bool) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5))
    g = rng.uniform(-1.5, 1.5, (2, 3, 2, 2))
    ours = _grads_to_third_order(chainrule, *_both(x)[:1], _both(g)[0], mode, padding, align)
    theirs = _grads_to_third_order(torch, _both(x)[1], _both(g)[1], mode, padding, align)
    _compare(ours, theirs)


@pytest.mark.parametrize(
    ("mode", "padding", "align"),
    list(itertools.product(("bilinear", "nearest"), PADDINGS, (False, True))),
)
def test_3d_values_and_gradients_to_third_order(mode: str, padding: str, align: bool) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2, 3, 4, 3))
    g = rng.uniform(-1.5, 1.5, (2, 2, 1, 3, 3))
    ours = _grads_to_third_order(chainrule, _both(x)[0], _both(g)[0], mode, padding, align)
    theirs = _grads_to_third_order(torch, _both(x)[1], _both(g)[1], mode, padding, align)
    _compare(ours, theirs)


def _first_order(lib, x, g, mode, padding, align, dtype) -> list[np.ndarray]:
    xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
    gt = lib.tensor(g, dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=align)
    gx, gg = lib.autograd.grad(y.sum(), (xt, gt))
    return [t.detach().float().numpy() for t in (y, gx, gg)]


# Grid coordinates on and around pixel boundaries, the corners and past them (3 x 4 input).
_BOUNDARY = [-3, -1.5, -1.25, -1, -0.75, -0.5, 0, 1 / 3, 0.5, 0.75, 1, 1.25, 1.5, 5 / 3, 7 / 4]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    ("mode", "padding", "align"), list(itertools.product(MODES, PADDINGS, (False, True)))
)
def test_grid_on_pixel_boundaries(mode: str, padding: str, align: bool, dtype: str) -> None:
    # (the gradient in the grid at a clip or fold: PyTorch's slope 0 at the border)
    x = np.arange(12.0).reshape(1, 1, 3, 4) - 5.5
    g = np.array([[[[a, b] for a in _BOUNDARY] for b in _BOUNDARY]])
    ours = _first_order(chainrule, x, g, mode, padding, align, dtype)
    theirs = _first_order(torch, x, g, mode, padding, align, dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# (PyTorch's kernel reads out of bounds, or crashes, for a NaN grid point with bilinear border
# or reflection padding and an infinite one with bilinear reflection: those are left out)
_NON_FINITE = [
    (value, mode, padding)
    for value in (np.nan, np.inf, -np.inf)
    for mode in MODES
    for padding in PADDINGS
    if not (
        mode == "bilinear" and padding != "zeros" and (np.isnan(value) or padding == "reflection")
    )
]


@pytest.mark.parametrize(("value", "mode", "padding"), _NON_FINITE)
def test_non_finite_grid_points(value: float, mode: str, padding: str) -> None:
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    g = np.array([[[[value, 0.2], [0.3, value], [0.1, -0.4]]]])
    ours = _first_order(chainrule, x, g, mode, padding, False, "float64")
    theirs = _first_order(torch, x, g, mode, padding, False, "float64")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, equal_nan=True)


# (3-D: PyTorch's kernel skips the taps outside the input, so a non-finite point reads 0; with
# nearest border or reflection padding its forward reads the last pixel for NaN while its
# backward drops the gradient: those are left out)
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(("mode", "padding"), [("bilinear", "zeros"), ("nearest", "zeros")])
def test_non_finite_grid_points_3d(value: float, mode: str, padding: str) -> None:
    x = np.arange(24.0).reshape(1, 1, 2, 3, 4)
    g = np.array([[[[[value, 0.2, 0.1], [0.3, value, -0.2], [0.1, 0.1, value]]]]])
    ours = _first_order(chainrule, x, g, mode, padding, False, "float64")
    theirs = _first_order(torch, x, g, mode, padding, False, "float64")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, equal_nan=True)


@pytest.mark.parametrize("mode", MODES)
def test_non_finite_input_values(mode: str) -> None:
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    x[0, 0, 1, 1] = np.inf
    x[0, 0, 0, 0] = np.nan
    g = np.array([[[[a, b] for a in _BOUNDARY[::2]] for b in _BOUNDARY[1::2]]])
    ours = _first_order(chainrule, x, g, mode, "zeros", False, "float64")
    theirs = _first_order(torch, x, g, mode, "zeros", False, "float64")
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    ("mode", "padding"), list(itertools.product(("bilinear", "nearest"), PADDINGS))
)
def test_half_precision_2d_rounds_as_pytorch(mode: str, padding: str, dtype: str) -> None:
    # (PyTorch's half kernel rounds every step: which pixels are read depends on it)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5))
    g = rng.uniform(-1.3, 1.3, (2, 5, 3, 2))
    ours = _first_order(chainrule, x, g, mode, padding, False, dtype)
    theirs = _first_order(torch, x, g, mode, padding, False, dtype)
    np.testing.assert_array_equal(ours[0], theirs[0])
    # (the gradients: a few ulps, as PyTorch adds the scattered gradient in another order)
    ulp = 2.0**-10 if dtype == "float16" else 2.0**-7
    np.testing.assert_allclose(ours[1], theirs[1], rtol=4 * ulp, atol=4 * ulp)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=8 * ulp, atol=8 * ulp)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("padding", PADDINGS)
def test_half_precision_3d_rounds_as_pytorch(padding: str, dtype: str) -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 3, 4, 5))
    g = rng.uniform(-1.3, 1.3, (2, 2, 3, 2, 3))
    ours = _first_order(chainrule, x, g, "bilinear", padding, True, dtype)
    theirs = _first_order(torch, x, g, "bilinear", padding, True, dtype)
    np.testing.assert_array_equal(ours[0], theirs[0])
    ulp = 2.0**-10 if dtype == "float16" else 2.0**-7
    np.testing.assert_allclose(ours[1], theirs[1], rtol=4 * ulp, atol=4 * ulp)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=8 * ulp, atol=8 * ulp)


def test_gradcheck_and_gradgradcheck() -> None:
    rng = np.random.default_rng(4)
    for mode, padding in itertools.product(MODES, PADDINGS):
        x = chainrule.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
        g = chainrule.tensor(rng.uniform(-1.2, 1.2, (1, 2, 2, 2)), requires_grad=True)

        def fn(x, g, mode=mode, padding=padding):
            return chainrule.nn.functional.grid_sample(x, g, mode, padding, False)

        assert chainrule.autograd.gradcheck(fn, (x, g))
        assert chainrule.autograd.gradgradcheck(fn, (x, g))


def test_non_contiguous_and_expanded_inputs() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 4, 2, 1)).transpose(3, 2, 1, 0)  # (1, 2, 4, 5), transposed
    g = rng.uniform(-1, 1, (1, 1, 3, 2))
    results = []
    for lib in (chainrule, torch):
        xt = lib.tensor(x.transpose(3, 2, 1, 0)).permute(3, 2, 1, 0).requires_grad_()
        gt = lib.tensor(g).requires_grad_()
        grid = gt.expand(1, 4, 3, 2)  # (rows of equal points)
        y = lib.nn.functional.grid_sample(xt, grid, align_corners=True)
        results.append([y, *lib.autograd.grad((y * y).sum(), (xt, gt))])
    _compare(results[0], results[1], rtol=1e-12, atol=1e-12)


def test_empty_batch_channels_and_grid() -> None:
    cases = [
        ((0, 2, 3, 4), (0, 2, 2, 2)),
        ((1, 0, 3, 4), (1, 2, 2, 2)),
        ((1, 2, 3, 4), (1, 0, 2, 2)),
        ((1, 2, 3, 4, 2), (1, 2, 0, 1, 3)),
    ]
    for x_shape, g_shape in cases:
        results = []
        for lib in (chainrule, torch):
            x = lib.ones(x_shape, requires_grad=True)
            g = lib.zeros(g_shape, requires_grad=True)
            y = lib.nn.functional.grid_sample(x, g, align_corners=False)
            gx, gg = lib.autograd.grad(y.sum(), (x, g))
            results.append([y, gx, gg])
        for a, b in zip(*results, strict=True):
            assert tuple(a.shape) == tuple(b.shape)
        _compare(results[0], results[1])


def test_spatial_transformer_pipeline() -> None:
    # affine_grid then grid_sample, the gradient reaching theta (a spatial transformer)
    rng = np.random.default_rng(6)
    image = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    theta = np.array(
        [[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.0]], [[1.0, 0.0, 0.3], [0.0, 0.8, -0.2]]], np.float32
    )
    results = []
    for lib in (chainrule, torch):
        t = lib.tensor(theta, requires_grad=True)
        x = lib.tensor(image, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, [2, 3, 4, 4], align_corners=False)
        y = lib.nn.functional.grid_sample(x, grid, align_corners=False)
        loss = (y**2).mean()
        results.append([y, *lib.autograd.grad(loss, (t, x))])
    _compare(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_graph_nodes_and_saved_values() -> None:
    x = chainrule.randn(1, 2, 3, 4, requires_grad=True)
    g = chainrule.rand(1, 2, 2, 2, requires_grad=True)
    y = chainrule.nn.functional.grid_sample(x, g, mode="bicubic", align_corners=True)
    assert type(y.grad_fn).__name__ == "GridSampler2DBackward0"
    assert [type(f).__name__ for f, _ in y.grad_fn.next_functions] == ["AccumulateGrad"] * 2
    assert y.grad_fn._saved_interpolation_mode == 2
    assert y.grad_fn._saved_padding_mode == 0
    assert y.grad_fn._saved_align_corners is True
    assert y.grad_fn._saved_grid is g
    gx, gg = chainrule.autograd.grad(y.sum(), (x, g), create_graph=True)
    assert type(gx.grad_fn).__name__ == "GridSampler2DBackwardBackward0"
    assert type(gg.grad_fn).__name__ == "GridSampler2DBackwardBackward0"
    x3 = chainrule.randn(1, 2, 3, 4, 5, requires_grad=True)
    y3 = chainrule.grid_sampler(x3, chainrule.rand(1, 2, 2, 2, 3), 1, 1, False)
    assert type(y3.grad_fn).__name__ == "GridSampler3DBackward0"


def test_forward_ad_refuses_as_pytorch() -> None:
    import chainrule.autograd.forward_ad as fwad

    x = chainrule.randn(1, 1, 2, 2, dtype=chainrule.float64)
    g = chainrule.rand(1, 1, 1, 2, dtype=chainrule.float64)
    with fwad.dual_level(), pytest.raises(NotImplementedError) as ours:
        chainrule.nn.functional.grid_sample(fwad.make_dual(x, x), g, align_corners=False)
    with torch.autograd.forward_ad.dual_level(), pytest.raises(NotImplementedError) as theirs:
        xt = torch.randn(1, 1, 2, 2, dtype=torch.float64)
        torch.nn.functional.grid_sample(
            torch.autograd.forward_ad.make_dual(xt, xt),
            torch.rand(1, 1, 1, 2, dtype=torch.float64),
            align_corners=False,
        )
    assert str(ours.value) == str(theirs.value)


def _error(lib, call) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        call(lib)
    return info.type, str(info.value)


_BAD_CALLS = {
    "mode": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode="linear", align_corners=False
    ),
    "mode_number": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), mode=1, align_corners=False
    ),
    "padding": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), padding_mode="wrap", align_corners=False
    ),
    "dtype": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2, dtype=lib.float64), align_corners=False
    ),
    "integer": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2, dtype=lib.int32),
        lib.zeros(1, 1, 1, 2, dtype=lib.int32),
        align_corners=False,
    ),
    "integer_3d": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2, 2, dtype=lib.int64), lib.zeros(1, 1, 1, 1, 3), align_corners=False
    ),
    "complex": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2, dtype=lib.complex64),
        lib.zeros(1, 1, 1, 2, dtype=lib.complex64),
        align_corners=False,
    ),
    "last_dim": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 3), align_corners=False
    ),
    "batch": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2), lib.zeros(2, 1, 1, 3), align_corners=False
    ),
    "empty_spatial": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 0, 2), lib.zeros(1, 1, 1, 2), align_corners=False
    ),
    "3d_input": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2), lib.zeros(1, 2, 1), align_corners=False
    ),
    "grid_dims": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 1, 3), align_corners=False
    ),
    "bicubic_3d": lambda lib: lib.nn.functional.grid_sample(
        lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), mode="bicubic", align_corners=False
    ),
    "sampler_2d_of_5d": lambda lib: lib.grid_sampler_2d(
        lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3), 0, 0, False
    ),
    "sampler_3d_of_4d": lambda lib: lib.grid_sampler_3d(
        lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2), 0, 0, False
    ),
    "sampler_2d_of_3d": lambda lib: lib.grid_sampler_2d(
        lib.zeros(1, 1, 2), lib.zeros(1, 2, 1), 0, 0, False
    ),
}


@pytest.mark.parametrize("case", sorted(_BAD_CALLS))
def test_errors_as_pytorchs(case: str) -> None:
    assert _error(chainrule, _BAD_CALLS[case]) == _error(torch, _BAD_CALLS[case])


def test_align_corners_default_warns_as_pytorch() -> None:
    messages = []
    for lib in (chainrule, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
        messages.append([(w.category, str(w.message)) for w in caught])
    assert messages[0] == messages[1] and len(messages[0]) == 1
