"""Convolutions of integer and bool tensors as PyTorch's CPU kernels: int64 has every kernel;
the other integer types compute plain, grouped, strided, padded and 3-d convolutions but have no
dilated or transposed kernel; bool has none (each error naming PyTorch's kernel)."""

from __future__ import annotations

import pytest

import chainrule

from .conftest import torch

_CALLS = {
    "conv1d": "torch.conv1d(x.reshape(1, 1, 4), x.reshape(1, 1, 4)[..., :2])",
    "conv1d dilated": "torch.conv1d(x.reshape(1, 1, 4), x.reshape(1, 1, 4)[..., :2], dilation=2)",
    "conv2d": "torch.conv2d(x.reshape(1, 1, 2, 2), x.reshape(1, 1, 2, 2))",
    "conv2d bias": "torch.conv2d(x.reshape(1, 1, 2, 2), x.reshape(1, 1, 2, 2), x[:1])",
    "conv2d padded": "F.conv2d(x.reshape(1, 1, 2, 2), x.reshape(1, 1, 2, 2), padding=1)",
    "conv2d strided": "torch.conv2d(x.reshape(1, 1, 2, 2).repeat(1, 1, 2, 2), "
    "x.reshape(1, 1, 2, 2), stride=2)",
    "conv2d dilated": "torch.conv2d(x.reshape(1, 1, 2, 2).repeat(1, 1, 2, 2), "
    "x.reshape(1, 1, 2, 2), dilation=2)",
    "conv2d groups": "torch.conv2d(x.reshape(1, 2, 2, 1), x.reshape(2, 1, 2, 1), groups=2)",
    "conv3d": "torch.conv3d(x.reshape(1, 1, 1, 2, 2), x.reshape(1, 1, 1, 2, 2))",
    "conv3d dilated": "torch.conv3d(x.reshape(1, 1, 1, 2, 2).repeat(1, 1, 1, 2, 2), "
    "x.reshape(1, 1, 1, 2, 2), dilation=(1, 2, 2))",
    "conv_transpose1d": "torch.conv_transpose1d(x.reshape(1, 1, 4), x.reshape(1, 1, 4)[..., :2])",
    "conv_transpose2d": "torch.conv_transpose2d(x.reshape(1, 1, 2, 2), x.reshape(1, 1, 2, 2))",
    "conv_transpose2d dilated": "torch.conv_transpose2d(x.reshape(1, 1, 2, 2), "
    "x.reshape(1, 1, 2, 2), dilation=2)",
    "conv_transpose3d": "torch.conv_transpose3d(x.reshape(1, 1, 1, 2, 2), "
    "x.reshape(1, 1, 1, 2, 2))",
}


def _outcome(lib: object, call: str, dtype: str) -> str:
    x = lib.tensor([1, 0, 2, 1]).to(getattr(lib, dtype))
    try:
        result = eval(call, {"torch": lib, "F": lib.nn.functional, "x": x})
    except (RuntimeError, NotImplementedError) as error:
        return f"{type(error).__name__}: {error}"
    return f"{str(result.dtype).split('.')[-1]} {result.tolist()}"


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32"])
@pytest.mark.parametrize("name", list(_CALLS))
def test_as_pytorch(name: str, dtype: str) -> None:
    assert _outcome(chainrule, _CALLS[name], dtype) == _outcome(torch, _CALLS[name], dtype)
