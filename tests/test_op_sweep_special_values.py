"""Every entry of the op table at the values where wrong answers hide.

The random samples of the main sweep stay away from 0, infinities, NaN, ties and x = y. Here each
sample's floating inputs are filled with the special values, cycled with a different phase per
input so binary ops meet every pair (0 with 0, 0 with inf, NaN with a number, x = y ...), and
values and first-order gradients are compared with PyTorch with NaN-aware equality. Where
PyTorch raises, chainrule must raise the same type of error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import (
    both_vjps,
    compare_with_torch,
    flat_outputs,
    leaves,
    mark_known,
    requires_grad_flags,
    selected,
)

SPECIAL = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-30, 3.0, 3.0)


def _special_inputs(info: OpInfo, index: int, dtype: str) -> list[np.ndarray] | None:
    """The sample's float inputs filled with SPECIAL; None for entries with chosen inputs."""
    if info.make_inputs is not None:
        return None  # indices, masks, distinct values: the entry needs what it chose
    arrays = []
    for k, shape in enumerate(info.shapes[index]):
        n = int(np.prod(shape)) if shape else 1
        phase = 5 * k  # coprime with len(SPECIAL): each pair of inputs meets every pair
        values = [SPECIAL[(i + phase + i * k) % len(SPECIAL)] for i in range(n)]
        arrays.append(np.array(values, dtype=dtype).reshape(shape))
    return arrays



#: Samples that do not match PyTorch yet (strict xfails: a fixed one fails until taken off).
KNOWN_DIFFERENCES: frozenset[str] = frozenset()

KNOWN_REASON = "differs from PyTorch (issue 21)"

#: Samples where PyTorch's vectorised kernel is demonstrably wrong: its own scalar kernel (a
#: non-contiguous input), its float64 kernel and the exact value agree with each other and with
#: chainrule. These are compared with the exact answer: PyTorch's in float64, rounded.
EXACT_REFERENCE: dict[str, str] = {
    "gelu-0-float32": (
        "PyTorch's vectorised float32 gelu (its polynomial erf) gives NaN at +inf and "
        "2.9959497 at 3.0, where its scalar kernel, float64 and the exact value give inf and "
        "2.9959502 (3 * Phi(3) = 2.99595031...)"
    ),
    "conv_transpose2d-0-float32": (
        "PyTorch's float32 transposed-convolution kernel skips some 0 * inf products, so its "
        "float32 gradients have NaN at other places than its float64 ones on the same values "
        "(tests/test_nn_kernel_numerics.py::"
        "test_conv_transpose2d_float32_special_values_follow_pytorchs_float64)"
    ),
}


def _cases() -> list[Any]:
    cases = []
    for info in ALL_OPS:
        for index in range(len(info.shapes)):
            if info.make_inputs is None:
                for dtype in ("float32", "float64"):
                    cases.append(pytest.param(info, index, dtype,
                                              id=f"{info.name}-{index}-{dtype}"))
    return cases


def _same(a: Any, b: Any, what: str, rtol: float, atol: float) -> None:
    x = a.detach().numpy()
    y = b.detach().numpy(force=True)
    assert x.shape == y.shape, f"{what}: shape {x.shape} != {y.shape}"
    assert x.dtype == y.dtype, f"{what}: dtype {x.dtype} != {y.dtype}"
    if x.dtype.kind == "f":
        assert np.array_equal(np.isnan(x), np.isnan(y)), f"{what}: NaN at other places\n{x}\n{y}"
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(x, y, err_msg=what)


@pytest.mark.parametrize(
    ("info", "index", "dtype"), mark_known(_cases(), KNOWN_DIFFERENCES, KNOWN_REASON)
)
def test_special_values_match_torch(info: OpInfo, index: int, dtype: str) -> None:
    arrays = _special_inputs(info, index, dtype)
    assert arrays is not None
    requires = requires_grad_flags(info, arrays)
    rtol, atol = (1e-9, 1e-12) if dtype == "float64" else (1e-5, 1e-6)
    if f"{info.name}-{index}-{dtype}" in EXACT_REFERENCE:
        _compare_with_exact(info, arrays, requires, dtype, rtol, atol)
        return

    compare_with_torch(
        info, arrays, requires,
        lambda a, b, what: _same(a, b, what, rtol, atol),
        lambda a, b, what: _same(a, b, what, rtol * 10, atol * 10),
        lambda outputs: _cotangents(outputs, dtype), errors=(RuntimeError, ValueError, IndexError),
    )


def _cotangents(outputs: Sequence[Any], dtype: str) -> list[np.ndarray]:
    return [np.linspace(-1.0, 2.0, b.numel()).reshape(tuple(b.shape)).astype(dtype)
            for b in outputs]


def _compare_with_exact(info: OpInfo, arrays: list[np.ndarray], requires: list[bool],
                        dtype: str, rtol: float, atol: float) -> None:
    """Values and first-order gradients against PyTorch's computed in float64 and rounded to
    ``dtype`` (see :data:`EXACT_REFERENCE`)."""
    theirs_in = leaves(torch, [a.astype(np.float64) for a in arrays], requires)
    ours_in = leaves(chainrule, arrays, requires)
    theirs = flat_outputs(info.fn(torch, *theirs_in))
    ours = flat_outputs(info.fn(chainrule, *ours_in))
    narrow = getattr(torch, dtype)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        _same(a, b.to(narrow), f"{info.name} output {i} (exact)", rtol, atol)
    cotangents = _cotangents(theirs, dtype)
    grads = both_vjps(ours, theirs, selected(ours_in, requires),
                      selected(theirs_in, requires), cotangents)
    for i, (a, b) in enumerate(grads):
        _same(a, b.to(narrow), f"{info.name} grad {i} (exact)", rtol * 10, atol * 10)
