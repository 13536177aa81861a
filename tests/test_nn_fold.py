"""unfold / fold (im2col / col2im) and nn.Unfold / nn.Fold against PyTorch: values and
gradients for kernel, dilation, padding and stride, batched and unbatched, node names and
layouts, the second derivative (each op's derivative is the other), errors and reprs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

OPTIONS = [
    {"kernel_size": (2, 3), "padding": 1, "stride": (2, 1)},
    {"kernel_size": 2, "dilation": 2},
    {"kernel_size": 1},
    {"kernel_size": (3, 2), "dilation": (1, 2), "padding": (2, 0), "stride": 3},
]


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("which", range(len(OPTIONS)))
def test_unfold_and_fold_match_torch(which: int, batched: bool) -> None:
    kw = OPTIONS[which]
    rng = np.random.default_rng(which)
    x = rng.standard_normal((2, 3, 5, 4) if batched else (3, 5, 4))
    results = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        cols = lib.nn.functional.unfold(leaf.transpose(-1, -2).transpose(-1, -2), **kw)
        back = lib.nn.functional.fold(cols * 2, (5, 4), **kw)
        grad_seed = lib.tensor(np.linspace(-1, 1, back.numel()).reshape(tuple(back.shape)))
        (g,) = lib.autograd.grad(back, leaf, grad_seed, create_graph=True)
        results.append(
            (
                cols.detach().numpy(),
                back.detach().numpy(),
                g.detach().numpy(),
                cols.grad_fn.name(),
                back.grad_fn.name(),
                cols.stride(),
                back.stride(),
                None if g.grad_fn is None else g.grad_fn.name(),
            )
        )
    t, c = results
    for a, b in zip(c[:3], t[:3], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert c[3:] == t[3:]


def test_double_backward_matches_torch() -> None:
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    out = []
    for lib in (torch, chainrule):
        leaf = lib.tensor(x, requires_grad=True)
        cols = lib.nn.functional.unfold(leaf, 2, stride=1)
        seed = lib.ones(tuple(cols.shape), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(cols, leaf, seed, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), seed)
        out.append((g.grad_fn.name(), gg.numpy()))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[1][1], out[0][1])


def _call(fn: str, shape: tuple[int, ...], *args: Any, **kw: Any) -> Any:
    return lambda lib: tuple(getattr(lib.nn.functional, fn)(lib.ones(*shape), *args, **kw).shape)


ERRORS = {
    "unfold_2d": _call("unfold", (3, 4), 2),
    "unfold_5d": _call("unfold", (2, 1, 2, 3, 4), 2),
    "unfold_big_kernel": _call("unfold", (1, 2, 3, 4), 5),
    "unfold_zero_kernel": _call("unfold", (1, 2, 3, 4), 0),
    "unfold_zero_stride": _call("unfold", (1, 2, 3, 4), 2, stride=0),
    "unfold_negative_padding": _call("unfold", (1, 2, 3, 4), 2, padding=-1),
    "unfold_zero_dilation": _call("unfold", (1, 2, 3, 4), 2, dilation=0),
    "unfold_3d_ok": _call("unfold", (2, 3, 4), 2),
    "fold_ok": _call("fold", (1, 12, 4), (3, 3), 2),
    "fold_channels": _call("fold", (1, 10, 4), (3, 3), 2),
    "fold_blocks": _call("fold", (1, 12, 5), (3, 3), 2),
    "fold_unbatched": _call("fold", (12, 4), (3, 3), 2),
    "fold_4d": _call("fold", (2, 1, 12, 4), (3, 3), 2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


def test_modules_match_torch() -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 4))
    for make in (lambda lib: lib.nn.Unfold(2), lambda lib: lib.nn.Unfold((2, 1), 1, 1, 2)):
        t_mod, c_mod = make(torch), make(chainrule)
        assert repr(c_mod) == repr(t_mod)
        np.testing.assert_array_equal(
            c_mod(chainrule.tensor(x)).numpy(), t_mod(torch.tensor(x)).numpy()
        )
    cols = np.random.default_rng(2).standard_normal((2, 12, 4))
    t_mod, c_mod = torch.nn.Fold((3, 3), 2, stride=1), chainrule.nn.Fold((3, 3), 2, stride=1)
    assert repr(c_mod) == repr(t_mod)
    np.testing.assert_allclose(
        c_mod(chainrule.tensor(cols)).numpy(), t_mod(torch.tensor(cols)).numpy()
    )
