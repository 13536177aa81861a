"""``addcmul`` and ``addcdiv`` (functions, methods, in-place forms) against PyTorch: values as
its kernels round them (``fma(value * t1, t2, self)`` for addcmul in float32 and the half
types), integer and bool inputs, promotion, broadcasting, errors, nodes and saved values.
The OpInfo sweep covers gradients, double backward, layouts, special values and half types.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch
from .sweep_tools import torch_from_numpy, torch_to_numpy

LIBS = [chainrule, torch]
_RNG = np.random.default_rng(7)
LONG = [_RNG.uniform(-3, 3, 4099).astype(np.float32) for _ in range(3)]


def _make(lib: Any, arrays: list[np.ndarray], dtype: str) -> list[Any]:
    make = chainrule.from_numpy if lib is chainrule else torch_from_numpy
    return [make(a.copy()).to(getattr(lib, dtype)) for a in arrays]


def _numpy(t: Any) -> np.ndarray:
    if isinstance(t, chainrule.Tensor):
        return t.detach()._data.astype(np.float64)
    return torch_to_numpy(t.detach()).astype(np.float64)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("value", [1, 0.3, -2.5])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_values_round_as_pytorch(name: str, value: float, dtype: str) -> None:
    """Long tensors (PyTorch's vectorised loop) and a short one (its element loop)."""
    for arrays in (LONG, [a[:7] for a in LONG]):
        ours, theirs = (getattr(lib, name)(*_make(lib, arrays, dtype), value=value)
                        for lib in LIBS)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch", "chainrule")
        np.testing.assert_array_equal(_numpy(ours), _numpy(theirs))


def test_addcmul_float32_is_one_fused_rounding() -> None:
    """Rounding the product first (``x + v * a * b`` in NumPy) differs from PyTorch here."""
    arrays = [np.array([1.0], np.float32), np.array([1 + 2**-12], np.float32),
              np.array([1 - 2**-12], np.float32)]
    ours, theirs = (lib.addcmul(*_make(lib, arrays, "float32"), value=-1) for lib in LIBS)
    assert _numpy(ours)[0] == _numpy(theirs)[0] == np.float32(2.0**-24)


@pytest.mark.parametrize("value", [2, 2.5, -1])
def test_integers_cast_the_value_as_pytorch(value: float) -> None:
    arrays = [np.array([3, -4, 7]), np.array([2, 5, -1]), np.array([1, 2, 3])]
    ours, theirs = (lib.addcmul(*_make(lib, arrays, "int64"), value=value) for lib in LIBS)
    assert ours.dtype is chainrule.int64
    np.testing.assert_array_equal(_numpy(ours), _numpy(theirs))


def test_promotion_as_pytorch() -> None:
    for lib in LIBS:
        half_mask = lib.addcdiv(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool),
                                lib.ones(2, dtype=lib.float16))
        assert str(half_mask.dtype).endswith("float16")
        mixed = lib.addcmul(lib.ones(2, dtype=lib.int32), lib.ones(2),
                            lib.ones(2, dtype=lib.float64))
        assert str(mixed.dtype).endswith("float64")
        zero_dim = lib.addcdiv(lib.ones(2), lib.ones(2), lib.tensor(2.0, dtype=lib.float64))
        assert str(zero_dim.dtype).endswith("float32")


@pytest.mark.parametrize("call", [
    lambda lib: lib.addcdiv(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64),
                            lib.ones(2, dtype=lib.int64)),
    lambda lib: lib.addcdiv(lib.ones(2), lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.int8)),
    lambda lib: lib.ones(2).addcmul_(lib.ones(3, 2), lib.ones(2)),
    lambda lib: lib.ones(2, dtype=lib.int64).addcmul_(lib.ones(2), lib.ones(2)),
    lambda lib: lib.addcmul(lib.ones(2), 2, lib.ones(2)),
    lambda lib: lib.addcmul(lib.ones(2), lib.ones(3), lib.ones(2)),
    lambda lib: lib.addcmul(*[lib.ones(2, dtype=lib.bool)] * 3),
], ids=["integer_division", "bool_division", "inplace_broadcast", "inplace_cast", "number",
        "shapes", "bool"])
def test_errors_as_pytorch(call: Any) -> None:
    errors = []
    for lib in LIBS:
        with pytest.raises((RuntimeError, TypeError)) as info:
            call(lib)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


def test_failed_inplace_call_changes_nothing() -> None:
    x = chainrule.ones(2)
    with pytest.raises(RuntimeError):
        x.addcmul_(chainrule.ones(3, 2), chainrule.ones(2))
    assert x._version == 0 and x.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_node_and_gradients_as_pytorch(name: str) -> None:
    arrays = [np.array([0.5, -1.0, 2.0], np.float32), np.array([[1.5], [-0.25]], np.float32),
              np.array([0.75, -2.0, 1.25], np.float32)]
    results = []
    for lib in LIBS:
        inputs = [t.requires_grad_() for t in _make(lib, arrays, "float32")]
        out = getattr(lib, name)(*inputs, value=-0.5)
        node = out.grad_fn
        saved = [_numpy(node._saved_tensor1), _numpy(node._saved_tensor2)]
        (out * out).sum().backward()
        results.append((type(node).__name__, node._saved_value, saved,
                        [_numpy(t.grad) for t in inputs]))
    (our_name, our_value, our_saved, our_grads), (name_, value, saved, grads) = results
    assert our_name == name_ and our_value == value
    for a, b in zip(our_saved + our_grads, saved + grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
