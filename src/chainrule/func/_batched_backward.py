"""``autograd.grad(..., is_grads_batched=True)`` as PyTorch runs it: one backward pass under
``vmap`` over the batch of cotangents, the backward formulas (recorded as ops) batched by their
rules. The engine sits below this package; it calls :func:`vmapped_backward` through the hook
``engine.VMAPPED_BACKWARD``, installed here, and loops over the batch where this returns None
(a formula that reads a batched tensor's values outside the batching rules)."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor, gradient_edge
from ..autograd import engine
from ..autograd.grad_mode import enable_grad
from ..autograd.node import AccumulateGrad, Node
from ._batched import POISON_MESSAGE, active_levels
from ._vmap import vmap

__all__ = ["vmapped_backward"]


def vmapped_backward(
    outputs: tuple, inputs: tuple, cotangents: tuple, retain_graph: bool, create_graph: bool
) -> list[Any] | None:
    """The gradients of ``outputs`` with respect to ``inputs`` for every row of the batched
    ``cotangents`` (batch first), None for an input no output reaches; None when the pass
    cannot be batched (the graph is then untouched: the engine loops instead)."""
    if active_levels():
        return None  # (inside a running vmap: the engine's loop, as before)
    used: list[int] = []

    def backward(*batched: Tensor) -> tuple[Tensor, ...]:
        with enable_grad():
            grads = engine.grad(
                outputs,
                inputs,
                batched,
                retain_graph=True,
                create_graph=True,
                allow_unused=True,
            )
        used.extend(k for k, g in enumerate(grads) if g is not None)
        return tuple(g for g in grads if g is not None)

    try:
        stacked = vmap(backward)(*cotangents)
    except RuntimeError as error:
        if str(error) != POISON_MESSAGE:
            raise
        return None
    if not retain_graph:
        _release_executed(outputs, inputs)
    result: list[Any] = [None] * len(inputs)
    for k, g in zip(used, stacked, strict=True):
        result[k] = g if create_graph else g.detach()
    return result


def _release_executed(outputs: tuple, inputs: tuple) -> None:
    """Free what the nodes of the pass saved, as a pass that does not retain the graph does:
    the nodes between the outputs and the inputs (a node only reached to capture an input's
    gradient does not run, and keeps its saved values). Explicit stacks, no recursion."""
    from ..autograd.graph import preorder

    roots = [gradient_edge(o)[0] for o in outputs if isinstance(o, Tensor)]
    roots = [node for node in roots if node is not None]
    reachable = list(preorder(roots))
    parents: dict[Node, list[Node]] = {}
    for node in reachable:
        for child in node._next_fns:
            if child is not None:
                parents.setdefault(child, []).append(node)
    targets = []
    for x in inputs:
        node = gradient_edge(x)[0] if isinstance(x, Tensor) else getattr(x, "node", None)
        if node is not None:
            targets.append(node)
    executed: set[Node] = set()
    stack = list(targets)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in executed:
                executed.add(parent)
                stack.append(parent)
    for node in executed:
        if type(node) is not AccumulateGrad:
            node.release()


def install() -> None:
    """Make ``autograd.grad(..., is_grads_batched=True)`` run through :func:`vmapped_backward`."""
    if vmapped_backward not in engine.VMAPPED_BACKWARD:
        engine.VMAPPED_BACKWARD.append(vmapped_backward)
