"""ir.GeneratedRunner (what chainrule.static's Session runs on): a repeated plan runs as
generated NumPy code, with the interpreter's results bit for bit and its errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings

import chainrule.static as tf
from chainrule import ir

from .test_ir_passes import _random_graph
from .test_ir_random_programs import programs


def _seed_session():
    graph = tf.Graph()
    with graph.as_default():
        w = tf.placeholder(tf.float32, (None,))
        x = tf.placeholder(tf.float32, (None,))
        y = tf.reduce_sum(tf.multiply(tf.add(w, x), tf.add(w, 1)))
        dw, dx = tf.gradients(y, [w, x])
    return tf.Session(graph=graph), w, x, [y, dw, dx]


def test_a_repeated_run_is_generated_code_with_the_same_values():
    sess, w, x, fetches = _seed_session()
    feeds = {w: np.array([1.0, -2.0], np.float32), x: np.array([2.0, 0.5], np.float32)}
    first = sess.run(fetches, feed_dict=feeds)
    second = sess.run(fetches, feed_dict=feeds)
    generated = [g for g in sess._runner._generated.values() if g is not None]
    assert len(generated) == 1 and "def run(in0, in1):" in generated[0][0].source
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    tw = torch.tensor([1.0, -2.0], requires_grad=True)
    tx = torch.tensor([2.0, 0.5], requires_grad=True)
    ty = ((tw + tx) * (tw + 1)).sum()
    ty.backward()
    np.testing.assert_array_equal(second[0], ty.detach().numpy())
    np.testing.assert_array_equal(second[1], tw.grad.numpy())
    np.testing.assert_array_equal(second[2], tx.grad.numpy())


def test_errors_of_a_generated_plan_are_the_interpreters():
    sess, w, x, fetches = _seed_session()
    good = {w: np.ones(2, np.float32), x: np.ones(2, np.float32)}
    sess.run(fetches, feed_dict=good)
    sess.run(fetches, feed_dict=good)
    bad = {w: np.ones(2, np.float32), x: np.ones(3, np.float32)}
    with pytest.raises(tf.errors.InvalidArgumentError) as generated:
        sess.run(fetches, feed_dict=bad)
    fresh, fw, fx, ffetches = _seed_session()
    with pytest.raises(tf.errors.InvalidArgumentError) as interpreted:
        fresh.run(ffetches, feed_dict={fw: bad[w], fx: bad[x]})
    assert str(generated.value) == str(interpreted.value)
    with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value"):
        sess.run(fetches, feed_dict={w: np.ones(2, np.float32)})


def test_plans_with_variables_stay_interpreted():
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(np.float32(2.0))
        step = tf.assign_add(v, 1.0) if hasattr(tf, "assign_add") else tf.assign(v, v + 1.0)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        values = [float(sess.run(step)) for _ in range(3)]
        assert values == [3.0, 4.0, 5.0]
        assert all(g is None for g in sess._runner._generated.values())


def _check(program: Any, dtype: str) -> None:
    g, leaves, arrays, fetches = _random_graph(program, dtype)
    feeds = dict(zip(leaves, arrays, strict=True))
    runner = ir.GeneratedRunner(g)
    first = runner.run(fetches, feeds, {})
    second = runner.run(fetches, feeds, {})
    assert any(v is not None for v in runner._generated.values())
    for a, b, c in zip(first, second, ir.run(g, fetches, feeds), strict=True):
        assert a.dtype == b.dtype == c.dtype and a.shape == b.shape == c.shape
        np.testing.assert_array_equal(b, c)
        np.testing.assert_array_equal(a, c)


@settings(max_examples=40, deadline=None)
@given(programs())
def test_random_programs_generated_runs_equal_the_interpreters(program: Any) -> None:
    _check(program, "float64")
