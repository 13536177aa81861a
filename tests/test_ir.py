"""chainrule.ir: the graph IR, its interpreter and the backward graph derived from the op
table's formulas, compared with PyTorch (values and gradients) and with finite differences."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import chainrule
from chainrule import ir
from chainrule.ir import backward, helpers
from chainrule.ops import activation, linalg, pointwise, reduction
from chainrule.ops import shape as shape_ops

# -- the seed example ---------------------------------------------------------------------------


def _seed_graph() -> tuple[ir.Graph, ir.Value, ir.Value, ir.Value]:
    g = ir.Graph()
    w = g.constant(np.array(1.0, dtype=np.float32), name="w")
    x = g.constant(np.array(2.0, dtype=np.float32), name="x")
    a = g.call(pointwise._add, (w, x), name="a").output
    b = g.call(pointwise._add, (w, 1), name="b").output
    y = g.call(pointwise.mul, (a, b), name="y").output
    return g, w, x, y


SEED_TABLE = """\
name               kind      type   inputs                              shape  dtype
-----------------  --------  -----  ----------------------------------  -----  -------
w                  constant  Const                                      ()     float32
x                  constant  Const                                      ()     float32
a                  call      Add    w, x                                ()     float32
b                  call      Add    w                                   ()     float32
y                  call      Mul    a, b                                ()     float32
grad/grad_ys_0     call      Fill   y                                   ()     float32
grad/y_grad/Mul    call      Mul    grad/grad_ys_0, b                   ()     float32
grad/y_grad/Mul_1  call      Mul    grad/grad_ys_0, a                   ()     float32
grad/AddN          call      AddN   grad/y_grad/Mul, grad/y_grad/Mul_1  ()     float32"""

# The generated code reads as the chain rule: dy/dw = b + a, dy/dx = b.
SEED_CODE = """\
def graph():
    w = 1.0  # float32 ()
    x = 2.0  # float32 ()
    a = ops.pointwise.add(w, x)
    b = ops.pointwise.add(w, 1)
    y = ops.pointwise.mul(a, b)
    grad_grad_ys_0 = ops.creation.ones_like(y)
    grad_y_grad_Mul = ops.pointwise.mul(grad_grad_ys_0, b)
    grad_y_grad_Mul_1 = ops.pointwise.mul(grad_grad_ys_0, a)
    grad_AddN = ops.pointwise.add(grad_y_grad_Mul, grad_y_grad_Mul_1)
    return y, grad_AddN, grad_y_grad_Mul
"""


def test_seed_joint_graph_table_code_and_values_match_pytorch() -> None:
    g, w, x, y = _seed_graph()
    gw, gx = ir.gradients(g, [y], [w, x], scope="grad")
    assert g.table() == SEED_TABLE
    assert g.code([y, gw, gx]) == SEED_CODE
    y_value, gw_value, gx_value = ir.run(g, [y, gw, gx])
    tw = torch.tensor(1.0, requires_grad=True)
    tx = torch.tensor(2.0, requires_grad=True)
    ty = (tw + tx) * (tw + 1)
    ty.backward()
    assert y_value.dtype == np.float32 and float(y_value) == ty.item() == 6.0
    assert float(gw_value) == tw.grad.item() == 5.0
    assert float(gx_value) == tx.grad.item() == 2.0


def test_print_tabular_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    g, *_ = _seed_graph()
    g.print_tabular()
    assert capsys.readouterr().out == g.table() + "\n"


def test_large_constants_are_read_from_constants_in_the_code() -> None:
    g = ir.Graph()
    c = g.constant(np.zeros((3, 4), np.float64), name="big")
    e = g.call(pointwise.exp, (c,)).output
    assert "    big = constants['big']  # float64 (3, 4)" in g.code([e])
    assert "    Exp = ops.pointwise.exp(big)" in g.code([e])


# -- names ---------------------------------------------------------------------------------------


def test_names_are_made_unique_as_tensorflow_makes_them() -> None:
    g = ir.Graph()
    assert [g.unique_name(n) for n in ("Add", "add", "Add", "Add_1", "Mul")] == [
        "Add",
        "add_1",
        "Add_2",
        "Add_1_1",
        "Mul",
    ]
    with g.name_scope("gradients") as scope:
        assert scope == "gradients"
        assert g.unique_name("Mul") == "gradients/Mul"
    with g.name_scope("gradients") as scope:
        assert scope == "gradients_1"
    p = g.placeholder((2,), chainrule.float32, name="p")
    with pytest.raises(ValueError, match="Duplicate node name in graph: 'p'"):
        g.placeholder((2,), chainrule.float32, name="p")
    assert [n.name for n in g.nodes] == ["p"] and p.name == "p"


# -- shapes and dtypes ---------------------------------------------------------------------------


def test_shapes_and_dtypes_follow_chainrule_promotion_and_broadcasting() -> None:
    g = ir.Graph()
    a = g.placeholder((None, 3), chainrule.float32, name="a")
    b = g.placeholder((3,), chainrule.float64, name="b")
    i = g.placeholder((), chainrule.int64, name="i")
    s = g.call(pointwise._add, (a, b)).output
    assert s.shape == (None, 3) and s.dtype == chainrule.float64
    t = g.call(pointwise.mul, (a, i)).output
    assert t.shape == (None, 3) and t.dtype == chainrule.float32
    m = g.call(reduction._sum_dim, (a, (0,), False)).output
    assert m.shape == (3,)
    n = g.call(reduction._sum_dim, (a, (1,), False)).output
    assert n.shape == (None,)
    unknown = g.placeholder(None, chainrule.float32, name="u")
    assert g.call(pointwise.exp, (unknown,)).output.shape is None


def test_a_node_that_cannot_run_fails_where_it_is_written_and_adds_nothing() -> None:
    g = ir.Graph()
    a = g.placeholder((2,), chainrule.float32, name="a")
    b = g.placeholder((3,), chainrule.float32, name="b")
    with pytest.raises(RuntimeError) as ours:
        g.call(pointwise._add, (a, b))
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(2) + torch.ones(3)
    assert str(ours.value) == str(theirs.value)
    assert [n.name for n in g.nodes] == ["a", "b"]


# -- the interpreter -----------------------------------------------------------------------------


CALLS: list[int] = []


def _counted(x: Any) -> Any:
    CALLS.append(1)
    return x


def test_run_computes_only_what_the_fetches_need_and_feeds_override() -> None:
    g = ir.Graph()
    p = g.placeholder((2,), chainrule.float32, name="p")
    e = g.call(pointwise.exp, (p,)).output
    g.call(_counted, (p,), type="Counted")
    d = g.call(pointwise.mul, (e, 2)).output
    needed = [n.name for n in ir.needed_nodes(g, [d], [])]
    assert needed == ["p", "Exp", "Mul"]
    calls = len(CALLS)  # (one: the shape inference when the node was added)
    (value,) = ir.run(g, [d], {p: np.array([0.0, 1.0], np.float32)})
    assert len(CALLS) == calls
    # (float32 exp is computed in float64 and rounded once, as ops.pointwise does)
    assert np.array_equal(value, np.exp(np.array([0.0, 1.0])).astype(np.float32) * 2)
    # Feeding an intermediate value: what produces it does not run (p is not fed).
    (value,) = ir.run(g, [d], {e: np.array([3.0, 4.0], np.float32)})
    assert value.tolist() == [6.0, 8.0]
    with pytest.raises(ir.MissingFeed) as missing:
        ir.run(g, [d])
    assert missing.value.node is p.node


def test_variables_assign_and_group() -> None:
    g = ir.Graph()
    v = g.variable((2,), chainrule.float32, name="v")
    init = g.assign(v, g.constant(np.array([1.0, 2.0], np.float32)))
    bump = g.assign(v, None, target=pointwise._add, args=(v, 1.0), type="AssignAdd")
    both = g.group([init], name="init")
    state: dict[ir.Node, np.ndarray] = {}
    with pytest.raises(ir.UninitializedVariable):
        ir.run(g, [v], {}, state)
    assert ir.run(g, [both], {}, state) == [None]
    assert ir.run(g, [v], {}, state)[0].tolist() == [1.0, 2.0]
    assert ir.run(g, [bump.output], {}, state)[0].tolist() == [2.0, 3.0]
    assert state[v.node].tolist() == [2.0, 3.0] and state[v.node].dtype == np.float32


# -- gradients against PyTorch -------------------------------------------------------------------

# (name, graph builder over (graph, *inputs), the same in PyTorch, input shapes)
Case = tuple[str, Callable[..., ir.Value], Callable[..., torch.Tensor], tuple[tuple[int, ...], ...]]


def _c(graph: ir.Graph, target: Callable[..., Any], *args: Any) -> ir.Value:
    return graph.call(target, args).output


CASES: list[Case] = [
    (
        "mul_broadcast",
        lambda g, x, y: _c(g, pointwise.mul, x, y),
        lambda x, y: x * y,
        ((3, 4), (4,)),
    ),
    (
        "add_sub_number",
        lambda g, x, y: _c(g, pointwise._sub, _c(g, pointwise._add, x, 2.5), y),
        lambda x, y: (x + 2.5) - y,
        ((2, 3), (2, 1)),
    ),
    ("div_both", lambda g, x, y: _c(g, pointwise._div, x, y), lambda x, y: x / y, ((2, 3), (3,))),
    (
        "exp_log_sigmoid_tanh",
        lambda g, x: _c(
            g,
            pointwise.tanh,
            _c(g, pointwise.sigmoid, _c(g, pointwise.log, _c(g, pointwise.exp, x))),
        ),
        lambda x: torch.tanh(torch.sigmoid(torch.log(torch.exp(x)))),
        ((5,),),
    ),
    (
        "relu_abs_sqrt",
        lambda g, x: _c(
            g,
            pointwise.sqrt,
            _c(g, pointwise._add, _c(g, pointwise.abs, _c(g, pointwise.relu, x)), 1),
        ),
        lambda x: torch.sqrt(torch.abs(torch.relu(x)) + 1),
        ((6,),),
    ),
    ("pow_scalar", lambda g, x: _c(g, pointwise._pow_scalar, x, 3), lambda x: x**3, ((4,),)),
    (
        "pow_tensor",
        lambda g, x, y: _c(g, pointwise._pow_tensor, _c(g, pointwise.abs, x), y),
        lambda x, y: torch.abs(x) ** y,
        ((3,), (3,)),
    ),
    (
        "mm_sum",
        lambda g, x, w: _c(g, reduction._sum_all, _c(g, linalg.mm, x, w)),
        lambda x, w: (x @ w).sum(),
        ((4, 3), (3, 2)),
    ),
    (
        "mean_dim_softmax",
        lambda g, x: _c(g, reduction._mean_dim, _c(g, activation._softmax, x, 1), (0,), True),
        lambda x: torch.softmax(x, 1).mean(0, keepdim=True),
        ((3, 4),),
    ),
    (
        "where_maximum",
        lambda g, x, y: _c(
            g, pointwise._where, _c(g, pointwise.gt, x, 0), _c(g, pointwise.maximum, x, y), y
        ),
        lambda x, y: torch.where(x > 0, torch.maximum(x, y), y),
        ((5,), (5,)),
    ),
]


def _inputs(shapes: tuple[tuple[int, ...], ...], dtype: np.dtype, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, size=s).astype(dtype) + 0.1 for s in shapes]


def _ir_value_and_grads(
    case: Case, arrays: list[np.ndarray], dtype: Any
) -> tuple[np.ndarray, list[np.ndarray]]:
    _, build, _, shapes = case
    g = ir.Graph()
    xs = [g.placeholder(s, dtype, name=f"x{i}") for i, s in enumerate(shapes)]
    out = build(g, *xs)
    total = _c(g, reduction._sum_all, _c(g, pointwise.mul, out, out))  # a non-trivial seed
    grads = ir.gradients(g, [total], xs)
    assert all(grad is not None for grad in grads)
    values = ir.run(g, [out, *grads], dict(zip(xs, arrays, strict=True)))
    return values[0], values[1:]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_pytorch(case: Case, dtype: Any) -> None:
    arrays = _inputs(case[3], np.dtype(dtype), seed=len(case[0]))
    value, grads = _ir_value_and_grads(
        case, arrays, chainrule.float32 if dtype == np.float32 else chainrule.float64
    )
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = case[2](*tensors)
    (expected * expected).sum().backward()
    tolerance = (
        {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
    )
    assert value.dtype == dtype
    np.testing.assert_allclose(value, expected.detach().numpy(), **tolerance)
    for grad, t in zip(grads, tensors, strict=True):
        assert grad.shape == t.shape and grad.dtype == dtype
        np.testing.assert_allclose(grad, t.grad.numpy(), **tolerance)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(case: Case) -> None:
    arrays = _inputs(case[3], np.dtype(np.float64), seed=7 + len(case[0]))
    _, grads = _ir_value_and_grads(case, arrays, chainrule.float64)
    eps = 1e-6

    def total(values: list[np.ndarray]) -> float:
        out = case[2](*[torch.tensor(v) for v in values])
        return float((out * out).sum())

    for k, array in enumerate(arrays):
        numeric = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[k][index] += eps
            minus[k][index] -= eps
            numeric[index] = (total(plus) - total(minus)) / (2 * eps)
        np.testing.assert_allclose(grads[k], numeric, rtol=1e-5, atol=1e-6)


def test_the_traced_formulas_are_op_table_nodes_and_untraceable_ones_run_opaque() -> None:
    g = ir.Graph()
    x = g.placeholder((3,), chainrule.float64, name="x")
    y = g.placeholder((3,), chainrule.float64, name="y")
    m = g.call(pointwise.mul, (x, y)).output
    p = g.call(pointwise._pow_tensor, (m, y)).output
    ir.gradients(g, [p], [x])
    kinds = {n.type for n in g.nodes if n.name.startswith("gradients/")}
    # mul's formula became a Mul node; pow's (it branches on being given a Tensor) runs its
    # formula when the graph runs.
    assert "Mul" in kinds and "PowBackward1_self" in kinds
    runner = next(n for n in g.nodes if n.type == "PowBackward1_self")
    assert isinstance(runner.target, backward.DerivativeRunner) and runner.op is None


def test_unknown_sizes_are_reduced_when_the_graph_runs() -> None:
    """A (1, 1) value broadcast against a (5, 1) one, both declared (?, 1): its gradient is
    summed to (1, 1) when the graph runs, never left at (5, 1)."""
    g = ir.Graph()
    a = g.placeholder((None, 1), chainrule.float32, name="a")
    b = g.placeholder((None, 1), chainrule.float32, name="b")
    y = g.call(reduction._sum_all, (g.call(pointwise.mul, (a, b)).output,)).output
    ga, gb = ir.gradients(g, [y], [a, b])
    a_value = np.array([[2.0]], np.float32)
    b_value = np.arange(5, dtype=np.float32).reshape(5, 1)
    ga_value, gb_value = ir.run(g, [ga, gb], {a: a_value, b: b_value})
    ta = torch.tensor(a_value, requires_grad=True)
    tb = torch.tensor(b_value, requires_grad=True)
    (ta * tb).sum().backward()
    assert ga_value.shape == (1, 1) and gb_value.shape == (5, 1)
    np.testing.assert_array_equal(ga_value, ta.grad.numpy())
    np.testing.assert_array_equal(gb_value, tb.grad.numpy())


def test_second_order_gradients_match_pytorch() -> None:
    g = ir.Graph()
    x = g.placeholder((3,), chainrule.float64, name="x")
    y = _c(g, reduction._sum_all, _c(g, pointwise._pow_scalar, x, 3))
    (dx,) = ir.gradients(g, [y], [x])
    (ddx,) = ir.gradients(g, [_c(g, reduction._sum_all, dx)], [x])
    value = np.array([0.5, -1.0, 2.0])
    dx_value, ddx_value = ir.run(g, [dx, ddx], {x: value})
    t = torch.tensor(value, requires_grad=True)
    (first,) = torch.autograd.grad((t**3).sum(), t, create_graph=True)
    (second,) = torch.autograd.grad(first.sum(), t)
    np.testing.assert_allclose(dx_value, first.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(ddx_value, second.numpy(), rtol=1e-15)


def _opaque(x: Any) -> Any:
    return x * 2


def test_gradient_through_a_node_without_derivative_is_a_lookup_error() -> None:
    g = ir.Graph()
    x = g.placeholder((3,), chainrule.float32, name="x")
    y = g.call(_opaque, (x,), name="twice").output
    with pytest.raises(
        LookupError, match=r"No gradient defined for operation 'twice' \(op type: _opaque\)"
    ):
        ir.gradients(g, [y], [x])


def test_second_order_through_broadcast_reduction_and_cast() -> None:
    """The engine's plumbing as nodes (summing to a shape, casting) has gradients too."""
    g = ir.Graph()
    x = g.placeholder((4, 2), chainrule.float64, name="x")
    b = g.placeholder((2,), chainrule.float32, name="b")
    wide = g.call(helpers.cast, (b, chainrule.float64)).output
    y = _c(g, reduction._sum_all, _c(g, pointwise.exp, _c(g, pointwise._add, x, wide)))
    (db,) = ir.gradients(g, [y], [b])
    weights = g.constant(np.array([1.0, -2.0], np.float32), name="weights")
    (ddb,) = ir.gradients(g, [_c(g, reduction._sum_all, _c(g, pointwise.mul, db, weights))], [b])
    x_value = np.linspace(-1, 1, 8).reshape(4, 2)
    b_value = np.array([0.25, -0.5], np.float32)
    db_value, ddb_value = ir.run(g, [db, ddb], {x: x_value, b: b_value})
    tb = torch.tensor(b_value, requires_grad=True)
    ty = torch.exp(torch.tensor(x_value) + tb.double()).sum()
    (first,) = torch.autograd.grad(ty, tb, create_graph=True)
    (second,) = torch.autograd.grad((first * torch.tensor([1.0, -2.0])).sum(), tb)
    assert db_value.dtype == ddb_value.dtype == np.float32
    np.testing.assert_allclose(db_value, first.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(ddb_value, second.numpy(), rtol=1e-6)


def test_a_formula_run_opaque_has_no_gradient_of_its_own() -> None:
    """Where a formula needs a shape known only at run time (sum's, here), it runs as one
    opaque node: its gradient graph is right, but cannot be differentiated again."""
    g = ir.Graph()
    x = g.placeholder((None, 2), chainrule.float64, name="x")
    y = _c(g, reduction._sum_all, _c(g, pointwise.exp, x))
    (dx,) = ir.gradients(g, [y], [x])
    x_value = np.linspace(-1, 1, 6).reshape(3, 2)
    np.testing.assert_allclose(ir.run(g, [dx], {x: x_value})[0], np.exp(x_value), rtol=1e-15)
    with pytest.raises(LookupError, match="op type: SumBackward0_self"):
        ir.gradients(g, [_c(g, reduction._sum_all, dx)], [x])


def test_gradients_of_unrelated_values_are_none_and_identity_passes_through() -> None:
    g = ir.Graph()
    x = g.placeholder((2,), chainrule.float32, name="x")
    z = g.placeholder((2,), chainrule.float32, name="z")
    read = g.call(helpers.identity, (x,), name="read").output
    y = _c(g, reduction._sum_all, _c(g, pointwise.mul, read, 3.0))
    gx, gz = ir.gradients(g, [y], [x, z])
    assert gz is None
    assert ir.run(g, [gx], {x: np.ones(2, np.float32)})[0].tolist() == [3.0, 3.0]


def test_gradients_of_a_deep_chain_need_no_recursion() -> None:
    g = ir.Graph()
    x = g.placeholder((), chainrule.float64, name="x")
    value = x
    for _ in range(3000):
        value = _c(g, pointwise.mul, value, 1.0001)
    (grad,) = ir.gradients(g, [value], [x])
    (result,) = ir.run(g, [grad], {x: np.array(1.0)})
    t = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    out = t
    for _ in range(3000):
        out = out * 1.0001
    out.backward()
    assert float(result) == pytest.approx(t.grad.item(), rel=1e-12)


# -- the runner: cached plans and constant folding --------------------------------------------


def test_runner_folds_what_depends_on_constants_only_and_recomputes_the_rest() -> None:
    g = ir.Graph()
    c = g.constant(np.array([1.0, 2.0]), name="c")
    folded = g.call(_counted, (g.call(pointwise.exp, (c,)).output,), name="folded").output
    p = g.placeholder((2,), chainrule.float64, name="p")
    out = g.call(pointwise.mul, (folded, p)).output
    runner = ir.Runner(g)
    calls = len(CALLS)
    for k in range(3):
        (value,) = runner.run([out], {p: np.full(2, float(k))}, {})
        np.testing.assert_array_equal(value, np.exp([1.0, 2.0]) * k)
    assert len(CALLS) == calls + 1  # computed once, for three runs
    # Feeding a value the folded one depends on: computed from the fed value, not the cache.
    (value,) = runner.run([out], {c: np.zeros(2), p: np.ones(2)}, {})
    assert value.tolist() == [1.0, 1.0] and len(CALLS) == calls + 2
    # A node added later is seen by the next run.
    later = g.call(pointwise._add, (out, folded)).output
    (value,) = runner.run([later], {p: np.ones(2)}, {})
    np.testing.assert_array_equal(value, 2 * np.exp([1.0, 2.0]))


def _sample(like: Any) -> Any:
    return chainrule.rand(2, dtype=chainrule.float64)


def test_impure_functions_and_variables_are_never_folded() -> None:
    ir.impure(_sample)
    g = ir.Graph()
    c = g.constant(np.zeros(2), name="c")
    s = g.call(_sample, (c,), name="sample").output
    v = g.variable((2,), chainrule.float64, name="v")
    read = g.call(pointwise._add, (v, c)).output
    runner = ir.Runner(g)
    first, second = (runner.run([s], {}, {})[0] for _ in range(2))
    assert not np.array_equal(first, second)
    state = {v.node: np.ones(2)}
    assert runner.run([read], {}, state)[0].tolist() == [1.0, 1.0]
    state[v.node] = np.full(2, 5.0)
    assert runner.run([read], {}, state)[0].tolist() == [5.0, 5.0]


def test_dot_draws_every_node_and_edge_in_graph_order() -> None:
    g, w, x, y = _seed_graph()
    init = g.group([y.node], name="after")
    text = g.dot()
    assert text.startswith('digraph "graph" {\n')
    assert '    n4 [label="y\\nMul\\n() float32", shape=box];' in text
    edges = [line.strip() for line in text.splitlines() if "->" in line]
    assert edges == [
        "n0 -> n2;",
        "n1 -> n2;",
        "n0 -> n3;",
        "n2 -> n4;",
        "n3 -> n4;",
        "n4 -> n5 [style=dashed];",
    ]
    assert init.name == "after" and text == g.dot()


def test_numpy_scalars_fed_or_constant_keep_their_dtype() -> None:
    """A NumPy scalar (np.float64(2.0)) is made a 0-d array: a tensor around the scalar itself
    would be taken for a Python number (float32 once two of them meet)."""
    g = ir.Graph()
    p = g.placeholder((), chainrule.float64, name="p")
    c = g.constant(np.float64(3.0), name="c")  # type: ignore[arg-type]
    y = _c(g, pointwise.mul, p, c)
    (dp,) = ir.gradients(g, [_c(g, reduction._sum_all, _c(g, pointwise.mul, y, y))], [p])
    for run in (ir.run, ir.Runner(g).run):
        value, grad = (
            run(g, [y, dp], {p: np.float64(2.0)})
            if run is ir.run
            else run([y, dp], {p: np.float64(2.0)}, {})
        )
        assert value.dtype == grad.dtype == np.float64
        assert float(value) == 6.0 and float(grad) == 36.0


def test_an_unknown_size_meeting_a_known_one_is_inferred_as_tensorflow_does() -> None:
    g = ir.Graph()
    a = g.placeholder((2, 2), chainrule.float32, name="a")
    b = g.placeholder((None,), chainrule.float32, name="b")
    c = g.placeholder((None, 1), chainrule.float32, name="c")
    assert g.call(pointwise._add, (a, b)).output.shape == (2, 2)
    assert g.call(pointwise._add, (b, c)).output.shape == (None, None)
    row = g.call(pointwise._add, (c, g.constant(np.zeros((3, 1), np.float32)))).output
    assert row.shape == (3, 1)
    picked = g.call(shape_ops._select, (c, 0, 5)).output  # (an index along an unknown size)
    assert picked.shape == (1,)
    (g_row,) = ir.gradients(g, [_c(g, reduction._sum_all, _c(g, pointwise.mul, row, row))], [c])
    (g_pick,) = ir.gradients(g, [_c(g, reduction._sum_all, picked)], [c])
    with pytest.raises(RuntimeError):  # at run time the sizes must fit: 6 rows are not 3
        ir.run(g, [g_row], {c: np.ones((6, 1), np.float32)})
    values = np.arange(6, dtype=np.float32).reshape(6, 1)
    (grad,) = ir.run(g, [g_row], {c: values[:3]})
    np.testing.assert_array_equal(grad, 2 * values[:3])
    (grad,) = ir.run(g, [g_pick], {c: values})
    assert grad.shape == (6, 1) and grad.ravel().tolist() == [0, 0, 0, 0, 0, 1]
