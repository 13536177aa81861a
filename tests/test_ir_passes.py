"""Passes over the IR (ir.passes) and the NumPy code generated from it (ir.numpy_codegen):
each pass leaves the results unchanged (bit for bit against the interpreter, and against
PyTorch) and the graph smaller; over the random programs of test_ir_random_programs."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from hypothesis import given, settings

import chainrule
from chainrule import ir
from chainrule.ir import passes
from chainrule.ir.numpy_codegen import REUSE_MIN_ELEMENTS, emitted_as, numpy_function
from chainrule.ops import linalg, pointwise, reduction
from chainrule.ops import shape as shape_ops

from .test_ir_random_programs import BINARY, UNARY, _arrays, _c, _to_shape_ir, programs


def _graph(shape=(3,), dtype=chainrule.float64):
    g = ir.Graph()
    return g, g.placeholder(shape, dtype, name="x"), g.placeholder(shape, dtype, name="y")


def _calls(g: ir.Graph) -> int:
    return sum(n.kind == "call" for n in g.nodes)


def test_cse_merges_equal_calls_only():
    g, x, y = _graph()
    a = _c(g, pointwise.mul, x, y)
    b = _c(g, pointwise.mul, x, y)  # the same call: merged
    c = _c(g, pointwise._add, a, 1)
    d = _c(g, pointwise._add, b, 1.0)  # 1.0 is not 1 (the dtype rules differ): kept
    e = _c(g, pointwise._add, b, 1)  # equal to c once b is a
    out = _c(g, pointwise._add, _c(g, pointwise._add, c, d), e)
    feeds = {x: np.array([1.0, -2.0, 0.5]), y: np.array([3.0, 0.0, -1.0])}
    (before,) = ir.run(g, [out], feeds)
    n = _calls(g)
    roots = [out]
    assert passes.eliminate_common_subexpressions(g, roots) == 2
    assert _calls(g) == n - 2 and roots == [out]
    (after,) = ir.run(g, roots, feeds)
    np.testing.assert_array_equal(after, before)
    assert [v.node.name for v in d.node.inputs] == ["Mul"]


def test_cse_replaces_a_root_it_merges():
    g, x, y = _graph()
    a = _c(g, pointwise.exp, x)
    b = _c(g, pointwise.exp, x)
    roots = [b]
    passes.eliminate_common_subexpressions(g, roots)
    assert roots == [a] and _calls(g) == 1


def test_constant_folding_and_dead_code():
    g, x, y = _graph()
    two = g.constant(np.array(2.0))
    three = g.constant(np.array([3.0, 1.0, 0.5]))
    scale = _c(g, pointwise.exp, _c(g, pointwise.mul, two, three))  # constants only
    _c(g, pointwise.sin, y)  # dead
    out = _c(g, pointwise.mul, x, scale)
    feeds = {x: np.array([1.0, 2.0, 3.0]), y: np.zeros(3)}
    (before,) = ir.run(g, [out], feeds)
    roots = [out]
    assert passes.fold_constants(g, roots) == 2
    assert passes.eliminate_dead_code(g, roots) == 4  # sin, and the three folded constants
    assert [n.kind for n in g.nodes] == ["placeholder", "placeholder", "constant", "call"]
    (after,) = ir.run(g, roots, feeds)
    np.testing.assert_array_equal(after, before)
    f64 = torch.float64
    expected = torch.tensor([1.0, 2, 3], dtype=f64) * torch.exp(
        torch.tensor(2.0, dtype=f64) * torch.tensor([3.0, 1, 0.5], dtype=f64)
    )
    np.testing.assert_array_equal(after, expected.numpy())


def _chain(g: ir.Graph, x: ir.Value, y: ir.Value) -> ir.Value:
    a = _c(g, pointwise.mul, x, y)
    b = _c(g, pointwise._add, a, 1.0)
    c = _c(g, pointwise.sin, b)
    d = _c(g, pointwise._sub, c, y)
    return _c(g, reduction._sum_all, _c(g, pointwise.tanh, d))


def test_fusion_makes_one_generated_function_with_the_same_values():
    g, x, y = _graph((4, 5))
    out = _chain(g, x, y)
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    feeds = {x: xs, y: ys}
    (before,) = ir.run(g, [out], feeds)
    roots = [out]
    assert passes.fuse_elementwise(g, roots, keep=[x, y]) == 4  # five ops -> one
    assert [n.type for n in g.nodes if n.kind == "call"] == ["fused_mul_add_sin_sub_tanh", "Sum"]
    (interpreted,) = ir.run(g, roots, feeds)
    fn = numpy_function(g, [x, y], roots)
    assert "def fused_mul_add_sin_sub_tanh(x, y):" in fn.source
    np.testing.assert_array_equal(interpreted, before)
    np.testing.assert_array_equal(fn(xs, ys)[0], before)
    expected = torch.tanh(torch.sin(torch.tensor(xs) * torch.tensor(ys) + 1) - torch.tensor(ys))
    np.testing.assert_allclose(before, expected.sum().numpy(), rtol=1e-14)


def test_fusion_leaves_short_chains_roots_and_shared_values():
    g, x, y = _graph()
    a = _c(g, pointwise.mul, x, y)
    b = _c(g, pointwise._add, a, 1.0)
    c = _c(g, pointwise.sin, b)
    d = _c(g, pointwise.cos, b)  # b read twice: the chain stops at b
    roots = [c, d]
    assert passes.fuse_elementwise(g, roots, keep=[x, y]) == 0
    roots = [_c(g, pointwise.exp, _c(g, pointwise.exp, a))]
    assert passes.fuse_elementwise(g, roots, keep=[x, y, a]) == 0  # a kept: two ops left


def test_buffer_reuse_writes_into_dead_temporaries_only():
    side = int(np.ceil(np.sqrt(REUSE_MIN_ELEMENTS)))
    g, x, y = _graph((side, side))
    a = _c(g, pointwise.mul, x, y)  # temporary: reused by b
    b = _c(g, pointwise._add, a, 1.0)
    t = _c(g, shape_ops.t, b)  # a view of b: b is never reused
    c = _c(g, pointwise.mul, b, 2.0)
    out = _c(g, pointwise._sub, c, t)  # c is a temporary read last here: reused
    rng = np.random.default_rng(1)
    xs, ys = rng.standard_normal((side, side)), rng.standard_normal((side, side))
    keep = xs.copy(), ys.copy()
    fn = numpy_function(g, [x, y], [out])
    assert "np.add(mul, 1.0, out=mul)" in fn.source
    assert "np.subtract(mul_1, t, out=mul_1)" in fn.source
    assert "mul_1 = add * 2.0" in fn.source
    (result,) = fn(xs, ys)
    (expected,) = ir.run(g, [out], {x: keep[0], y: keep[1]})
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(xs, keep[0])  # (inputs are never written)
    np.testing.assert_array_equal(ys, keep[1])
    small = numpy_function(*_small_graph())
    assert "out=" not in small.source


def _small_graph():
    g, x, y = _graph()
    return g, [x, y], [_c(g, pointwise._add, _c(g, pointwise.mul, x, y), 1.0)]


def test_emitted_as_names_each_kind():
    g, x, y = _graph()
    h = g.placeholder((3,), chainrule.float16, name="h")
    assert emitted_as(g.call(pointwise.mul, (x, y))) == "operator"
    assert emitted_as(g.call(pointwise.exp, (x,))) == "kernel"
    assert emitted_as(g.call(pointwise.exp, (h,))) == "tensor call"
    assert emitted_as(g.call(pointwise.mul, (x, h))) == "tensor call"


def _random_graph(program: Any, dtype: str) -> tuple:
    """The program of test_ir_random_programs, with its gradient: graph, inputs, fetches."""
    inputs, steps, _ = program
    arrays, rng = _arrays(program, dtype)
    g = ir.Graph()
    chainrule_dtype = chainrule.float64 if dtype == "float64" else chainrule.float32
    leaves = [g.placeholder(s, chainrule_dtype) for s in inputs]
    values = list(leaves)
    for step in steps:
        if step[0] == "unary":
            values.append(UNARY[step[1]][0](g, values[step[2]]))
        elif step[0] == "binary":
            values.append(BINARY[step[1]][0](g, values[step[2]], values[step[3]]))
        elif step[0] == "reshape":
            values.append(_to_shape_ir(g, values[step[2]], step[1]))
        else:
            left = _to_shape_ir(g, values[step[1]], (3, 4))
            right = _to_shape_ir(g, values[step[2]], (3, 4))
            product = _c(g, linalg.mm, left, _c(g, shape_ops.t, right))
            values.append(
                _c(g, pointwise._div, _c(g, linalg.mm, _c(g, pointwise.tanh, product), left), 4)
            )
    out = values[-1]
    weights = g.constant(rng.standard_normal(out.shape).astype(dtype))
    loss = _c(g, reduction._sum_all, _c(g, pointwise.mul, out, weights))
    grads = ir.gradients(g, [loss], leaves)
    fetches = [out, *(d for d in grads if d is not None)]
    return g, leaves, arrays, fetches


def _check_passes_and_codegen(program: Any, dtype: str) -> None:
    g, leaves, arrays, fetches = _random_graph(program, dtype)
    feeds = dict(zip(leaves, arrays, strict=True))
    reference = ir.run(g, fetches, feeds)
    generated = numpy_function(g, leaves, fetches)(*arrays)
    for a, b in zip(generated, reference, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    before = len(passes.needed(g, fetches))
    roots = list(fetches)
    passes.optimize(g, roots)
    passes.fuse_elementwise(g, roots, keep=leaves)
    assert len(passes.needed(g, roots)) <= before
    optimized = numpy_function(g, leaves, roots)(*arrays)
    for a, b in zip(optimized, reference, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(programs())
def test_random_programs_generated_and_optimized_float64(program: Any) -> None:
    _check_passes_and_codegen(program, "float64")


@settings(max_examples=30, deadline=None)
@given(programs())
def test_random_programs_generated_and_optimized_float32(program: Any) -> None:
    _check_passes_and_codegen(program, "float32")
