"""chainrule.static, TensorFlow 1's define-then-run on chainrule's IR.

What TensorFlow 1 prints for the programs of ``tests/static_tf1/programs.py`` was recorded in
``tests/static_tf1/recorded.json`` by ``tests/static_tf1/record.py``, from a run of TensorFlow
2.21's ``tf.compat.v1`` with ``disable_v2_behavior()`` (TensorFlow 1's graph mode and reference
variables). TensorFlow is not installed for the tests: tensorflow-cpu is 1.6 GB installed and
took 90 s to install from PyPI here, on top of every CI run, for outputs that do not change;
re-run ``record.py`` where it is installed to refresh them.

Values and gradients are also compared with PyTorch and with chainrule's eager mode running
the same program.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import chainrule
import chainrule.static as tf
from tests.static_tf1.programs import PRELUDE, PROGRAMS

RECORDED = json.loads(
    (Path(__file__).parent / "static_tf1" / "recorded.json").read_text(encoding="utf-8")
)

# Operations TensorFlow's gradient code adds that the IR's gradient graph does without: the
# shape constants of its ``Fill``, and the ``tuple/group_deps`` / ``control_dependency`` nodes
# that order an operation's input gradients (the interpreter runs in graph order anyway).
_TF_GRADIENT_INTERNALS = re.compile(
    r"'gradients(_\d+)?/([^']*/)?(Shape|grad_ys_\d+/Const|[^']*_grad/tuple/[^']*):\w+', "
)


def _run(source: str) -> str:
    tf.reset_default_graph()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(PRELUDE + source, {"tf": tf, "__name__": "__program__"})
    return out.getvalue()


@pytest.fixture(autouse=True)
def _fresh_default_graph() -> None:
    tf.reset_default_graph()


def test_the_seed_cell_prints_what_tensorflow_1_prints() -> None:
    assert _run(PROGRAMS["seed"]) == 'Tensor("Mul:0", shape=(), dtype=float32)\n6.0\n'
    assert RECORDED["outputs"]["seed"] == 'Tensor("Mul:0", shape=(), dtype=float32)\n6.0\n'


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_programs_print_what_tensorflow_1_prints(name: str) -> None:
    expected = _TF_GRADIENT_INTERNALS.sub("", RECORDED["outputs"][name])
    assert _run(PROGRAMS[name]) == expected


def test_recorded_outputs_come_from_tensorflow() -> None:
    assert RECORDED["tensorflow"].startswith("2.")
    assert set(RECORDED["outputs"]) == set(PROGRAMS)


# -- the same program, static and dynamic ---------------------------------------------------------


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(1)
    x = np.concatenate([rng.normal(1.5, 1.0, (16, 2)), rng.normal(-1.5, 1.0, (16, 2))])
    y = np.concatenate([np.ones((16, 1)), np.zeros((16, 1))])
    return x.astype(np.float32), y.astype(np.float32)


W0 = np.array([[0.3], [-0.2]], np.float32)
B0 = np.array([0.1], np.float32)


def _static_logistic_regression(steps: int) -> tuple[list[float], list[np.ndarray]]:
    X, Y = _data()
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(W0)
    b = tf.Variable(B0)
    logits = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tf.gradients(loss, [w, b])
    train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first_grads = sess.run(grads, {x: X, y: Y})
        for _ in range(steps):
            losses.append(float(sess.run(loss, {x: X, y: Y})))
            sess.run(train, {x: X, y: Y})
        final = sess.run([w, b])
    return losses, [*first_grads, *final]


def _dynamic_logistic_regression(lib: object, steps: int) -> tuple[list[float], list[np.ndarray]]:
    X, Y = _data()
    x, y = lib.tensor(X), lib.tensor(Y)  # type: ignore[attr-defined]
    w = lib.tensor(W0, requires_grad=True)  # type: ignore[attr-defined]
    b = lib.tensor(B0, requires_grad=True)  # type: ignore[attr-defined]
    bce = lib.nn.functional.binary_cross_entropy_with_logits  # type: ignore[attr-defined]
    optimizer = lib.optim.SGD([w, b], lr=0.2)  # type: ignore[attr-defined]
    first = lib.autograd.grad(bce(x @ w + b, y), [w, b])  # type: ignore[attr-defined]
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = bce(x @ w + b, y)
        losses.append(float(loss.item()))
        loss.backward()
        optimizer.step()
    arrays = [np.array(t.detach().numpy()) for t in (*first, w, b)]
    return losses, arrays


@pytest.mark.parametrize("lib", [torch, chainrule], ids=["pytorch", "chainrule-eager"])
def test_logistic_regression_static_matches_dynamic(lib: object) -> None:
    static_losses, static_arrays = _static_logistic_regression(30)
    tf.reset_default_graph()
    losses, arrays = _dynamic_logistic_regression(lib, 30)
    np.testing.assert_allclose(static_losses, losses, rtol=2e-6, atol=1e-7)
    for ours, theirs in zip(static_arrays, arrays, strict=True):
        assert ours.dtype == np.float32 and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)
    assert static_losses[-1] < static_losses[0] / 2


def test_two_layer_network_gradients_match_pytorch() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 5)).astype(np.float64)
    labels = np.eye(3)[rng.integers(0, 3, 8)]
    W1 = rng.normal(size=(5, 4))
    W2 = rng.normal(size=(4, 3))
    b1 = rng.normal(size=4)
    x = tf.placeholder(tf.float64, [None, 5])
    t = tf.placeholder(tf.float64, [None, 3])
    w1, w2, v1 = tf.Variable(W1), tf.Variable(W2), tf.Variable(b1)
    hidden = tf.nn.relu(tf.matmul(x, w1) + v1)
    probabilities = tf.nn.softmax(tf.matmul(hidden, w2))
    loss = tf.reduce_mean(-tf.reduce_sum(t * tf.log(probabilities), axis=1))
    grads = tf.gradients(loss, [w1, w2, v1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run([loss, *grads], {x: X, t: labels})
    tw1, tw2, tb1 = (torch.tensor(a, requires_grad=True) for a in (W1, W2, b1))
    p = torch.softmax(torch.relu(torch.tensor(X) @ tw1 + tb1) @ tw2, dim=1)
    expected = (-(torch.tensor(labels) * torch.log(p)).sum(1)).mean()
    expected.backward()
    np.testing.assert_allclose(values[0], expected.item(), rtol=1e-12)
    for ours, theirs in zip(values[1:], (tw1, tw2, tb1), strict=True):
        np.testing.assert_allclose(ours, theirs.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_seed_gradients_and_second_order_match_pytorch() -> None:
    w = tf.constant(1.0)
    x = tf.constant(2.0)
    y = tf.multiply(tf.add(w, x), tf.add(w, 1))
    (dw,) = tf.gradients(y, [w])
    (ddw,) = tf.gradients(dw, [w])
    with tf.Session() as sess:
        values = sess.run([y, dw, ddw])
    tw = torch.tensor(1.0, requires_grad=True)
    ty = (tw + 2.0) * (tw + 1)
    (first,) = torch.autograd.grad(ty, tw, create_graph=True)
    (second,) = torch.autograd.grad(first, tw)
    assert [float(v) for v in values] == [ty.item(), first.item(), second.item()]
    assert [type(v) for v in values] == [np.float32] * 3


# -- errors -------------------------------------------------------------------------------------


def test_run_time_errors_are_tensorflow_op_errors_naming_the_operation() -> None:
    p = tf.placeholder(tf.float32, [None, 2], name="inputs")
    v = tf.Variable(1.0, name="v")
    total = tf.reduce_sum(p) * v
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as unfed:
            sess.run(total)
        assert isinstance(unfed.value, tf.errors.OpError)
        assert unfed.value.op.name == "inputs"
        assert str(unfed.value) == (
            "You must feed a value for placeholder tensor 'inputs' with dtype float and "
            "shape [?,2]\n\t [[{{node inputs}}]]"
        )
        with pytest.raises(tf.errors.FailedPreconditionError) as uninitialized:
            sess.run(total, {p: [[1.0, 2.0]]})
        assert uninitialized.value.op.name == "v"
        with pytest.raises(
            ValueError,
            match=r"Cannot feed value of shape \(2,\) for Tensor "
            r"inputs:0, which has shape \(\?, 2\)",
        ):
            sess.run(total, {p: [1.0, 2.0]})


def test_a_failed_run_changes_no_variable() -> None:
    p = tf.placeholder(tf.float32, [])
    v = tf.Variable(2.0)
    step = tf.train.GradientDescentOptimizer(0.5).minimize(v * p)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(step)
        assert sess.run(v) == 2.0
        sess.run(step, {p: 3.0})
        assert sess.run(v) == 0.5


def test_a_bad_operation_adds_nothing_to_the_graph() -> None:
    a = tf.constant([1.0, 2.0])
    b = tf.constant([1.0, 2.0, 3.0])
    before = [op.name for op in tf.get_default_graph().get_operations()]
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.add(a, b)
    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op has type int32"):
        tf.add(a, tf.constant([1, 2]))
    after = [op.name for op in tf.get_default_graph().get_operations()]
    assert after == [*before, "Const_2"]  # (the int32 constant itself, made by the caller)


# -- sessions, graphs and the IR ------------------------------------------------------------------


def test_default_session_eval_and_interactive_session() -> None:
    v = tf.Variable([1.0, 2.0])
    doubled = v * 2
    with pytest.raises(ValueError, match="No default session is registered"):
        doubled.eval()
    sess = tf.InteractiveSession()
    try:
        tf.global_variables_initializer().run()
        assert doubled.eval().tolist() == [2.0, 4.0]
        assert v.eval().tolist() == [1.0, 2.0]
        assert tf.get_default_session() is sess
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_sessions_keep_their_own_variables() -> None:
    v = tf.Variable(1.0)
    bump = v.assign_add(1.0)
    init = tf.global_variables_initializer()
    first, second = tf.Session(), tf.Session()
    first.run(init)
    second.run(init)
    first.run(bump)
    assert (first.run(v), second.run(v)) == (2.0, 1.0)


def test_the_graph_is_chainrule_ir() -> None:
    w = tf.constant(1.0)
    y = tf.multiply(tf.add(w, 2.0), w)
    graph = tf.get_default_graph().ir
    assert [n.name for n in graph.nodes] == ["Const", "Add/y", "Add", "Mul"]
    code = graph.code([y._value])
    assert "    Add = ops.pointwise.add(Const, Add_y)" in code
    assert "    Mul = ops.pointwise.mul(Add, Const)" in code
    assert "Mul" in graph.table()


def test_random_initial_values_are_drawn_once_per_initializer_run() -> None:
    chainrule.manual_seed(0)
    v = tf.Variable(tf.random_normal([3], stddev=0.5))
    noise = tf.random_uniform([2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(v)
        assert np.array_equal(first, sess.run(v))
        sess.run(tf.global_variables_initializer())
        assert not np.array_equal(first, sess.run(v))
        assert not np.array_equal(sess.run(noise), sess.run(noise))
    assert first.dtype == np.float32 and first.shape == (3,)


def test_session_run_of_the_seed_folds_its_constants() -> None:
    w = tf.constant(1.0)
    y = tf.multiply(tf.add(w, 2.0), tf.add(w, 1))
    with tf.Session() as sess:
        assert sess.run(y) == 6.0
        assert sess.run(y, {w: 2.0}) == 12.0  # fed: computed from the fed value
        assert sess.run(y) == 6.0


def test_softmax_cross_entropy_matches_pytorch_and_v1_stops_label_gradients() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(5, 3))
    L = np.eye(3)[[0, 2, 1, 1, 0]] * 0.7 + 0.1
    x = tf.placeholder(tf.float64, [None, 3])
    labels = tf.placeholder(tf.float64, [None, 3])
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=x)
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
    grads = tf.gradients(tf.reduce_sum(v2), [x, labels])
    v1_grads = tf.gradients(tf.reduce_sum(v1), [x, labels])
    assert v1_grads[1] is None
    with tf.Session() as sess:
        feed = {x: X, labels: L}
        values, g_x, g_labels, g1_x = sess.run([v2, *grads, v1_grads[0]], feed)
        top, smallest = sess.run([tf.argmax(x, 1), tf.reduce_min(x, axis=0)], feed)
    tx = torch.tensor(X, requires_grad=True)
    tl = torch.tensor(L, requires_grad=True)
    expected = torch.nn.functional.cross_entropy(tx, tl, reduction="none")
    expected.sum().backward()
    np.testing.assert_allclose(values, expected.detach().numpy(), rtol=1e-13)
    np.testing.assert_allclose(g_x, tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g1_x, tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g_labels, tl.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert top.dtype == np.int64 and top.tolist() == torch.argmax(tx, 1).tolist()
    assert smallest.tolist() == torch.amin(tx, 0).tolist()


def test_dtypes_and_shapes_as_tensorflow_1_has_them() -> None:
    assert tf.float32.is_floating and not tf.int32.is_floating and tf.int64.is_integer
    assert tf.float32.as_numpy_dtype is np.float32 and tf.as_dtype(np.float64) == tf.float64
    assert tf.as_dtype("int32") is tf.int32 and tf.float32 == "float32"
    v = tf.Variable([1.0])
    assert v.dtype.name == "float32_ref" and v.dtype.base_dtype is tf.float32
    p = tf.placeholder(tf.float32, [None, 3])
    assert p.shape.as_list() == [None, 3] and p.shape.ndims == 2
    assert repr(p.shape[0]) == "Dimension(None)" and str(p.shape[1]) == "3"
    assert not p.shape.is_fully_defined() and p.shape.is_compatible_with([7, 3])
    assert not p.shape.is_compatible_with([7, 4])
    with pytest.raises(TypeError, match="Cannot convert value 'x' to a TensorFlow DType."):
        tf.as_dtype("x")


def test_slicing_gradients_match_pytorch_and_bad_indices_raise() -> None:
    values = np.arange(12.0).reshape(3, 4)
    x = tf.placeholder(tf.float64, [None, 4])
    y = tf.reduce_sum(x[:, 1:3] * x[0, 1:3]) + x[2, 3] * 2.0
    (grad,) = tf.gradients(y, [x])
    with tf.Session() as sess:
        ours = sess.run([y, grad], {x: values})
    t = torch.tensor(values, requires_grad=True)
    expected = (t[:, 1:3] * t[0, 1:3]).sum() + t[2, 3] * 2.0
    expected.backward()
    assert ours[0] == expected.item()
    np.testing.assert_array_equal(ours[1], t.grad.numpy())
    with pytest.raises(ValueError, match="positive steps only"):
        x[::-1]
    with pytest.raises(TypeError, match="are valid indices, got 'a'"):
        x["a"]
