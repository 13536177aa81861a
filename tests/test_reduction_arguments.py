"""Reductions, softmaxes and scans on every kind of argument, as PyTorch.

Found by a random differential fuzzer (0-d and empty tensors, every dtype, NaN and infinities,
dims out of range or repeated): softmax of a 0-d NaN or infinity is NaN (was 1), and 0-d
softmax refuses dim=1; empty tensors go through softmax, cummax and logcumsumexp of any
dtype and dim as PyTorch's (which runs no kernel); mode orders a slice with NaN as PyTorch's
std::sort leaves it; PyTorch's order of checks (the dim's range, then an empty reduced dim,
then the dtype) decides which error is raised.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

NAN, INF = float("nan"), float("inf")


def _outcome(lib: Any, expression: str) -> Any:
    """The result of ``expression`` (``L`` is the library) as comparable data, or the error's
    type and first line."""
    try:
        out = eval(expression, {"L": lib, "nan": NAN, "inf": INF})
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return ("error", type(error).__name__, str(error).split("\n")[0])
    parts = out if isinstance(out, tuple) else (out,)
    data = []
    for part in parts:
        values = part.detach()
        values = values.numpy() if values.is_complex() else values.to(lib.float64).numpy()
        data.append((str(part.dtype).split(".")[-1], tuple(part.shape), values))
    return data


def _assert_same(expression: str) -> None:
    ours = _outcome(chainrule, expression)
    theirs = _outcome(torch, expression)
    if theirs[0] == "error" or ours[0] == "error":
        assert ours == theirs, expression
        return
    assert len(ours) == len(theirs), expression
    for (our_dtype, our_shape, our_values), (dtype, shape, values) in zip(
        ours, theirs, strict=True
    ):
        assert (our_dtype, our_shape) == (dtype, shape), expression
        np.testing.assert_allclose(
            our_values, values, rtol=1e-6, equal_nan=True, err_msg=expression
        )


SOFTMAX = [
    f"L.{name}(L.tensor({value}, dtype=L.{dtype}), {dim})"
    for name in ("softmax", "log_softmax")
    for value in ("nan", "inf", "-inf", "2.0", "-0.0")
    for dtype in ("float32", "float64", "float16", "bfloat16")
    for dim in (0, -1)
] + [
    f"L.{name}(L.{x}, {dim}{dtype})"
    for name in ("softmax", "log_softmax")
    for x in (
        "tensor(1.5)",
        "tensor(3)",
        "tensor(1 + 1j)",
        "zeros(0)",
        "zeros(3, 0)",
        "zeros(0, 2, dtype=L.float16)",
        "zeros(2, 0, dtype=L.bfloat16)",
        "zeros(0, 3, dtype=L.int64)",
        "zeros(0, 2, dtype=L.bool)",
        "zeros(0, 2, dtype=L.complex64)",
    )
    for dim in (0, 1, -2)
    for dtype in ("", ", dtype=L.float64", ", dtype=L.int64", ", dtype=L.complex64")
]


@pytest.mark.parametrize("expression", SOFTMAX)
def test_softmax_of_0d_and_empty_tensors(expression: str) -> None:
    _assert_same(expression)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("value", [NAN, INF, -INF, 0.5])
def test_softmax_of_0d_gradients_and_tangents(name: str, value: float) -> None:
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(getattr(lib, name)(x, 0) * 1.5, x)
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(lib.tensor(value), lib.tensor(2.0))
            tangent = lib.autograd.forward_ad.unpack_dual(getattr(lib, name)(dual, 0)).tangent
        results.append((grad.item(), tangent.item()))
    np.testing.assert_array_equal(results[0], results[1])


def test_softmax_of_empty_tensors_backward() -> None:
    for name in ("softmax", "log_softmax"):
        for dim in (0, 1):
            x = chainrule.zeros(3, 0, requires_grad=True)
            y = getattr(chainrule, name)(x, dim)
            assert (
                type(y.grad_fn).__name__
                == type(
                    getattr(torch, name)(torch.zeros(3, 0, requires_grad=True), dim).grad_fn
                ).__name__
            )
            (grad,) = chainrule.autograd.grad(y.sum(), x)
            assert tuple(grad.shape) == (3, 0)


def _nan_rows(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        n = int(rng.integers(1, 50))
        if rng.random() < 0.6:
            row = rng.integers(-3, 4, n).astype(np.float64)
        else:
            row = rng.standard_normal(n)
        row[rng.integers(0, n, int(rng.integers(1, 6)))] = NAN
        rows.append(row)
    return rows


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_mode_of_slices_with_nan_as_pytorch(dtype: str) -> None:
    # PyTorch's std::sort with a < b: NaN compares false both ways, so it is not sorted last
    # but stops the insertions; the mode is then another value than NaN-last would give.
    for row in _nan_rows(1, 250):
        ours = chainrule.tensor(row).to(getattr(chainrule, dtype)).mode()
        theirs = torch.tensor(row).to(getattr(torch, dtype)).mode()
        assert int(ours.indices) == int(theirs.indices), row.tolist()
        np.testing.assert_array_equal(ours.values.float().numpy(), theirs.values.float().numpy())


def test_mode_with_nan_along_a_dim_and_its_gradient() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 3, (4, 20, 3)).astype(np.float64)
    values[rng.random(values.shape) < 0.15] = NAN
    x = chainrule.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    ours, theirs = x.mode(1, keepdim=True), t.mode(1, keepdim=True)
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    weights = rng.standard_normal(tuple(theirs.values.shape))
    (ours.values * chainrule.tensor(weights)).sum().backward()
    (theirs.values * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_nanmedian_of_bfloat16_with_nan_as_pytorch() -> None:
    # (NumPy's sort of bfloat16 does not put NaN last: the values are sorted as float32)
    for row in _nan_rows(2, 150):
        ours = chainrule.tensor(row).to(chainrule.bfloat16).nanmedian(0)
        theirs = torch.tensor(row).to(torch.bfloat16).nanmedian(0)
        if np.isnan(row).all():
            continue  # (PyTorch's pick among NaNs only: ops/order_statistics.py says so)
        assert int(ours.indices) == int(theirs.indices), row.tolist()


_TENSORS = [
    "tensor(1 + 1j)",
    "tensor([1 + 1j, 2 - 1j, 1 + 1j])",
    "tensor(True)",
    "tensor([True, False, True])",
    "tensor(2.5)",
    "zeros(0)",
    "zeros(0, dtype=L.complex64)",
    "zeros(2, 0, dtype=L.complex64)",
    "zeros(0, 2, dtype=L.complex64)",
    "zeros(0, 2, dtype=L.bool)",
    "zeros(2, 0, dtype=L.int32)",
    "zeros(0, dtype=L.int64)",
    "zeros(0, dtype=L.float16)",
]
_CALLS = [
    "L.mode({x})",
    "L.mode({x}, 0)",
    "L.mode({x}, 1, True)",
    "L.median({x})",
    "L.median({x}, -1)",
    "L.median({x}, 0)",
    "L.nanmedian({x})",
    "L.nanmedian({x}, 0)",
    "L.nanmedian({x}, 5)",
    "L.kthvalue({x}, 1)",
    "L.kthvalue({x}, 1, 0)",
    "L.kthvalue({x}, 3, 0)",
    "L.kthvalue({x}, 1, 5)",
    "L.cummax({x}, 0)",
    "L.cummax({x}, 2)",
    "L.cummin({x}, -1)",
    "L.cummin({x}, -3)",
    "L.amax({x}, 0)",
    "L.amax({x}, -1)",
    "L.amax({x}, (-1, 1))",
    "L.amin({x}, (0, -1))",
    "L.amin({x}, (0, 0))",
    "L.max({x}, 0)",
    "L.max({x}, -1)",
    "L.min({x}, 5)",
    "L.aminmax({x})",
    "L.aminmax({x}, dim=-1)",
    "L.aminmax({x}, dim=0)",
    "L.aminmax({x}, dim=3)",
    "L.nansum({x}, 5)",
    "L.nansum({x}, (0, 0))",
    "L.sum({x}, (0, -1))",
    "L.norm({x}, float('inf'), (-1, 1))",
]


@pytest.mark.parametrize("call", _CALLS)
@pytest.mark.parametrize("x", _TENSORS)
def test_which_error_or_result_as_pytorch(call: str, x: str) -> None:
    _assert_same(call.format(x=f"L.{x}"))


@pytest.mark.parametrize(
    "expression",
    [
        "L.logcumsumexp(L.zeros(0, dtype=L.complex64), 0)",
        "L.logcumsumexp(L.zeros(0, 3, dtype=L.complex64), 1)",
        "L.logcumsumexp(L.zeros(0, 3), -2)",
        "L.logcumsumexp(L.zeros(3, 0, dtype=L.int32), 1)",
        "L.logcumsumexp(L.zeros(0), 1)",
        "L.nansum(L.ones(2), dtype=L.complex64)",
        "L.nansum(L.ones(2), dtype=L.complex128)",
        "L.nansum(L.ones(2, dtype=L.float16), 0, dtype=L.complex64)",
        "L.nansum(L.ones(2, dtype=L.int64), dtype=L.complex64)",
        "L.nansum(L.ones(2, dtype=L.bool), dtype=L.complex64)",
        "L.nansum(L.zeros(0, 3), 0, True, dtype=L.complex64)",
        "L.nansum(L.ones(2), 5, dtype=L.complex64)",
        "L.nansum(L.ones(2, dtype=L.complex64), dtype=L.float32)",
        "L.nanmean(L.ones(2), dtype=L.complex64)",
        "L.nanmean(L.zeros(0), 0, dtype=L.complex64)",
        "L.nanmean(L.ones(2, dtype=L.int64), dtype=L.complex64)",
        "L.median(L.zeros(0, dtype=L.bool))",
        "L.median(L.zeros(0, dtype=L.int64))",
        "L.nanmedian(L.zeros(2, 0, dtype=L.complex64))",
        "L.linalg.vector_norm(L.zeros(0, 0), float('inf'), (-1, 1))",
    ],
)
def test_more_arguments_as_pytorch(expression: str) -> None:
    _assert_same(expression)


def test_empty_cummax_with_any_dim_records_and_backpropagates() -> None:
    x = chainrule.zeros(0, 3, requires_grad=True)
    out = chainrule.cummax(x, 5)
    assert out.values.grad_fn.name() == "CummaxBackward0"
    (grad,) = chainrule.autograd.grad(out.values.sum(), x)
    assert tuple(grad.shape) == (0, 3)


@pytest.mark.parametrize("value", [NAN, 1.0, INF, -INF])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_aminmax_of_0d_gradients(value: float, dim: int | None) -> None:
    # (a 0-d NaN shares its gradient among no equal element: NaN, as PyTorch's)
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        out = lib.aminmax(x) if dim is None else lib.aminmax(x, dim=dim)
        (grad,) = lib.autograd.grad(out.min * 2 + out.max * 3, x)
        grads.append(grad.item())
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("zero", [False, True])
def test_cumprod_with_dtype_backward_in_the_inputs_dtype(dtype: str, zero: bool) -> None:
    # PyTorch casts the gradient to the input's dtype before cumprod's backward (a float64
    # input with dtype=float16 gets a float64 computation, not a float16 one).
    rng = np.random.default_rng(5)
    values = rng.standard_normal((3, 6))
    if zero:
        values[1, 2] = 0.0
    weights = rng.standard_normal((3, 6))
    grads = []
    for lib in (chainrule, torch):
        x = lib.tensor(values, requires_grad=True)
        out = lib.cumprod(x, 1, dtype=getattr(lib, dtype))
        (grad,) = lib.autograd.grad((out * lib.tensor(weights, dtype=out.dtype)).sum(), x)
        assert grad.dtype == lib.float64
        grads.append(grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize(
    "keywords",
    [
        {},
        {"nan": None},
        {"nan": None, "posinf": 7.0},
        {"nan": 0.3, "neginf": -3.3},
        {"posinf": 1e39},
    ],
)
def test_nan_to_num_as_pytorch(dtype: str, keywords: dict) -> None:
    # (nan=None is 0; bfloat16's infinities become its largest numbers, not infinity)
    results = []
    for lib in (chainrule, torch):
        x = lib.tensor([[1.0, NAN, INF, -INF, -0.0]]).to(getattr(lib, dtype))
        out = lib.nan_to_num(x.expand(2, 5), **keywords)
        results.append((out.float().numpy(), out.stride(), str(out.dtype).split(".")[-1]))
        x.nan_to_num_(**keywords)
        results.append((x.float().numpy(), x.stride(), str(x.dtype).split(".")[-1]))
    np.testing.assert_array_equal(results[0][0], results[2][0])
    np.testing.assert_array_equal(results[1][0], results[3][0])
    assert results[0][1:] == results[2][1:] and results[1][1:] == results[3][1:]


_MORE_TENSORS = [
    "tensor(1 + 1j)",
    "tensor([1 + 1j, 1 + 1j])",
    "zeros(0, dtype=L.complex64)",
    "tensor(2.0)",
    "tensor(True)",
    "tensor([True, False, True])",
    "zeros(0, dtype=L.bool)",
    "zeros(0, 0)",
    "zeros(2, 0, dtype=L.int32)",
    "zeros(0, 3, dtype=L.uint8)",
    "tensor([1, 2, 4])",
    "zeros(0, dtype=L.int64)",
]
_MORE_CALLS = [
    "L.unique({x})",
    "L.unique({x}, dim=0)",
    "L.unique({x}, dim=-1)",
    "L.unique({x}, dim=5)",
    "L.unique({x}, return_inverse=True, return_counts=True, dim=0)",
    "L.unique_consecutive({x})",
    "L.unique_consecutive({x}, dim=0)",
    "L.unique_consecutive({x}, dim=-1)",
    "L.topk({x}, 1)",
    "L.topk({x}, 3)",
    "L.topk({x}, 1, 5)",
    "L.topk({x}, 0, 0)",
    "L.sort({x}, 5)",
    "L.argsort({x}, 1)",
    "L.histc({x}, bins=3, min=0, max=3)",
    "L.histc({x}, bins=3, min=2, max=0)",
    "L.histc({x}, bins=3, min=-1, max=300)",
    "L.histc({x}, bins=0)",
    "L.histc({x}, bins=3)",
    "L.bincount({x})",
    "L.trapezoid({x})",
    "L.trapezoid({x}, dim=5)",
    "L.trapezoid({x}, dx=0.5)",
    "L.cumulative_trapezoid({x})",
    "L.cumulative_trapezoid({x}, dim=0)",
    "L.cumulative_trapezoid({x}, dim=5)",
    "L.cumulative_trapezoid({x}, dx=2)",
    "L.diff({x}, n=0, dim=5)",
    "L.diff({x}, n=1, dim=5)",
]


@pytest.mark.parametrize("call", _MORE_CALLS)
@pytest.mark.parametrize("x", _MORE_TENSORS)
def test_sorting_counting_and_integrals_as_pytorch(call: str, x: str) -> None:
    _assert_same(call.format(x=f"L.{x}"))


@pytest.mark.parametrize(
    "expression",
    [
        "L.histc(L.tensor([1, 2], dtype=L.int8), bins=3, min=0, max=300)",
        "L.histc(L.tensor([1, 2], dtype=L.int16), bins=3, min=0, max=70000)",
        "L.histc(L.tensor([1, 2], dtype=L.int32), bins=3, min=0, max=2**40)",
        "L.histc(L.tensor([1, 2], dtype=L.int64), bins=3, min=0, max=2**40)",
        "L.trapezoid(L.tensor([True, False]), L.tensor([1.0, 2.0]))",
        "L.trapezoid(L.tensor([1.0, 0.0]), L.tensor([True, False]))",
        "L.cumulative_trapezoid(L.tensor([True, False]), L.tensor([1.0, 2.0]))",
        "L.cumulative_trapezoid(L.zeros(0, dtype=L.int64), L.zeros(0, dtype=L.int64))",
        "L.unique_consecutive(L.zeros(0, 2, 0), dim=1)",
    ],
)
def test_more_counting_arguments_as_pytorch(expression: str) -> None:
    _assert_same(expression)


def test_cumulative_trapezoid_of_no_samples_is_recorded() -> None:
    for lib in (chainrule, torch):
        x = lib.zeros(0, 3, requires_grad=True)
        out = lib.cumulative_trapezoid(x, dim=0)
        assert type(out.grad_fn).__name__.endswith("CumsumBackward0")
        (grad,) = lib.autograd.grad(out.sum(), x)
        assert tuple(grad.shape) == (0, 3)


@pytest.mark.parametrize(
    "expression",
    [
        "L.prod(L.tensor(inf), 0, dtype=L.complex64)",
        "L.prod(L.tensor(-inf + 0j), 0)",
        "L.prod(L.tensor([-inf]), dtype=L.complex64)",
        "L.cumprod(L.tensor([inf, 1.0, 2.0]), 0, dtype=L.complex64)",
        "L.cumprod(L.tensor([[inf + 0j, 1.0], [2.0, -inf]]), 1)",
        "L.cumprod(L.tensor(inf + 0j), 0)",
        "L.cumprod(L.tensor([[1 + 1j, 2], [3, 4j]]), 1)",
        "L.cumprod(L.tensor([1 - 1j, inf + 1j]), 0)",
        "L.cumprod(L.tensor([[1 - 1j, inf + 1j], [inf + 0j, 2]]).t(), 0)",
        "L.cumprod(L.zeros(2, 0, dtype=L.complex64), 1)",
    ],
)
def test_complex_products_start_from_one_as_pytorch(expression: str) -> None:
    # (1 * (inf + 0j) is inf + nanj in a complex multiplication: PyTorch's products start
    # from 1, NumPy's scan from the first element)
    _assert_same(expression)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("dim", [-1, 0, None])
@pytest.mark.parametrize("q", ["L.tensor([0.25, 0.75])", "L.tensor(0.5)", "0.5"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_quantile_of_a_0d_tensor_along_a_dim(name: str, dim: Any, q: str, keepdim: bool) -> None:
    _assert_same(f"L.{name}(L.tensor(2.5), {q}, dim={dim}, keepdim={keepdim})")
    _assert_same(f"L.{name}(L.tensor(nan), {q}, dim={dim}, keepdim={keepdim})")
