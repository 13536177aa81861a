"""A node's edges: ``next_functions`` as PyTorch shows it, kept in a form the garbage collector
scans little (autograd/node.py)."""

from __future__ import annotations

import gc

import pytest
import torch

import chainrule


def _chain(lib, n):
    x = lib.ones(3, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0625
        y = y + 0.25
    return x, y


@pytest.mark.parametrize("make", ["mul_number", "mul_tensor", "unbind"])
def test_next_functions_match_pytorch(make: str) -> None:
    def build(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([0.5, 0.5, 0.5])
        if make == "mul_number":
            return (x * 2).grad_fn
        if make == "mul_tensor":
            return (w * x).grad_fn
        return (x.unbind(0)[2] * x).grad_fn

    ours, theirs = build(chainrule), build(torch)

    def shape_of(node):
        return [(None if child is None else child.name().rpartition("::")[2], nr)
                for child, nr in node.next_functions]

    assert shape_of(ours) == shape_of(theirs)
    inner_ours = [c for c, _ in ours.next_functions if c is not None][0]
    inner_theirs = [c for c, _ in theirs.next_functions if c is not None][0]
    assert shape_of(inner_ours) == shape_of(inner_theirs)


def test_next_functions_is_a_fresh_tuple_and_not_writable() -> None:
    node = (chainrule.ones(2, requires_grad=True) * 2).grad_fn
    reference = (torch.ones(2, requires_grad=True) * 2).grad_fn
    assert node.next_functions == node.next_functions
    assert (node.next_functions is node.next_functions) == (
        reference.next_functions is reference.next_functions)
    messages = []
    for n in (node, reference):
        with pytest.raises(AttributeError) as info:
            n.next_functions = ()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert len(node.next_functions) == 2  # unchanged


def test_a_recorded_op_leaves_two_objects_for_the_collector() -> None:
    # Each op of a chain leaves its node and the tuple of the nodes it sends gradients to; the
    # input numbers are a constant, the input metadata a tuple shared by the nodes that record
    # the same. A pair per edge and a metadata tuple per node (the former layout) made it
    # three objects per op for the collector to track, and twice the memory.
    x, y = _chain(chainrule, 5)
    gc.collect()
    gc.collect()
    before = {id(o) for o in gc.get_objects()}
    x, y = _chain(chainrule, 500)
    gc.collect()
    gc.collect()
    new = [o for o in gc.get_objects() if id(o) not in before]
    nodes = [o for o in new if isinstance(o, chainrule.autograd.graph.Node)]
    assert len(nodes) == 1000 + 1  # and the leaf's AccumulateGrad
    # (a few metadata tuples stay tracked until a later pass; the former layout left 3 per op)
    assert len(new) <= 2.2 * len(nodes)
    y.sum().backward()
    xt, yt = _chain(torch, 500)
    yt.sum().backward()
    assert x.grad.tolist() == xt.grad.tolist()


def test_nodes_share_equal_metadata_and_number_versions() -> None:
    x = chainrule.ones(4, requires_grad=True)
    first, second = x * 2.0, (x + 1.0) * 3.0
    assert first.grad_fn._in_meta is second.grad_fn._in_meta
    assert first.grad_fn._versions is second.grad_fn._versions  # saved numbers only
    other = chainrule.ones(5, requires_grad=True) * 2.0
    assert other.grad_fn._in_meta != first.grad_fn._in_meta
    assert other.grad_fn._in_meta[0][0] == (5,)
    # a node that saved a tensor keeps its own versions, and they still guard it
    w = chainrule.ones(4)
    y = x * w
    w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
