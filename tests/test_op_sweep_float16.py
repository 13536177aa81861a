"""Every entry of the op table in float16, against PyTorch, within a few float16 ulps.

PyTorch's CPU kernels compute half precision in float32 and round once (reductions accumulate in
float32): an op that computes in float16 step by step overflows or loses digits where PyTorch
does not. Each sample runs in float16 in both libraries; values and first-order gradients must
agree within ``ULPS`` units in the last place of PyTorch's result (a float16 ulp is 2**-10
relative), NaN where PyTorch has NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import (
    compare_with_torch,
    mark_known,
    requires_grad_flags,
    sample_inputs,
)

ULPS = 4  # PyTorch rounds once; a chain of two roundings may differ by a few ulps
TINY = 2.0 ** -14  # float16's smallest normal: below it compare absolutely



#: Samples that do not match PyTorch yet (strict xfails: a fixed one fails until taken off).
KNOWN_DIFFERENCES: frozenset[str] = frozenset()

KNOWN_REASON = "differs from PyTorch (issue 21)"

#: Samples where PyTorch's float16 CPU kernel is demonstrably inconsistent (the reason; each is
#: documented in a dedicated test): chainrule keeps the exact answer, so these are compared
#: with PyTorch computing in float64, rounded to float16.
EXACT_NOT_PYTORCH: dict[str, str] = {
    "batch_norm_train-0": "float16 parameters: PyTorch normalises with its float16-rounded "
                          "statistics, far from its own result with float32 parameters "
                          "(tests/test_nn_batch_norm.py)",
    "batch_norm_train-1": "as batch_norm_train-0",
    "F.instance_norm-0": "batch norm of the folded input: as batch_norm_train-0",
    "layer_norm-0": "PyTorch's backward reads the float16-rounded mean and rstd while its "
                    "forward used float32 ones (tests/test_nn_kernel_numerics.py)",
    "layer_norm_bias-0": "as layer_norm-0",
}


def _cases() -> list[Any]:
    return [pytest.param(info, index, id=f"{info.name}-{index}")
            for info in ALL_OPS for index in range(len(info.shapes))]


def _close_in_ulps(ours: np.ndarray, theirs: np.ndarray, what: str, ulps: float) -> None:
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    if ours.dtype.kind != "f":
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: NaN at other places"
    finite = np.isfinite(b)
    assert np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)]), (
        f"{what}: infinities differ")
    spacing = np.spacing(np.abs(theirs).astype(np.float16)).astype(np.float64)
    allowed = ulps * np.maximum(spacing, TINY * 2.0 ** -10)
    bad = finite & (np.abs(a - b) > allowed)
    assert not bad.any(), (
        f"{what}: {bad.sum()} of {bad.size} differ by more than {ulps} ulps; "
        f"first at {np.argwhere(bad)[0].tolist()}: {a[bad][0]!r} vs {b[bad][0]!r}"
    )


@pytest.mark.parametrize(("info", "index"), mark_known(_cases(), KNOWN_DIFFERENCES, KNOWN_REASON))
def test_float16_matches_torch(info: OpInfo, index: int) -> None:
    arrays = sample_inputs(info, index, "float16")
    requires = requires_grad_flags(info, arrays)

    def cotangents(outputs: Sequence[Any]) -> list[np.ndarray]:
        rng = np.random.default_rng(11)
        return [rng.uniform(-1, 1, tuple(b.shape)).astype(np.float16) for b in outputs]

    exact = f"{info.name}-{index}" in EXACT_NOT_PYTORCH
    reference = [a.astype(np.float64) if exact and a.dtype == np.float16 else a
                 for a in arrays]

    def check(ulps: int) -> Any:
        def compare(ours: Any, theirs: Any, what: str) -> None:
            _close_in_ulps(ours.numpy(), _as_compared(theirs.numpy(force=True), exact), what, ulps)
        return compare

    compare_with_torch(
        info, arrays, requires, check(ULPS), check(2 * ULPS), cotangents,
        errors=(RuntimeError, TypeError, NotImplementedError), reference=reference,
    )


def _as_compared(theirs: np.ndarray, exact: bool) -> np.ndarray:
    """PyTorch's result, rounded to float16 once when it was computed in float64."""
    return theirs.astype(np.float16) if exact and theirs.dtype == np.float64 else theirs
