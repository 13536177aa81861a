"""``copy_`` from a source of another shape: PyTorch's two errors (shapes that do not
broadcast; a source that broadcasts to a larger shape than the destination's), and nothing
written when it raises."""

from __future__ import annotations

import pytest
import torch

import chainrule

CASES = [((2,), (2, 2)), ((3,), (2,)), ((2, 3), (3, 2)), ((1,), (3,)), ((2, 2), (3,)),
         ((), (2,)), ((2, 1), (3,)), ((4, 1, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (1, 1, 3))]


def _copy(lib, dst_shape, src_shape):
    dst = lib.zeros(dst_shape)
    try:
        dst.copy_(lib.ones(src_shape))
        return "ok", dst.tolist()
    except RuntimeError as error:
        return str(error), dst.tolist(), dst._version


@pytest.mark.parametrize(("dst_shape", "src_shape"), CASES, ids=str)
def test_copy_shape_errors(dst_shape, src_shape):
    assert _copy(chainrule, dst_shape, src_shape) == _copy(torch, dst_shape, src_shape)
