"""``tf.gradients``: the gradient graph, built symbolically on the IR (``ir.backward``)."""

from __future__ import annotations

from typing import Any

from .. import ir
from .framework import Tensor, convert_to_tensor, get_default_graph

__all__ = ["gradients"]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _x_value(x: Any) -> ir.Value:
    """What a gradient is taken with respect to: a variable's state itself (its reads pass
    the gradient through), or a tensor."""
    graph_element = getattr(x, "_graph_element", None)
    if graph_element is not None:
        return graph_element()._value
    return convert_to_tensor(x)._value


def gradients(
    ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", **_: Any
) -> list[Tensor | None]:
    """The gradients of ``sum(ys)`` with respect to each of ``xs`` as new tensors of the
    graph (named ``gradients/...``); None for an ``x`` that ``ys`` do not depend on."""
    graph = get_default_graph()
    y_tensors = [convert_to_tensor(y) for y in _as_list(ys)]
    x_values = [_x_value(x) for x in _as_list(xs)]
    given = None
    if grad_ys is not None:
        given = [None if g is None else convert_to_tensor(g)._value for g in _as_list(grad_ys)]
    graph._check_not_finalized()
    results = ir.gradients(graph.ir, [t._value for t in y_tensors], x_values, given, scope=name)
    return [None if r is None else graph._tensor(r) for r in results]
