"""Forward mode through the backward pass (forward-over-reverse), swept over the op table
(issue 15): every OpInfo with double backward, in float64.

For each sample the differentiated inputs are made dual (a random tangent each) in chainrule
and in PyTorch, and in the dual level ``autograd.grad(outputs, inputs, u)`` (a random cotangent
without tangent) runs the op's backward formulas on the dual tensors: each gradient's primal
and tangent equal PyTorch's (the tangent is the Hessian-vector product ``H v`` of ``<u, f>``,
what ``jacfwd(jacrev(f))`` and ``hessian`` are built of). Where PyTorch refuses (an op of the
backward pass without forward formula), chainrule must refuse with the same error: never a
missing or silently partial tangent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import flat_outputs, requires_grad_flags, sample_inputs, torch_from_numpy
from .test_forward_ad_sweep import (
    PENDING_OPS,
    REFUSAL,
    REVERSE_BUG,
    REVERSE_NOT_JACOBIAN,
    TORCH_RAISES,
    TORCH_WRONG,
)

# Entries whose forward-over-reverse differs from PyTorch's for a reason of PyTorch's own (the
# first-order sweep's lists: PyTorch's forward formula disagrees with its backward one, or
# raises) or a known gap of chainrule's double backward.
SKIPPED = {**REVERSE_NOT_JACOBIAN, **TORCH_WRONG, **TORCH_RAISES, **REVERSE_BUG}

# Where PyTorch's forward-over-reverse is not the derivative of its gradient: its backward
# formula reads a saved output that has no tangent in forward mode (the LU factors of det,
# slogdet and solve) or a path of prod's zero handling without forward formula, so its tangent
# misses a term (finite differences of the gradient disagree with it). chainrule's tangent is
# checked against those finite differences instead.
_LU = (
    "PyTorch's backward formula reads the saved LU factors, which carry no tangent: its "
    "tangent drops their term"
)
TORCH_PARTIAL = {
    **{
        name: _LU
        for name in (
            "linalg.det",
            "det",
            "Tensor.det",
            "linalg.det_any_sign",
            "linalg.slogdet",
            "slogdet",
            "Tensor.slogdet",
            "logdet",
            "Tensor.logdet",
            "linalg.solve",
            "linalg.solve_left_false",
            "linalg.solve_ex",
            "linalg.tensorsolve",
        )
    },
    "prod_two_zeros": "PyTorch's prod_backward with two zeros gives the gradient (zeros) "
    "without tangent; the Hessian of a product with two zeros is not zero",
}


def _cases() -> list[Any]:
    return [
        pytest.param(info, index, id=f"{info.name}-{index}")
        for info in ALL_OPS
        if info.grad and info.second_order and info.name not in SKIPPED
        for index in range(len(info.shapes))
    ]


def _numpy(t: Any) -> np.ndarray:
    t = t.detach()
    return np.array(t.numpy(force=True) if isinstance(t, torch.Tensor) else t.numpy())


def _run(
    lib: Any,
    info: OpInfo,
    arrays: list[np.ndarray],
    requires: list[bool],
    tangents: list[np.ndarray | None],
    seed: int = 5,
) -> list[tuple[Any, Any] | None]:
    """``(primal, tangent)`` of each differentiated input's gradient, None where unused."""
    fwad = lib.autograd.forward_ad
    make = torch_from_numpy if lib is torch else (lambda a: lib.from_numpy(a.copy()))
    with fwad.dual_level():
        args = []
        for a, r, t in zip(arrays, requires, tangents, strict=True):
            x = make(a)
            args.append(fwad.make_dual(x.requires_grad_(), make(t)) if r else x)
        outs = [
            o
            for o in flat_outputs(info.fn(lib, *args))
            if o.requires_grad and o.dtype.is_floating_point
        ]
        if not outs:
            return []
        rng = np.random.default_rng(seed)
        cotangents = [make(rng.standard_normal(tuple(o.shape))) for o in outs]
        wanted = [x for x, r in zip(args, requires, strict=True) if r]
        grads = lib.autograd.grad(outs, wanted, cotangents, allow_unused=True)
        result: list[tuple[Any, Any] | None] = []
        for g in grads:
            if g is None:
                result.append(None)
                continue
            primal, tangent = fwad.unpack_dual(g)
            result.append((_numpy(primal), None if tangent is None else _numpy(tangent)))
        return result


def _gradients(info: OpInfo, arrays: list[np.ndarray], requires: list[bool]) -> list[Any]:
    """chainrule's gradients (reverse mode, no dual level) with :func:`_run`'s cotangents."""
    xs = [
        chainrule.from_numpy(a.copy()).requires_grad_(r)
        for a, r in zip(arrays, requires, strict=True)
    ]
    outs = [
        o
        for o in flat_outputs(info.fn(chainrule, *xs))
        if o.requires_grad and o.dtype.is_floating_point
    ]
    rng = np.random.default_rng(5)
    cotangents = [chainrule.from_numpy(rng.standard_normal(tuple(o.shape))) for o in outs]
    wanted = [x for x, r in zip(xs, requires, strict=True) if r]
    grads = chainrule.autograd.grad(outs, wanted, cotangents, allow_unused=True)
    return [
        np.zeros(x.shape) if g is None else g.numpy() for g, x in zip(grads, wanted, strict=True)
    ]


def _finite_differences(
    info: OpInfo, arrays: list[np.ndarray], requires: list[bool], tangents: list[np.ndarray | None]
) -> list[np.ndarray]:
    """Central differences of the gradients along the tangents."""
    step = 1e-6
    plus = [a + step * t if t is not None else a for a, t in zip(arrays, tangents, strict=True)]
    minus = [a - step * t if t is not None else a for a, t in zip(arrays, tangents, strict=True)]
    return [
        (p - m) / (2 * step)
        for p, m in zip(
            _gradients(info, plus, requires), _gradients(info, minus, requires), strict=True
        )
    ]


@pytest.mark.parametrize(("info", "index"), _cases())
def test_forward_over_reverse_matches_torch(info: OpInfo, index: int) -> None:
    arrays = sample_inputs(info, index, "float64", seed=3)
    requires = requires_grad_flags(info, arrays)
    if not any(requires):
        pytest.skip("no differentiable input")
    rng = np.random.default_rng(99)
    tangents = [
        rng.standard_normal(a.shape) if r else None for a, r in zip(arrays, requires, strict=True)
    ]
    try:
        ours = _run(chainrule, info, arrays, requires, tangents)
    except NotImplementedError as error:
        if not str(error).startswith(REFUSAL):
            raise
        try:
            _run(torch, info, arrays, requires, tangents)
        except NotImplementedError as theirs:
            assert str(error) == str(theirs)
            return
        except RuntimeError:
            return  # (PyTorch fails otherwise)
        refused_op = str(error)[len(REFUSAL) :].split()[0]
        assert refused_op in PENDING_OPS, f"{info.name}: refused, PyTorch computes it ({error})"
        return
    if info.name in TORCH_PARTIAL:
        expected = _finite_differences(info, arrays, requires, tangents)
        for i, (a, d) in enumerate(zip(ours, expected, strict=True)):
            got = np.zeros_like(d) if a is None or a[1] is None else a[1]
            np.testing.assert_allclose(
                got, d, rtol=1e-5, atol=1e-6, err_msg=f"{info.name} tangent {i} vs differences"
            )
        return
    try:
        theirs = _run(torch, info, arrays, requires, tangents)
    except NotImplementedError:
        # (PyTorch's backward pass has an op without forward formula: chainrule's tangent is
        # checked by the first-order sweep's reverse-mode J·v instead)
        return
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a is None or b is None:
            assert a is None and b is None or (a or b)[1] is None or not np.any((a or b)[0]), (
                f"{info.name} gradient {i}: {a} vs {b}"
            )
            continue
        np.testing.assert_allclose(
            a[0], b[0], rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=f"{info.name} gradient {i}"
        )
        if b[1] is None or not np.any(b[1]):
            # (a tangent that is zero up to rounding: corrcoef of a vector is constant, and its
            # tangent rounds to 1e-17 or to 0 by the machine's SIMD kernels)
            zero = a[1] is None or np.allclose(a[1], 0, rtol=0, atol=1e-8)
            assert zero, f"{info.name} tangent {i}: {a[1]} vs None"
            continue
        assert a[1] is not None, f"{info.name} tangent {i} missing"
        np.testing.assert_allclose(
            a[1], b[1], rtol=1e-8, atol=1e-8, equal_nan=True, err_msg=f"{info.name} tangent {i}"
        )
