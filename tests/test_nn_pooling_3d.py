"""3-D pooling (max, average, adaptive; functions and modules) against PyTorch: values,
indices, gradients and the nodes that compute them, layouts, and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch
from .outcomes import attempt


def _distinct(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    n = int(np.prod(shape))
    values = (np.random.default_rng(seed).permutation(n) - n / 2) * 0.1
    return values.reshape(shape)


MODULES = {
    "MaxPool3d": lambda nn: nn.MaxPool3d(2),
    "MaxPool3d_indices": lambda nn: nn.MaxPool3d((2, 3, 2), stride=1, padding=1,
                                                 return_indices=True),
    "MaxPool3d_ceil": lambda nn: nn.MaxPool3d(3, stride=2, dilation=(1, 2, 1), ceil_mode=True),
    "AvgPool3d": lambda nn: nn.AvgPool3d(2),
    "AvgPool3d_pad": lambda nn: nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True,
                                             count_include_pad=False),
    "AvgPool3d_divisor": lambda nn: nn.AvgPool3d((1, 2, 2), divisor_override=5),
    "AdaptiveAvgPool3d": lambda nn: nn.AdaptiveAvgPool3d((3, 2, 4)),
    "AdaptiveAvgPool3d_none": lambda nn: nn.AdaptiveAvgPool3d((None, 1, 3)),
    "AdaptiveAvgPool3d_one": lambda nn: nn.AdaptiveAvgPool3d(1),
    "AdaptiveMaxPool3d": lambda nn: nn.AdaptiveMaxPool3d((2, 3, 2)),
    "AdaptiveMaxPool3d_indices": lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True),
}


def _module_run(lib: Any, name: str, x: np.ndarray, channels_last: bool) -> dict:
    module = MODULES[name](lib.nn)
    t = lib.tensor(x, dtype=lib.float64)
    if channels_last:
        t = t.permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3)
    t.requires_grad_()
    result = module(t)
    out, indices = result if isinstance(result, tuple) else (result, None)
    cotangent = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)),
                           dtype=lib.float64, requires_grad=True)
    (grad,) = lib.autograd.grad(out, t, cotangent, create_graph=True)
    (second,) = lib.autograd.grad((grad * grad).sum(), cotangent)
    return {
        "repr": repr(module),
        "out": out.detach().numpy().round(12).tolist(),
        "strides": out.stride(),
        "node": type(out.grad_fn).__name__,
        "next": [type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None],
        "indices": None if indices is None else (indices.tolist(), indices.stride()),
        "grad": grad.detach().numpy().round(12).tolist(),
        "grad_node": type(grad.grad_fn).__name__ if "Adaptive" not in name else None,
        "second": second.numpy().round(10).tolist(),
    }


@pytest.mark.parametrize("channels_last", [False, True], ids=["contiguous", "channels_last"])
@pytest.mark.parametrize("name", sorted(MODULES))
def test_3d_pooling_modules_match_torch(name: str, channels_last: bool) -> None:
    x = _distinct((2, 3, 5, 6, 7))
    ours = _module_run(chainrule, name, x, channels_last)
    theirs = _module_run(torch, name, x, channels_last)
    assert normalise_output(str(ours)) == normalise_output(str(theirs))


@pytest.mark.parametrize("fn", ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d",
                                "adaptive_max_pool3d"])
def test_3d_pooling_unbatched_and_empty_batch(fn: str) -> None:
    results = []
    for lib in (chainrule, torch):
        f = getattr(lib.nn.functional, fn)
        x = lib.tensor(_distinct((3, 4, 4, 5)), requires_grad=True)
        out = f(x, 2)
        out.sum().backward()
        empty = f(lib.zeros(0, 3, 4, 4, 4), 2)
        results.append((out.detach().numpy().round(12).tolist(), x.grad.tolist(),
                        tuple(empty.shape)))
    assert results[0] == results[1]


def _described(out: Any) -> tuple:
    if isinstance(out, tuple):
        return tuple(tuple(o.shape) for o in out)
    return tuple(out.shape), str(out.dtype).split(".")[-1]


def _outcome(run: Any) -> tuple:
    return attempt(run, _described)


ERRORS = [
    ("max_pool3d", lambda lib, x: (lib.randn(2, 3, 4), 2)),
    ("max_pool3d", lambda lib, x: (x, 0)),
    ("max_pool3d", lambda lib, x: (x, 2, None, 2)),
    ("max_pool3d", lambda lib, x: (x, (2, 2))),
    ("max_pool3d", lambda lib, x: (x, 2, (2, 2))),
    ("max_pool3d", lambda lib, x: (x, 2, 2, (1, 1))),
    ("max_pool3d", lambda lib, x: (x, 2, 2, 0, (1, 1))),
    ("max_pool3d", lambda lib, x: (x, 2, 2, 0, -1)),
    ("max_pool3d", lambda lib, x: (x, 2, -1)),
    ("max_pool3d", lambda lib, x: (x, 8)),
    ("max_pool3d", lambda lib, x: (x, 2, 2, -1)),
    ("max_pool3d", lambda lib, x: (lib.zeros(2, 0, 4, 4, 4), 2)),
    ("max_pool3d", lambda lib, x: (lib.zeros(3, 0, 4, 4), 2)),
    ("max_pool3d", lambda lib, x: (lib.zeros(2, 3, 4, 4, 4, dtype=lib.bool), 2)),
    ("max_pool3d", lambda lib, x: (lib.ones(2, 3, 4, 4, 4, dtype=lib.int64), 2)),
    ("avg_pool3d", lambda lib, x: (lib.randn(2, 3, 4), 2)),
    ("avg_pool3d", lambda lib, x: (x, (2, 2))),
    ("avg_pool3d", lambda lib, x: (x, 2, (2, 2))),
    ("avg_pool3d", lambda lib, x: (x, 2, 2, (1, 1))),
    ("avg_pool3d", lambda lib, x: (x, 8)),
    ("avg_pool3d", lambda lib, x: (x, 2, 2, 2)),
    ("avg_pool3d", lambda lib, x: (x, 2, -1)),
    ("avg_pool3d", lambda lib, x: (x, 2, None, 0, False, True, 0)),
    ("avg_pool3d", lambda lib, x: (lib.zeros(2, 0, 4, 4, 4), 2)),
    ("avg_pool3d", lambda lib, x: (lib.ones(2, 3, 4, 4, 4, dtype=lib.int64), 2)),
    ("avg_pool3d", lambda lib, x: (lib.ones(2, 3, 4, 4, 4, dtype=lib.float16), 2)),
    ("avg_pool3d", lambda lib, x: (lib.ones(2, 3, 4, 4, 4, dtype=lib.int32), 2)),
    ("adaptive_avg_pool3d", lambda lib, x: (lib.randn(2, 3, 4), 2)),
    ("adaptive_avg_pool3d", lambda lib, x: (x, (2, 2))),
    ("adaptive_avg_pool3d", lambda lib, x: (x, -1)),
    ("adaptive_avg_pool3d", lambda lib, x: (x[0, 0], (2, 3, 4))),
    ("adaptive_avg_pool3d", lambda lib, x: (lib.zeros(2, 3, 0, 4, 4), 2)),
    ("adaptive_avg_pool3d", lambda lib, x: (x, 0)),
    ("adaptive_avg_pool3d", lambda lib, x: (lib.ones(2, 3, 4, 4, 4, dtype=lib.int64), 2)),
    ("adaptive_max_pool3d", lambda lib, x: (lib.randn(2, 3, 4), 2)),
    ("adaptive_max_pool3d", lambda lib, x: (x, (2, 2))),
    ("adaptive_max_pool3d", lambda lib, x: (x, -1)),
    ("adaptive_max_pool3d", lambda lib, x: (lib.zeros(2, 3, 0, 4, 4), 2)),
    ("adaptive_max_pool3d", lambda lib, x: (lib.ones(2, 3, 4, 4, 4, dtype=lib.int64), 2)),
    ("adaptive_max_pool3d", lambda lib, x: (x, 0)),
]


@pytest.mark.parametrize(("fn", "args"), ERRORS, ids=[f"{e[0]}-{i}" for i, e in
                                                      enumerate(ERRORS)])
def test_3d_pooling_errors_match_torch(fn: str, args: Any) -> None:
    results = []
    for lib in (chainrule, torch):
        x = lib.zeros(2, 3, 5, 6, 7)
        results.append(_outcome(lambda lib=lib, x=x: getattr(lib.nn.functional, fn)(
            *args(lib, x))))
    assert results[0] == results[1]


def test_3d_max_pool_ties_nan_and_padding_only_windows() -> None:
    """PyTorch's index rules: the first maximum of a tie, the last NaN; a window that covers
    padding only (dilation and ceil mode) gives -inf."""
    x = np.zeros((1, 1, 3, 4, 4))
    x[0, 0, 1, 1, 1] = np.nan
    x[0, 0, 1, 2, 2] = np.nan
    results = []
    for lib in (chainrule, torch):
        t = lib.tensor(x, requires_grad=True)
        out, indices = lib.nn.functional.max_pool3d(t, 2, stride=2, padding=1, dilation=2,
                                                    ceil_mode=True, return_indices=True)
        out.sum().backward()
        results.append((out.detach().numpy().tolist(), indices.tolist(), t.grad.tolist()))
    assert normalise_output(str(results[0][:2])) == normalise_output(str(results[1][:2]))
