"""The graph behind every drawing: same nodes and edges as PyTorch's, deterministic, no recursion.

Each program runs in PyTorch and in chainrule; both graphs are walked the same way (depth-first
preorder over ``grad_fn.next_functions``) and must give the same node names and edges.
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import chainrule
from chainrule import viz
from chainrule.autograd.stepping import backward_steps
from chainrule.viz.graph import walk
from chainrule.viz.groups import Hierarchy

from .conftest import require_dot, torch


def reference_structure(output) -> tuple[list[str], list[tuple[tuple[int, int], ...]]]:
    """Names and edges of a real PyTorch graph, numbered as chainrule.viz.walk numbers them."""
    index: dict[object, int] = {}
    order: list[object] = []
    stack = [output.grad_fn]
    while stack:
        fn = stack.pop()
        if fn in index:
            continue
        index[fn] = len(order)
        order.append(fn)
        for child, _ in reversed(fn.next_functions):
            if child is not None and child not in index:
                stack.append(child)
    names = [type(fn).__name__ for fn in order]
    edges = [
        tuple((-1 if c is None else index[c], nr) for c, nr in fn.next_functions) for fn in order
    ]
    return names, edges


def ours(output) -> tuple[list[str], list[tuple[tuple[int, int], ...]]]:
    graph = walk(output)
    return graph.names, graph.children


def seed_program(lib):
    w = lib.tensor([1.0], requires_grad=True)
    x = lib.tensor([2.0], requires_grad=True)
    a = lib.add(w, x)
    b = lib.add(w, 1)
    return lib.mul(a, b), {"w": w, "x": x}


def mlp_program(lib):
    lib.manual_seed(0)
    fc1 = lib.nn.Linear(4, 8)
    fc2 = lib.nn.Linear(8, 3)
    x = lib.ones(5, 4)
    hidden = lib.nn.functional.relu(fc1(x))
    loss = lib.nn.functional.softmax(fc2(hidden), dim=1).sum()
    params = {f"fc1.{k}": v for k, v in fc1.named_parameters()}
    params.update({f"fc2.{k}": v for k, v in fc2.named_parameters()})
    return loss, params


def matmul_broadcast_program(lib):
    a = lib.ones(2, 3, 4, requires_grad=True)
    b = (lib.ones(4, 5) * 0.5).requires_grad_()
    c = lib.ones(5, requires_grad=True)
    y = lib.matmul(a, b) + c  # batched matmul, bias broadcast over two dimensions
    z = (y * y).mean() + lib.exp(c).sum() - (a.transpose(1, 2) ** 2).sum()
    return z, {"a": a, "b": b, "c": c}


def shared_subexpression_program(lib):
    x = lib.ones(3, requires_grad=True)
    h = lib.tanh(x)
    y = h * h + lib.sigmoid(h) / (h + 2)  # h is used four times
    return y.sum(), {"x": x}


PROGRAMS = [seed_program, mlp_program, matmul_broadcast_program, shared_subexpression_program]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_structure_matches_pytorch(program):
    theirs, _ = program(torch)
    mine, _ = program(chainrule)
    assert ours(mine) == reference_structure(theirs)


def test_seed_graph_nodes_and_edges():
    y, params = seed_program(chainrule)
    graph = walk(y, params)
    assert graph.names == [
        "MulBackward0",
        "AddBackward0",
        "AccumulateGrad",
        "AccumulateGrad",
        "AddBackward0",
    ]
    assert graph.edges() == [(0, 1), (0, 4), (1, 2), (1, 3), (4, 2)]
    assert [graph.leaf_label(i) for i in (2, 3)] == ["w", "x"]
    assert graph.parents[2] == [1, 4]


def test_walk_is_deterministic():
    first = ours(mlp_program(chainrule)[0])
    second = ours(mlp_program(chainrule)[0])
    assert first == second


def test_nothing_to_draw_raises():
    with pytest.raises(ValueError, match="nothing to draw"):
        walk(chainrule.ones(3))


def test_tree_of_seed_example():
    y, params = seed_program(chainrule)
    assert str(viz.tree(y, params)) == "\n".join(
        [
            "output (1) float32",
            "└── MulBackward0 [#0]",
            "    ├── AddBackward0 [#1]",
            "    │   ├── AccumulateGrad [#2] ← w (1) float32",
            "    │   └── AccumulateGrad [#3] ← x (1) float32",
            "    └── AddBackward0 [#4]",
            "        └── AccumulateGrad [#2] (see above)",
        ]
    )


def test_tree_shows_none_slots_on_request():
    y, params = seed_program(chainrule)
    assert "└── None" in viz.tree(y, params, show_none=True)


def test_tree_shares_repeated_nodes():
    y, _ = shared_subexpression_program(chainrule)
    text = viz.tree(y)
    assert text.count("TanhBackward0") == 4
    assert text.count("(see above)") == 3  # tanh expanded once, referenced three times
    assert text.nodes == len(walk(y))


def test_tree_of_module_calls():
    model = chainrule.nn.Linear(3, 2)
    with viz.record_modules(model) as rec:
        loss = model(chainrule.ones(4, 3)).sum()
    text = viz.tree(loss, dict(model.named_parameters()), modules=rec)
    assert "AddmmBackward0 [#1]  in Linear" in text
    assert "← weight (2, 3) float32" in text
    assert "forward" not in model.__dict__  # the recorder put the module back as it was


def test_record_modules_groups_nested_calls():
    class Net(chainrule.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = chainrule.nn.Linear(3, 4)
            self.fc2 = chainrule.nn.Linear(4, 1)

        def forward(self, x):
            return self.fc2(chainrule.relu(self.fc1(x)))

    net = Net()
    with viz.record_modules(net) as rec:
        loss = net(chainrule.ones(2, 3)).sum()
    hierarchy = Hierarchy(walk(loss, dict(net.named_parameters())), rec)
    labels = {g.label: g for g in hierarchy.groups}
    assert set(labels) == {"Net", "fc1 (Linear)", "fc2 (Linear)"}
    assert labels["fc1 (Linear)"].parent == labels["Net"].id
    assert labels["fc1 (Linear)"].names == {
        "AddmmBackward0": 1,
        "TBackward0": 1,
        "AccumulateGrad": 2,
    }
    top = hierarchy.view(-1)
    assert [hierarchy.item_label(i) for i in top.items] == ["SumBackward0", "Net"]


def test_repeated_steps_fold_into_one_group():
    x = chainrule.ones(2, requires_grad=True)
    w = chainrule.tensor([0.5, 0.5], requires_grad=True)
    y = x
    for _ in range(300):
        y = chainrule.sin(y) + y * w
    hierarchy = Hierarchy(walk(y.sum()))
    chains = [g for g in hierarchy.groups if g.kind == "chain"]
    assert len(chains) == 1
    assert chains[0].label == "[AddBackward0 · SinBackward0 · MulBackward0] × 300"
    assert chains[0].size == len(walk(y.sum())) - 1  # all but SumBackward0, with both leaves
    view = hierarchy.view(chains[0].id, ends=2)
    assert view.hidden == 296
    assert ("e", "e", 1) not in view.edges


def test_no_recursion_anywhere():
    x = chainrule.ones(1, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001 + 0.0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # far below the graph's depth: any recursive walk would fail
    try:
        graph = walk(y)
        text = viz.tree(y, fold=0)
        source = viz.make_dot(y, collapse=False).source
        Hierarchy(graph, collapse_above=10).view(-1)
    finally:
        sys.setrecursionlimit(limit)
    assert len(graph) == 6001
    assert "continued at the left margin" in text
    assert source.count('label="MulBackward0 [#') == 3000


@pytest.mark.slow
def test_million_op_chain_walks_and_draws_collapsed():
    x = chainrule.ones(1, requires_grad=True)
    y = x
    gc.disable()  # building a million nodes is the slow part of this test, not what it checks
    try:
        for _ in range(1_000_000):
            y = y * 1.0
    finally:
        gc.enable()
    dot = viz.make_dot(y)  # past AUTO_COLLAPSE_ABOVE: folded
    assert "[MulBackward0] × 1000000" in dot.source
    assert "1000001 nodes" in dot.source
    assert dot.source.count("->") == 1  # the chain group -> the output
    require_dot()
    assert dot.pipe(format="svg").startswith(b"<?xml")


def test_long_chain_prints_folded():
    x = chainrule.ones(1, requires_grad=True)
    y = x
    for _ in range(50_000):
        y = y * 1.0
    text = viz.tree(y.sum())
    assert text.splitlines() == [
        "output () float32",
        "└── SumBackward0 [#0]",
        "    └── [MulBackward0] × 50000: 50001 nodes folded, entered at MulBackward0 [#1]",
    ]


def test_record_steps_keeps_grads_and_matches_engine_order():
    y, params = seed_program(chainrule)
    w = params["w"]
    w.grad = chainrule.tensor([10.0])
    steps = viz.record_steps(y)
    np.testing.assert_array_equal(w.grad.numpy(), [10.0])
    assert params["x"].grad is None
    expected = [s.node for s in backward_steps(y, retain_graph=True)]
    assert [s.node for s in steps] == expected
