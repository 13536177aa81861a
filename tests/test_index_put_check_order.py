"""index_put_, index_put and ``x[tensor index] = value`` check as PyTorch's, in its order.

PyTorch checks the index tensors (types, mask shapes, broadcasting, too many), then the value's
shape, then its dtype, then the indices' bounds; chainrule checked the bounds first, so an input
wrong in two ways raised another error than PyTorch's. ``x[idx] = value`` with tensor indices is
PyTorch's index_put_: a value tensor of another dtype is refused (chainrule cast it), except
for one bool mask and a one-element value that does not require grad, which is masked_fill_
(cast; a uint8 mask refused, a complex value with an imaginary part into a real tensor too).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import torch


def _l(lib: Any, *values: int) -> Any:
    return lib.tensor(list(values))


def _x(lib: Any) -> Any:
    return lib.zeros(3, 4)


def _double(lib: Any, *shape: int) -> Any:
    return lib.ones(*shape, dtype=lib.float64)


def _put(lib: Any, indices: tuple, value: Any, **kwargs: Any) -> Any:
    return _x(lib).index_put_(indices, value, **kwargs)


def _set(lib: Any, index: Any, value: Any, requires_grad: bool = False) -> None:
    x = lib.zeros(3, 4, requires_grad=requires_grad).clone() if requires_grad else _x(lib)
    x[index] = value


C = Callable[[Any], Any]
INDEX_PUT: dict[str, C] = {
    "out of bounds": lambda t: _put(t, (_l(t, 5),), t.ones(4)),
    "out of bounds, dtype": lambda t: _put(t, (_l(t, 5),), _double(t, 4)),
    "out of bounds, shape": lambda t: _put(t, (_l(t, 5),), t.ones(3)),
    "negative out of bounds, dtype": lambda t: _put(t, (_l(t, -5),), _double(t, 4)),
    "float index, out of bounds": lambda t: _put(t, (t.tensor([5.0]),), t.ones(4)),
    "float index, shape": lambda t: _put(t, (t.tensor([1.0]),), t.ones(3)),
    "dtype, shape": lambda t: _put(t, (_l(t, 1),), _double(t, 3)),
    "dtype": lambda t: _put(t, (_l(t, 1),), _double(t, 4)),
    "too many indices, dtype": lambda t: _put(t, (_l(t, 1),) * 3, _double(t, 1)),
    "too many indices, out of bounds": lambda t: _put(t, (_l(t, 1), _l(t, 1), _l(t, 9)), t.ones(1)),
    "mask shape, dtype": lambda t: _put(t, (t.tensor([True, False]),), _double(t, 4)),
    "indices not broadcastable, out of bounds": lambda t: _put(
        t, (_l(t, 0, 9), _l(t, 0, 1, 2)), t.ones(1)
    ),
    "second index out of bounds, dtype": lambda t: _put(t, (_l(t, 0), _l(t, 9)), _double(t, 1)),
    "second index out of bounds, shape": lambda t: _put(t, (_l(t, 0), _l(t, 9)), t.ones(2)),
    "accumulate, out of bounds, dtype": lambda t: _put(
        t, (_l(t, 5),), _double(t, 4), accumulate=True
    ),
    "accumulate, dtype, shape": lambda t: _put(t, (_l(t, 1),), _double(t, 3), accumulate=True),
    "long values, out of bounds": lambda t: _put(t, (_l(t, 5),), t.ones(4, dtype=t.long)),
    "int32 index, out of bounds, dtype": lambda t: _put(
        t, (t.tensor([5], dtype=t.int32),), _double(t, 4)
    ),
    "0-d value, out of bounds, dtype": lambda t: _put(t, (_l(t, 5),), t.tensor(1.0).double()),
    "index_put, out of bounds, dtype": lambda t: t.index_put(_x(t), (_l(t, 5),), _double(t, 4)),
    "index_put, out of bounds, shape": lambda t: t.index_put(_x(t), (_l(t, 5),), t.ones(3)),
    "indices a tensor (method)": lambda t: _x(t).index_put_(_l(t, 1), t.ones(4)),
    "indices a tensor (function)": lambda t: t.index_put(_x(t), _l(t, 1), t.ones(4)),
    "indices a tensor (method, not in place)": lambda t: _x(t).index_put(_l(t, 1), t.ones(4)),
}

SETITEM: dict[str, C] = {
    "dtype": lambda t: _set(t, _l(t, 1), _double(t, 4)),
    "0-d dtype": lambda t: _set(t, _l(t, 1), t.tensor(2.0).double()),
    "long value": lambda t: _set(t, _l(t, 1), t.ones(4, dtype=t.long)),
    "out of bounds, dtype": lambda t: _set(t, _l(t, 5), _double(t, 4)),
    "out of bounds, shape": lambda t: _set(t, _l(t, 5), t.ones(3)),
    "shape, dtype": lambda t: _set(t, _l(t, 1), _double(t, 3)),
    "float index, dtype": lambda t: _set(t, t.tensor([1.0]), _double(t, 4)),
    "slice then index out of bounds, dtype": lambda t: _set(
        t, (slice(None), _l(t, 9)), _double(t, 1)
    ),
    "slice then index out of bounds, shape": lambda t: _set(t, (slice(None), _l(t, 9)), t.ones(2)),
    "None then index, dtype": lambda t: _set(t, (None, _l(t, 1)), _double(t, 4)),
    "number, out of bounds": lambda t: _set(t, _l(t, 5), 1.0),
    "slice, dtype": lambda t: _set(t, slice(0, 1), _double(t, 4)),
    "requires grad, dtype": lambda t: _set(t, _l(t, 1), _double(t, 4), requires_grad=True),
    "value requires grad, dtype": lambda t: _set(t, _l(t, 1), _double(t, 4).requires_grad_()),
    "mask, 0-d double": lambda t: _set(t, t.tensor([True, False, True]), t.tensor(2.0).double()),
    "full mask, one-element double": lambda t: _set(t, t.ones(3, 4, dtype=t.bool), _double(t, 1)),
    "mask, 1-d double": lambda t: _set(t, t.tensor([True, False, True]), _double(t, 4)),
    "slice then mask, 0-d double": lambda t: _set(
        t, (slice(None), t.tensor([True, False, True, False])), t.tensor(2.0).double()
    ),
    "uint8 mask, 0-d double": lambda t: _set(
        t, t.tensor([1, 0, 1], dtype=t.uint8), t.tensor(2.0).double()
    ),
    "uint8 mask, number": lambda t: _set(t, t.tensor([1, 0, 1], dtype=t.uint8), 2.0),
    "mask, 0-d complex": lambda t: _set(t, t.tensor([True, False, True]), t.tensor(2.0 + 1j)),
    "mask and index, 0-d double": lambda t: _set(
        t, (t.tensor([True, False, True]), _l(t, 0)), t.tensor(2.0).double()
    ),
    "mask shape, 0-d double": lambda t: _set(t, t.tensor([True, False]), t.tensor(2.0).double()),
    "mask, 0-d double requiring grad": lambda t: _set(
        t, t.tensor([True, False, True]), t.tensor(2.0).double().requires_grad_()
    ),
}


def _outcome(lib: Any, fn: C) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return type(error).__name__, str(error).replace("chainrule", "torch")
    return "OK", None if out is None else out.detach().numpy().tolist()


@pytest.mark.parametrize("name", list(INDEX_PUT))
def test_index_put_checks_in_pytorchs_order(name: str) -> None:
    assert _outcome(chainrule, INDEX_PUT[name]) == _outcome(torch, INDEX_PUT[name])


@pytest.mark.parametrize("name", list(SETITEM))
def test_setitem_with_tensor_indices_checks_as_pytorch(name: str) -> None:
    assert _outcome(chainrule, SETITEM[name]) == _outcome(torch, SETITEM[name])


def test_a_refused_write_changes_nothing() -> None:
    x = chainrule.zeros(3, 4)
    version = x._version
    with pytest.raises(RuntimeError, match="dtypes match"):
        x[chainrule.tensor([1])] = chainrule.ones(4, dtype=chainrule.float64)
    with pytest.raises(RuntimeError, match="dtypes match"):
        x.index_put_((chainrule.tensor([5]),), chainrule.ones(4, dtype=chainrule.float64))
    assert x._version == version and not x.numpy().any()


def test_mask_writes_of_one_element_cast_as_pytorch() -> None:
    values = []
    for lib in (chainrule, torch):
        x = lib.zeros(3, 4, dtype=lib.long)
        x[lib.tensor([True, False, True])] = lib.tensor(2.7)
        y = lib.zeros(3, 4)
        y[lib.ones(3, 4, dtype=lib.bool)] = lib.tensor([1.5], dtype=lib.float64)
        values.append((x.numpy().tolist(), y.numpy().tolist()))
    assert values[0] == values[1]
    grads = []
    for lib in (chainrule, torch):
        v = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        x = lib.zeros(3, 4, requires_grad=True).clone()
        x[lib.tensor([True, False, True])] = v
        (x * lib.arange(12.0).reshape(3, 4)).sum().backward()
        grads.append((type(x.grad_fn).__name__, v.grad.item(), str(v.grad.dtype).split(".")[-1]))
    assert grads[0] == grads[1]
    np.testing.assert_allclose(grads[0][1], 44.0)  # (rows 0 and 2 of arange(12))
