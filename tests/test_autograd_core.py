"""Autograd semantics against PyTorch: ``backward`` and its arguments, ``autograd.backward``,
``autograd.grad``, accumulation into ``.grad``, ``retain_grad``, higher derivatives, the
second-backward rule, and the graph PyTorch builds (node types and edges) for products."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule

from .conftest import torch
from .opinfos.linalg import LINEAR_INPUTS, MATMUL_SHAPES
from .test_tensor_api import assert_raises_same, assert_same


def _xw(lib, requires_grad: bool = True):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=requires_grad)
    w = lib.tensor([0.5, -1.0, 2.0], requires_grad=requires_grad)
    return x, w


def _grads(*tensors):
    return tuple(t.grad for t in tensors)


# ----------------------------------------------------------------------------------------------
# Tensor.backward and autograd.backward


def _backward_scalar(lib):
    x, w = _xw(lib)
    ((x + w) * (w + 1)).sum().backward()
    return _grads(x, w)


def _backward_gradient(lib):
    x, w = _xw(lib)
    (x * w).backward(gradient=lib.tensor([1.0, 0.0, -2.0]))
    return _grads(x, w)


def _backward_gradient_float64(lib):
    x, _ = _xw(lib)
    (x * 2).backward(lib.tensor([1.0, 1.0, 1.0], dtype=lib.float64))
    return x.grad


def _backward_accumulates(lib):
    x, w = _xw(lib)
    (x * w).sum().backward()
    (x * x).sum().backward()
    return _grads(x, w)


def _backward_retain_graph_twice(lib):
    x, w = _xw(lib)
    y = (x * w).sum()
    y.backward(retain_graph=True)
    y.backward()
    return _grads(x, w)


def _backward_inputs_restricts(lib):
    x, w = _xw(lib)
    (x * w).sum().backward(inputs=[w])
    return _grads(x, w)


def _backward_inputs_single_tensor(lib):
    x, w = _xw(lib)
    (x * w).sum().backward(inputs=x)
    return _grads(x, w)


def _backward_inputs_non_leaf(lib):
    x, w = _xw(lib)
    h = x * w
    (h * h).sum().backward(inputs=[h])
    return h.grad, x.grad


def _backward_from_leaf(lib):
    x, _ = _xw(lib)
    x.backward(lib.tensor([1.0, 2.0, 3.0]))
    return x.grad


def _backward_through_shared_subexpression(lib):
    x, w = _xw(lib)
    h = x * w
    (h * h * h + h).sum().backward()
    return _grads(x, w)


def _backward_broadcast(lib):
    x = lib.ones(2, 3, requires_grad=True)
    b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = lib.tensor(2.0, requires_grad=True)
    ((x * b + s) ** 2).sum().backward()
    return _grads(x, b, s)


def _backward_dtype_mix(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    d = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    (x * d).sum().backward()
    return _grads(x, d)


def _autograd_backward_several(lib):
    x, w = _xw(lib)
    lib.autograd.backward([(x * w).sum(), x * 2], [None, lib.tensor([1.0, 1.0, 1.0])])
    return _grads(x, w)


def _autograd_backward_grad_tensors(lib):
    x, w = _xw(lib)
    lib.autograd.backward(x * w, grad_tensors=lib.tensor([1.0, 2.0, 3.0]))
    return _grads(x, w)


def _autograd_backward_inputs(lib):
    x, w = _xw(lib)
    lib.autograd.backward((x * w).sum(), inputs=[x])
    return _grads(x, w)


def _zero_grad_between_calls(lib):
    x, w = _xw(lib)
    (x * w).sum().backward()
    x.grad.zero_()
    w.grad = None
    (x * w).sum().backward()
    return _grads(x, w)


def _grad_data_zero(lib):
    x, w = _xw(lib)
    (x * w).sum().backward()
    x.grad.data.zero_()
    (x * 3).sum().backward()
    return x.grad


def _add_only_graph_runs_twice(lib):
    x, w = _xw(lib)
    y = (x + w + 1).sum()
    y.backward()
    y.backward()
    return _grads(x, w)


def _create_graph_backward(lib):
    x = lib.tensor([1.5, -0.5], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    first = x.grad
    grad_fn = first.grad_fn is not None
    x.grad = None
    first.sum().backward()
    return first.detach(), grad_fn, x.grad


BACKWARD_CASES = {
    "scalar": _backward_scalar,
    "gradient": _backward_gradient,
    "gradient of another dtype": _backward_gradient_float64,
    "accumulates across calls": _backward_accumulates,
    "retain_graph then again": _backward_retain_graph_twice,
    "inputs restricts accumulation": _backward_inputs_restricts,
    "inputs as one tensor": _backward_inputs_single_tensor,
    "inputs may be a non-leaf": _backward_inputs_non_leaf,
    "backward of a leaf": _backward_from_leaf,
    "shared subexpression": _backward_through_shared_subexpression,
    "broadcasting reduced once": _backward_broadcast,
    "mixed dtypes": _backward_dtype_mix,
    "autograd.backward several roots": _autograd_backward_several,
    "autograd.backward grad_tensors": _autograd_backward_grad_tensors,
    "autograd.backward inputs": _autograd_backward_inputs,
    "zeroing between calls": _zero_grad_between_calls,
    "grad.data.zero_()": _grad_data_zero,
    "add-only graph runs twice": _add_only_graph_runs_twice,
}


@pytest.mark.parametrize("case", BACKWARD_CASES, ids=str)
def test_backward_matches_torch(case: str) -> None:
    assert_same(BACKWARD_CASES[case], check_warnings=True)


def test_backward_leaves_grad_as_a_plain_leaf() -> None:
    def check(lib):
        x, w = _xw(lib)
        (x * w).sum().backward()
        return x.grad.requires_grad, x.grad.is_leaf, x.grad.grad_fn, x.grad is not w.grad

    assert_same(check)


# ----------------------------------------------------------------------------------------------
# autograd.grad


def _grad_basic(lib):
    x, w = _xw(lib)
    return lib.autograd.grad((x * w).sum(), [x, w])


def _grad_single_input(lib):
    x, w = _xw(lib)
    return lib.autograd.grad((x * w).sum(), x)


def _grad_outputs(lib):
    x, w = _xw(lib)
    return lib.autograd.grad(x * w, x, grad_outputs=lib.tensor([1.0, -1.0, 0.5]))


def _grad_several_outputs(lib):
    x, w = _xw(lib)
    return lib.autograd.grad([(x * w).sum(), (x * x).sum()], [x])


def _grad_non_leaf_input(lib):
    x, w = _xw(lib)
    h = x * w
    return lib.autograd.grad((h * h).sum(), [h, x])


def _grad_does_not_touch_dot_grad(lib):
    x, w = _xw(lib)
    lib.autograd.grad((x * w).sum(), [x])
    return _grads(x, w)


def _grad_allow_unused(lib):
    x, w = _xw(lib)
    return lib.autograd.grad((x * 2).sum(), [x, w], allow_unused=True)


def _grad_materialize(lib):
    x, w = _xw(lib)
    return lib.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)


def _grad_retain_graph(lib):
    x, w = _xw(lib)
    y = (x * w).sum()
    first = lib.autograd.grad(y, [x], retain_graph=True)
    second = lib.autograd.grad(y, [w])
    return first, second


def _grad_create_graph(lib):
    x, w = _xw(lib)
    (gx,) = lib.autograd.grad((x * x * w).sum(), [x], create_graph=True)
    return gx, lib.autograd.grad(gx.sum(), [x, w])


def _grad_same_input_twice(lib):
    x, w = _xw(lib)
    return lib.autograd.grad((x * w).sum(), [x, x])


def _grad_tuple_inputs(lib):
    x, w = _xw(lib)
    return lib.autograd.grad(outputs=((x * w).sum(),), inputs=(w,), grad_outputs=(None,))


GRAD_CASES = {
    "basic": _grad_basic,
    "single input": _grad_single_input,
    "grad_outputs": _grad_outputs,
    "several outputs": _grad_several_outputs,
    "non-leaf input": _grad_non_leaf_input,
    ".grad untouched": _grad_does_not_touch_dot_grad,
    "allow_unused": _grad_allow_unused,
    "materialize_grads": _grad_materialize,
    "retain_graph": _grad_retain_graph,
    "create_graph": _grad_create_graph,
    "same input twice": _grad_same_input_twice,
    "keywords and tuples": _grad_tuple_inputs,
}


@pytest.mark.parametrize("case", GRAD_CASES, ids=str)
def test_autograd_grad_matches_torch(case: str) -> None:
    assert_same(GRAD_CASES[case], check_warnings=True)


# ----------------------------------------------------------------------------------------------
# retain_grad and the .grad of non-leaves


def _retain_grad(lib):
    x, w = _xw(lib)
    h = x * w
    h.retain_grad()
    (h * h).sum().backward()
    return h.grad, h.retains_grad, x.grad


def _retain_grad_accumulates(lib):
    x, w = _xw(lib)
    h = x * w
    h.retain_grad()
    y = (h * h).sum()
    y.backward(retain_graph=True)
    y.backward()
    return h.grad


def _non_leaf_grad_is_none(lib):
    x, w = _xw(lib)
    h = x * w
    (h * h).sum().backward()
    return h.grad


@pytest.mark.parametrize(
    "case", [_retain_grad, _retain_grad_accumulates, _non_leaf_grad_is_none],
    ids=["retain_grad", "accumulates", "non-leaf warns"],
)
def test_retain_grad_matches_torch(case) -> None:
    assert_same(case, check_warnings=True)


# ----------------------------------------------------------------------------------------------
# Higher derivatives


def _derivatives(lib, fn, x_values, order: int):
    x = lib.tensor(x_values, dtype=lib.float64, requires_grad=True)
    results = []
    y = fn(lib, x).sum()
    for _ in range(order):
        (y,) = lib.autograd.grad(y, x, create_graph=True)
        results.append(y.detach())
        y = y.sum()
    return results


FUNCTIONS = {
    "x**3": lambda lib, x: x ** 3,
    "sin": lambda lib, x: lib.sin(x),
    "exp * x": lambda lib, x: lib.exp(x) * x,
    "tanh": lambda lib, x: lib.tanh(x),
    "x * x * x": lambda lib, x: x * x * x,
    "1 / x": lambda lib, x: 1 / x,
    "sqrt(x**2 + 1)": lambda lib, x: lib.sqrt(x ** 2 + 1),
    "log(x) * sigmoid(x)": lambda lib, x: lib.log(x) * lib.sigmoid(x),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_first_second_third_derivatives_match_torch(name: str) -> None:
    fn = FUNCTIONS[name]
    ours = _derivatives(chainrule, fn, [0.5, 1.25, 2.0], 3)
    theirs = _derivatives(torch, fn, [0.5, 1.25, 2.0], 3)
    for order, (a, b) in enumerate(zip(ours, theirs, strict=True), start=1):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=f"order {order}")


def test_known_derivatives_of_x_cubed() -> None:
    first, second, third = _derivatives(chainrule, FUNCTIONS["x**3"], [2.0], 3)
    assert (first.item(), second.item(), third.item()) == (12.0, 12.0, 6.0)


def test_mixed_partials_of_a_product() -> None:
    def mixed(lib):
        x = lib.tensor(2.0, requires_grad=True)
        y = lib.tensor(3.0, requires_grad=True)
        f = x * x * y + lib.sin(x * y)
        gx, gy = lib.autograd.grad(f, [x, y], create_graph=True)
        gxy = lib.autograd.grad(gx, y, retain_graph=True)
        gyx = lib.autograd.grad(gy, x)
        return gx, gy, gxy, gyx

    assert_same(mixed, values=False)
    ours = mixed(chainrule)
    theirs = mixed(torch)
    for a, b in zip(ours[:2] + ours[2] + ours[3], theirs[:2] + theirs[2] + theirs[3], strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    assert abs(ours[2][0].item() - ours[3][0].item()) < 1e-5  # the partials commute


@settings(max_examples=30, deadline=None)
@given(
    values=st.lists(st.floats(0.2, 3.0), min_size=1, max_size=4),
    name=st.sampled_from(sorted(FUNCTIONS)),
)
def test_second_derivatives_on_random_points(values: list[float], name: str) -> None:
    ours = _derivatives(chainrule, FUNCTIONS[name], values, 2)
    theirs = _derivatives(torch, FUNCTIONS[name], values, 2)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def test_backward_create_graph_records_the_gradient_and_warns() -> None:
    # PyTorch warns once per process, so the warning's text is checked, not compared.
    assert_same(_create_graph_backward)
    with pytest.warns(UserWarning) as caught:
        _create_graph_backward(chainrule)
    assert str(caught[0].message) == (
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this function, "
        "make sure to reset the .grad fields of your parameters to None after use to break the "
        "cycle and avoid the leak."
    )


# ----------------------------------------------------------------------------------------------
# The second backward


def _second_backward(lib):
    x, w = _xw(lib)
    y = (x * w).sum()
    y.backward()
    y.backward()


def _second_grad(lib):
    x, w = _xw(lib)
    y = (x.exp() * w).sum()
    lib.autograd.grad(y, [x])
    lib.autograd.grad(y, [x])


def _second_backward_after_create_graph_false(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 2).sum()
    y.backward(retain_graph=False)
    y.backward()


@pytest.mark.parametrize(
    "case", [_second_backward, _second_grad, _second_backward_after_create_graph_false],
    ids=["backward twice", "grad twice", "explicit retain_graph=False"],
)
def test_second_backward_raises_like_torch(case) -> None:
    assert_raises_same(case)


def test_second_backward_error_leaves_grads_unchanged() -> None:
    x, w = _xw(chainrule)
    y = (x * w).sum()
    y.backward()
    before = x.grad.tolist(), w.grad.tolist()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    assert (x.grad.tolist(), w.grad.tolist()) == before


# Backward twice without retain_graph: PyTorch raises exactly when a node that saved something
# (a tensor, an index tensor, a wrapped number) is run again, or a CopySlices (which drops its
# op's node); a graph of nodes that saved nothing runs again. ``b`` requires grad.
SECOND_RUN_PROGRAMS = {
    "issue_12_index_put": "c = lib.zeros(3); c[[1, 2]] = b[[1, 1]]; out = c",
    "index_list": "out = b[[1, 1]]",
    "index_tensor": "out = b[lib.tensor([0, 2])]",
    "index_mask": "out = b[b > 1.5]",
    "index_put_self": "c = b.clone(); c[[0]] = 5.0; out = c",
    "slice_copy": "c = lib.zeros(3); c[1:] = b[:2]; out = c",
    "slice_copy_saving": "c = lib.zeros(3); c[1:] = b[:2] * 2; out = c",
    "view_inplace_add": "c = b.clone(); c[:2].add_(1.0); out = c",
    "add_only": "out = b + b",
    "sub_neg_view": "out = (-(b - b[0])).view(3, 1).t()",
    "mul_number": "out = b * 2.0",
    "sum_cat": "out = lib.cat([b, b]).sum()",
    "expand_permute": "out = b[None].expand(2, 3).permute(1, 0)",
    "clone_to": "out = b.clone().to(lib.float64)",
    "exp": "out = b.exp()",
    "mul_inplace": "c = b * 1; c.mul_(2.0); out = c",
    "gather": "out = b.gather(0, lib.tensor([0, 0]))",
    "index_select": "out = b.index_select(0, lib.tensor([1]))",
    "masked_fill": "out = b.masked_fill(b > 1.5, 0.0)",
    "where": "out = lib.where(b > 1.5, b, b * b)",
    "split_unbind": "out = lib.cat(b.split(1)) + lib.stack(b.unbind())",
    "relu_sum": "out = b.relu().sum()",
}


def _run_twice(program: str, lib) -> tuple:
    b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    scope = {"lib": lib, "b": b}
    exec(program, scope)  # noqa: S102 - the programs above
    out = scope["out"]
    outcomes = []
    for _ in range(2):
        try:
            out.backward(lib.ones_like(out))
            outcomes.append("ok")
        except RuntimeError as error:
            outcomes.append(str(error).split(" Saved intermediate")[0])
    return outcomes, b.grad.tolist()


@pytest.mark.parametrize("name", sorted(SECOND_RUN_PROGRAMS))
def test_second_backward_runs_again_exactly_when_pytorch_does(name: str) -> None:
    program = SECOND_RUN_PROGRAMS[name]
    ours, theirs = _run_twice(program, chainrule), _run_twice(program, torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_retain_graph_allows_any_number_of_backwards() -> None:
    x = chainrule.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    for _ in range(3):
        y.backward(retain_graph=True)
    expected = 3 * (np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# The graph: node types and edges, walked through next_functions


def graph_structure(root: Any) -> list[tuple[str, tuple]]:
    """Every node reachable from ``root`` (breadth first, in edge order): its type's name and
    its edges as (index of the next node, input_nr) or None. Equal lists mean equal graphs."""
    order = [root]
    index = {root: 0}
    structure = []
    position = 0
    while position < len(order):
        node = order[position]
        position += 1
        edges = []
        for child, input_nr in node.next_functions:
            if child is None:
                edges.append(None)
                continue
            if child not in index:
                index[child] = len(order)
                order.append(child)
            edges.append((index[child], input_nr))
        structure.append((type(node).__name__, tuple(edges)))
    return structure


def _operand(lib, shape, requires_grad: bool, seed: int, permuted: bool = False):
    rng = np.random.default_rng(seed)
    if permuted:  # the same values with the first two dimensions stored swapped
        stored = rng.standard_normal((shape[1], shape[0]) + tuple(shape[2:]))
        x = lib.from_numpy(stored)
        if requires_grad:
            x.requires_grad_()
        return x.transpose(0, 1)
    x = lib.from_numpy(rng.standard_normal(shape))
    return x.requires_grad_() if requires_grad else x


def _matmul_graph(shapes, requires, permuted=False):
    def build(lib):
        a, b = (_operand(lib, s, r, seed, permuted and len(s) >= 3)
                for seed, (s, r) in enumerate(zip(shapes, requires, strict=True)))
        out = lib.matmul(a, b)
        return graph_structure(out.grad_fn), out

    return build


REQUIRES = {"both": (True, True), "first": (True, False), "second": (False, True)}


@pytest.mark.parametrize("who", REQUIRES)
@pytest.mark.parametrize("case", MATMUL_SHAPES)
def test_matmul_graph_matches_torch(case: str, who: str) -> None:
    """The same nodes and edges as PyTorch, which folds batches into one mm when the smaller
    operand requires grad, and otherwise only when folding is a view."""
    build = _matmul_graph(MATMUL_SHAPES[case], REQUIRES[who])
    ours, theirs = build(chainrule), build(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1].detach().numpy(), theirs[1].detach().numpy(), rtol=1e-12)


@st.composite
def _matmul_operands(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], tuple]:
    """Shapes of any ranks 1-4 whose batch dimensions broadcast, and who requires grad."""
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    n, m, p = (draw(st.integers(1, 3)) for _ in range(3))

    def operand(rows: int, cols: int, is_vector: bool) -> tuple[int, ...]:
        if is_vector:
            return (m,)
        kept = batch[len(batch) - draw(st.integers(0, len(batch))):]
        kept = [size if draw(st.booleans()) else 1 for size in kept]
        return (*kept, rows, cols)

    a = operand(n, m, draw(st.booleans()))
    b = operand(m, p, draw(st.booleans()))
    requires = draw(st.sampled_from(list(REQUIRES.values())))
    return a, b, requires


@settings(max_examples=60, deadline=None)
@given(operands=_matmul_operands())
def test_matmul_of_random_ranks_matches_torch(operands) -> None:
    """Values, graph and both gradients equal PyTorch's for random ranks and batches."""
    a_shape, b_shape, requires = operands

    def run(lib):
        a, b = (_operand(lib, s, r, seed)
                for seed, (s, r) in enumerate(zip((a_shape, b_shape), requires, strict=True)))
        out = lib.matmul(a, b)
        cotangent = lib.from_numpy(np.random.default_rng(9).standard_normal(tuple(out.shape)))
        wanted = [t for t in (a, b) if t.requires_grad]
        grads = lib.autograd.grad(out, wanted, cotangent)
        return graph_structure(out.grad_fn), [out, *grads]

    ours, theirs = run(chainrule), run(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("who", REQUIRES)
@pytest.mark.parametrize("case", ["3-2", "2-3", "1-3", "3-1", "4-2"])
def test_matmul_graph_of_non_contiguous_batches_matches_torch(case: str, who: str) -> None:
    build = _matmul_graph(MATMUL_SHAPES[case], REQUIRES[who], permuted=True)
    ours, theirs = build(chainrule), build(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1].detach().numpy(), theirs[1].detach().numpy(), rtol=1e-12)


def test_reshape_of_viewable_non_contiguous_tensor_records_alias() -> None:
    def build(lib):
        sliced = lib.ones(4, 6, requires_grad=True)[:, :3]
        swapped = lib.ones(3, 2, 4, requires_grad=True).transpose(0, 1)
        return (graph_structure(sliced.reshape(2, 2, 3).grad_fn),
                graph_structure(swapped.reshape(2, 3, 2, 2).grad_fn))

    assert_same(build)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
@pytest.mark.parametrize("weight_grad", [True, False], ids=["weight grad", "frozen weight"])
@pytest.mark.parametrize("case", LINEAR_INPUTS)
def test_linear_graph_matches_torch(case: str, weight_grad: bool, bias: bool) -> None:
    def build(lib):
        x = _operand(lib, LINEAR_INPUTS[case], True, 0)
        w = _operand(lib, (4, 3), weight_grad, 1)
        args = [x, w] + ([_operand(lib, (4,), True, 2)] if bias else [])
        out = lib.nn.functional.linear(*args)
        return graph_structure(out.grad_fn), out

    ours, theirs = build(chainrule), build(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1].detach().numpy(), theirs[1].detach().numpy(), rtol=1e-12)


GRAPH_CASES = {
    "seed example": lambda lib: (lambda w, x: (x + w) * (w + 1))(
        lib.tensor([1.0], requires_grad=True), lib.tensor([2.0], requires_grad=True)
    ),
    "constant operand": lambda lib: lib.tensor([1.0], requires_grad=True) * lib.tensor([2.0]),
    "reused leaf": lambda lib: (lambda x: x * x + x)(lib.tensor([1.0], requires_grad=True)),
    "sum of mm": lambda lib: lib.mm(lib.ones(2, 3, requires_grad=True),
                                   lib.ones(3, 2, requires_grad=True)).sum(),
    "pow and exp": lambda lib: (lambda x: (x ** 2).exp().mean())(lib.ones(3, requires_grad=True)),
    "addmm": lambda lib: lib.addmm(lib.zeros(2, requires_grad=True),
                                   lib.ones(3, 4, requires_grad=True).t().t()[:, :3],
                                   lib.ones(3, 2, requires_grad=True)),
}


@pytest.mark.parametrize("case", GRAPH_CASES, ids=str)
def test_graph_structure_matches_torch(case: str) -> None:
    make = GRAPH_CASES[case]
    assert graph_structure(make(chainrule).grad_fn) == graph_structure(make(torch).grad_fn)


def test_one_accumulate_grad_per_leaf() -> None:
    def accumulators(lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = x * 2 + x * 3
        first = y.grad_fn.next_functions[0][0].next_functions[0][0]
        second = y.grad_fn.next_functions[1][0].next_functions[0][0]
        return first is second, first.variable is x, type(first).__name__

    assert_same(accumulators)


def test_accumulate_grad_name_matches_torch() -> None:
    x = chainrule.tensor([1.0], requires_grad=True)
    y = torch.tensor([1.0], requires_grad=True)
    ours = (x * 2).grad_fn.next_functions[0][0].name()
    theirs = (y * 2).grad_fn.next_functions[0][0].name()
    assert ours == theirs.replace("torch::", "chainrule::")
