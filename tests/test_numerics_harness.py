"""The differential harness the numerics tests share, and its own tests.

:func:`differential` runs one call in chainrule and in PyTorch on the same inputs and compares,
NaN-aware, the values, the first derivatives and (through ``create_graph=True``) the second
derivatives of every floating input. Tolerances are in units in the last place of the dtype
(float16 results are compared to a few ulp, not to a fixed absolute tolerance), and infinities
must match in sign.

:data:`SPECIALS` are the values the sweeps cross: signed zeros, the smallest subnormal,
``+-1``, ``+-88`` (where float32 ``exp`` overflows), ``+-1e4``, ``+-3e38`` (near float32's
largest), ``+-inf`` and NaN; cast to float16 some of them become ``+-inf`` or 0, as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

SPECIALS = (0.0, -0.0, 1e-45, 1.0, -1.0, 0.5, -2.5, 88.0, -88.0, 1e4, -1e4, 3e38, -3e38,
            math.inf, -math.inf, math.nan)

FLOATS = ("float16", "float32", "float64")

# Relative tolerance per dtype, in units of the dtype's epsilon. Transcendental functions differ
# by an ulp or two between NumPy and PyTorch's vectorised kernels, and a derivative chains a few
# of them, so a handful of ulps; float16 results must be PyTorch's float32 result rounded once,
# within two ulps.
_ULPS = {"float16": 2.0, "float32": 16.0, "float64": 64.0}


def ulp_tolerance(dtype: str, ulps: float | None = None) -> tuple[float, float]:
    """``(rtol, atol)`` of ``ulps`` units in the last place of ``dtype``."""
    info = np.finfo(dtype)
    n = _ULPS[dtype] if ulps is None else ulps
    return float(info.eps) * n, float(info.smallest_subnormal) * n


def mismatches(ours: np.ndarray, theirs: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """A boolean mask of the elements that differ: NaN against non-NaN, infinities of another
    sign, finite values further apart than ``atol + rtol * |theirs|``."""
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(theirs, dtype=np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    infinite = np.isinf(a) | np.isinf(b)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.where(infinite, a == b, np.abs(a - b) <= atol + rtol * np.abs(b))
    return (nan_a != nan_b) | (~nan_b & ~close)


def _leaves(lib: Any, arrays: Sequence[Any], grad: Sequence[bool],
            scalar_kernels: bool = False) -> list[Any]:
    out = []
    for a, g in zip(arrays, grad, strict=True):
        if not isinstance(a, np.ndarray):
            out.append(a)
            continue
        t = lib.from_numpy(np.array(a, copy=True))
        if scalar_kernels and a.ndim:
            t = _strided_copy(t)
        out.append(t.requires_grad_(True) if g else t)
    return out


def _strided_copy(t: Any) -> Any:
    """A non-contiguous leaf holding ``t``'s values. PyTorch runs its element-wise kernels'
    scalar code on such tensors; on contiguous ones it runs their vectorised code, which for
    some activations treats NaN differently (see tests/test_numerics_activations.py)."""
    strides = [2]
    for size in reversed(t.shape[1:]):
        strides.insert(0, strides[0] * size)
    strided = torch.empty_strided(t.shape, strides, dtype=t.dtype)
    with torch.no_grad():
        strided.copy_(t)
    return strided


def _as_numpy(t: Any) -> Any:
    if t is None:
        return None
    if isinstance(t, chainrule.Tensor):
        return t.detach().numpy()
    return t.detach().numpy(force=True)  # PyTorch's zero tensors need force


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple | list) else out


def run_both_orders(lib: Any, fn: Callable[..., Any], arrays: Sequence[Any],
                    grad: Sequence[bool], second_order: bool = True,
                    scalar_kernels: bool = False) -> dict[str, Any]:
    """Run ``fn(lib, *tensors)``; return its value, the first derivatives of its sum (seeded
    with ones) and the second derivatives of the sum of those, as arrays (an exception's type
    name in place of a stage that raised). ``scalar_kernels``: PyTorch's inputs are strided."""
    leaves = _leaves(lib, arrays, grad, scalar_kernels and lib is torch)
    record: dict[str, Any] = {}
    try:
        y = _first(fn(lib, *leaves))
    except Exception as error:  # noqa: BLE001 - compared with PyTorch's
        record["value"] = type(error).__name__
        return record
    record["value"] = _as_numpy(y)
    wrt = [t for t, g in zip(leaves, grad, strict=True) if g]
    if not wrt or not y.requires_grad:
        return record
    # First derivatives on chainrule's fast path (arrays), then recorded (Tensors): both must
    # give PyTorch's numbers.
    try:
        firsts = lib.autograd.grad(y, wrt, lib.ones_like(y), retain_graph=True,
                                   allow_unused=True)
    except Exception as error:  # noqa: BLE001
        record["grad"] = type(error).__name__
        return record
    record["grad"] = [_as_numpy(g) for g in firsts]
    if not second_order:
        return record
    try:
        firsts = lib.autograd.grad(y, wrt, lib.ones_like(y), create_graph=True,
                                   allow_unused=True)
    except Exception as error:  # noqa: BLE001
        record["grad_recorded"] = type(error).__name__
        return record
    record["grad_recorded"] = [_as_numpy(g) for g in firsts]
    connected = [g for g in firsts if g is not None and g.requires_grad]
    if not connected:
        return record
    total = connected[0].sum()
    for g in connected[1:]:
        total = total + g.sum()
    try:
        seconds = lib.autograd.grad(total, wrt, allow_unused=True)
    except Exception as error:  # noqa: BLE001
        record["grad2"] = type(error).__name__
        return record
    record["grad2"] = [_as_numpy(g) for g in seconds]
    return record


def compare_records(ours: dict[str, Any], theirs: dict[str, Any], dtype: str,
                    ulps: float | None = None, inputs: Sequence[Any] = (),
                    rows: bool = False) -> list[str]:
    """Differences between two :func:`run_both_orders` records, as readable lines.

    ``rows=True``: values and derivatives of reductions are sums of terms that cancel, so there
    they are compared to the tolerance scaled by the largest magnitude in their row: of the
    stage itself, of the first derivative (for the second) or of the value (the terms' scale).
    """
    rtol, atol = ulp_tolerance(dtype, ulps)
    problems: list[str] = []
    for stage in ("value", "grad", "grad_recorded", "grad2"):
        if stage not in theirs and stage not in ours:
            continue
        a, b = ours.get(stage), theirs.get(stage)
        if stage != "value":
            if isinstance(a, list) and isinstance(b, list):
                for i, (x, y) in enumerate(zip(a, b, strict=True)):
                    floor = atol
                    if rows and y is not None and np.ndim(y):
                        scale = [y]
                        firsts = theirs.get("grad")
                        if stage == "grad2" and isinstance(firsts, list) and firsts[i] is not None:
                            scale.append(firsts[i])
                        value = theirs.get("value")
                        if isinstance(value, np.ndarray) and value.shape == np.shape(y):
                            scale.append(value)
                        for z in scale:
                            finite = np.where(np.isfinite(z), np.abs(z).astype(np.float64), 0)
                            floor = np.maximum(floor, rtol * finite.max(axis=-1, keepdims=True))
                    problems += _compare_arrays(f"{stage}[{i}]", x, y, rtol, floor, inputs)
                continue
        if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
            if not (a is None and b is None) and (type(a) is not type(b) or a != b):
                problems.append(f"{stage}: ours {a!r}, PyTorch {b!r}")
            continue
        floor = atol
        if rows and np.ndim(b):
            finite = np.where(np.isfinite(b), np.abs(b).astype(np.float64), 0)
            floor = np.maximum(atol, rtol * finite.max(axis=-1, keepdims=True))
        problems += _compare_arrays(stage, a, b, rtol, floor, inputs)
    return problems


def _compare_arrays(stage: str, a: Any, b: Any, rtol: float, atol: float,
                    inputs: Sequence[Any]) -> list[str]:
    if a is None or b is None:
        # PyTorch leaves an unused input's gradient None; zeros are the same answer.
        other = b if a is None else a
        if other is None or not np.any(other):
            return []
        return [f"{stage}: ours {a!r}, PyTorch {b!r}"]
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return [f"{stage}: ours {a.dtype}{a.shape}, PyTorch {b.dtype}{b.shape}"]
    bad = mismatches(a, b, rtol, atol)
    if not bad.any():
        return []
    lines = []
    if bad.ndim == 0:
        return [f"{stage}: ours {a!r}, PyTorch {b!r}"]
    for index in list(zip(*np.nonzero(bad), strict=True))[:6]:
        at = ""
        if inputs and all(np.shape(x) == a.shape for x in inputs if isinstance(x, np.ndarray)):
            at = " at " + ", ".join(
                repr(x[index].item()) for x in inputs if isinstance(x, np.ndarray))
        lines.append(f"{stage}{list(index)}{at}: ours {a[index]!r}, PyTorch {b[index]!r}")
    return lines


def differential(fn: Callable[..., Any], arrays: Sequence[Any], dtype: str,
                 grad: Sequence[bool] | None = None, second_order: bool = True,
                 ulps: float | None = None, scalar_kernels: bool = False,
                 rows: bool = False) -> list[str]:
    """Compare ``fn(lib, *tensors)`` between chainrule and PyTorch (values, first and second
    derivatives); the list of differences (empty when they agree).

    ``scalar_kernels=True`` gives PyTorch non-contiguous inputs, so that its element-wise
    kernels run their scalar code (the reference where its vectorised code disagrees)."""
    if grad is None:
        grad = [isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in arrays]
    ours = run_both_orders(chainrule, fn, arrays, grad, second_order)
    theirs = run_both_orders(torch, fn, arrays, grad, second_order, scalar_kernels)
    return compare_records(ours, theirs, dtype, ulps, arrays, rows)


def specials(dtype: str) -> np.ndarray:
    """:data:`SPECIALS` in ``dtype`` (rounded as PyTorch rounds them: overflow to inf)."""
    with np.errstate(over="ignore"):
        return np.array(SPECIALS, dtype=np.float64).astype(dtype)


def special_pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of :data:`SPECIALS`, as two flat arrays (for element-wise binary ops)."""
    values = specials(dtype)
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.reshape(-1).copy(), b.reshape(-1).copy()


def assert_agrees(fn: Callable[..., Any], arrays: Sequence[Any], dtype: str,
                  what: str = "", **options: Any) -> None:
    """:func:`differential`, failing with the differences."""
    problems = differential(fn, arrays, dtype, **options)
    assert not problems, f"{what} ({dtype}):\n  " + "\n  ".join(problems)


# ----------------------------------------------------------------------------------------------
# The harness's own tests


def test_mismatches_is_nan_and_inf_aware():
    ours = np.array([np.nan, np.inf, -np.inf, 1.0, 1.0, 0.0])
    theirs = np.array([np.nan, np.inf, np.inf, 1.0 + 1e-9, np.nan, 0.0])
    assert mismatches(ours, theirs, 1e-6, 0.0).tolist() == [False, False, True, False, True,
                                                            False]


@pytest.mark.parametrize("dtype", FLOATS)
def test_ulp_tolerance_scales_with_the_dtype(dtype):
    rtol, _ = ulp_tolerance(dtype, 1)
    one = np.array([1.0], dtype)
    assert not mismatches(one + np.finfo(dtype).eps, one, rtol, 0.0).any()
    assert mismatches(one + 4 * np.finfo(dtype).eps, one, rtol, 0.0).all()


def test_differential_reports_a_wrong_gradient():
    # A deliberately different function in each library: the harness must notice.
    def fn(lib, x):
        return x * 2 if lib is torch else x * 3

    assert differential(fn, [np.array([1.0, 2.0])], "float64")
    assert not differential(lambda lib, x: x * 2, [np.array([1.0, 2.0])], "float64")
