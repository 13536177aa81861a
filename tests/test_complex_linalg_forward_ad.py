"""Forward-mode AD of torch.linalg with complex tangents, against PyTorch.

The JVP rules of inv, det, slogdet, solve, solve_triangular, matrix_exp, cholesky and pinv
refused complex tangents (NotImplementedError) where PyTorch computes them. The rules of the
holomorphic ones hold as they are; cholesky's and pinv's now use conjugate transposes, and
slogdet's sign turns by ``i Im(trace(A^{-1} A_t))``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

RNG = np.random.default_rng(17)


def _c(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A, A_T = _c(2, 3, 3) + 3 * np.eye(3), _c(2, 3, 3)
W, W_T = _c(3, 5), _c(3, 5)
B, B_T = _c(2, 3, 2), _c(2, 3, 2)

Fn = Callable[..., Any]
CASES: dict[str, tuple[Fn, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]] = {
    "inv": (lambda lib, a: lib.linalg.inv(a), (A,), (A_T,)),
    "det": (lambda lib, a: lib.linalg.det(a), (A,), (A_T,)),
    "slogdet": (lambda lib, a: tuple(lib.linalg.slogdet(a)), (A,), (A_T,)),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b), (A, B), (A_T, B_T)),
    "solve_right": (lambda lib, a, b: lib.linalg.solve(a, b.mT, left=False), (A, B), (A_T, B_T)),
    "solve_tangent_of_A_only": (lambda lib, a, b: lib.linalg.solve(a, b), (A, B), (A_T, None)),
    "solve_triangular": (
        lambda lib, a, b: lib.linalg.solve_triangular(a.triu(), b, upper=True),
        (A, B),
        (A_T, B_T),
    ),
    "matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a * 0.3), (A,), (A_T,)),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(a @ a.mH), (A,), (A_T,)),
    "cholesky_upper": (lambda lib, a: lib.linalg.cholesky(a @ a.mH, upper=True), (A,), (A_T,)),
    "pinv_wide": (lambda lib, w: lib.linalg.pinv(w), (W,), (W_T,)),
    "pinv_tall": (lambda lib, w: lib.linalg.pinv(w.mT), (W,), (W_T,)),
    "lstsq_gelsd": (
        lambda lib, w, b: tuple(lib.linalg.lstsq(w.mT, b.reshape(6, 2)[:5], driver="gelsd")[:2]),
        (W, B),
        (W_T, B_T),
    ),
    "lstsq": (
        lambda lib, w, b: lib.linalg.lstsq(w.mT, lib.cat([b[0], b[1]], 0)[:5]).solution,
        (W, B),
        (W_T, B_T),
    ),
    "matrix_power": (lambda lib, a: lib.linalg.matrix_power(a, -2), (A,), (A_T,)),
    "cross": (
        lambda lib, a, b: lib.linalg.cross(a, b.expand(2, 3, 3).mT),
        (A, B[:, :, :1]),
        (A_T, B_T[:, :, :1]),
    ),
}


def _tangents(lib: Any, name: str, dtype: str) -> list[Any]:
    fn, primals, tangents = CASES[name]
    fa = lib.autograd.forward_ad
    kind = getattr(lib, dtype)
    with warnings.catch_warnings(), fa.dual_level():
        warnings.simplefilter("ignore")
        args = []
        for p, t in zip(primals, tangents, strict=True):
            x = lib.tensor(p).to(kind)
            args.append(x if t is None else fa.make_dual(x, lib.tensor(t).to(kind)))
        out = fn(lib, *args)
        outs = out if isinstance(out, tuple) else (out,)
        return [fa.unpack_dual(o).tangent.resolve_conj().numpy() for o in outs]


@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
@pytest.mark.parametrize("name", list(CASES))
def test_complex_tangents_as_pytorch(name: str, dtype: str) -> None:
    ours = _tangents(chainrule, name, dtype)
    theirs = _tangents(torch, name, dtype)
    rtol = 1e-9 if dtype == "complex128" else 1e-3
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize(
    "name", ["inv", "det", "slogdet", "solve", "cholesky", "pinv_wide", "pinv_tall", "matrix_exp"]
)
def test_complex_tangents_match_finite_differences(name: str) -> None:
    fn, primals, tangents = CASES[name]
    eps = 1e-6

    def value(shift: float) -> list[np.ndarray]:
        args = [
            chainrule.tensor(p + shift * (0 if t is None else t))
            for p, t in zip(primals, tangents, strict=True)
        ]
        out = fn(chainrule, *args)
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]

    ours = _tangents(chainrule, name, "complex128")
    for tangent, hi, lo in zip(ours, value(eps), value(-eps), strict=True):
        np.testing.assert_allclose(tangent, (hi - lo) / (2 * eps), rtol=1e-5, atol=1e-6)
