"""Writing into an expanded tensor (elements that share memory), as PyTorch does: ops whose
result would depend on the order of the writes are refused with PyTorch's message; ``fill_``,
``zero_`` and a write to a region seen once (``e[0] = ...``, ``e[0].add_(...)``) go through to
the memory; ``masked_fill_``, ``index_fill_`` and tensor-index assignment go through with
PyTorch's deprecation warning. chainrule's expanded tensors are read-only NumPy views, so these
writes once raised NumPy's ValueError or PyTorch's refusal where PyTorch writes.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule

WRITES = {
    "fill_": lambda lib, e: e.fill_(2.0),
    "zero_": lambda lib, e: e.zero_(),
    "copy_full": lambda lib, e: e.copy_(lib.ones(2, 4)),
    "copy_broadcast": lambda lib, e: e.copy_(lib.ones(4)),
    "add_": lambda lib, e: e.add_(1.0),
    "mul_": lambda lib, e: e.mul_(2.0),
    "exp_": lambda lib, e: e.exp_(),
    "clamp_": lambda lib, e: e.clamp_(0, 1),
    "uniform_": lambda lib, e: e.uniform_(),
    "normal_": lambda lib, e: e.normal_(),
    "setitem_all": lambda lib, e: e.__setitem__(Ellipsis, 3.0),
    "setitem_row": lambda lib, e: e.__setitem__(0, 3.0),
    "setitem_column": lambda lib, e: e.__setitem__((slice(None), 1), 3.0),
    "setitem_row_tensor": lambda lib, e: e.__setitem__(1, lib.arange(4.0)),
    "row_add_": lambda lib, e: e[0].add_(1.0),
    "column_add_": lambda lib, e: e[:, 0].add_(1.0),
    "masked_fill_": lambda lib, e: e.masked_fill_(e > -1, 5.0),
    "index_fill_": lambda lib, e: e.index_fill_(1, lib.tensor([0]), 7.0),
    "setitem_index_tensor": lambda lib, e: e.__setitem__(lib.tensor([0]), 3.0),
    "index_put_": lambda lib, e: e.index_put_((lib.tensor([1]),), lib.tensor(4.0)),
}


def _outcome(lib, name):
    storage = lib.arange(4.0)
    expanded = storage.expand(2, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            WRITES[name](lib, expanded)
            error = None
        except Exception as e:  # noqa: BLE001 (the outcome is what is compared)
            error = (type(e).__name__, str(e))
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return error, messages, storage.numpy().copy()


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_into_an_expanded_tensor_as_pytorch(name: str) -> None:
    error_t, warnings_t, storage_t = _outcome(torch, name)
    error_c, warnings_c, storage_c = _outcome(chainrule, name)
    assert error_c == error_t
    assert warnings_c == warnings_t
    if name not in ("uniform_", "normal_"):
        np.testing.assert_array_equal(storage_c, storage_t)
    if error_t is not None:  # a refused write changes nothing
        np.testing.assert_array_equal(storage_c, np.arange(4.0))


def test_write_to_a_row_of_an_expanded_view_in_a_graph() -> None:
    results = []
    for lib in (torch, chainrule):
        x = lib.tensor([0.2, -0.6, 0.4, 0.9], dtype=lib.float64, requires_grad=True)
        base = x * 1.0
        expanded = base.expand(2, 4)
        expanded[0] = 0.5  # writes the whole base: every row sees it
        loss = (expanded * lib.arange(8.0, dtype=lib.float64).reshape(2, 4)).sum() + base.sum()
        loss.backward()
        results.append((base.detach().numpy(), type(base.grad_fn).__name__,
                        type(expanded.grad_fn).__name__, x.grad.numpy()))
    for got, want in zip(results[1], results[0], strict=True):
        if isinstance(want, str):
            assert got.replace("chainrule::autograd::", "") == want.replace(
                "torch::autograd::", "")
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("write", ["zero_", "fill_"])
def test_backward_through_a_write_into_an_expanded_view_is_refused(write: str) -> None:
    outcomes = []
    for lib in (torch, chainrule):
        x = lib.tensor([0.2, -0.6, 0.4, 0.9], dtype=lib.float64, requires_grad=True)
        expanded = (x * 1.0).expand(2, 4)
        WRITES[write](lib, expanded)  # allowed in forward ...
        with pytest.raises(RuntimeError) as info:  # ... its CopySlices refuses in backward
            (expanded * 3).sum().backward()
        outcomes.append(str(info.value))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0].startswith("unsupported operation: more than one element")
