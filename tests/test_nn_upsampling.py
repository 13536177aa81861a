"""interpolate / Upsample and the channel rearrangements (pixel_shuffle, pixel_unshuffle,
channel_shuffle) against PyTorch: every mode and rank with sizes, scale factors (kept and
recomputed) and align_corners; values, gradients, node names and saved scales; the modules'
reprs; PyTorch's errors and deprecation warnings."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

MODES = {
    1: ["nearest", "nearest-exact", "linear"],
    2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
    3: ["nearest", "nearest-exact", "trilinear", "area"],
}
SIZES = [
    {"scale_factor": 2},
    {"scale_factor": 1.7},
    {"scale_factor": 0.6},
    {"size": 7},
    {"scale_factor": 1.3, "recompute_scale_factor": True},
    {"size": 1},
]
CASES = [
    (rank, mode, i, align)
    for rank, modes in MODES.items()
    for mode in modes
    for i in range(len(SIZES))
    for align in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True])
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("rank", "mode", "which", "align"), CASES, ids=[f"{r}d-{m}-{i}-{a}" for r, m, i, a in CASES]
)
def test_interpolate_matches_torch(
    rank: int, mode: str, which: int, align: Any, dtype: str
) -> None:
    rng = np.random.default_rng(which)
    x = rng.standard_normal((2, 3) + (4, 5, 3)[:rank]).astype(dtype)
    kw = dict(SIZES[which])
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.interpolate(leaf, mode=mode, align_corners=align, **kw)
        # The node's saved numbers (the area mode is adaptive pooling: compared elsewhere).
        saved = (
            {}
            if mode == "area"
            else {
                name: getattr(out.grad_fn, name)
                for name in dir(out.grad_fn)
                if name.startswith("_saved_") and name != "_saved_self"
            }
        )
        grad = np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype)
        out.backward(lib.tensor(grad))
        results.append((out, leaf.grad, out.grad_fn.name(), saved))
    (t_out, t_grad, t_node, t_saved), (c_out, c_grad, c_node, c_saved) = results
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert tuple(c_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(c_out.detach().numpy(), t_out.detach().numpy(), atol=tol)
    np.testing.assert_allclose(c_grad.numpy(), t_grad.numpy(), atol=tol, rtol=tol)
    assert c_node == t_node
    assert c_saved == t_saved
    assert c_out.stride() == t_out.stride()


def test_nearest_keeps_infinities_and_nan() -> None:
    x = np.array([[[np.inf, -np.inf, np.nan, 1.0]]])
    for mode in ("nearest", "nearest-exact"):
        same_outcome(
            lambda lib, mode=mode: lib.nn.functional.interpolate(
                lib.tensor(x), scale_factor=1.5, mode=mode
            )
        )


def test_double_backward_matches_torch() -> None:
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.interpolate(leaf, scale_factor=1.5, mode="bicubic")
        seed = lib.ones(tuple(out.shape), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(out, leaf, seed, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), seed)
        results.append((g.grad_fn.name(), gg.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[1][1], results[0][1], atol=1e-12)


def _interp(shape: tuple[int, ...], **kw: Any) -> Any:
    return lambda lib: tuple(lib.nn.functional.interpolate(lib.ones(*shape), **kw).shape)


ERRORS = {
    "both": _interp((1, 1, 4), size=2, scale_factor=2),
    "neither": _interp((1, 1, 4)),
    "size_rank": _interp((1, 1, 4, 4), size=(2, 2, 2)),
    "scale_rank": _interp((1, 1, 4, 4), scale_factor=(2,)),
    "size_type": _interp((1, 1, 4, 4), size=(2.0, 2)),
    "align_nearest": _interp((1, 1, 4), size=2, align_corners=True),
    "recompute_with_size": _interp((1, 1, 4), size=2, recompute_scale_factor=True),
    "antialias_linear": _interp((1, 1, 4), size=2, mode="linear", antialias=True),
    "bilinear_3d": _interp((1, 1, 4), size=2, mode="bilinear"),
    "linear_4d": _interp((1, 1, 4, 4), size=2, mode="linear"),
    "trilinear_4d": _interp((1, 1, 4, 4), size=2, mode="trilinear"),
    "bicubic_5d": _interp((1, 1, 2, 2, 2), size=2, mode="bicubic"),
    "two_dims": _interp((4, 4), size=2),
    "unknown_mode": _interp((1, 1, 4), size=2, mode="cubic"),
    "zero_size_1d": _interp((1, 1, 2), size=0),
    "zero_size_2d": _interp((1, 1, 2, 2), size=(0, 2), mode="bilinear"),
    "tiny_scale_3d": _interp((1, 1, 2, 2, 2), scale_factor=0.1, mode="trilinear"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_interpolate_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


def test_upsample_modules_match_torch() -> None:
    x = np.random.default_rng(1).standard_normal((1, 2, 3, 4))
    for make in (
        lambda lib: lib.nn.Upsample(scale_factor=2),
        lambda lib: lib.nn.Upsample(size=(5, 6), mode="bilinear"),
        lambda lib: lib.nn.Upsample(scale_factor=(2, 1.5), mode="bicubic", align_corners=True),
        lambda lib: lib.nn.UpsamplingNearest2d(scale_factor=2),
        lambda lib: lib.nn.UpsamplingBilinear2d(size=(3, 4)),
    ):
        t_mod, c_mod = make(torch), make(chainrule)
        assert repr(c_mod) == repr(t_mod)
        np.testing.assert_allclose(
            c_mod(chainrule.tensor(x)).numpy(), t_mod(torch.tensor(x)).numpy(), atol=1e-12
        )


def test_deprecated_functions_warn_as_torch() -> None:
    def run(lib: Any) -> list[tuple[str, str]]:
        f = lib.nn.functional
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f.upsample(lib.ones(1, 1, 2), scale_factor=2)
            f.upsample_nearest(lib.ones(1, 1, 2), scale_factor=2)
            out = f.upsample_bilinear(lib.ones(1, 1, 2, 2), scale_factor=2)
        return [(str(w.message), w.filename) for w in caught] + [str(out.shape)]

    assert run(chainrule) == [(m.replace("torch", "chainrule"), f) for m, f in run(torch)[:-1]] + [
        run(torch)[-1].replace("torch", "chainrule")
    ]


SHUFFLES = {
    "pixel_shuffle": lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2),
    "pixel_unshuffle": lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2),
    "channel_shuffle": lambda lib, x: lib.nn.functional.channel_shuffle(x, 4),
    "native_channel_shuffle": lambda lib, x: lib.nn.functional.native_channel_shuffle(x, 2),
}


@pytest.mark.parametrize("name", sorted(SHUFFLES))
def test_shuffles_match_torch(name: str) -> None:
    x = np.random.default_rng(2).standard_normal((2, 8, 4, 6))
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        source = leaf.transpose(2, 3)  # a non-contiguous input
        out = SHUFFLES[name](lib, source)
        results.append((out, out.grad_fn.name().split("::")[-1], out.stride()))
        if name != "native_channel_shuffle":
            out.backward(lib.tensor(np.arange(out.numel(), dtype=float).reshape(out.shape)))
            results[-1] += (leaf.grad.numpy(),)
    t, c = results
    np.testing.assert_array_equal(c[0].detach().numpy(), t[0].detach().numpy())
    assert c[1:3] == t[1:3]
    if name != "native_channel_shuffle":
        np.testing.assert_array_equal(c[3], t[3])


SHUFFLE_ERRORS = {
    "pixel_channels": lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 7, 3, 3), 2),
    "pixel_rank": lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(8, 3), 2),
    "pixel_factor": lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(1, 8, 3, 3), 0),
    "unshuffle_height": lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 2, 5, 4), 2),
    "unshuffle_width": lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 2, 4, 5), 2),
    "unshuffle_rank": lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(4, 5), 2),
    "unshuffle_factor": lambda lib: lib.nn.functional.pixel_unshuffle(lib.ones(1, 2, 4, 4), -1),
    "channel_groups": lambda lib: lib.nn.functional.channel_shuffle(lib.ones(1, 8, 3), 3),
    "channel_zero": lambda lib: lib.nn.functional.channel_shuffle(lib.ones(1, 8, 3), 0),
    "channel_rank": lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 8), 2),
    "pixel_3d_ok": lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(8, 3, 3), 2).shape,
    "pixel_5d_ok": lambda lib: lib.nn.functional.pixel_shuffle(lib.ones(2, 3, 8, 3, 3), 2).shape,
}


@pytest.mark.parametrize("name", sorted(SHUFFLE_ERRORS))
def test_shuffle_errors_match_torch(name: str) -> None:
    same_outcome(SHUFFLE_ERRORS[name])


def test_shuffle_modules_match_torch() -> None:
    x = np.random.default_rng(3).standard_normal((1, 8, 2, 2))
    for make in (
        lambda lib: lib.nn.PixelShuffle(2),
        lambda lib: lib.nn.PixelUnshuffle(2),
        lambda lib: lib.nn.ChannelShuffle(4),
    ):
        t_mod, c_mod = make(torch), make(chainrule)
        assert repr(c_mod) == repr(t_mod)
        np.testing.assert_array_equal(
            c_mod(chainrule.tensor(x)).numpy(), t_mod(torch.tensor(x)).numpy()
        )
