"""Every entry of the op table on inputs that are not fresh contiguous leaves.

Layout bugs (a kernel that assumes C order, a derivative that writes through a stride-0 view,
a gradient that is not reduced onto an expanded input's base) hide when every input is a new
contiguous array. Each sample of each :class:`~tests.opinfos.OpInfo` runs here with its tensor
inputs made, in both libraries in the same way, as

* ``transposed``: a contiguous leaf of the reversed shape, permuted back (reversed strides);
* ``strided``: every other element of a leaf twice as long in the last dimension (the skipped
  elements hold a sentinel, so reading them shows);
* ``expanded``: the first row of the sample broadcast along the first dimension (stride 0);
* ``view``: a flat leaf viewed in the sample's shape (a view with a base).

Values and output strides equal PyTorch's; the gradients with respect to the leaves (the
storage behind each input, so a gradient written to the wrong place shows) equal PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import assert_close, torch
from .opinfos import ALL_OPS, OpInfo
from .sweep_tools import (
    both_vjps,
    differentiable_pairs,
    flat_outputs,
    mark_known,
    requires_grad_flags,
    sample_inputs,
    selected,
)
from .test_op_sweep import _tolerances

SENTINEL = 1234.5  # the skipped elements of a strided input: a kernel that reads them is wrong


def _transposed(lib: Any, a: np.ndarray, requires: bool) -> tuple[Any, Any]:
    order = tuple(reversed(range(a.ndim)))
    leaf = lib.from_numpy(np.ascontiguousarray(a.transpose(order))).requires_grad_(requires)
    return leaf, leaf.permute(order)


def _strided(lib: Any, a: np.ndarray, requires: bool) -> tuple[Any, Any]:
    storage = np.full(a.shape[:-1] + (2 * a.shape[-1],), SENTINEL, dtype=a.dtype)
    storage[..., ::2] = a
    leaf = lib.from_numpy(storage).requires_grad_(requires)
    return leaf, leaf[..., ::2]


def _expanded(lib: Any, a: np.ndarray, requires: bool) -> tuple[Any, Any]:
    # (a copy: the leaf owns its memory, as every sweep leaf does, so ops that read the
    # storage itself, as_strided, see the same storage in both libraries)
    leaf = lib.from_numpy(a[:1].copy()).requires_grad_(requires)
    return leaf, leaf.expand(a.shape)


def _view(lib: Any, a: np.ndarray, requires: bool) -> tuple[Any, Any]:
    leaf = lib.from_numpy(a.reshape(-1).copy()).requires_grad_(requires)
    return leaf, leaf.view(a.shape)


Maker = Callable[[Any, np.ndarray, bool], tuple[Any, Any]]

#: Layout name -> (applies to an array of this shape?, how to build it).
LAYOUTS: dict[str, tuple[Callable[[tuple[int, ...]], bool], Maker]] = {
    "transposed": (lambda s: len(s) >= 2 and sum(n > 1 for n in s) >= 2, _transposed),
    "strided": (lambda s: len(s) >= 1 and s[-1] > 0, _strided),
    "expanded": (lambda s: len(s) >= 1 and s[0] > 1, _expanded),
    "view": (lambda s: len(s) >= 1, _view),
}


def _applies(info: OpInfo, arrays: list[np.ndarray], layout: str) -> bool:
    if layout == "expanded" and info.make_inputs is not None:
        return False  # its samples are chosen (distinct values ...): repeated rows would tie
    fits = LAYOUTS[layout][0]
    return any(fits(a.shape) for a in arrays)


def _layout(t: Any) -> tuple[tuple[int, int], ...]:
    """Size and stride of the dimensions longer than 1: where the elements are in memory (the
    stride of a dimension of size 0 or 1 is never used, and PyTorch's own contiguity ignores it).
    """
    if t.numel() == 0:
        return ()
    return tuple((n, s) for n, s in zip(t.shape, t.stride(), strict=True) if n > 1)


def _cases() -> list[Any]:
    cases = []
    for info in ALL_OPS:
        for index in range(len(info.shapes)):
            arrays = sample_inputs(info, index, "float64")
            for layout in LAYOUTS:
                if _applies(info, arrays, layout):
                    case_id = f"{info.name}-{index}-{layout}"
                    cases.append(pytest.param(info, index, layout, id=case_id))
    return cases


def _build(lib: Any, arrays: list[np.ndarray], requires: list[bool], layout: str
           ) -> tuple[list[Any], list[Any]]:
    """The leaves (what gradients are taken with respect to) and the op's inputs."""
    fits, make = LAYOUTS[layout]
    leaves, inputs = [], []
    for a, r in zip(arrays, requires, strict=True):
        if fits(a.shape):
            leaf, x = make(lib, a, r)
        else:
            leaf = x = lib.from_numpy(a.copy()).requires_grad_(r)
        leaves.append(leaf)
        inputs.append(x)
    return leaves, inputs


@pytest.mark.parametrize(("info", "index", "layout"), _cases())
def test_layouts_match_torch(info: OpInfo, index: int, layout: str) -> None:
    dtype = "float64"
    arrays = sample_inputs(info, index, dtype)
    requires = requires_grad_flags(info, arrays)
    rtol, atol = _tolerances(info, dtype)
    ours_leaves, ours_in = _build(chainrule, arrays, requires, layout)
    theirs_leaves, theirs_in = _build(torch, arrays, requires, layout)
    try:
        theirs = flat_outputs(info.fn(torch, *theirs_in))
    except RuntimeError as error:  # e.g. view() of a transposed input: the same error
        with pytest.raises(type(error)) as ours_error:
            info.fn(chainrule, *ours_in)
        assert str(ours_error.value).split("(")[0] == str(error).split("(")[0]
        return
    ours = flat_outputs(info.fn(chainrule, *ours_in))
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert_close(a, b, rtol, atol, what=f"{info.name} ({layout}) output {i}")
    diff = differentiable_pairs(ours, theirs)
    if not any(requires) or not diff:
        return
    rng = np.random.default_rng(321)
    cotangents = [rng.standard_normal(b.shape) for _, b in diff]
    grads = both_vjps([a for a, _ in diff], [b for _, b in diff],
                      selected(ours_leaves, requires), selected(theirs_leaves, requires),
                      cotangents)
    for i, (a, b) in enumerate(grads):
        if b is None:
            assert a is None or not np.any(a.numpy()), f"{info.name} ({layout}) grad {i}"
            continue
        assert_close(a, b, rtol * 10, atol * 10, what=f"{info.name} ({layout}) grad {i}")


#: Samples whose output layout is not yet PyTorch's. Values and gradients are right
#: (test_layouts_match_torch); the output's strides are not, so a ``.view()`` of it can raise
#: where PyTorch's works. Each is a strict xfail: fixing one fails its test until it is taken off
#: this list.
KNOWN_LAYOUT_DIFFERENCES: frozenset[str] = frozenset()


def _stride_cases() -> list[Any]:
    return mark_known(_cases(), KNOWN_LAYOUT_DIFFERENCES,
                      "output layout differs from PyTorch's (issue 21)")


@pytest.mark.parametrize(("info", "index", "layout"), _stride_cases())
def test_output_layouts_match_torch(info: OpInfo, index: int, layout: str) -> None:
    """Where the output's elements lie in memory (decides whether ``.view()`` works on it)."""
    arrays = sample_inputs(info, index, "float64")
    requires = [False] * len(arrays)
    _, ours_in = _build(chainrule, arrays, requires, layout)
    _, theirs_in = _build(torch, arrays, requires, layout)
    try:
        theirs = flat_outputs(info.fn(torch, *theirs_in))
    except RuntimeError:
        return  # compared in test_layouts_match_torch
    ours = flat_outputs(info.fn(chainrule, *ours_in))
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert _layout(a) == _layout(b), (
            f"{info.name} ({layout}) output {i}: strides {a.stride()} != {b.stride()}"
        )
