"""TensorFlow 1 programs run both by TensorFlow (``record.py``, once, outputs kept in
``recorded.json``) and by ``chainrule.static`` (``tests/test_static_tf1.py``), which must
print the same text.

Each program is source text run with ``tf`` bound to the module under test, after
:data:`PRELUDE`; what it prints is its output. Errors are printed by ``show`` as the
exception's class and message; for TensorFlow's run-time errors (``OpError``) only the line
that says what went wrong, as TensorFlow 2's compat.v1 wraps it in a trace of its own.
"""

from __future__ import annotations

PRELUDE = """
import numpy as np
np.set_printoptions(precision=5, suppress=True)

def show(f):
    try:
        result = f()
    except Exception as e:
        name = type(e).__name__
        message = str(e)
        if hasattr(e, "op") and hasattr(e, "message"):
            keep = [line for line in message.split("\\n")
                    if line.startswith(("You must feed", "Attempting to use"))]
            message = keep[0] if keep else message
        print("raised", name, "|", message)
    else:
        print("ok", repr(result))
"""

PROGRAMS: dict[str, str] = {
    # The seed article's static-graph cell, as it is written there.
    "seed": """
w = tf.constant(1.)
x = tf.constant(2.)

a = tf.add(w, x)
b = tf.add(w, 1)
y = tf.multiply(a, b)

print(y)

with tf.Session() as sess:
    print(sess.run(y))
""",
    "seed_graph_and_gradients": """
w = tf.constant(1.)
x = tf.constant(2.)
a = tf.add(w, x)
b = tf.add(w, 1)
y = tf.multiply(a, b)
print(repr(y), y.name, y.dtype, repr(y.dtype), y.shape, repr(y.shape), y.op.type)
print(tf.get_default_graph().get_operations())
for op in tf.get_default_graph().get_operations():
    print(op.name, op.type, [t.name for t in op.inputs], [str(t) for t in op.outputs])
grads = tf.gradients(y, [w, x])
print(grads)
with tf.Session() as sess:
    print(sess.run(grads))
    print(sess.run({"y": y, "grads": grads, "pair": (a, b)}))
    print(type(sess.run(y)).__name__, sess.run([a, (b, y)]))
""",
    "naming": """
a = tf.constant([[1., 2.], [3., 4.]])
b = tf.constant([[0.5], [-1.]])
outs = [a + b, a - b, a * b, a / b, a @ b, -a, a ** 2, 2 * a, 1 - a, 1 / a, a > b,
        tf.add(a, b), tf.subtract(a, b), tf.multiply(a, b), tf.divide(a, b), tf.matmul(a, b),
        tf.reduce_sum(a), tf.reduce_sum(a, axis=1), tf.reduce_mean(a),
        tf.reduce_mean(a, 0, keepdims=True), tf.square(a), tf.exp(a), tf.log(a),
        tf.nn.relu(a - 2), tf.nn.sigmoid(a), tf.nn.softmax(a),
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.ones_like(a), logits=a),
        tf.sigmoid(a), tf.negative(a), tf.sqrt(a), tf.abs(a), tf.maximum(a, 2.), tf.tanh(a),
        tf.reduce_max(a), tf.reshape(a, [4]), tf.transpose(a), tf.pow(a, 3.), tf.identity(a),
        tf.cast(a, tf.int32), tf.zeros([2]), tf.ones([2, 1]), tf.ones_like(a),
        tf.zeros_like(a), tf.math.log(a), tf.subtract(a, 1), tf.realdiv(a, b)]
for o in outs:
    print(o)
print([o.name + ":" + o.type for o in tf.get_default_graph().get_operations()])
with tf.Session() as s:
    for o in s.run(outs):
        print(repr(o))
""",
    "placeholders_and_feeds": """
p = tf.placeholder(tf.float32, shape=[None, 2])
print(p, repr(p.shape), p.shape, p.get_shape())
q = tf.placeholder(tf.float32, name="q")
print(q)
s = tf.reduce_sum(p)
m = tf.reduce_mean(p, axis=0)
print(s, m, tf.matmul(p, tf.ones([2, 3])))
sess = tf.Session()
show(lambda: sess.run(s, feed_dict={p: np.ones((3, 3))}))
show(lambda: sess.run(s, feed_dict={p: [[1, 2]]}))
show(lambda: sess.run([s, m], feed_dict={p: [[1, 2], [3, 5]]}))
show(lambda: sess.run(s))
show(lambda: sess.run(tf.add(q, 1.)))
show(lambda: sess.run(tf.add(q, 1.), feed_dict={q: [[1.5]]}))
show(lambda: sess.run(s, feed_dict={"Placeholder:0": [[1, 2]]}))
show(lambda: sess.run("Sum:0", feed_dict={p: [[1, 2]]}))
show(lambda: sess.run(p * 2, feed_dict={p: np.ones((1, 2))}))
sess.close()
show(lambda: sess.run(s, feed_dict={p: [[1, 2]]}))
""",
    "fetch_errors": """
c0 = tf.constant(1.0)
g2 = tf.Graph()
with g2.as_default():
    c = tf.constant(3.0)
    print(c, tf.get_default_graph() is g2)
print(tf.get_default_graph() is g2, [o.name for o in g2.get_operations()])
sess = tf.Session()
show(lambda: sess.run(c))
show(lambda: sess.run(5))
show(lambda: sess.run("foo"))
show(lambda: sess.run("Const:0"))
show(lambda: sess.run("Const"))
with tf.Session(graph=g2) as s2:
    show(lambda: s2.run(c))
show(lambda: s2.run(c))
show(lambda: tf.add(tf.constant([1., 2.]), tf.constant([1., 2., 3.])))
show(lambda: tf.add(tf.constant(1.), tf.constant(1, dtype=tf.int32)))
show(lambda: tf.constant(1) + 2.5)
print(tf.constant(1), tf.constant([1.5]), tf.constant(np.float64(2)),
      tf.constant([[1, 2]], dtype=tf.float64))
print(tf.constant(True), tf.constant(2**40))
print(tf.float32, repr(tf.float32), tf.int32, tf.float64, tf.float32 == tf.float32)
""",
    "variables_and_training": """
v = tf.Variable(3.0)
w = tf.Variable([1.0, 2.0], name="weights")
print(v, repr(v), v.name, v.dtype, w)
print([o.name + ":" + o.type for o in tf.get_default_graph().get_operations()])
y = v * v
print(y)
s = tf.Session()
show(lambda: s.run(y))
init = tf.global_variables_initializer()
print(repr(init), init.name, init.type)
show(lambda: s.run(init))
show(lambda: s.run([y, v, w]))
step = tf.train.GradientDescentOptimizer(0.1).minimize(y)
print(repr(step))
show(lambda: s.run([step, y]))
show(lambda: s.run(v))
show(lambda: s.run(w))
print(tf.global_variables(), tf.trainable_variables())
print([o.name + ":" + o.type for o in tf.get_default_graph().get_operations()])
show(lambda: s.run(v.assign(5.0)))
show(lambda: s.run(tf.assign(v, 7.0)))
show(lambda: s.run(v.assign_add(1.0)))
show(lambda: s.run(y))
show(lambda: tf.gradients(y, [v, tf.constant(1.)]))
show(lambda: tf.gradients(tf.constant(2.) * 3, tf.constant(1.)))
show(lambda: tf.Session().run(tf.Variable(1.)))
show(lambda: tf.placeholder(tf.float32, [2, 2]) + tf.placeholder(tf.float32, [None]))
""",
    # The logistic regression of the autograd tutorial, written for TensorFlow 1.
    "logistic_regression": """
rng = np.random.RandomState(0)
X = np.concatenate([rng.normal(1.7, 1.0, (20, 2)), rng.normal(-1.7, 1.0, (20, 2))])
X = X.astype(np.float32)
Y = np.concatenate([np.ones((20, 1)), np.zeros((20, 1))]).astype(np.float32)
x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(np.array([[0.3], [-0.2]], np.float32))
b = tf.Variable(np.zeros(1, np.float32))
logits = tf.matmul(x, W) + b
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits > 0, tf.float32), y), tf.float32))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
print(logits, loss, train.name)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(50):
        _, l = sess.run([train, loss], feed_dict={x: X, y: Y})
        if i % 10 == 0:
            print(i, round(float(l), 4))
    print(sess.run(accuracy, {x: X, y: Y}), np.round(sess.run(W).ravel(), 4))
""",
    # A softmax classifier as TensorFlow 1 tutorials write it (values only: TensorFlow's
    # cross entropy reshapes internally, under names chainrule's does not need).
    "softmax_classifier": """
rng = np.random.RandomState(2)
centers = np.array([[2.0, 0.0], [-2.0, 1.0], [0.0, -2.0]])
labels_index = rng.randint(0, 3, 60)
X = (centers[labels_index] + rng.normal(0, 0.7, (60, 2))).astype(np.float32)
Y = np.eye(3, dtype=np.float32)[labels_index]
x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.float32, [None, 3])
W = tf.Variable(np.array([[0.1, -0.1, 0.0], [0.0, 0.1, -0.1]], np.float32))
b = tf.Variable(tf.zeros([3]))
logits = tf.matmul(x, W) + b
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1))
accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
print(tf.argmax(logits, 1), correct, accuracy, tf.reduce_min(logits))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(40):
        _, l = sess.run([train, loss], feed_dict={x: X, y: Y})
        if i % 10 == 0:
            print(i, round(float(l), 4))
    print(sess.run(accuracy, {x: X, y: Y}), np.round(sess.run(W), 3))
""",
    # Indexing (TensorFlow's strided_slice; the operations inside each slice's scope are not
    # listed: chainrule slices one dimension per operation).
    "slicing": """
a = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
outs = [a[:, 0], a[1], a[0:2, 1:], a[:, 1:3:2], a[2, 3], a[:]]
for o in outs:
    print(o)
print([o.name + ":" + o.type for o in tf.get_default_graph().get_operations()
       if "/" not in o.name])
v = tf.Variable(np.ones((2, 3), np.float32))
y = tf.reduce_sum(v[:, 1:] * v[0, 1:]) + tf.reduce_sum(v[1, 2] * 3.0)
(g,) = tf.gradients(y, [v])
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    for o in s.run(outs + [y, g]):
        print(repr(o))
""",
}
