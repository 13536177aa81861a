"""The seeds' static-versus-dynamic comparison, for ``python -m chainrule demo``.

The seed example ``y = (w + x) * (w + 1)`` three ways, side by side: defined then run
(TensorFlow 1 style, ``chainrule.static``: ``print(y)`` shows a symbolic tensor, a Session
computes it), run as it is defined (eager chainrule, PyTorch's dynamic graph), and captured
and compiled (``chainrule.compile``: the same program as generated NumPy code, forward and
backward). The same numbers, the graphs drawn, the time of one forward and backward each.
"""

from __future__ import annotations

import contextlib
import io
import textwrap
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["SEED_TF1", "compare_static_and_dynamic"]

#: The seed article's TensorFlow 1 cell, with ``chainrule.static`` as ``tf``.
SEED_TF1 = """\
import chainrule.static as tf

w = tf.constant(1.)
x = tf.constant(2.)
a = tf.add(w, x)
b = tf.add(w, 1)
y = tf.multiply(a, b)
print(y)

with tf.Session() as sess:
    print(sess.run(y))
"""


def _per_call(fn: Callable[[], object], number: int = 2000) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def _seed(w: Any, x: Any) -> Any:
    a = w + x
    b = w + 1
    return a * b


def _draw(dot_source: str, path: Path) -> Path:
    """Write DOT source, rendered as SVG when Graphviz is installed."""
    import graphviz

    from chainrule import viz

    if not viz.has_dot():
        path = path.with_suffix(".dot")
        path.write_text(dot_source)
        return path
    source = graphviz.Source(dot_source)
    return Path(source.render(path.with_suffix(""), format="svg", cleanup=True))


def compare_static_and_dynamic(out: Path, number: int = 2000) -> list[Path]:
    """Print the comparison (timings: best of 5 runs of ``number`` steps); return the
    drawings written into ``out``."""
    import chainrule
    import chainrule.static as tf

    print("Defined, then run (TensorFlow 1 style, chainrule.static):\n")
    print(textwrap.indent(SEED_TF1, "    "))
    printed = io.StringIO()
    with tf.Graph().as_default(), contextlib.redirect_stdout(printed):  # (a fresh graph)
        exec(compile(SEED_TF1, "<seed TF1 cell>", "exec"), {})
    print("Output:\n")
    print(textwrap.indent(printed.getvalue(), "    "))

    # (timed with placeholders: constants would be folded once, and no run would compute)
    graph = tf.Graph()
    with graph.as_default():
        w = tf.placeholder(tf.float32, ())
        x = tf.placeholder(tf.float32, ())
        y = tf.multiply(tf.add(w, x), tf.add(w, 1))
        dw, dx = tf.gradients(y, [w, x])
        sess = tf.Session()
    feeds = {w: 1.0, x: 2.0}
    static_step = lambda: sess.run([y, dw, dx], feed_dict=feeds)  # noqa: E731 - (timed)
    values = [float(v) for v in static_step()]

    leaves = [chainrule.tensor(1.0, requires_grad=True), chainrule.tensor(2.0, requires_grad=True)]
    compiled = chainrule.compile(_seed)

    def step(fn: Callable[..., Any]) -> Callable[[], Any]:
        def run() -> Any:
            leaves[0].grad = leaves[1].grad = None
            out = fn(*leaves)
            out.backward()
            return out

        return run

    eager_step, compiled_step = step(_seed), step(compiled)
    compiled_step()
    eager = [eager_step().item(), leaves[0].grad.item(), leaves[1].grad.item()]
    again = [compiled_step().item(), leaves[0].grad.item(), leaves[1].grad.item()]
    print("y, dy/dw, dy/dx: Session.run", values, "| eager", eager, "| compiled", again)
    print("\nThe compiled program's generated NumPy code (print(compiled.code)):\n")
    print(textwrap.indent(compiled.code, "    "))

    times = [
        ("static: Session.run(y, dy/dw, dy/dx), fed", _per_call(static_step, number)),
        ("dynamic: eager forward + backward", _per_call(eager_step, number)),
        ("compiled: forward + backward", _per_call(compiled_step, number)),
    ]
    try:
        import torch
    except ImportError:  # (PyTorch is not needed by the demo)
        torch = None
    if torch is not None:
        tw = torch.tensor(1.0, requires_grad=True)
        tx = torch.tensor(2.0, requires_grad=True)

        def torch_step() -> Any:
            tw.grad = tx.grad = None
            out = _seed(tw, tx)
            out.backward()
            return out

        times.append(("PyTorch eager: forward + backward", _per_call(torch_step, number)))
    print(f"Time of one run of the seed example (this machine, best of 5 x {number}):\n")
    width = max(len(name) for name, _ in times)
    for name, seconds in times:
        print(f"    {name:<{width}}  {seconds * 1e6:8.1f} us")
    written = [
        _draw(graph.ir.dot("static_seed"), out / "static_seed_graph"),
        _draw(compiled.ir_graph.dot("compiled_seed"), out / "compiled_seed_joint_graph"),
    ]
    print("\nThe static graph and the compiled joint (forward + backward) graph are drawn.")
    return written
