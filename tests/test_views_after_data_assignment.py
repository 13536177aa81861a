"""Views whose base's data was replaced (``base.data = other``), then written in place.

PyTorch regenerates such a view's history as ``AsStridedBackward0`` and the base's as
``CopySlices``, placing the view by its own storage offset and strides read against the base's
(not by memory addresses, which no longer relate once the base's data is another array). A
view made of row 1 before the swap still sends its gradient to row 1 of the base; a view lying
partly outside the base's new data sends nothing from there; one starting before it makes
CopySlices' backward raise. Differential tests against PyTorch, first and second order.
"""

from __future__ import annotations

import pytest
import torch

import chainrule


def _new_data(lib, kind):
    if kind == "same layout":
        return lib.tensor([[10.0, 20.0], [30.0, 40.0]], dtype=lib.float64)
    if kind == "transposed":
        return lib.tensor([[10.0, 20.0], [30.0, 40.0]], dtype=lib.float64).t()
    if kind == "gap":  # strides (3, 1): the view's second row starts in a gap of the base
        return lib.arange(9.0, dtype=lib.float64).view(3, 3)[:2, :2]
    assert kind == "offset"  # the base starts 4 elements into its storage
    return lib.arange(9.0, dtype=lib.float64).view(3, 3)[1:, 1:]


def _program(lib, kind, row, create_graph, write_view):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
    base = a * 2
    view = base[row]
    base.data = _new_data(lib, kind)
    try:
        if write_view:
            view.mul_(3)  # CopySlices on the base, AsStridedBackward0 on the view
        else:
            base.mul_(3)  # the view's history is regenerated as AsStridedBackward0
        weights = lib.tensor([[1.0, 10.0], [100.0, 1000.0]], dtype=lib.float64)
        out = (base * weights).sum() + (view * view * 7).sum()
        (grad,) = lib.autograd.grad(out, a, create_graph=create_graph)
        result = [grad.tolist(), type(view.grad_fn).__name__]
        if create_graph:
            (second,) = lib.autograd.grad(grad.sum(), a, allow_unused=True)
            result.append(None if second is None else second.tolist())
        return result
    except RuntimeError as error:
        return ["RuntimeError", str(error)]


@pytest.mark.parametrize("kind", ["same layout", "transposed", "gap", "offset"])
@pytest.mark.parametrize("row", [0, 1])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("write_view", [False, True])
def test_view_after_base_data_replaced(kind, row, create_graph, write_view):
    expected = _program(torch, kind, row, create_graph, write_view)
    assert _program(chainrule, kind, row, create_graph, write_view) == expected


def test_row_view_keeps_its_row_after_data_swap():
    # The silent wrong gradient this guards against: the view's place was read from memory
    # addresses, so row 1's gradient went to row 0 of the base.
    results = []
    for lib in (torch, chainrule):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        base = a * 2
        row1 = base[1]
        base.data = lib.tensor([[10.0, 20.0], [30.0, 40.0]], dtype=lib.float64)
        base.mul_(3)
        (row1 * lib.tensor([1.0, 100.0], dtype=lib.float64)).sum().backward()
        results.append((a.grad.tolist(), row1.tolist()))
    assert results[0] == results[1] == ([[0.0, 0.0], [6.0, 600.0]], [6.0, 8.0])
