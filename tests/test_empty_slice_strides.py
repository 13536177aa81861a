"""An empty slice has PyTorch's strides and storage offset.

PyTorch's slice multiplies the dimension's stride by the step and moves the start to the
(clamped) first index even when the result is empty; NumPy keeps both as they were, so
``zeros(4, 5)[4:].storage_offset()`` was 0 (PyTorch: 20) and ``zeros(6, 0)[:, ::3].stride()``
``(1, 1)``-like where PyTorch multiplies. Metadata only, but ``stride()``, ``storage_offset()``
and what is laid out from them (``dim_order``) read it.
"""

from __future__ import annotations

from typing import Any

import pytest

from .outcomes import same_outcome

CASES = [
    "zeros(6, 0, 4)[::2, ::2, ::2]",
    "zeros(6, 0, 4)[:, ::3]",
    "zeros(6, 0, 4)[:, 1:5:2]",
    "zeros(0, 5)[:, ::2]",
    "zeros(0, 5)[::2]",
    "zeros(4, 5)[4:, ::2]",
    "zeros(4, 5)[:, 5::2]",
    "zeros(4, 5)[2:2]",
    "zeros(4, 5)[1:3, 7:9]",
    "zeros(3, 0).t()[::2]",
    "zeros(4, 5)[::2][5:]",
    "zeros(4, 5)[9:]",
    "zeros(4, 5).t()[:, 4:]",
    "zeros(4, 5)[1:][3:]",
    "zeros(4, 5).narrow(0, 4, 0)",
    "zeros(4, 5)[:, 5:].t()",
    "arange(20.).view(4, 5)[2:2].contiguous()",
]


@pytest.mark.parametrize("code", CASES)
def test_empty_slice_layout(code: str) -> None:
    def program(lib: Any) -> Any:
        t = eval(f"lib.{code}")  # noqa: S307 - the test's own expressions
        return tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous(), t.dim_order()

    same_outcome(program)


EMPTY_LAYOUTS = [
    "zeros(4, 5)[4:, ::2]",
    "zeros(6, 0, 4)[:, ::3]",
    "zeros(0, 5).t()",
    "zeros(3, 0, 2).permute(2, 0, 1)",
    "zeros(4, 5)[:, 5:].t()",
    "zeros(0, 3)",
]


@pytest.mark.parametrize("code", EMPTY_LAYOUTS)
def test_copies_and_like_factories_keep_an_empty_tensors_strides(code: str) -> None:
    # (PyTorch's empty_like(preserve_format) and clone keep the strides of an empty tensor,
    # which counts as dense; chainrule gave them contiguous strides)
    def program(lib: Any) -> Any:
        t = eval(f"lib.{code}")  # noqa: S307 - the test's own expressions
        made = [
            lib.empty_like(t), lib.zeros_like(t), lib.ones_like(t), lib.full_like(t, 2),
            lib.rand_like(t), lib.randn_like(t), lib.randint_like(t, 3), t.clone(),
            t.to(lib.float64), t.contiguous(),
            lib.empty_like(t, memory_format=lib.contiguous_format),
        ]
        return [m.stride() for m in made], [m.dtype for m in made]

    same_outcome(program)
