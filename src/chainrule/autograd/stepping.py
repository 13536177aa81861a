"""Step through a backward pass one node at a time, on the real engine.

:func:`backward_steps` runs the same :class:`~chainrule.autograd.engine.GraphTask` that
``backward()`` runs, but yields after every node, so a learner can watch the gradients flow, stop
at a node, or stop early. The order and the results are exactly those of ``backward()``.

Example:
    >>> import chainrule as torch
    >>> from chainrule.autograd.stepping import backward_steps
    >>> w = torch.tensor([1.], requires_grad=True)
    >>> x = torch.tensor([2.], requires_grad=True)
    >>> y = (w + x) * (w + 1)
    >>> for step in backward_steps(y):
    ...     print(step.index, step.node.name(), step.grad_outputs[0])
    0 MulBackward0 tensor([1.])
    1 AddBackward0 tensor([3.])
    2 AddBackward0 tensor([2.])
    3 AccumulateGrad tensor([5.])
    4 AccumulateGrad tensor([2.])
    >>> w.grad
    tensor([5.])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._tensor import Tensor, wrap
from .engine import GraphTask, _as_tensor_tuple, _make_root_grads, _root_edges
from .grad_mode import state as _state
from .node import Node, short_name

__all__ = ["Step", "backward_steps"]


@dataclass(frozen=True)
class Step:
    """One node's execution.

    ``grad_outputs``: the gradients flowing into the node (one per output of its forward op);
    ``grad_inputs``: what it sent along each ``next_functions`` edge (None where nothing went,
    e.g. to an input that does not require grad). For an ``AccumulateGrad`` node,
    ``grad_outputs[0]`` is the gradient added into its leaf's ``.grad``.
    """

    index: int
    node: Node
    grad_outputs: tuple[Tensor | None, ...]
    grad_inputs: tuple[Tensor | None, ...]

    @property
    def name(self) -> str:
        """The node's short name, e.g. ``'MulBackward0'`` or ``'AccumulateGrad'``."""
        return short_name(self.node)


def _as_tensor(g: Any) -> Tensor | None:
    if g is None or isinstance(g, Tensor):
        return g
    return wrap(np.array(g))


def backward_steps(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> Iterator[Step]:
    """Run ``backward`` like ``chainrule.autograd.backward``, yielding after each node.

    Gradients are accumulated into leaves' ``.grad`` as they would be by ``backward()``.
    Stopping the iteration early leaves the remaining nodes unexecuted (and, without
    ``retain_graph``, the executed ones released).
    """
    outputs = _as_tensor_tuple(tensors, "tensors")
    if grad_tensors is None:
        given: tuple = (None,) * len(outputs)
    elif isinstance(grad_tensors, Tensor):
        given = (grad_tensors,)
    else:
        given = tuple(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    root_grads = _make_root_grads(outputs, given, create_graph)
    task = GraphTask(_root_edges(outputs), root_grads, retain_graph, create_graph)
    while task.pending():
        previous = _state.grad_enabled
        _state.grad_enabled = create_graph
        try:
            record = task.step(True)
        finally:
            _state.grad_enabled = previous
        if record is None:
            continue
        yield Step(
            index=record.index,
            node=record.node,
            grad_outputs=tuple(_as_tensor(g) for g in record.grad_outputs),
            grad_inputs=tuple(_as_tensor(g) for g in record.grad_inputs),
        )
