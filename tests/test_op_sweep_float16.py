"""Every entry of the op table in float16 and in bfloat16, against PyTorch, within a few ulps.

PyTorch's CPU kernels compute half precision (float16, bfloat16) in float32 and round once
(reductions accumulate in float32): an op that computes in half precision step by step
overflows or loses digits where PyTorch does not. Each sample runs in the half type in both
libraries; values and first-order gradients must agree within ``ULPS`` units in the last place
of PyTorch's result (an ulp is 2**-10 relative in float16, 2**-7 in bfloat16), NaN where
PyTorch has NaN.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import (
    PYTORCH_OWN_HALF_CONVOLUTION,
    compare_with_torch,
    mark_known,
    requires_grad_flags,
    sample_inputs,
    torch_to_numpy,
)

ULPS = 4  # PyTorch rounds once; a chain of two roundings may differ by a few ulps
#: Each half type's smallest normal (below it compare absolutely) and its mantissa bits.
TINY = {"float16": (2.0 ** -14, 10), "bfloat16": (2.0 ** -126, 7),
        "float32": (2.0 ** -126, 23), "float64": (2.0 ** -1022, 52)}



#: Samples that do not match PyTorch yet (strict xfails: a fixed one fails until taken off).
#: grid_sample: PyTorch's half kernel for bicubic sampling rounds every step of its own
#: arrangement of the gradients' sums (chainrule follows bilinear's and nearest's).
_GRID_SAMPLE_HALF = frozenset({
    "F.grid_sample_bicubic_zeros-0", "F.grid_sample_bicubic_border_align-0",
    "F.grid_sample_bicubic_reflection-0", "F.grid_sample_bicubic_reflection_align-0",
    "torch.grid_sampler_2d-0",
})
KNOWN_DIFFERENCES: frozenset[str] = _GRID_SAMPLE_HALF
#: bfloat16 samples more than a few ulps from PyTorch, and why (strict xfails). Kernels that
#: PyTorch runs in bfloat16 steps (pooling and padding backward adding output after output,
#: logsumexp, nll_loss's cascade sum, cumprod's gradient) are computed so by chainrule too
#: (``half_native`` ops); what is left is not chainrule's to follow.
KNOWN_BFLOAT16_DIFFERENCES: frozenset[str] = frozenset({
    # PyTorch picks its kernel by CPU and arguments: oneDNN (accumulating in float32, as
    # chainrule) for the other transposed convolutions on this CPU, its own col2im (adding in
    # bfloat16) where oneDNN does not take an output padding past the stride.
    "conv_transpose2d_output_padding_past_stride-0",
    "bilinear-0", "bilinear-1", "cross_entropy_probabilities_weight_smoothing-0",
}) | _GRID_SAMPLE_HALF
#: Of those, samples on which PyTorch's bfloat16 result changes from run to run (its vectorised
#: loops start where the memory's alignment says): they may pass.
VARYING_BFLOAT16: frozenset[str] = frozenset({
    "bilinear-0", "bilinear-1", "cross_entropy_probabilities_weight_smoothing-0",
})

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
    "linalg.matrix_exp-0": "PyTorch evaluates its matrix_exp polynomial in half precision,"
                           " overflowing to inf/NaN: chainrule computes in double, rounds once",
    "linalg.matrix_exp-1": "as linalg.matrix_exp-0",
    "linalg.matrix_exp-2": "as linalg.matrix_exp-0",
    "linalg.matrix_exp_large-0": "as linalg.matrix_exp-0",
    "matrix_exp-0": "as linalg.matrix_exp-0",
    "Tensor.matrix_exp-0": "as linalg.matrix_exp-0",
    "batch_norm_train_bias-0": "bfloat16: PyTorch's backward kernel reads its statistics saved "
                               "in bfloat16 and lands 9 ulps from the exact input gradient "
                               "(float16 passes either way)",
}


def _cases() -> list[Any]:
    # (entries that go through complex values: chainrule has no complex32, PyTorch's complex
    # type of float16 parts, and PyTorch has no bfloat16 complex type)
    return [pytest.param(info, index, id=f"{info.name}-{index}")
            for info in ALL_OPS if not info.extra.get("complex")
            for index in range(len(info.shapes))]


def _marked_bfloat16_cases() -> list[Any]:
    """The bfloat16 cases, the known differences marked as strict xfails, those in
    ``VARYING_BFLOAT16`` as non-strict ones."""
    reason = "bfloat16 differs from PyTorch (issue 22)"
    cases = mark_known(_cases(), KNOWN_BFLOAT16_DIFFERENCES - VARYING_BFLOAT16, reason)
    varying = pytest.mark.xfail(strict=False, reason=reason + "; PyTorch's own result varies")
    return [pytest.param(*case.values, id=case.id, marks=varying)
            if case.id in VARYING_BFLOAT16 else case for case in cases]


def _close_in_ulps(ours: np.ndarray, theirs: np.ndarray, what: str, ulps: float) -> None:
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != {theirs.dtype}"
    if ours.dtype.kind not in "fV":
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b)), f"{what}: NaN at other places"
    finite = np.isfinite(b)
    assert np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)]), (
        f"{what}: infinities differ")
    tiny, bits = TINY[ours.dtype.name]
    magnitude = np.maximum(np.abs(b[finite]), tiny)
    spacing = np.zeros_like(b)
    spacing[finite] = 2.0 ** (np.floor(np.log2(magnitude)) - bits)
    allowed = ulps * spacing
    bad = finite & (np.abs(a - b) > allowed)
    assert not bad.any(), (
        f"{what}: {bad.sum()} of {bad.size} differ by more than {ulps} ulps; "
        f"first at {np.argwhere(bad)[0].tolist()}: {a[bad][0]!r} vs {b[bad][0]!r}"
    )


@pytest.mark.parametrize(("info", "index"), mark_known(_cases(), KNOWN_DIFFERENCES, KNOWN_REASON))
def test_float16_matches_torch(info: OpInfo, index: int) -> None:
    _matches_torch(info, index, "float16", f"{info.name}-{index}" in EXACT_NOT_PYTORCH)


@pytest.mark.parametrize(("info", "index"), _marked_bfloat16_cases())
def test_bfloat16_matches_torch(info: OpInfo, index: int) -> None:
    _matches_torch(info, index, "bfloat16", f"{info.name}-{index}" in EXACT_NOT_PYTORCH)


def _matches_torch(info: OpInfo, index: int, half: str, exact: bool) -> None:
    arrays = sample_inputs(info, index, half)
    requires = requires_grad_flags(info, arrays)
    half_dtype = np.dtype(half)

    def cotangents(outputs: Sequence[Any]) -> list[np.ndarray]:
        rng = np.random.default_rng(11)
        return [rng.uniform(-1, 1, tuple(b.shape)).astype(half_dtype) for b in outputs]

    reference = [a.astype(np.float64) if exact and a.dtype == half_dtype else a
                 for a in arrays]

    def check(ulps: int) -> Any:
        def compare(ours: Any, theirs: Any, what: str) -> None:
            _close_in_ulps(ours._data, _as_compared(torch_to_numpy(theirs), exact, half_dtype),
                           what, ulps)
        return compare

    # float16: PyTorch's own kernels, as on CPUs without AVX512-FP16 (see the helper).
    with PYTORCH_OWN_HALF_CONVOLUTION() if half == "float16" else contextlib.nullcontext():
        compare_with_torch(
            info, arrays, requires, check(ULPS), check(2 * ULPS), cotangents,
            errors=(RuntimeError, TypeError, NotImplementedError), reference=reference,
        )


def _as_compared(theirs: np.ndarray, exact: bool, half: np.dtype) -> np.ndarray:
    """PyTorch's result, rounded to the half type once when it was computed in float64."""
    return theirs.astype(half) if exact and theirs.dtype == np.float64 else theirs
