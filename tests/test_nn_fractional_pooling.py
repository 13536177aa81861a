"""fractional_max_pool2d/3d and nn.FractionalMaxPool2d/3d against PyTorch, with fixed
_random_samples: outputs, indices, gradients (overlapping windows add up), double backward,
float16/float32/float64, output_ratio, unbatched inputs, module reprs, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome

R = np.random.default_rng(0)
X2 = R.standard_normal((2, 2, 7, 6))
S2 = R.uniform(size=(2, 2, 2))
X3 = R.standard_normal((1, 2, 5, 6, 7))
S3 = R.uniform(size=(1, 2, 3))
CASES = [
    (2, X2, S2, {"kernel_size": 2, "output_size": (4, 3)}),
    (2, X2, S2, {"kernel_size": (3, 2), "output_size": (5, 5)}),
    (2, X2, S2, {"kernel_size": 2, "output_size": (1, 1)}),
    (2, X2, S2, {"kernel_size": 1, "output_size": (7, 6)}),
    (2, X2, S2, {"kernel_size": 2, "output_ratio": (0.5, 0.7)}),
    (2, X2[0], S2[:1], {"kernel_size": 3, "output_size": 3}),
    (3, X3, S3, {"kernel_size": 2, "output_size": (3, 3, 4)}),
    (3, X3[0], S3, {"kernel_size": (1, 2, 3), "output_ratio": (0.5, 0.5, 0.5)}),
]


def _run(lib: Any, nd: int, x: np.ndarray, s: np.ndarray, kw: dict, dtype: str) -> tuple:
    dt = getattr(lib, dtype)
    leaf = lib.tensor(x, dtype=dt, requires_grad=True)
    pool = (
        lib.nn.functional.fractional_max_pool2d
        if nd == 2
        else (lib.nn.functional.fractional_max_pool3d)
    )
    out, idx = pool(leaf, return_indices=True, _random_samples=lib.tensor(s, dtype=dt), **kw)
    seed = lib.tensor(
        np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=dt, requires_grad=True
    )
    (g,) = lib.autograd.grad(out, leaf, seed, create_graph=True)
    # the second derivative: the gradient (a scatter of the seed) differentiated in the seed
    (gg,) = lib.autograd.grad((g * g).sum(), seed)
    return (
        out.detach().float().numpy(),
        idx.numpy(),
        g.detach().float().numpy(),
        gg.float().numpy(),
        out.grad_fn.name().split("::")[-1],
    )


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torch(case: int, dtype: str) -> None:
    t = _run(torch, *CASES[case], dtype)
    c = _run(chainrule, *CASES[case], dtype)
    np.testing.assert_array_equal(c[1], t[1])
    np.testing.assert_array_equal(c[0], t[0])
    np.testing.assert_allclose(c[2], t[2], rtol=1e-3 if dtype == "float16" else 1e-12)
    np.testing.assert_allclose(c[3], t[3], rtol=1e-3 if dtype == "float16" else 1e-12)
    assert c[4] == t[4]


def test_modules_match_torch() -> None:
    out = []
    for lib in (torch, chainrule):
        m2 = lib.nn.FractionalMaxPool2d(
            2, output_ratio=0.5, return_indices=True, _random_samples=lib.tensor(S2)
        )
        m3 = lib.nn.FractionalMaxPool3d(2, output_size=3)
        o, i = m2(lib.tensor(X2))
        out.append(
            (
                repr(m2),
                repr(m3),
                o.numpy(),
                i.numpy(),
                [name for name, _ in m2.named_buffers()],
                m3.kernel_size,
                m2.output_ratio,
            )
        )
    t, c = out
    assert c[:2] == t[:2] and c[4:] == t[4:]
    np.testing.assert_array_equal(c[2], t[2])
    np.testing.assert_array_equal(c[3], t[3])


ERRORS: dict[str, Callable[[Any], Any]] = {
    "no size": lambda t: t.nn.functional.fractional_max_pool2d(t.ones(1, 1, 4, 4), 2),
    "pool too large": lambda t: t.nn.functional.fractional_max_pool2d(
        t.ones(1, 1, 4, 4), 3, output_size=3
    ),
    "pool too large 3d": lambda t: t.nn.functional.fractional_max_pool3d(
        t.ones(1, 1, 3, 4, 4), 2, output_size=2
    ),
    "2-d input": lambda t: t.nn.functional.fractional_max_pool2d(t.ones(4, 4), 2, output_size=2),
    "int input": lambda t: t.nn.functional.fractional_max_pool2d(
        t.ones(1, 1, 4, 4, dtype=t.int32), 2, output_size=2
    ),
    "module without size": lambda t: t.nn.FractionalMaxPool2d(2),
    "module size and ratio": lambda t: t.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
    "module ratio range": lambda t: t.nn.FractionalMaxPool3d(2, output_ratio=1.5),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])
