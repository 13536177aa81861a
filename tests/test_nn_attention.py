"""scaled_dot_product_attention against PyTorch: which of PyTorch's two CPU paths is taken (the
graph's node names), values and gradients on both, half precision bit for bit on the fused
kernel, the backward PyTorch does not differentiate again, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .outcomes import same_outcome


def _graph(t: Any) -> list[str]:
    """Node names of ``t``'s graph, depth first (AccumulateGrad's namespace dropped)."""
    names, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.append(node.name().split("::")[-1])
        stack.extend(fn for fn, _ in reversed(node.next_functions))
    return names


def _arrays(shapes: tuple[tuple[int, ...], ...], dtype: str, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _run(
    lib: Any, arrays: list[np.ndarray], grad: np.ndarray, mask: Any = None, **kw: Any
) -> tuple[Any, list[Any]]:
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    m = None if mask is None else lib.tensor(mask)
    out = lib.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=m, **kw)
    out.backward(lib.tensor(grad))
    return out, [t.grad for t in leaves]


_BOOL = np.array(
    [
        [True, False, True, True, False],
        [False, False, False, False, False],
        [True, True, False, True, True],
    ]
)

CASES = {
    "math_3d": (((2, 3, 4), (2, 5, 4), (2, 5, 6)), {}),
    "math_2d": (((3, 4), (5, 4), (5, 4)), {}),
    "math_bool_mask": (((2, 3, 4), (2, 5, 4), (2, 5, 4)), {"mask": _BOOL}),
    "math_float_mask": (
        ((2, 3, 4), (2, 5, 4), (2, 5, 4)),
        {"mask": np.linspace(-1, 1, 15).reshape(3, 5)},
    ),
    "math_causal_scale": (((2, 3, 4), (2, 5, 4), (2, 5, 6)), {"is_causal": True, "scale": 0.3}),
    "math_negative_scale": (((2, 3, 4), (2, 5, 4), (2, 5, 4)), {"scale": -0.3}),
    "math_gqa": (((4, 3, 4), (2, 5, 4), (2, 5, 6)), {"enable_gqa": True}),
    "math_4d_head_sizes": (((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)), {}),
    "math_4d_batch_broadcast": (((2, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)), {}),
    "flash": (((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)), {}),
    "flash_causal": (((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)), {"is_causal": True}),
    "flash_bool_mask": (((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)), {"mask": _BOOL}),
    "flash_4d_float_mask": (
        ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)),
        {"mask": np.linspace(-2, 1, 30).reshape(2, 1, 3, 5)},
    ),
    "flash_scale": (((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)), {"scale": -0.3}),
    "flash_gqa": (((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4)), {"enable_gqa": True}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_gradients_and_graph_match_torch(name: str, dtype: str) -> None:
    shapes, kw = CASES[name]
    kw = dict(kw)
    mask = kw.pop("mask", None)
    if mask is not None and mask.dtype != bool:
        mask = mask.astype(dtype)
    arrays = _arrays(shapes, dtype)
    heads_out = shapes[0][:-1] + (shapes[2][-1],)
    grad = np.random.default_rng(1).standard_normal(heads_out).astype(dtype)
    t_out, t_grads = _run(torch, arrays, grad, mask, **kw)
    c_out, c_grads = _run(chainrule, arrays, grad, mask, **kw)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(c_out.detach().numpy(), t_out.detach().numpy(), atol=tol, rtol=tol)
    for c, t in zip(c_grads, t_grads, strict=True):
        np.testing.assert_allclose(c.numpy(), t.numpy(), atol=tol, rtol=tol)
    assert _graph(c_out) == _graph(t_out)
    assert c_out.dtype.__repr__().replace("chainrule", "torch") == repr(t_out.dtype)
    assert c_out.stride() == t_out.stride()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["flash", "flash_causal", "flash_gqa", "math_3d"])
def test_half_precision_bit_for_bit(name: str, dtype: str) -> None:
    shapes, kw = CASES[name]
    arrays = _arrays(shapes, "float32", seed=3)
    grad = np.random.default_rng(4).standard_normal(shapes[0][:-1] + (shapes[2][-1],))

    def run(lib: Any) -> list[np.ndarray]:
        half = getattr(lib, dtype)
        leaves = [lib.tensor(a).to(half).requires_grad_() for a in arrays]
        out = lib.nn.functional.scaled_dot_product_attention(*leaves, **kw)
        out.backward(lib.tensor(grad).to(half))
        return [x.detach().float().numpy() for x in [out] + [t.grad for t in leaves]]

    if name == "math_3d":  # the math path computes in float32: one rounding per op
        for c, t in zip(run(chainrule), run(torch), strict=True):
            np.testing.assert_allclose(c, t, atol=2e-2, rtol=2e-2)
    else:
        for c, t in zip(run(chainrule), run(torch), strict=True):
            np.testing.assert_array_equal(c, t)


def test_fully_masked_rows_are_zero_on_both_paths() -> None:
    mask = np.array([[True, False, True], [False, False, False]])
    for shapes in (((1, 1, 2, 4), (1, 1, 3, 4), (1, 1, 3, 4)), ((1, 2, 4), (1, 3, 4), (1, 3, 4))):
        arrays = _arrays(shapes, "float64")
        grad = np.ones(shapes[0])
        t_out, t_grads = _run(torch, arrays, grad, mask)
        c_out, c_grads = _run(chainrule, arrays, grad, mask)
        np.testing.assert_allclose(c_out.detach().numpy(), t_out.detach().numpy())
        assert not np.isnan(c_out.detach().numpy()).any()
        for c, t in zip(c_grads, t_grads, strict=True):
            np.testing.assert_allclose(c.numpy(), t.numpy(), atol=1e-12)


def test_fused_kernel_backward_is_not_differentiable_again() -> None:
    def run(lib: Any) -> Any:
        q = lib.ones(1, 1, 2, 4, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(q, q * 2, q * 3)
        (g,) = lib.autograd.grad(out.sum(), q, create_graph=True)
        assert g.requires_grad
        return g.sum().backward()

    same_outcome(run)


def test_math_path_is_differentiable_twice() -> None:
    arrays = _arrays(((2, 3, 4), (2, 5, 4), (2, 5, 4)), "float64")
    leaves = [chainrule.tensor(a, requires_grad=True) for a in arrays]

    def f(q: Any, k: Any, v: Any) -> Any:
        return chainrule.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert chainrule.autograd.gradgradcheck(f, leaves)


def test_flash_saves_what_pytorch_saves() -> None:
    def names(lib: Any) -> list[str]:
        q = lib.ones(1, 1, 2, 4, requires_grad=True)
        out = lib.nn.functional.scaled_dot_product_attention(q, q, q)
        return sorted(
            a
            for a in dir(out.grad_fn)
            if a
            in ("_saved_query", "_saved_key", "_saved_value", "_saved_is_causal", "_saved_scale")
        )

    assert names(chainrule) == names(torch)


def _sdpa(
    shapes: tuple[tuple[int, ...], ...],
    dtypes: tuple[str, ...] = ("float32",) * 3,
    mask: Any = None,
    **kw: Any,
) -> Any:
    def run(lib: Any) -> Any:
        rng = np.random.default_rng(0)
        ts = [
            lib.tensor(rng.standard_normal(s).astype(d))
            for s, d in zip(shapes, dtypes, strict=True)
        ]
        m = None if mask is None else lib.tensor(mask)
        return tuple(lib.nn.functional.scaled_dot_product_attention(*ts, attn_mask=m, **kw).shape)

    return run


ERRORS = {
    "dtype_mismatch": _sdpa(((2, 3, 4), (2, 5, 4), (2, 5, 4)), ("float32", "float32", "float64")),
    "mask_dtype_long": _sdpa(((2, 3, 4), (2, 5, 4), (2, 5, 4)), mask=np.zeros((3, 5), np.int64)),
    "mask_dtype_double": _sdpa(((2, 3, 4), (2, 5, 4), (2, 5, 4)), mask=np.zeros((3, 5))),
    "mask_and_causal": _sdpa(
        ((2, 3, 4), (2, 5, 4), (2, 5, 4)), mask=np.ones((3, 5), bool), is_causal=True
    ),
    "one_dim": _sdpa(((4,), (4,), (4,))),
    "empty_keys": _sdpa(((2, 2, 3, 4), (2, 2, 0, 4), (2, 2, 0, 4))),
    "mask_1d_math": _sdpa(((2, 3, 4), (2, 5, 4), (2, 5, 4)), mask=np.zeros(5, np.float32)),
    "mask_1d_fused": _sdpa(
        ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)), mask=np.zeros(5, np.float32)
    ),
    "mask_0d_fused": _sdpa(
        ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)), mask=np.zeros((), np.float32)
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_and_edge_shapes_match_torch(name: str) -> None:
    same_outcome(ERRORS[name])
