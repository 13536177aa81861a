"""Cross entropy's backward in one step of the joint graph.

``cross_entropy`` is ``nll_loss(log_softmax(x))``; the derivative formulas give its backward
as four nodes: ``nll_loss_backward`` (zeros with ``-grad / total_weight`` at each target),
the row sums of that (``_sum_dim``), their product with ``exp(log_softmax)`` and the
difference. :func:`fuse_cross_entropy_backward` replaces the four by one call of
:func:`log_softmax_nll_backward`, which computes the same numbers, bit for bit, without the
zeros matrix and its reduction: each row holds one nonzero value ``v``, so its sum is ``v``
(``+0.0`` when ``v`` is a zero: adding the row's ``+0.0`` entries clears a ``-0.0``), and the
result is ``0 - exp * v`` off the targets and ``v - exp * v`` on them (the same roundings as
the four nodes). Targets equal to ``ignore_index`` (data dependent) run the four kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrule._tensor import Tensor, wrap
from chainrule.ir import Graph, Value
from chainrule.ir.backward import not_differentiable
from chainrule.ir.passes import replace_uses
from chainrule.ops.nn_ops.losses import _nll_backward_forward as nll_backward_kernel
from chainrule.ops.reduction import _sum_dim

__all__ = ["log_softmax_nll_backward", "fuse_cross_entropy_backward"]

_PLAIN = (np.dtype(np.float32), np.dtype(np.float64))


@not_differentiable
def log_softmax_nll_backward(
    grad: Tensor,
    probs: Tensor,
    log_probs: Tensor,
    target: Tensor,
    total_weight: Tensor,
    ignore_index: int,
) -> Tensor:
    """The gradient of ``nll_loss(log_probs, target)`` ('mean', no weight) with respect to
    the logits whose ``log_softmax`` is ``log_probs`` (``probs``: its ``exp``)."""
    return wrap(
        _log_softmax_nll_backward_arrays(
            grad._data, probs._data, log_probs._data, target._data, total_weight._data,
            ignore_index,
        )
    )  # fmt: skip


def _log_softmax_nll_backward_arrays(
    grad: np.ndarray,
    probs: np.ndarray,
    log_probs: np.ndarray,
    target: np.ndarray,
    total_weight: np.ndarray,
    ignore_index: int,
) -> np.ndarray:
    """:func:`log_softmax_nll_backward` on arrays (what the generated code calls)."""
    if not (target != ignore_index).all():
        # (some targets ignored: the four kernels, as the graph had them)
        picked = nll_backward_kernel(
            grad, log_probs, target, None, "mean", ignore_index, total_weight
        )
        return picked - probs * _sum_dim.op.forward(picked, 1, True)
    dtype = log_probs.dtype
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.asarray(-(grad / total_weight), dtype)[()]  # (the kernel's value)
    row_sum = value + dtype.type(0)  # (a row of +0.0 and one value sums to it, -0.0 to +0.0)
    product = probs * row_sum
    rows = np.arange(product.shape[0])
    on_target = value - product[rows, target]
    out = np.subtract(dtype.type(0), product, out=product)
    out[rows, target] = on_target
    return out


log_softmax_nll_backward.on_arrays = _log_softmax_nll_backward_arrays  # type: ignore[attr-defined]


def _op_name(value: Any) -> str:
    if not isinstance(value, Value) or value.node.kind != "call" or value.node.op is None:
        return ""
    return value.node.op.name


def _users(graph: Graph) -> dict[int, int]:
    count: dict[int, int] = {}
    for node in graph.nodes:
        for value in node.inputs:
            count[id(value)] = count.get(id(value), 0) + 1
    return count


def fuse_cross_entropy_backward(graph: Graph, roots: list[Value]) -> list[tuple[Value, Value]]:
    """Replace each ``nll_loss_backward -> _sum_dim -> mul by exp(log_softmax) -> sub``
    chain of the joint graph (cross entropy's backward: 2-d float32/float64 logits of 2 or
    more classes, 'mean', no weight) by one :func:`log_softmax_nll_backward` node; the pairs
    (a chain's result, its replacement). The replaced nodes are left for dead-code
    elimination."""
    users = _users(graph)
    returned = {id(r) for r in roots}
    replaced: list[tuple[Value, Value]] = []
    for node in list(graph.nodes):
        if _op_name(node.outputs[0] if node.outputs else None) != "sub":
            continue
        bound = node.op.bind(node.args, node.kwargs)
        if len(bound) != 2 and bound[2] != 1:
            continue
        picked, product = bound[0], bound[1]
        if _op_name(picked) != "nll_loss_forward_backward" or _op_name(product) != "mul":
            continue
        left, right = product.node.op.bind(product.node.args, product.node.kwargs)[:2]
        probs, row_sum = (left, right) if _op_name(right) == "_sum_dim" else (right, left)
        if _op_name(row_sum) != "_sum_dim" or _op_name(probs) != "exp":
            continue
        sum_args = row_sum.node.op.bind(row_sum.node.args, row_sum.node.kwargs)
        if sum_args[0] is not picked or sum_args[1] not in (1, -1) or sum_args[2] is not True:
            continue
        if len(sum_args) > 3 and sum_args[3] is not None:
            continue
        grad, log_probs, target, weight, reduction, ignore_index, total = (
            picked.node.op.bind(picked.node.args, picked.node.kwargs)
        )  # fmt: skip
        exp_of = probs.node.op.bind(probs.node.args, probs.node.kwargs)[0]
        if exp_of is not log_probs or weight is not None or reduction != "mean":
            continue
        shape = log_probs.shape
        if shape is None or len(shape) != 2 or shape[1] is None or shape[1] < 2:
            continue
        values = (grad, log_probs, probs, picked, row_sum, product, total)
        if not all(isinstance(v, Value) and v.dtype.np in _PLAIN for v in values):
            continue
        if len({v.dtype for v in values}) != 1 or type(ignore_index) is not int:
            continue
        if (
            users.get(id(picked)) != 2
            or users.get(id(row_sum)) != 1
            or users.get(id(product)) != 1
            or {id(picked), id(row_sum), id(product)} & returned
        ):
            continue
        fused = graph.call(
            log_softmax_nll_backward,
            (grad, probs, log_probs, target, total, ignore_index),
            name=graph.unique_name(f"{node.name}_fused"),
        )
        graph.nodes.pop()  # (appended last: it takes the difference's place)
        graph.nodes.insert(graph.nodes.index(node), fused)
        replace_uses(graph, node.outputs[0], fused.outputs[0], roots)
        replaced.append((node.outputs[0], fused.outputs[0]))
    return replaced
