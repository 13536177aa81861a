"""bfloat16 as a real 2-byte dtype (ml_dtypes'), compared with PyTorch: creation, casts,
printing, promotion, arithmetic computed in float32 and rounded once, sums accumulated in
float32, gradients (with broadcasting and accumulation) and modules.

Before it, chainrule stored bfloat16 as float32: ``torch.ones(2, dtype=torch.bfloat16).dtype``
was ``float32`` and no value was ever rounded to bfloat16. The op sweep
(``test_op_sweep_float16.py::test_bfloat16_matches_torch``) runs every op table entry too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .sweep_tools import torch_to_numpy

LIBS = [chainrule, torch]


def _bits(t: Any) -> np.ndarray:
    """A bfloat16 tensor of either library as its raw 16-bit patterns."""
    if isinstance(t, chainrule.Tensor):
        return t.detach()._data.view(np.int16)
    return torch_to_numpy(t).view(np.int16)


def _same(ours: Any, theirs: Any) -> None:
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    if ours.dtype is chainrule.bfloat16:
        # bit for bit, but any NaN for a NaN (PyTorch's float-to-bfloat16 NaN is 0xFFFF)
        nan = np.isnan(ours.detach()._data.astype(np.float32))
        np.testing.assert_array_equal(nan, np.isnan(torch_to_numpy(theirs).astype(np.float32)))
        np.testing.assert_array_equal(_bits(ours)[~nan], _bits(theirs)[~nan])
    else:
        np.testing.assert_array_equal(ours.detach()._data, torch_to_numpy(theirs))


def _both(fn: Any) -> tuple[Any, Any]:
    return fn(chainrule), fn(torch)


VALUES = [1.123456, -200.5, 1e-3, 3e38, 4e38, -0.0, float("inf"), float("nan"), 1e-40, 0.1]


def test_dtype_is_two_bytes_and_floating() -> None:
    x = chainrule.ones(3, dtype=chainrule.bfloat16)
    assert x.dtype is chainrule.bfloat16
    assert x.element_size() == 2 and x.dtype.itemsize == 2
    assert x.is_floating_point() and x.dtype.is_floating_point and not x.is_complex()
    assert x.requires_grad_().requires_grad


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(VALUES, dtype=lib.bfloat16),
    lambda lib: lib.tensor(VALUES).to(lib.bfloat16),
    lambda lib: lib.tensor(VALUES, dtype=lib.float64).to(lib.bfloat16),
    lambda lib: lib.tensor(VALUES).bfloat16(),
    lambda lib: lib.zeros(2, 3, dtype=lib.bfloat16),
    lambda lib: lib.arange(5, dtype=lib.bfloat16),
    lambda lib: lib.linspace(0, 1, 7, dtype=lib.bfloat16),
    lambda lib: lib.full((3,), 0.1, dtype=lib.bfloat16),
], ids=["tensor", "from-float32", "from-float64", "method", "zeros", "arange", "linspace",
        "full"])
def test_creation_and_casts_round_as_pytorch(make: Any) -> None:
    ours, theirs = _both(make)
    _same(ours, theirs)
    assert repr(ours).replace("chainrule.", "torch.") == repr(theirs)
    assert np.array_equal(ours.tolist(), theirs.tolist(), equal_nan=True)


def test_back_to_float32_and_items() -> None:
    ours, theirs = _both(lambda lib: lib.tensor(VALUES, dtype=lib.bfloat16))
    _same(ours.float(), theirs.float())
    _same(ours.double(), theirs.double())
    _same(ours.half(), theirs.half())
    assert ours[0].item() == theirs[0].item()
    assert type(ours[0].item()) is float


def test_numpy_refuses_bfloat16_as_pytorch() -> None:
    for lib in LIBS:
        x = lib.ones(2, dtype=lib.bfloat16)
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            x.numpy()
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            x.requires_grad_().numpy()


@pytest.mark.parametrize("other", ["float16", "float32", "float64", "complex64", "complex128",
                                   "int64", "int8", "uint8", "bool", "bfloat16", "uint16",
                                   "uint32", "uint64"])
def test_promotion_as_pytorch(other: str) -> None:
    ours = chainrule.promote_types(chainrule.bfloat16, getattr(chainrule, other))
    theirs = torch.promote_types(torch.bfloat16, getattr(torch, other))
    assert str(ours).split(".")[1] == str(theirs).split(".")[1]
    ours, theirs = _both(lambda lib: (lib.ones(2, dtype=lib.bfloat16)
                                      + lib.ones(2, dtype=getattr(lib, other))))
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]


@pytest.mark.parametrize("fn", [
    lambda lib, x: x * 0.1,
    lambda lib, x: x * 2.5 + 1.3,
    lambda lib, x: x / 3,
    lambda lib, x: lib.tensor(2.5, dtype=lib.bfloat16) * lib.tensor([1, 2, 3]),
    lambda lib, x: x.exp(),
    lambda lib, x: lib.nn.functional.gelu(x),
    lambda lib, x: lib.nn.functional.softplus(x),
    lambda lib, x: x.sum(),
    lambda lib, x: x.mean(),
    lambda lib, x: x.cumsum(0),
    lambda lib, x: x.clamp(0, 1),
    lambda lib, x: x.reshape(3, 4) @ x.reshape(4, 3),
    lambda lib, x: lib.softmax(x, 0),
], ids=["mul-number", "mul-add", "div-int", "zero-dim-times-int", "exp", "gelu", "softplus",
        "sum", "mean", "cumsum", "clamp", "matmul", "softmax"])
def test_values_as_pytorch(fn: Any) -> None:
    rng = np.random.default_rng(3)
    data = rng.uniform(-3, 3, 12).astype(np.float32)
    ours, theirs = _both(lambda lib: fn(lib, lib.from_numpy(data.copy()).to(lib.bfloat16)))
    _same(ours, theirs)


@pytest.mark.parametrize("number", [2.5j, 1.3, 7])
def test_promotion_with_numbers_as_pytorch(number: Any) -> None:
    ours, theirs = _both(lambda lib: lib.tensor([0.3, -1.7], dtype=lib.bfloat16) * number)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.tolist() == theirs.tolist()


def test_bfloat16_as_default_dtype() -> None:
    def run(lib: Any) -> tuple[Any, Any]:
        lib.set_default_dtype(lib.bfloat16)
        try:
            return lib.tensor([1.3, 2.7]), lib.arange(3).exp()
        finally:
            lib.set_default_dtype(lib.float32)

    for ours, theirs in zip(*_both(run), strict=True):
        _same(ours, theirs)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn", [
    lambda lib, x, y: x.add(y, alpha=-0.1),
    lambda lib, x, y: x.sub(y, alpha=0.3),
    lambda lib, x, y: x.clone().add_(y, alpha=0.3),
    lambda lib, x, y: x - 1.3,
    lambda lib, x, y: 1.3 - x,
    lambda lib, x, y: lib.rsub(x, y),
    lambda lib, x, y: lib.rsub(x, 1.3, alpha=0.7),
    lambda lib, x, y: lib.rsub(x, y, alpha=0.7),
    lambda lib, x, y: x.add(1.3, alpha=2),
    lambda lib, x, y: x / 0.3,
    lambda lib, x, y: 0.3 / x,
], ids=["add-alpha", "sub-alpha", "add_-alpha", "sub-number", "number-sub", "rsub",
        "rsub-number-alpha", "rsub-alpha", "add-number-alpha", "div-number", "number-div"])
def test_add_sub_round_numbers_and_products_as_pytorch(half: str, fn: Any) -> None:
    """PyTorch's add and sub round a number operand and ``alpha * other`` to the half type
    before adding; mul and div take a number as it is."""
    x = np.array([0.80078125, 1.3, -2.7, 1e-3, 300.7], np.float32)
    y = np.array([3.40625, 0.77, 5.1, 2e-3, -0.3], np.float32)

    def run(lib: Any) -> Any:
        dtype = getattr(lib, half)
        return fn(lib, lib.from_numpy(x.copy()).to(dtype), lib.from_numpy(y.copy()).to(dtype))

    _same(*_both(run))


def test_batch_norm_running_statistics_as_pytorch() -> None:
    """PyTorch's bfloat16 batch norm updates its running statistics in bfloat16 arithmetic:
    running means match to the bit, running variances within one bfloat16 ulp."""
    rng = np.random.default_rng(5)
    batches = [rng.uniform(-3, 3, (int(n), 4)).astype(np.float32) for n in (2, 5, 8, 3)]

    def run(lib: Any) -> tuple[Any, Any]:
        bn = lib.nn.BatchNorm1d(4).to(lib.bfloat16)
        for batch in batches:
            bn(lib.from_numpy(batch.copy()).to(lib.bfloat16))
        return bn.running_mean, bn.running_var

    (mean, var), (t_mean, t_var) = _both(run)
    _same(mean, t_mean)
    ulps = np.abs(_bits(var).astype(np.int32) - _bits(t_var).astype(np.int32))
    assert ulps.max() <= 1


def test_sum_accumulates_in_float32() -> None:
    # In bfloat16 steps, a thousand 0.1s stop growing at 32; PyTorch's sum gives 100.
    ours, theirs = _both(lambda lib: lib.full((1000,), 0.1, dtype=lib.bfloat16).sum())
    _same(ours, theirs)
    assert ours.item() == 100.0


@pytest.mark.parametrize("fn", [
    lambda lib, x: (x * 0.1).sum(),
    lambda lib, x: (x + lib.full((40, 3), 0.1, dtype=lib.bfloat16)).sum(),  # broadcast
    lambda lib, x: (x.exp() * x).sum() + (x * x).sum(),  # accumulated from two uses
    lambda lib, x: lib.nn.functional.silu(x).sum(),
    lambda lib, x: lib.tanh(x).pow(2).mean(),
], ids=["mul-number", "broadcast", "two-uses", "silu", "tanh-pow-mean"])
def test_gradients_as_pytorch(fn: Any) -> None:
    data = np.array([0.3, -1.7, 2.2], np.float32)

    def grad(lib: Any) -> Any:
        x = lib.from_numpy(data.copy()).to(lib.bfloat16).requires_grad_()
        fn(lib, x).backward()
        return x.grad

    ours, theirs = _both(grad)
    _same(ours, theirs)


def test_linear_module_in_bfloat16() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    x = rng.standard_normal((4, 3)).astype(np.float32)

    def run(lib: Any) -> tuple[Any, ...]:
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.from_numpy(w.copy()))
            lin.bias.copy_(lib.from_numpy(b.copy()))
        lin = lin.bfloat16()
        inp = lib.from_numpy(x.copy()).bfloat16().requires_grad_()
        out = lin(inp).relu().sum()
        out.backward()
        return out, inp.grad, lin.weight.grad, lin.bias.grad, lin.weight

    for ours, theirs in zip(*_both(run), strict=True):
        _same(ours, theirs)


@pytest.mark.parametrize("fn", [
    lambda lib, x, w: lib.nn.functional.linear(x, w),
    lambda lib, x, w: lib.mm(x, w.t()),
], ids=["linear", "mm"])
def test_mixed_with_float32_refused_as_pytorch(fn: Any) -> None:
    messages = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as error:
            fn(lib, lib.ones(2, 3, dtype=lib.bfloat16), lib.ones(4, 3))
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_layer_norm_with_float32_parameters_as_pytorch() -> None:
    data = np.random.default_rng(1).uniform(-2, 2, (3, 4)).astype(np.float32)

    def run(lib: Any) -> Any:
        x = lib.from_numpy(data.copy()).bfloat16()
        return lib.nn.functional.layer_norm(x, (4,), lib.ones(4), lib.zeros(4))

    ours, theirs = _both(run)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.float()._data, torch_to_numpy(theirs.float()), atol=2e-2)


_COMPARED_NUMBERS = (0.3, 0.1, 1 / 3, 257, 256.5, 1e40, -1e40, float("nan"), float("inf"), 0, -0.0)


@pytest.mark.parametrize("number", _COMPARED_NUMBERS, ids=repr)
@pytest.mark.parametrize("method", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparison_with_a_number_rounds_it_to_bfloat16(method: str, number: float) -> None:
    """As PyTorch: the number is cast to bfloat16 before comparing (bfloat16(0.3) == 0.3 is
    True; NumPy compared the exact number and said False), also reflected and in place."""
    values = [0.3, 0.1, 1 / 3, 256.0, -0.0, float("inf")]

    operators = {"eq": "__eq__", "ne": "__ne__", "lt": "__gt__", "le": "__ge__",
                 "gt": "__lt__", "ge": "__le__"}  # (number <op> t calls t's reflection)

    def run(lib: Any) -> Any:
        t = lib.tensor(values, dtype=lib.bfloat16)
        in_place = t.clone()
        getattr(in_place, method + "_")(number)
        return (getattr(t, method)(number).tolist(),
                getattr(t, operators[method])(number).tolist(),
                in_place.float().tolist())

    assert run(chainrule) == run(torch)
