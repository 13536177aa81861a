"""chainrule.static's Session.run plans (``static/run_plan.py``): a run of the same fetches and
feed keys is compiled once (constants folded, a generated NumPy function of the feeds, or the
runner for variables), and every later run gives what the first way gives, values compared
with PyTorch computing the same, TensorFlow 1's types and errors at every run, and the plans
dropped or bypassed when they no longer hold (the graph grows, a variable is assigned again,
other feed keys, a closed session, a feed that must be checked)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import chainrule.static as tf
from chainrule.static import errors


def _seed_constants():
    graph = tf.Graph()
    with graph.as_default():
        w = tf.constant(1.0)
        x = tf.constant(2.0)
        a = tf.add(w, x)
        b = tf.add(w, 1)
        y = tf.multiply(a, b)
    return graph, w, x, y


def _seed_fed(shape=()):
    graph = tf.Graph()
    with graph.as_default():
        w = tf.placeholder(tf.float32, shape)
        x = tf.placeholder(tf.float32, shape)
        y = tf.multiply(tf.add(w, x), tf.add(w, 1))
    return graph, w, x, y


def _torch_seed(w, x):
    w, x = torch.tensor(np.array(w)), torch.tensor(np.array(x))
    return ((w + x) * (w + 1)).numpy()


def _kinds(sess):
    return sorted(plan.kind for plan in sess._plans.values())


# -- the seed cell: folded, TensorFlow's types ----------------------------------------------------


def test_seed_constants_are_folded_and_keep_tf1_types():
    graph, w, x, y = _seed_constants()
    expected = _torch_seed(1.0, 2.0)
    with tf.Session(graph=graph) as sess:
        results = [sess.run(y) for _ in range(4)]
        assert _kinds(sess) == ["constant"]
        for result in results:
            assert type(result) is np.float32
            assert result == expected
        listed = [sess.run([y, w]) for _ in range(3)]
        for result in listed:
            assert type(result) is list and result == [np.float32(6.0), np.float32(1.0)]
        assert listed[0] is not listed[1]
        assert sess.run((y, x)) == (np.float32(6.0), np.float32(2.0))
        assert type(sess.run((y, x))) is tuple
        for _ in range(3):
            result = sess.run({"y": y, "w": w})
            assert type(result) is dict and result == {"y": 6.0, "w": 1.0}
        assert [sess.run("Mul:0") for _ in range(3)] == [6.0] * 3


def test_folded_gradients_match_pytorch():
    graph, w, x, y = _seed_constants()
    with graph.as_default():
        grads = tf.gradients(y, [w, x])
    tw = torch.tensor(1.0, requires_grad=True)
    tx = torch.tensor(2.0, requires_grad=True)
    expected = torch.autograd.grad((tw + tx) * (tw + 1), [tw, tx])
    with tf.Session(graph=graph) as sess:
        for _ in range(3):
            got = sess.run(grads)
            assert type(got) is list and [type(g) for g in got] == [np.float32] * 2
            assert got == [e.item() for e in expected]


def test_an_array_fetch_is_a_new_array_at_each_run():
    graph = tf.Graph()
    with graph.as_default():
        c = tf.constant([1.0, 2.0, 3.0])
        y = tf.multiply(c, 2.0)
    with tf.Session(graph=graph) as sess:
        first = sess.run(y)
        first[0] = 100.0
        second = sess.run(y)
        assert second is not first
        second[1] = -1.0
        np.testing.assert_array_equal(sess.run(y), torch.tensor([1.0, 2.0, 3.0]).mul(2).numpy())
        assert sess.run(y).dtype == np.float32


def test_random_ops_are_not_folded():
    graph = tf.Graph()
    with graph.as_default():
        r = tf.random_normal((4,))
        y = tf.multiply(r, 2.0)
    with tf.Session(graph=graph) as sess:
        runs = [sess.run(y) for _ in range(3)]
        assert "constant" not in _kinds(sess)
    assert not np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[1], runs[2])


# -- fed placeholders: the generated plan ---------------------------------------------------------


def test_fed_runs_match_pytorch_run_after_run():
    graph, w, x, y = _seed_fed()
    rng = np.random.default_rng(0)
    with tf.Session(graph=graph) as sess:
        for wv, xv in [(1.0, 2.0), *rng.standard_normal((6, 2)).tolist(), (0.0, -0.0)]:
            got = sess.run(y, feed_dict={w: wv, x: xv})
            assert type(got) is np.float32
            expected = _torch_seed(np.float32(wv), np.float32(xv))
            assert got.tobytes() == expected.tobytes()
        assert _kinds(sess) == ["generated"]


def test_fed_arrays_noncontiguous_float64_ints_and_specials():
    graph, w, x, y = _seed_fed((None, 3))
    base = np.arange(12.0).reshape(3, 4)
    cases = [
        (base[:, :3], base[:, 1:]),  # non-contiguous views
        (base.T[:3, :3].astype(np.float64), np.ones((3, 3))),  # float64 is converted
        ([[1, 2, 3]], [[4, 5, 6]]),  # Python ints
        (np.array([[np.inf, -np.inf, np.nan]]), np.array([[0.0, np.inf, 1.0]])),
        (np.broadcast_to(np.float32(2.0), (2, 3)), np.zeros((2, 3))),  # expanded
    ]
    with tf.Session(graph=graph) as sess:
        for _ in range(2):
            for wv, xv in cases:
                got = sess.run(y, feed_dict={w: wv, x: xv})
                expected = _torch_seed(np.asarray(wv, np.float32), np.asarray(xv, np.float32))
                assert got.dtype == np.float32 and got.shape == expected.shape
                np.testing.assert_array_equal(got, expected)


def test_float16_placeholders():
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float16, (None,))
        b = tf.placeholder(tf.float16, (None,))
        y = tf.multiply(tf.add(a, b), b)
    av = np.array([1.0, 65504.0, 0.1, -3.0])
    bv = np.array([1e-4, 1.0, 0.2, 3.0])
    ta, tb = torch.tensor(av, dtype=torch.float16), torch.tensor(bv, dtype=torch.float16)
    expected = ((ta + tb) * tb).numpy()
    with tf.Session(graph=graph) as sess:
        for _ in range(3):
            got = sess.run(y, feed_dict={a: av, b: bv})
            assert got.dtype == np.float16
            np.testing.assert_array_equal(got, expected)


def test_fed_run_warns_nothing_on_inf_and_nan():
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, ())
        b = tf.placeholder(tf.float32, ())
        y = tf.divide(a, b)
        z = tf.log(a)
    with tf.Session(graph=graph) as sess:
        sess.run([y, z], feed_dict={a: 1.0, b: 2.0})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(2):
                got = sess.run([y, z], feed_dict={a: 1.0, b: 0.0})
                assert got[0] == np.inf and got[1] == 0.0
                got = sess.run([y, z], feed_dict={a: -1.0, b: 0.0})
                assert got[0] == -np.inf and np.isnan(got[1])
        expected = torch.tensor(-1.0) / torch.tensor(0.0)
        assert got[0] == expected.item()


def test_feeding_an_intermediate_tensor_and_other_feed_keys():
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, ())
        b = tf.placeholder(tf.float32, ())
        c = tf.placeholder(tf.float32, ())
        s = tf.add(a, b)
        y = tf.multiply(s, c)
    with tf.Session(graph=graph) as sess:
        assert sess.run(y, {a: 1.0, b: 2.0, c: 3.0}) == 9.0
        assert sess.run(y, {s: 10.0, c: 3.0}) == 30.0
        assert sess.run(y, {c: 3.0, b: 2.0, a: 1.0}) == 9.0  # (other order: another plan)
        assert sess.run(y, {"Placeholder:0": 4.0, b: 2.0, c: 1.0}) == 6.0
        for _ in range(3):
            with pytest.raises(
                errors.InvalidArgumentError, match="placeholder tensor 'Placeholder_2'"
            ):
                sess.run(y, {a: 1.0, b: 2.0})
        assert sess.run(y, {a: 1.0, b: 2.0, c: 3.0}) == 9.0


# -- the same errors at every run ------------------------------------------------------------------


def test_an_unfed_placeholder_raises_tf1_error_at_every_run():
    graph, w, x, y = _seed_fed()
    with tf.Session(graph=graph) as sess:
        messages = []
        for _ in range(3):
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(y)
            messages.append(info.value.message)
        assert sess.run(y, {w: 1.0, x: 2.0}) == 6.0
        for _ in range(3):
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(y)
            messages.append(info.value.message)
        for _ in range(2):
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(y, {w: 1.0})
            assert "Placeholder_1" in info.value.message
    assert len(set(messages)) == 1
    assert messages[0].startswith(
        "You must feed a value for placeholder tensor 'Placeholder' with dtype float and shape []"
    )


def test_a_bad_feed_after_a_plan_raises_as_before():
    graph, w, x, y = _seed_fed((2,))
    with tf.Session(graph=graph) as sess:
        assert sess.run(y, {w: [1.0, 2.0], x: [3.0, 4.0]}).tolist() == [8.0, 18.0]
        for _ in range(2):
            with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor"):
                sess.run(y, {w: [1.0, 2.0, 3.0], x: [3.0, 4.0]})
            with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
                sess.run(y, {w: y, x: [3.0, 4.0]})
            with pytest.raises(ValueError):
                sess.run(y, {w: "spam", x: [3.0, 4.0]})
        assert sess.run(y, {w: [1.0, 2.0], x: [3.0, 4.0]}).tolist() == [8.0, 18.0]


def test_a_closed_session_raises_at_every_run():
    graph, w, x, y = _seed_constants()
    sess = tf.Session(graph=graph)
    assert sess.run(y) == 6.0
    sess.close()
    for _ in range(3):
        with pytest.raises(RuntimeError, match="Attempted to use a closed Session."):
            sess.run(y)
    with tf.Session(graph=graph) as sess2:
        assert sess2.run(y) == 6.0
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session."):
        sess2.run(y)


# -- the plan dropped when it no longer holds ---------------------------------------------


def test_the_graph_growing_after_a_run():
    graph, w, x, y = _seed_constants()
    with tf.Session(graph=graph) as sess:
        assert sess.run(y) == 6.0
        with graph.as_default():
            z = tf.multiply(y, 2.0)
        assert sess.run(y) == 6.0
        assert sess.run(z) == 12.0
        with graph.as_default():
            p = tf.placeholder(tf.float32, ())
            q = tf.add(z, p)
        assert sess.run(q, {p: 1.0}) == 13.0
        assert sess.run([y, z, q], {p: 2.0}) == [6.0, 12.0, 14.0]
        for _ in range(2):
            with pytest.raises(errors.InvalidArgumentError, match="You must feed"):
                sess.run(q)


def test_variables_assigned_and_initialised_again():
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(1.0)
        p = tf.placeholder(tf.float32, ())
        y = tf.add(tf.multiply(v, 2.0), p)
        set5 = tf.assign(v, 5.0)
        bump = tf.assign_add(v, 1.0)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        for _ in range(2):
            with pytest.raises(
                errors.FailedPreconditionError, match="uninitialized value Variable"
            ):
                sess.run(y, {p: 0.0})
        sess.run(init)
        assert sess.run(y, {p: 0.0}) == 2.0
        assert sess.run(set5) == 5.0
        assert sess.run(y, {p: 0.5}) == 10.5
        assert [sess.run(bump) for _ in range(3)] == [6.0, 7.0, 8.0]
        assert sess.run(v) == 8.0 and sess.run(y, {p: 0.0}) == 16.0
        sess.run(init)
        assert sess.run(v) == 1.0 and sess.run(y, {p: 0.0}) == 2.0


def test_training_loop_matches_pytorch_sgd():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((8, 3)).astype(np.float32)
    ys = (rng.random((8, 1)) > 0.5).astype(np.float32)
    w0 = rng.standard_normal((3, 1)).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, (None, 3))
        t = tf.placeholder(tf.float32, (None, 1))
        w = tf.Variable(w0)
        b = tf.Variable(0.0)
        logits = tf.add(tf.matmul(x, w), b)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=t, logits=logits))
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        init = tf.global_variables_initializer()
    tw = torch.tensor(w0, requires_grad=True)
    tb = torch.tensor(0.0, requires_grad=True)
    opt = torch.optim.SGD([tw, tb], lr=0.5)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(6):
            got, _ = sess.run([loss, step], {x: xs, t: ys})
            opt.zero_grad()
            expected = bce(torch.from_numpy(xs) @ tw + tb, torch.from_numpy(ys))
            expected.backward()
            opt.step()
            assert got == pytest.approx(expected.item(), rel=1e-5)
        np.testing.assert_allclose(sess.run(w), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_folded_inputs_of_the_generated_plan_stay_intact():
    graph = tf.Graph()
    with graph.as_default():
        p = tf.placeholder(tf.float32, (None,))
        c = tf.multiply(tf.constant([2.0, 3.0]), tf.constant(3.0))  # folded
        y = tf.multiply(tf.add(p, c), tf.subtract(c, p))
    tc = torch.tensor([2.0, 3.0]) * 3.0
    with tf.Session(graph=graph) as sess:
        for value in ([1.0, 2.0], [0.5, -1.0], [1.0, 2.0], [7.0, 7.0]):
            got = sess.run(y, {p: value})
            tp = torch.tensor(value)
            np.testing.assert_array_equal(got, ((tp + tc) * (tc - tp)).numpy())
            np.testing.assert_array_equal(sess.run(c), tc.numpy())
            fed = sess.run(p, {p: value})
            assert fed.dtype == np.float32 and fed.tolist() == value
        assert "generated" in _kinds(sess)


def test_a_fed_run_leaves_numpy_error_state_as_it_was():
    graph = tf.Graph()
    with graph.as_default():
        a = tf.placeholder(tf.float32, ())
        y = tf.multiply(a, a)
    with tf.Session(graph=graph) as sess, np.errstate(over="raise", divide="warn"):
        before = np.geterr()
        assert sess.run(y, {a: 2.0}) == 4.0
        for _ in range(3):
            got = sess.run(y, {a: 1e30})  # overflows float32: inf, as TensorFlow gives
            assert got == np.float32(np.inf) == (torch.tensor(1e30) ** 2).item()
            assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            np.float32(1e30) * np.float32(1e30)
