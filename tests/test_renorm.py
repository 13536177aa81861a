"""renorm / Tensor.renorm / Tensor.renorm_ against PyTorch: values at special values (NaN, inf,
a norm equal to maxnorm, empty slices), half precision bit for bit, complex values, the node
and what it saves, gradients at the bound, and PyTorch's errors in PyTorch's order."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch

LIBS = (torch, chainrule)


def _both(call: Any) -> list[Any]:
    results = []
    for lib in LIBS:
        try:
            results.append(call(lib))
        except Exception as error:  # noqa: BLE001 - the two libraries' errors are compared
            results.append(error)
    return results


def _array(t: Any) -> np.ndarray:
    if t.dtype in (torch.bfloat16, chainrule.bfloat16):
        t = t.float()
    return t.detach().numpy()


RANDOM = np.random.default_rng(0).standard_normal((5, 6)).tolist()

VALUE_CASES = {
    "mixed_rows": lambda L: L.renorm(
        L.tensor([[1.0, 2.0, 3.0], [0.1, 0.2, 0.1], [4.0, 0.0, 3.0]]), 2, 0, 1.0
    ),
    "nan_row": lambda L: L.renorm(L.tensor([[math.nan, 1.0], [3.0, 4.0]]), 2, 0, 1.0),
    "inf_row": lambda L: L.renorm(L.tensor([[math.inf, 1.0], [3.0, 4.0]]), 2, 0, 1.0),
    "norm_equal_maxnorm": lambda L: L.renorm(L.tensor([[3.0, 4.0]]), 2, 0, 5.0),
    "maxnorm_zero": lambda L: L.renorm(L.tensor([[3.0, 4.0], [0.0, 0.0]]), 1, 0, 0.0),
    "maxnorm_inf": lambda L: L.renorm(L.ones(2, 2), 2, 0, math.inf),
    "empty_slices": lambda L: L.renorm(L.zeros(0, 3), 2, 0, 1.0),
    "empty_inf_norm": lambda L: L.renorm(L.zeros(0, 2), math.inf, 0, 1.0),
    "float16": lambda L: L.renorm(L.ones(2, 3, dtype=L.float16) * 3, 2, 0, 1.0),
    "float16_p3": lambda L: L.renorm(L.arange(12.0).reshape(3, 4).half(), 3, 1, 2.0),
    "bfloat16": lambda L: L.renorm(L.arange(12.0).reshape(3, 4).bfloat16(), 2, 0, 1.7),
    "float16_inf": lambda L: L.renorm(L.ones(2, 3, dtype=L.float16) * 3, math.inf, 1, 1.0),
    "float64": lambda L: L.renorm(L.arange(24.0).reshape(2, 3, 4).double(), 3, -1, 0.5),
    "complex": lambda L: L.renorm(L.tensor([[3.0, 4j], [0.1, 0.2j]]), 2, 0, 1.0),
    "transposed": lambda L: L.arange(12.0).reshape(4, 3).t().renorm(2, 1, 3.0),
    "expanded": lambda L: L.tensor([[3.0, 4.0]]).expand(3, 2).renorm(2, 1, 2.0),
    "keywords": lambda L: L.ones(2, 3).renorm(p=2, dim=1, maxnorm=1),
    "p_true_maxnorm_tensor": lambda L: L.renorm(L.ones(2, 2), True, 0, L.tensor(1.0)),
    "in_place": lambda L: L.ones(2, 3).renorm_(1, 1, 1.5),
    "float16_random": lambda L: L.tensor(RANDOM).half().renorm(1.5, 1, 0.3),
    "bfloat16_random": lambda L: L.tensor(RANDOM).bfloat16().renorm(2, 0, 1.1),
}


@pytest.mark.parametrize("name", VALUE_CASES)
def test_values_as_pytorch(name: str) -> None:
    theirs, ours = _both(VALUE_CASES[name])
    assert not isinstance(theirs, Exception), theirs
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(_array(ours), _array(theirs))


ERROR_CASES = {
    "p_negative": lambda L: L.renorm(L.ones(2, 2), -1, 0, 1.0),
    "p_zero_before_maxnorm": lambda L: L.renorm(L.ones(2, 2), 0, 5, -1.0),
    "p_nan": lambda L: L.renorm(L.ones(2, 2), math.nan, 0, 1.0),
    "p_before_complex_maxnorm": lambda L: L.renorm(L.ones(2, 2), -1, 0, 1j),
    "maxnorm_complex": lambda L: L.renorm(L.ones(2, 2), 2, 0, 1j),
    "maxnorm_negative": lambda L: L.renorm(L.ones(2, 2), 2, 0, -1.5e-10),
    "maxnorm_before_ndim": lambda L: L.renorm(L.ones(2), 2, 5, -1.0),
    "maxnorm_nan": lambda L: L.renorm(L.ones(2, 2), 2, 0, math.nan),
    "one_dim": lambda L: L.renorm(L.ones(2), 2, 0, 1.0),
    "zero_dim": lambda L: L.renorm(L.tensor(1.0), 2, 0, 1.0),
    "dim_out_of_range": lambda L: L.renorm(L.ones(2, 2), 2, -3, 1.0),
    "dim_before_dtype": lambda L: L.renorm(L.ones(2, 2, dtype=L.long), 2, 5, 1.0),
    "integer": lambda L: L.renorm(L.ones(2, 2, dtype=L.long), 2, 0, 1.0),
    "bool": lambda L: L.renorm(L.ones(2, 2, dtype=L.bool), 2, 0, 1.0),
    "empty_dim_inf_norm": lambda L: L.renorm(L.zeros(2, 0), math.inf, 0, 1.0),
    "dim_float": lambda L: L.renorm(L.ones(2, 2), 2, 1.0, 1.0),
    "maxnorm_tensor": lambda L: L.renorm(L.ones(2, 2), 2, 0, L.tensor([1.0, 2.0])),
    "in_place_negative": lambda L: L.ones(2, 2).renorm_(2, 0, -1),
}


@pytest.mark.parametrize("name", ERROR_CASES)
def test_errors_as_pytorch(name: str) -> None:
    theirs, ours = _both(ERROR_CASES[name])
    assert isinstance(theirs, Exception), theirs
    assert type(ours) is type(theirs) and str(ours) == str(theirs)


def test_bad_input_changes_nothing() -> None:
    x = chainrule.tensor([[3.0, 4.0]])
    with pytest.raises(RuntimeError):
        x.renorm_(2, 0, -1.0)
    assert x.tolist() == [[3.0, 4.0]] and x._version == 0


def test_node_and_saved_values() -> None:
    for lib in LIBS:
        x = lib.tensor([[3.0, 4.0], [0.3, 0.4]], requires_grad=True)
        y = lib.renorm(x, 2, 1, 1.5)
        node = y.grad_fn
        assert node.name() == "RenormBackward0"
        assert (node._saved_p, node._saved_dim, node._saved_maxnorm) == (2, 1, 1.5)
        assert node._saved_self.tolist() == x.tolist()
        z = x * 1
        z.renorm_(2, 0, 1.0)
        assert z.grad_fn.name() == "RenormBackward0"


@pytest.mark.parametrize("maxnorm", [5.0, 4.99999, 5.00001])
def test_gradient_at_the_bound(maxnorm: float) -> None:
    grads = []
    for lib in LIBS:
        x = lib.tensor([[3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        lib.renorm(x, 2, 0, maxnorm).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, 0.5, math.inf])
def test_gradients_with_nan_and_zero_slices(p: float) -> None:
    data = [[math.nan, 1.0, 2.0], [0.0, 0.0, 0.0], [3.0, -4.0, 12.0], [0.0, 5.0, 0.0]]
    grads = []
    for lib in LIBS:
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        y = lib.renorm(x, p, 0, 1.0)
        weights = lib.arange(12.0).reshape(4, 3).double()
        (y * weights).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-15, equal_nan=True)


def test_double_backward_as_pytorch() -> None:
    results = []
    for lib in LIBS:
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        y = lib.renorm(x, 3, 1, 1.0)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-14)
