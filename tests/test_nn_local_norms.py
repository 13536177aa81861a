"""rms_norm / RMSNorm, local_response_norm / LocalResponseNorm and lp_pool1d-3d / LPPool1d-3d
against PyTorch: values, gradients and the whole graph (PyTorch composes them of other ops),
half precision, layouts, errors, reprs and state_dict keys."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _graph(t: Any) -> list[str]:
    names, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().split("::")[-1])
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


F = {
    "rms": (lambda lib, x: lib.nn.functional.rms_norm(x, (4,)), [(2, 3, 4)]),
    "rms_weight_eps": (
        lambda lib, x, w: lib.nn.functional.rms_norm(x, (3, 4), w, eps=1e-3),
        [(2, 3, 4), (3, 4)],
    ),
    "rms_transposed": (
        lambda lib, x: lib.nn.functional.rms_norm(x.transpose(0, 2), (2,)),
        [(2, 3, 2)],
    ),
    "lrn_3d": (lambda lib, x: lib.nn.functional.local_response_norm(x, 2), [(2, 3, 4)]),
    "lrn_4d": (
        lambda lib, x: lib.nn.functional.local_response_norm(x, 3, 0.1, 0.5, 2.0),
        [(2, 5, 4, 3)],
    ),
    "lrn_5d": (lambda lib, x: lib.nn.functional.local_response_norm(x, 4), [(2, 5, 4, 3, 2)]),
    "lp1": (lambda lib, x: lib.nn.functional.lp_pool1d(x, 2, 2), [(2, 3, 6)]),
    "lp2": (
        lambda lib, x: lib.nn.functional.lp_pool2d(x, 3, (2, 1), stride=1, ceil_mode=True),
        [(2, 3, 4, 5)],
    ),
    "lp3": (lambda lib, x: lib.nn.functional.lp_pool3d(x, 1.5, 2), [(1, 2, 4, 4, 4)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name", sorted(F))
def test_matches_torch(name: str, dtype: str) -> None:
    fn, shapes = F[name]
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.2, 2.0, s).astype(dtype) for s in shapes]
    if dtype == "float16" and name in ("lrn_4d", "lrn_5d", "lp3"):
        # PyTorch's avg_pool3d has no float16 kernel: the same error.
        same_outcome(lambda lib: fn(lib, *[lib.tensor(a) for a in arrays]))
        return
    results = []
    for lib in (torch, chainrule):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        out.backward(lib.ones(tuple(out.shape), dtype=out.dtype))
        results.append(
            (
                out.detach().float().numpy(),
                [t.grad.float().numpy() for t in leaves],
                _graph(out),
                out.stride(),
                str(out.dtype).split(".")[-1],
            )
        )
    (t_out, t_grads, *t_rest), (c_out, c_grads, *c_rest) = results
    tol = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(c_out, t_out, atol=tol, rtol=tol)
    for c, t in zip(c_grads, t_grads, strict=True):
        np.testing.assert_allclose(c, t, atol=tol, rtol=tol)
    assert c_rest == t_rest


ERRORS = {
    "rms_shape": lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3, 4), (3,)),
    "rms_long_shape": lambda lib: lib.nn.functional.rms_norm(lib.ones(2, 3, 4), (5, 4, 4)),
    "rms_weight": lambda lib: lib.nn.functional.rms_norm(
        lib.ones(2, 3, 4), (4,), weight=lib.ones(3)
    ),
    "lrn_2d": lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2),
    "lrn_empty": lambda lib: lib.nn.functional.local_response_norm(lib.ones(0, 3, 4), 2).shape,
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])


def test_modules_match_torch() -> None:
    x = np.random.default_rng(1).uniform(0.5, 2, (2, 3, 4, 4))
    for make in (
        lambda lib: lib.nn.RMSNorm(4),
        lambda lib: lib.nn.RMSNorm([4, 4], eps=1e-3),
        lambda lib: lib.nn.RMSNorm(4, elementwise_affine=False),
        lambda lib: lib.nn.LocalResponseNorm(3, alpha=0.1),
        lambda lib: lib.nn.LPPool1d(2, 2),
        lambda lib: lib.nn.LPPool2d(1.5, 2, 1),
        lambda lib: lib.nn.LPPool3d(2, (1, 2, 2)),
    ):
        t_mod, c_mod = make(torch).double(), make(chainrule).double()
        assert repr(c_mod) == repr(t_mod)
        assert list(c_mod.state_dict()) == list(t_mod.state_dict())
        for key, value in t_mod.state_dict().items():
            np.testing.assert_array_equal(c_mod.state_dict()[key].numpy(), value.numpy())
        data = x if not isinstance(t_mod, torch.nn.LPPool1d) else x[0]
        np.testing.assert_allclose(
            c_mod(chainrule.tensor(data)).detach().numpy(),
            t_mod(torch.tensor(data)).detach().numpy(),
            atol=1e-12,
        )
