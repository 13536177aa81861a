"""Tensors and NumPy arrays together, as PyTorch 2.13 behaves with NumPy 2.

PyTorch's rules, which every case below checks against PyTorch itself: ``np.asarray(t)`` is
``t.numpy()`` (same memory; requires_grad, conjugate-bit and bfloat16 tensors refused); a NumPy
ufunc on tensors returns a tensor (a bool result as uint8); ``tensor <op> ndarray`` computes in
NumPy and returns a tensor, ``ndarray <op> tensor`` raises TypeError (except ``==``, and ``/``,
which PyTorch computes as ``reciprocal() * ndarray``); ``tensor += ndarray`` rebinds the name to
a new tensor; arrays index tensors and tensors index arrays.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule

F32 = np.array([1.0, 2.0, 3.0])
I64 = np.array([1, 2, 3])


def _t(m: Any, values: Any = (1.0, 2.0, 3.0), **kw: Any) -> Any:
    return m.tensor(list(values) if isinstance(values, tuple) else values, **kw)


def _iadd(m: Any) -> Any:
    x = _t(m)
    original = x
    x += F32
    return x, original


def _aiadd(m: Any) -> Any:
    a = np.ones(3)
    a += _t(m)
    return a


def _setitem(m: Any, value: Any) -> Any:
    x = m.zeros(3)
    x[0:2] = value
    return x


# (id, case(m)) - m is torch or chainrule
CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("t+a", lambda m: _t(m) + F32),
    ("a+t", lambda m: F32 + _t(m)),
    ("a*t", lambda m: F32 * _t(m)),
    ("t*ai", lambda m: _t(m) * I64),
    ("ai*t", lambda m: I64 * _t(m)),
    ("t-a", lambda m: _t(m) - F32),
    ("a-t", lambda m: F32 - _t(m)),
    ("t/a", lambda m: _t(m) / F32),
    ("a/t", lambda m: F32 / _t(m)),
    ("ai/ti", lambda m: I64 / _t(m, (2, 2, 2))),
    ("a/t0d", lambda m: F32 / _t(m, 2.0)),
    ("a**t", lambda m: F32 ** _t(m)),
    ("t**a", lambda m: _t(m) ** F32),
    ("a//t", lambda m: F32 // _t(m)),
    ("t%a", lambda m: _t(m) % F32),
    ("t@a", lambda m: _t(m) @ F32),
    ("a@t", lambda m: F32 @ _t(m)),
    ("t+a2d", lambda m: _t(m) + np.ones((2, 3))),
    ("a2d+t", lambda m: np.ones((2, 3)) + _t(m)),
    ("t+a0d", lambda m: _t(m) + np.array(2.0)),
    ("t*a0d_int", lambda m: _t(m) * np.array(3)),
    ("a0d*t", lambda m: np.array(3) * _t(m)),
    ("t_i32+a_i64", lambda m: _t(m, (1, 2), dtype=m.int32) + np.array([1, 2])),
    ("t_u8+a_u16", lambda m: _t(m, (1, 2), dtype=m.uint8) + np.array([1, 2], dtype=np.uint16)),
    ("t_f16+a_f16", lambda m: m.ones(2, dtype=m.float16) + np.ones(2, dtype=np.float16)),
    ("t_f16+a_f32", lambda m: m.ones(2, dtype=m.float16) + np.ones(2, dtype=np.float32)),
    ("t_bool&a", lambda m: _t(m, (True, False)) & np.array([True, True])),
    ("a&t_bool", lambda m: np.array([True, False]) & _t(m, (True, True))),
    ("t+a_str", lambda m: _t(m, (1, 2)) + np.array(["a", "b"])),
    ("t_nan+a", lambda m: _t(m, (float("nan"), float("inf"), -0.0)) + F32),
    ("t.T+a", lambda m: m.ones(2, 3).T + np.ones((3, 2))),
    # numbers from NumPy are numbers
    ("np.float64*t", lambda m: np.float64(2) * _t(m)),
    ("t*np.float64", lambda m: _t(m) * np.float64(2)),
    ("np.float32+t", lambda m: np.float32(2) + _t(m)),
    ("np.int64*t_i8", lambda m: np.int64(3) * m.ones(2, dtype=m.int8)),
    ("t_i32+np.int64", lambda m: _t(m, 1, dtype=m.int32) + np.int64(1)),
    ("t+np.complex128", lambda m: _t(m, 1.0) + np.complex128(1j)),
    # comparisons
    ("t==a", lambda m: _t(m) == np.array([1.0000000001, 2, 3])),
    ("a==t", lambda m: F32 == _t(m)),
    ("t==a_bcast", lambda m: _t(m) == np.array([[1.0], [2.0]])),
    ("t==a_int", lambda m: _t(m) == np.array([1, 2, 4])),
    ("t==a_bool", lambda m: _t(m) == np.array([True, False, True])),
    ("t==a0d", lambda m: _t(m) == np.array(2.0)),
    ("t==a_shape", lambda m: _t(m) == np.array([1.0, 2.0])),
    ("t==a_str", lambda m: _t(m) == np.array(["a", "b", "c"])),
    ("t==a_negstride", lambda m: _t(m) == F32[::-1]),
    ("t==a_bigendian", lambda m: _t(m) == F32.astype(">f8")),
    ("t_grad==a", lambda m: (m.ones(3, requires_grad=True) * 2) == np.ones(3)),
    ("t!=a", lambda m: _t(m) != F32),
    ("a!=t", lambda m: F32 != _t(m)),
    ("t<a", lambda m: _t(m) < F32),
    ("a>t", lambda m: F32 > _t(m)),
    ("np.float64==t", lambda m: np.float64(1.0) == _t(m)),
    # ufuncs and conversions
    ("np.exp", lambda m: np.exp(_t(m))),
    ("np.exp_int", lambda m: np.exp(_t(m, (1, 2)))),
    ("np.sqrt_0d", lambda m: np.sqrt(_t(m, 4.0))),
    ("np.sqrt_i8", lambda m: np.sqrt(m.ones(2, dtype=m.int8))),
    ("np.exp_f16", lambda m: np.exp(m.ones(2, dtype=m.float16))),
    ("np.exp_complex", lambda m: np.exp(_t(m, (1j,)))),
    ("np.isnan", lambda m: np.isnan(_t(m, (1.0, float("nan"))))),
    ("np.logical_and", lambda m: np.logical_and(_t(m, (True, False)), _t(m, (True, True)))),
    ("np.add_tt", lambda m: np.add(_t(m), _t(m))),
    ("np.maximum_at", lambda m: np.maximum(F32, _t(m))),
    ("np.add.reduce", lambda m: np.add.reduce(_t(m))),
    ("np.clip", lambda m: np.clip(_t(m), 0, 1)),
    ("np.modf", lambda m: np.modf(_t(m, (1.5, -2.25)))),
    ("np.divmod", lambda m: np.divmod(_t(m), 2)),
    ("np.matmul", lambda m: np.matmul(m.ones(2, 2), m.ones(2, 2))),
    ("np.add_out_tensor", lambda m: np.add(_t(m), 1, out=_t(m))),
    ("np.add_out_array", lambda m: np.add(F32, _t(m), out=F32.copy())),
    ("np.sum", lambda m: np.sum(_t(m))),
    ("np.concatenate", lambda m: np.concatenate([_t(m), _t(m)])),
    ("np.stack", lambda m: np.stack([_t(m), _t(m)])),
    ("np.dot", lambda m: np.dot(_t(m), F32)),
    ("np.where", lambda m: np.where(_t(m) > 1, _t(m), 0)),
    ("np.asarray", lambda m: np.asarray(_t(m))),
    ("np.asarray_f16", lambda m: np.asarray(m.ones(2, dtype=m.float16))),
    ("np.asarray_dtype", lambda m: np.asarray(_t(m, (1.5,)), dtype=np.int64)),
    ("np.asarray_nocopy_dtype", lambda m: np.asarray(_t(m, (1.5,)), dtype=np.int64, copy=False)),
    ("np.array", lambda m: np.array(_t(m))),
    ("np.float32(t0d)", lambda m: np.float32(_t(m, 2.5))),
    ("np.asarray_bf16", lambda m: np.asarray(m.ones(2, dtype=m.bfloat16))),
    ("np.exp_bf16", lambda m: np.exp(m.ones(2, dtype=m.bfloat16))),
    ("np.asarray_conj", lambda m: np.asarray(_t(m, (1 + 1j,)).conj())),
    ("from_numpy_negstride", lambda m: m.from_numpy(F32[::-1])),
    ("from_numpy_negstride_2d", lambda m: m.from_numpy(np.ones((2, 2))[:, ::-1])),
    ("as_tensor_negstride", lambda m: m.as_tensor(F32[::-1])),
    ("as_tensor_negstride_dtype", lambda m: m.as_tensor(F32[::-1], dtype=m.float32)),
    ("tensor_negstride", lambda m: m.tensor(F32[::-1])),
    ("tensor_negstride_dtype", lambda m: m.tensor(F32[::-1], dtype=m.float32)),
    ("tensor_bigendian", lambda m: m.tensor(F32.astype(">f8"))),
    ("tensor_list_of_negstride", lambda m: m.tensor([F32[::-1], F32[::-1]])),
    ("new_tensor_negstride", lambda m: m.ones(1).new_tensor(F32[::-1])),
    ("tensor_readonly", lambda m: m.tensor(np.broadcast_to(F32, (2, 3)))),
    ("from_numpy_bigendian_negstride", lambda m: m.from_numpy(F32.astype(">f8")[::-1])),
    ("from_numpy_object_negstride", lambda m: m.from_numpy(F32.astype(object)[::-1])),
    (
        "from_numpy_odd_stride",
        lambda m: m.from_numpy(
            np.lib.stride_tricks.as_strided(np.zeros(8, np.float32), shape=(2,), strides=(6,))
        ),
    ),
    # requires_grad: PyTorch's numpy() error
    ("treq+a", lambda m: m.ones(3, requires_grad=True) + F32),
    ("a+treq", lambda m: F32 + m.ones(3, requires_grad=True)),
    ("a/treq", lambda m: F32 / m.ones(3, requires_grad=True)),
    ("np.exp(treq)", lambda m: np.exp(m.ones(3, requires_grad=True))),
    ("np.asarray(treq)", lambda m: np.asarray(m.ones(3, requires_grad=True))),
    ("np.exp(param_nograd)", lambda m: np.exp(m.nn.Parameter(m.ones(2), requires_grad=False))),
    # in place
    ("t+=a", _iadd),
    ("a+=t", _aiadd),
    ("t[0:2]=a", lambda m: _setitem(m, np.array([5.0, 6.0]))),
    ("t[0:2]=a0d", lambda m: _setitem(m, np.array(2.0))),
    ("t[0:2]=np.float64", lambda m: _setitem(m, np.float64(2.0))),
    # indexing
    ("t[a_int]", lambda m: _t(m)[np.array([0, 2])]),
    ("t[a_bool]", lambda m: _t(m)[np.array([True, False, True])]),
    ("t[a2d,a]", lambda m: m.arange(6).reshape(2, 3)[np.array([[0], [1]]), np.array([0, 2])]),
    ("t[np.int64]", lambda m: _t(m)[np.int64(1)]),
    ("t[a0d]", lambda m: _t(m)[np.array(1)]),
    ("t[np.newaxis]", lambda m: _t(m)[np.newaxis]),
    ("t[np.int32:]", lambda m: _t(m)[np.int32(1) :]),
    ("a[t_int]", lambda m: F32[_t(m, (0, 1))]),
    ("a[t_bool]", lambda m: F32[_t(m, (True, False, True))]),
    ("a[t0d]", lambda m: F32[_t(m, 1)]),
    ("list[t0d]", lambda m: [1, 2, 3][_t(m, 1)]),
    # constructors from arrays
    ("tensor(list of arrays)", lambda m: m.tensor([np.ones(2), np.ones(2)])),
    ("tensor(np scalars)", lambda m: m.tensor([np.float64(1.0), np.float32(2)])),
]


def _outcome(m: Any, case: Callable[[Any], Any]) -> Any:
    """What the case gives: a normalised description of its result or its exception."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            result = case(m)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        message = str(e).replace("chainrule.", "torch.")
        return ("raises", type(e).__name__, message)
    return _describe(m, result)


def _describe(m: Any, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_describe(m, v) for v in value)
    if isinstance(value, m.Tensor):
        data = value.detach().resolve_conj().numpy()
        return (
            "Tensor",
            str(value.dtype).split(".")[-1],
            tuple(value.shape),
            repr(data.tolist()),
            value.requires_grad,
        )  # (repr: NaN equals NaN)
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.shape, repr(value.tolist()))
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize("name, case", CASES, ids=[c[0] for c in CASES])
def test_numpy_interop_as_pytorch(name: str, case: Callable[[Any], Any]) -> None:
    ours = _outcome(chainrule, case)
    theirs = _outcome(torch, case)
    assert ours == theirs, name


def test_messages_of_refusals_are_pytorchs() -> None:
    """The three refusals users meet first, word for word."""
    cases = {
        "requires grad": lambda m: np.asarray(m.ones(2, requires_grad=True)),
        "conjugate bit": lambda m: np.asarray(m.tensor([1j]).conj()),
        "bfloat16": lambda m: np.asarray(m.ones(1, dtype=m.bfloat16)),
    }
    for name, case in cases.items():
        assert _outcome(chainrule, case) == _outcome(torch, case), name
    # force=True (detached, conjugate resolved) gives the values
    x = chainrule.tensor([1 + 2j], requires_grad=True).conj()
    np.testing.assert_array_equal(x.numpy(force=True), np.array([1 - 2j], np.complex64))


def test_asarray_shares_memory_and_ufunc_results_are_tensors_on_their_array() -> None:
    t = chainrule.ones(3)
    a = np.asarray(t)
    a[0] = 5.0
    assert t.tolist() == [5.0, 1.0, 1.0]
    assert not np.shares_memory(np.array(t), a)  # np.array copies, as with PyTorch
    r = np.exp(chainrule.ones(2, 3).T)
    theirs = np.exp(torch.ones(2, 3).T)
    assert isinstance(r, chainrule.Tensor) and r.is_leaf and not r.requires_grad
    assert r.stride() == theirs.stride() and r.shape == theirs.shape


def test_augmented_assignment_with_an_array_rebinds() -> None:
    for m in (torch, chainrule):
        x = m.ones(3)
        original = x
        x += np.ones(3)
        assert x is not original and original.tolist() == [1.0, 1.0, 1.0]
        assert x.dtype == m.float64 and x.tolist() == [2.0, 2.0, 2.0]


def test_no_deprecation_warning_from_numpy() -> None:
    """NumPy 2 calls ``__array_wrap__(array, context, return_scalar)``; ours takes them (PyTorch's
    old signature makes NumPy warn, which chainrule does not copy)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.exp(chainrule.ones(2))
        _ = chainrule.ones(2) + np.ones(2)
