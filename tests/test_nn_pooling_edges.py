"""Pooling at the edges, against PyTorch: windows over padding only (``-inf`` and PyTorch's
indices), ceil-mode windows that start in the padding, dilation, ties and NaN, ``-inf`` inputs,
empty batches, float16 results, integer and bool inputs, and PyTorch's argument checks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import chainrule

from .conftest import torch

NAN, INF = np.nan, np.inf


def _data(shape, seed=0, specials=True):
    """Random values with ties, and (optionally) -inf and NaN sprinkled in."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, shape).astype(np.float64)
    if specials:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, max(1, flat.size // 7))] = -INF
        flat[rng.integers(0, flat.size, max(1, flat.size // 11))] = NAN
    return x


def _padding_only(size, kernel, stride, pad, dilation, out):
    """Per output position along one dimension: does the window read padding only?"""
    return np.array([all(not 0 <= o * stride - pad + k * dilation < size for k in range(kernel))
                     for o in range(out)])


def _run_max(lib, x, dims, options, return_indices=True):
    t = lib.from_numpy(x.copy()).requires_grad_()
    fn = lib.nn.functional.max_pool1d if dims == 1 else lib.nn.functional.max_pool2d
    try:
        result = fn(t, return_indices=return_indices, **options)
    except RuntimeError as e:
        return str(e)
    out, indices = result if return_indices else (result, None)
    # Distinct finite weights, so the gradient shows which input each output came from. A
    # window over padding only gets weight 0: PyTorch's backward sends its gradient to an
    # unrelated element (its clamped index), ours nowhere; the output there is a constant.
    k, s, p, d = (options[name] for name in ("kernel_size", "stride", "padding", "dilation"))
    mask = _padding_only(x.shape[-1], k, s, p, d, out.shape[-1])
    if dims == 2:
        mask = _padding_only(x.shape[-2], k, s, p, d, out.shape[-2])[:, None] | mask
    weights = np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)) * ~mask
    (out * lib.from_numpy(weights)).sum().backward()
    return (out.detach().numpy(), None if indices is None else indices.numpy(),
            t.grad.numpy())


def _max_configs():
    for dims, size in ((1, (2, 3, 7)), (1, (3, 5)), (2, (1, 2, 5, 6)), (2, (2, 4, 3))):
        for kernel, stride, pad, dilation, ceil in itertools.product(
                (1, 2, 3), (1, 2, 3), (0, 1), (1, 2, 3), (False, True)):
            yield dims, size, {"kernel_size": kernel, "stride": stride, "padding": pad,
                               "dilation": dilation, "ceil_mode": ceil}


@pytest.mark.parametrize("return_indices", (True, False))
def test_max_pool_sweep_like_torch(return_indices: bool) -> None:
    checked = 0
    for dims, size, options in _max_configs():
        x = _data(size, seed=checked)
        ours = _run_max(chainrule, x, dims, options, return_indices)
        theirs = _run_max(torch, x, dims, options, return_indices)
        what = f"{dims}d {size} {options}"
        if isinstance(theirs, str):
            assert ours == theirs, what
            continue
        assert not isinstance(ours, str), f"{what}: {ours}"
        np.testing.assert_array_equal(ours[0], theirs[0], err_msg=what)
        if return_indices:
            np.testing.assert_array_equal(ours[1], theirs[1], err_msg=what)
        np.testing.assert_array_equal(ours[2], theirs[2], err_msg=what)
        checked += 1
    assert checked > 200


def test_window_over_padding_only_is_minus_inf_with_torch_index() -> None:
    # kernel 2, dilation 4, padding 1 on 3 elements: the one window reads positions -1 and 3.
    for lib in (chainrule, torch):
        x = lib.tensor([[[5.0, 1.0, 2.0]]], requires_grad=True)
        out, indices = lib.nn.functional.max_pool1d(x, 2, 1, padding=1, dilation=4,
                                                    return_indices=True)
        assert out.tolist() == [[[-INF]]] and indices.tolist() == [[[3]]]
        out.sum().backward()
        assert x.grad.tolist() == [[[0.0, 0.0, 0.0]]]
        plain = lib.nn.functional.max_pool1d(x.detach(), 2, 1, padding=1, dilation=4)
        assert plain.tolist() == [[[-INF]]]
        out2, idx2 = lib.nn.functional.max_pool2d(x.detach()[None], (1, 2), 1, (0, 1), (1, 4),
                                                  return_indices=True)
        assert out2.tolist() == [[[[-INF]]]] and idx2.tolist() == [[[[3]]]]


def test_window_over_padding_only_sends_no_gradient_to_other_planes() -> None:
    # PyTorch adds this window's gradient to element 0 of the next plane (flat index 3 of a
    # 3-element plane); the output is the constant -inf, so its gradient is zero everywhere.
    x = chainrule.tensor([[[5.0, 1.0, 2.0], [7.0, 8.0, 9.0]]], requires_grad=True)
    out, indices = chainrule.nn.functional.max_pool1d(x, 2, 1, padding=1, dilation=4,
                                                      return_indices=True)
    assert out.tolist() == [[[-INF], [-INF]]] and indices.tolist() == [[[3], [3]]]
    out.sum().backward()
    assert x.grad.tolist() == [[[0.0] * 3, [0.0] * 3]]


def test_minus_inf_input_beats_padding_like_torch() -> None:
    values = [[[-INF, -INF, 1.0]]]
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor(values, requires_grad=True)
        out, indices = lib.nn.functional.max_pool1d(x, 2, 1, padding=1, return_indices=True)
        out.backward(lib.ones_like(out))
        results.append((out.tolist(), indices.tolist(), x.grad.tolist()))
    assert results[0] == results[1]
    assert results[0][1] == [[[0, 0, 2, 2]]]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float16", "float64"])
def test_pooling_dtypes_like_torch(dtype: str) -> None:
    base = np.array([[[-5, 2, 3, -7, 9, 0]]])
    if dtype in ("uint8", "bool"):
        base = np.abs(base)
    x = base.astype(dtype)
    calls = {
        "max_pool1d": lambda F, t: F.max_pool1d(t, 2),
        "max_pool1d_indices": lambda F, t: F.max_pool1d(t, 2, return_indices=True)[0],
        "max_pool1d_padding_only": lambda F, t: F.max_pool1d(
            t, 2, 1, padding=1, dilation=6, return_indices=True)[0],
        "max_pool2d": lambda F, t: F.max_pool2d(t[None], (1, 2), padding=(0, 1)),
        "avg_pool1d": lambda F, t: F.avg_pool1d(t, 2),
        "avg_pool2d_pad": lambda F, t: F.avg_pool2d(t[None], (1, 3), 2, (0, 1)),
        "adaptive_avg_pool1d": lambda F, t: F.adaptive_avg_pool1d(t, 4),
        "adaptive_avg_pool2d": lambda F, t: F.adaptive_avg_pool2d(t[None], (1, 4)),
        "adaptive_max_pool1d": lambda F, t: F.adaptive_max_pool1d(t, 4),
        "adaptive_max_pool2d": lambda F, t: F.adaptive_max_pool2d(t[None], (1, 4)),
    }
    for name, call in calls.items():
        outcomes = []
        for lib in (chainrule, torch):
            try:
                out = call(lib.nn.functional, lib.from_numpy(x.copy()))
                outcomes.append((str(out.dtype).split(".")[-1], out.tolist()))
            except (RuntimeError, NotImplementedError) as e:
                outcomes.append((type(e).__name__, str(e)))
        assert outcomes[0] == outcomes[1], name


ERRORS = {
    "max_pool2d kernel of 3": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), (1, 2, 3)),
    "max_pool2d stride of 3": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, (1, 2, 3)),
    "max_pool2d padding of 3": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, 1,
                                                           (1, 1, 1)),
    "max_pool2d dilation of 3": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, 1, 0,
                                                            (1, 1, 1)),
    "max_pool2d stride 0": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, 0),
    "max_pool2d stride -1": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, -1),
    "max_pool2d padding -1": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, 1, -1),
    "max_pool2d kernel 0": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 0),
    "max_pool2d kernel -1": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), -1),
    "max_pool2d kernel 0 dilation 3": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 0, 1,
                                                                  0, 3),
    "max_pool2d dilation 0": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 2, 1, 0, 0),
    "max_pool2d 2-d input": lambda F, lib: F.max_pool2d(lib.ones(4, 5), 2),
    "max_pool2d too small": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 4, 5), 5),
    "max_pool2d empty height": lambda F, lib: F.max_pool2d(lib.ones(1, 1, 0, 5), 1),
    "max_pool2d padding over half the kernel": lambda F, lib: F.max_pool2d(
        lib.ones(1, 1, 1, 4), (1, 2), 1, (0, 2), (1, 3)),
    "max_pool1d indices 1-d input": lambda F, lib: F.max_pool1d(lib.ones(5), 2,
                                                                return_indices=True),
    "max_pool1d indices kernel of 2": lambda F, lib: F.max_pool1d(lib.ones(1, 4, 5), (2, 2),
                                                                  return_indices=True),
    "max_pool1d 4-d input": lambda F, lib: F.max_pool1d(lib.ones(1, 1, 4, 5), 2),
    "max_pool1d kernel of 2": lambda F, lib: F.max_pool1d(lib.ones(1, 4, 5), (2, 2)),
    "max_pool1d stride of 2": lambda F, lib: F.max_pool1d(lib.ones(1, 4, 5), 2, (2, 2)),
    "max_pool1d empty length": lambda F, lib: F.max_pool1d(lib.ones(1, 1, 0), 2),
    "max_pool1d padding over half": lambda F, lib: F.max_pool1d(lib.ones(1, 1, 4), 2, 1, 2, 3),
    "max_pool1d kernel 0": lambda F, lib: F.max_pool1d(lib.ones(1, 1, 4), 0),
    "max_pool1d padding -1": lambda F, lib: F.max_pool1d(lib.ones(1, 1, 4), 2, 1, -1),
    "max_pool1d too small": lambda F, lib: F.max_pool1d(lib.ones(1, 1, 4), 5),
    "avg_pool1d 1-d input": lambda F, lib: F.avg_pool1d(lib.ones(5), 2),
    "avg_pool1d kernel of 2": lambda F, lib: F.avg_pool1d(lib.ones(1, 4, 5), (2, 2)),
    "avg_pool2d kernel of 3": lambda F, lib: F.avg_pool2d(lib.ones(1, 1, 4, 5), (1, 2, 3)),
    "avg_pool2d divisor 0": lambda F, lib: F.avg_pool2d(lib.ones(1, 1, 4, 5), 2,
                                                        divisor_override=0),
    "avg_pool2d stride 0": lambda F, lib: F.avg_pool2d(lib.ones(1, 1, 4, 5), 2, 0),
    "avg_pool2d 2-d input": lambda F, lib: F.avg_pool2d(lib.ones(4, 5), 2),
    "avg_pool2d 5-d input": lambda F, lib: F.avg_pool2d(lib.ones(1, 1, 1, 4, 5), 2),
    "avg_pool2d padding -1": lambda F, lib: F.avg_pool2d(lib.ones(1, 1, 4, 5), 2, 1, -1),
    "adaptive_avg_pool2d 2-d input": lambda F, lib: F.adaptive_avg_pool2d(lib.ones(4, 5), 2),
    "adaptive_avg_pool2d negative": lambda F, lib: F.adaptive_avg_pool2d(lib.ones(1, 1, 4, 5),
                                                                         -1),
    "adaptive_avg_pool2d size of 3": lambda F, lib: F.adaptive_avg_pool2d(
        lib.ones(1, 1, 4, 5), (1, 2, 3)),
    "adaptive_avg_pool2d empty height": lambda F, lib: F.adaptive_avg_pool2d(
        lib.ones(1, 1, 0, 5), 2),
    "adaptive_avg_pool1d size of 2": lambda F, lib: F.adaptive_avg_pool1d(lib.ones(1, 4, 5),
                                                                          (2, 2)),
    "adaptive_max_pool2d 2-d input": lambda F, lib: F.adaptive_max_pool2d(lib.ones(4, 5), 2),
    "adaptive_max_pool2d negative": lambda F, lib: F.adaptive_max_pool2d(lib.ones(1, 1, 4, 5),
                                                                         -1),
    "adaptive_max_pool2d size of 3": lambda F, lib: F.adaptive_max_pool2d(
        lib.ones(1, 1, 4, 5), (1, 2, 3)),
    "adaptive_max_pool2d no channels": lambda F, lib: F.adaptive_max_pool2d(
        lib.ones(1, 0, 4, 5), 2),
    "adaptive_max_pool1d 4-d input": lambda F, lib: F.adaptive_max_pool1d(lib.ones(1, 1, 4, 5),
                                                                          2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_pooling_errors_like_torch(name: str) -> None:
    outcomes = []
    for lib in (chainrule, torch):
        try:
            ERRORS[name](lib.nn.functional, lib)
            outcomes.append(None)
        except (RuntimeError, IndexError, ValueError) as e:
            outcomes.append((type(e).__name__, str(e)))
    assert outcomes[1] is not None
    assert outcomes[0] == outcomes[1]


EMPTY = {
    "max_pool1d": lambda F, t: F.max_pool1d(t, 2),
    "max_pool1d_indices": lambda F, t: F.max_pool1d(t, 2, return_indices=True)[0],
    "max_pool2d": lambda F, t: F.max_pool2d(t[:, :, None], (1, 2)),
    "adaptive_max_pool1d": lambda F, t: F.adaptive_max_pool1d(t, 2),
    "avg_pool1d": lambda F, t: F.avg_pool1d(t, 2),
    "adaptive_avg_pool1d": lambda F, t: F.adaptive_avg_pool1d(t, 3),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_batch_pooling_like_torch(name: str) -> None:
    shapes = []
    for lib in (chainrule, torch):
        x = lib.ones(0, 2, 4, requires_grad=True)
        out = EMPTY[name](lib.nn.functional, x)
        out.sum().backward()
        shapes.append((tuple(out.shape), tuple(x.grad.shape), x.grad.sum().item()))
    assert shapes[0] == shapes[1]


def test_adaptive_max_pool_to_zero_size_like_torch() -> None:
    shapes = [tuple(lib.nn.functional.adaptive_max_pool2d(lib.ones(1, 2, 3, 4), (1, 0)).shape)
              for lib in (chainrule, torch)]
    assert shapes[0] == shapes[1] == (1, 2, 1, 0)


FLOAT16 = {
    "avg_pool2d": lambda F, t: F.avg_pool2d(t, 3, 2, 1),
    "avg_pool2d_exclude_pad": lambda F, t: F.avg_pool2d(t, 3, 2, 1, count_include_pad=False),
    "avg_pool1d": lambda F, t: F.avg_pool1d(t[0], 3, 2, 1),
    "adaptive_avg_pool2d": lambda F, t: F.adaptive_avg_pool2d(t, 3),
    "adaptive_avg_pool2d_5x2": lambda F, t: F.adaptive_avg_pool2d(t, (5, 2)),
    "adaptive_avg_pool1d": lambda F, t: F.adaptive_avg_pool1d(t[0], 4),
    "max_pool2d": lambda F, t: F.max_pool2d(t, 3, 2, 1),
    "adaptive_max_pool2d": lambda F, t: F.adaptive_max_pool2d(t, 3),
}


@pytest.mark.parametrize("name", sorted(FLOAT16))
def test_float16_pooling_values_like_torch(name: str) -> None:
    x = (np.random.default_rng(0).standard_normal((2, 3, 7, 7)) * 100).astype(np.float16)
    results = []
    for lib in (chainrule, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        out = FLOAT16[name](lib.nn.functional, t)
        assert str(out.dtype).endswith("float16")
        out.backward(lib.ones_like(out))
        results.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1].astype(np.float32),
                               results[1][1].astype(np.float32), rtol=2e-3, atol=1e-6)


LAYOUTS = {
    "channels_last": lambda lib: lib.ones(2, 4, 5, 3).permute(0, 3, 1, 2),
    "batch_channels_swapped": lambda lib: lib.ones(3, 2, 4, 5).transpose(0, 1),
    "height_width_swapped": lambda lib: lib.ones(2, 3, 5, 4).transpose(2, 3),
    "sliced": lambda lib: lib.ones(2, 3, 4, 10)[..., ::2],
    "expanded": lambda lib: lib.ones(1, 3, 4, 5).expand(2, 3, 4, 5),
    "unbatched_permuted": lambda lib: lib.ones(4, 5, 3).permute(2, 0, 1),
    "one_by_one_channels_last": lambda lib: lib.ones(2, 1, 1, 3).permute(0, 3, 1, 2),
    "one_channel_channels_last": lambda lib: lib.ones(2, 4, 5, 1).permute(0, 3, 1, 2),
}
LAYOUT_CALLS = {
    "max_pool2d": lambda F, x: F.max_pool2d(x, 1, return_indices=True),
    "avg_pool2d": lambda F, x: (F.avg_pool2d(x, 1),),
    "adaptive_max_pool2d": lambda F, x: F.adaptive_max_pool2d(x, 2, return_indices=True),
    "adaptive_avg_pool2d": lambda F, x: (F.adaptive_avg_pool2d(x, 2),),
    "adaptive_avg_pool2d_to_1": lambda F, x: (F.adaptive_avg_pool2d(x, 1),),
    "adaptive_avg_pool2d_to_1x1": lambda F, x: (F.adaptive_avg_pool2d(x, (1, 1)),),
}


@pytest.mark.parametrize("call", sorted(LAYOUT_CALLS))
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_pooling_output_layout_like_torch(name: str, call: str) -> None:
    layouts = []
    for lib in (chainrule, torch):
        outs = LAYOUT_CALLS[call](lib.nn.functional, LAYOUTS[name](lib))
        layouts.append([(tuple(o.shape), o.stride(), o.is_contiguous()) for o in outs])
    assert layouts[0] == layouts[1]
