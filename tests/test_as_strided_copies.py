"""as_strided_copy, as_strided_scatter and detach_copy against PyTorch: values, layouts (the
output of as_strided_scatter keeps the input's strides and storage offset in a copy of its
whole storage, as PyTorch's clone_preserve_strides), nodes, gradients and errors.

One deliberate difference: PyTorch's gradient of as_strided_scatter's ``self`` is the gradient
of the elements src overwrote (it fails PyTorch's own gradcheck); chainrule's is the Jacobian's
transpose (the gradient of the elements kept), checked here by finite differences."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = (torch, chainrule)


def _both(call: Any) -> list[Any]:
    results = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = call(lib)
            except Exception as error:  # noqa: BLE001 - the two libraries' errors are compared
                out = error
        results.append((out, [str(w.message) for w in caught]))
    return results


VALUE_CASES = {
    "copy": lambda L: L.as_strided_copy(L.arange(6.0), (2, 2), (1, 2), 1),
    "copy_default_offset": lambda L: L.as_strided_copy(L.arange(6.0)[2:], (2,), (2,)),
    "copy_overlapping": lambda L: L.as_strided_copy(L.arange(6.0), (3, 3), (1, 1)),
    "copy_transposed": lambda L: L.as_strided_copy(L.arange(6.0).reshape(2, 3).t(), (3,), (2,)),
    "copy_float16": lambda L: L.as_strided_copy(L.arange(6.0).half(), (2,), (3,)),
    "detach_copy_transposed": lambda L: L.detach_copy(L.arange(6.0).reshape(2, 3).t()),
    "detach_copy_expanded": lambda L: L.detach_copy(L.ones(3).expand(2, 3)),
    "detach_copy_int": lambda L: L.detach_copy(L.arange(4)),
    "scatter": lambda L: L.as_strided_scatter(L.arange(6.0), L.ones(2, 2), (2, 2), (1, 2), 1),
    "scatter_overlapping": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.ones(2, 2), (2, 2), (1, 1)
    ),
    "scatter_transposed": lambda L: L.as_strided_scatter(
        L.arange(6.0).reshape(2, 3).t(), L.zeros(2), (2,), (1,), 0
    ),
    "scatter_offset_default": lambda L: L.as_strided_scatter(
        L.arange(10.0)[2:8], L.zeros(2), (2,), (1,)
    ),
    "scatter_offset_in_storage": lambda L: L.as_strided_scatter(
        L.arange(10.0)[2:8], L.zeros(2), (2,), (1,), 5
    ),
    "scatter_gapped": lambda L: L.as_strided_scatter(
        L.arange(12.0).reshape(3, 4)[:, ::2], L.full((2,), -1.0), (2,), (1,)
    ),
    "scatter_gapped_end_of_storage": lambda L: L.as_strided_scatter(
        L.arange(12.0).reshape(3, 4)[:, ::2], L.full((2,), -1.0), (2,), (1,), 10
    ),
    "scatter_expanded": lambda L: L.as_strided_scatter(
        L.ones(3).expand(2, 3), L.zeros(2), (2,), (1,)
    ),
    "scatter_other_dtype": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.zeros(2, dtype=L.float64), (2,), (1,)
    ),
    "scatter_complex_into_real": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.zeros(2, dtype=L.complex64) + 1j, (2,), (2,)
    ),
    "scatter_int": lambda L: L.as_strided_scatter(L.arange(6), L.zeros(2), (2,), (2,)),
    "scatter_empty_far": lambda L: L.as_strided_scatter(L.arange(6.0), L.zeros(0), (0,), (1,), 99),
    "scatter_zero_dim": lambda L: L.as_strided_scatter(L.arange(6.0), L.tensor(-1.0), (), (), 4),
    "scatter_nan": lambda L: L.as_strided_scatter(
        L.full((4,), float("nan")), L.tensor([float("inf"), 1.0]), (2,), (2,), 1
    ),
    "scatter_method": lambda L: L.arange(6.0).as_strided_scatter(L.zeros(2), (2,), (1,)),
}


@pytest.mark.parametrize("name", VALUE_CASES)
def test_values_as_pytorch(name: str) -> None:
    (theirs, their_warnings), (ours, our_warnings) = _both(VALUE_CASES[name])
    assert not isinstance(theirs, Exception), theirs
    assert not isinstance(ours, Exception), ours
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.shape == theirs.shape
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert our_warnings == their_warnings


ERROR_CASES = {
    "copy_negative_offset": lambda L: L.as_strided_copy(L.arange(6.0), (2,), (1,), -1),
    "copy_negative_stride": lambda L: L.as_strided_copy(L.arange(6.0), (2,), (-1,)),
    "copy_lengths": lambda L: L.as_strided_copy(L.arange(6.0), (2, 3), (1,)),
    "copy_out_of_bounds": lambda L: L.as_strided_copy(L.arange(6.0), (2, 3), (1, 3)),
    "scatter_src_size": lambda L: L.as_strided_scatter(L.arange(6.0), L.zeros(3), (2,), (1,)),
    "scatter_out_of_bounds": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.zeros(2), (2,), (1,), 10
    ),
    "scatter_gapped_out_of_bounds": lambda L: L.as_strided_scatter(
        L.arange(12.0).reshape(3, 4)[:, ::2], L.zeros(2), (2,), (1,), 11
    ),
    "scatter_negative_stride": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.zeros(2), (2,), (-1,)
    ),
    "scatter_negative_offset": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.zeros(2), (2,), (1,), -1
    ),
    "scatter_lengths": lambda L: L.as_strided_scatter(L.arange(6.0), L.zeros(2, 2), (2, 2), (1,)),
    "scatter_stride_zero": lambda L: L.as_strided_scatter(
        L.arange(6.0), L.ones(2, 2), (2, 2), (0, 1), 3
    ),
    "scatter_non_contiguous_requiring_grad": lambda L: L.as_strided_scatter(
        L.arange(6.0).reshape(2, 3).t().requires_grad_(), L.zeros(2), (2,), (1,)
    ),
    "detach_copy_backward": lambda L: L.detach_copy(L.ones(2, requires_grad=True)).sum().backward(),
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_errors_as_pytorch(name: str) -> None:
    (theirs, _), (ours, _) = _both(ERROR_CASES[name])
    assert isinstance(theirs, Exception), theirs
    assert type(ours) is type(theirs) and str(ours) == str(theirs)


def test_nodes_and_saved_values() -> None:
    for lib in LIBS:
        x = lib.arange(6.0, requires_grad=True)
        y = lib.as_strided_copy(x, (2, 2), (1, 2), 1)
        assert y.grad_fn.name() == "AsStridedBackward0_copy" and y.is_contiguous()
        s = lib.ones(2, 2, requires_grad=True)
        z = lib.as_strided_scatter(x * 1, s, (2, 2), (1, 2), 1)
        assert z.grad_fn.name() == "AsStridedScatterBackward0"
        node = z.grad_fn
        assert (tuple(node._saved_size), tuple(node._saved_stride)) == ((2, 2), (1, 2))
        assert node._saved_storage_offset == 1
        d = lib.detach_copy(x)
        assert d.requires_grad and d.grad_fn.name().endswith("NotImplemented")
        assert d.data_ptr() != x.data_ptr() and d._base is None
        with lib.no_grad():
            assert not lib.detach_copy(x).requires_grad


GEOMETRIES = [((2, 2), (1, 2), 1), ((3,), (2,), 0), ((2, 1), (3, 1), 2), ((0,), (1,), 0)]


@pytest.mark.parametrize(("size", "stride", "offset"), GEOMETRIES)
def test_src_gradient_as_pytorch(size: tuple, stride: tuple, offset: int) -> None:
    grads = []
    for lib in LIBS:
        s = lib.arange(float(np.prod(size)), dtype=lib.float64).reshape(size).requires_grad_()
        out = lib.as_strided_scatter(lib.zeros(6, dtype=lib.float64), s, size, stride, offset)
        (g,) = lib.autograd.grad(out, s, lib.arange(6.0, dtype=lib.float64).exp())
        grads.append(g.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


@pytest.mark.parametrize(("size", "stride", "offset"), GEOMETRIES)
def test_gradients_are_the_jacobian(size: tuple, stride: tuple, offset: int) -> None:
    x = chainrule.randn(6, dtype=chainrule.float64, requires_grad=True)
    s = chainrule.randn(size, dtype=chainrule.float64, requires_grad=True)

    def scatter(a: Any, b: Any) -> Any:
        return chainrule.as_strided_scatter(a, b, size, stride, offset)

    assert chainrule.autograd.gradcheck(scatter, (x, s))
    assert chainrule.autograd.gradgradcheck(scatter, (x, s))


def test_self_gradient_where_pytorch_differs() -> None:
    """PyTorch gives self the gradient of the overwritten elements (fails its gradcheck)."""
    g = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    found = {}
    for lib in LIBS:
        x = lib.arange(6.0, requires_grad=True)
        out = lib.as_strided_scatter(x * 1, lib.ones(2, 2), (2, 2), (1, 2), 1)
        (found[lib.__name__],) = lib.autograd.grad(out, x, lib.tensor(g))
    assert found["torch"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 0.0]
    assert found["chainrule"].tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 5.0]
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        x64 = torch.arange(6.0, dtype=torch.float64, requires_grad=True)
        torch.autograd.gradcheck(
            lambda a: torch.as_strided_scatter(a, torch.ones(2, 2).double(), (2, 2), (1, 2), 1),
            (x64,),
        )


def test_src_gradient_follows_the_output_layout() -> None:
    """On a transposed self (allowed while self needs no grad) src's gradient is the output
    elements' it landed on; PyTorch reads a contiguous layout instead."""
    s = chainrule.zeros(2, dtype=chainrule.float64, requires_grad=True)
    base = chainrule.arange(6.0, dtype=chainrule.float64).reshape(2, 3).t()
    out = chainrule.as_strided_scatter(base, s, (2,), (1,))
    (g,) = chainrule.autograd.grad(out, s, chainrule.arange(6.0).double().reshape(3, 2))
    assert g.tolist() == [0.0, 2.0]
    assert chainrule.autograd.gradcheck(
        lambda b: chainrule.as_strided_scatter(base, b, (2,), (1,)), (s,)
    )
