"""Ops whose PyTorch CPU kernel has no bool (or integer) version raise PyTorch's error instead
of a NumPy result: abs, floor/ceil/trunc, frac, trace and the products (dot, vdot, mv, mm,
matmul, bmm, addmm, addmv, baddbmm, addbmm, einsum, tensordot) of bool tensors; gelu, silu,
mish, the ELU family, softplus, logsigmoid, hardswish, hardsigmoid, softshrink, glu and prelu of
integer and bool tensors; relu and hardtanh of bool tensors with their own messages; unary
``+`` of a bool tensor. What PyTorch computes is compared as well (values and dtypes).
"""

from __future__ import annotations

import numpy as np
import pytest

import chainrule

from .conftest import torch

_CALLS = {
    "abs": "torch.abs(x)",
    "abs_": "x.clone().abs_()",
    "__abs__": "abs(x)",
    "absolute": "torch.absolute(x)",
    "floor": "torch.floor(x)",
    "ceil_": "x.clone().ceil_()",
    "trunc": "torch.trunc(x)",
    "fix": "torch.fix(x)",
    "frac": "torch.frac(x)",
    "frac_": "x.clone().frac_()",
    "trace": "torch.trace(x.reshape(2, 2))",
    "dot": "torch.dot(x, x)",
    "vdot": "torch.vdot(x, x)",
    "mv": "torch.mv(x.reshape(2, 2), x[:2])",
    "mm": "torch.mm(x.reshape(2, 2), x.reshape(2, 2))",
    "matmul 1-d": "x @ x",
    "matmul 2-d 1-d": "x.reshape(2, 2) @ x[:2]",
    "matmul 3-d": "x.reshape(1, 2, 2) @ x.reshape(1, 2, 2)",
    "bmm": "torch.bmm(x.reshape(1, 2, 2), x.reshape(1, 2, 2))",
    "addmm": "torch.addmm(x.reshape(2, 2), x.reshape(2, 2), x.reshape(2, 2))",
    "addmv": "torch.addmv(x[:2], x.reshape(2, 2), x[:2])",
    "baddbmm": "torch.baddbmm(x.reshape(1, 2, 2), x.reshape(1, 2, 2), x.reshape(1, 2, 2))",
    "addbmm": "torch.addbmm(x.reshape(2, 2), x.reshape(1, 2, 2), x.reshape(1, 2, 2))",
    "einsum": "torch.einsum('ij,jk->ik', x.reshape(2, 2), x.reshape(2, 2))",
    "tensordot": "torch.tensordot(x.reshape(2, 2), x.reshape(2, 2), dims=1)",
    "relu": "torch.relu(x)",
    "relu_": "x.clone().relu_()",
    "hardtanh": "F.hardtanh(x)",
    "relu6": "F.relu6(x)",
    "unary +": "+x",
    "gelu": "F.gelu(x)",
    "gelu tanh": "F.gelu(x, approximate='tanh')",
    "silu": "F.silu(x)",
    "silu inplace": "F.silu(x.clone(), inplace=True)",
    "mish": "F.mish(x)",
    "elu": "F.elu(x)",
    "elu inplace": "F.elu(x.clone(), inplace=True)",
    "selu": "F.selu(x)",
    "celu": "F.celu(x)",
    "softplus": "F.softplus(x)",
    "logsigmoid": "F.logsigmoid(x)",
    "hardswish": "F.hardswish(x)",
    "hardsigmoid": "F.hardsigmoid(x)",
    "softshrink": "F.softshrink(x)",
    "glu": "F.glu(x.reshape(2, 2))",
    "prelu": "F.prelu(x, torch.ones(1, dtype=x.dtype))",
    "leaky_relu": "F.leaky_relu(x)",
}


def _outcome(lib: object, call: str, dtype: str) -> str:
    x = lib.tensor([1, 0, 2, 1]).to(getattr(lib, dtype))
    namespace = {"torch": lib, "F": lib.nn.functional, "x": x}
    try:
        result = eval(call, namespace)
    except (RuntimeError, NotImplementedError) as error:
        return f"{type(error).__name__}: {error}"
    values = np.round(result.double().numpy(), 4).tolist()
    return f"{str(result.dtype).split('.')[-1]} {values}"


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("name", list(_CALLS))
def test_as_pytorch(name: str, dtype: str) -> None:
    assert _outcome(chainrule, _CALLS[name], dtype) == _outcome(torch, _CALLS[name], dtype)


@pytest.mark.parametrize("name", ["abs", "floor", "trace", "mm", "gelu", "elu"])
def test_floating_inputs_still_compute(name: str) -> None:
    for dtype in ("float32", "float64"):
        assert _outcome(chainrule, _CALLS[name], dtype) == _outcome(torch, _CALLS[name], dtype)
