"""static: ``Session.run`` of the seed articles' TensorFlow cell (``chainrule.static``) against
PyTorch eager computing the same forward and the NumPy floor of that arithmetic.

The seed graph is y = (w + x) * (w + 1) at w = 1, x = 2, two ways:

* ``constants``: as the seed cell writes it (``tf.constant`` for w and x): the graph depends on
  constants only, so the session folds it (as TensorFlow's grappler does) and a run returns
  the folded value;
* ``fed``: w and x are ``placeholder`` s fed through ``feed_dict`` at each run: the same
  arithmetic from the same Python floats at each run (the honest comparison).

PyTorch computes the same forward from the same Python floats at each iteration (two
``torch.tensor`` s, three ops), NumPy the same on 0-d float32 arrays (the floor of any NumPy
code). ``python -m benchmarks.static`` also prints PyTorch's arithmetic alone on tensors made
beforehand.
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from .harness import LIBRARIES, NUMPY, PYTORCH, Config, import_library, interleaved, median
from .report import Row, Section, Target

__all__ = ["SEED_W", "SEED_X", "make_numpy", "make_session", "make_torch", "profile_target", "run"]

TARGETS = [Target("pytorch", 0.1)]  # (issue 18)
SEED_W, SEED_X = 1.0, 2.0
EXPECTED = 6.0  # (1 + 2) * (1 + 1)


def make_session(fed: bool) -> Callable[[], Any]:
    """``sess.run(y)`` of the seed graph in a new graph and session: w and x constants, or
    placeholders fed ``SEED_W`` and ``SEED_X`` at each run."""
    import chainrule.static as tf

    graph = tf.Graph()
    with graph.as_default():
        if fed:
            w = tf.placeholder(tf.float32, ())
            x = tf.placeholder(tf.float32, ())
        else:
            w = tf.constant(SEED_W)
            x = tf.constant(SEED_X)
        a = tf.add(w, x)
        b = tf.add(w, 1)
        y = tf.multiply(a, b)
    sess = tf.Session(graph=graph)
    if not fed:
        return lambda: sess.run(y)
    feed = {w: SEED_W, x: SEED_X}
    return lambda: sess.run(y, feed_dict=feed)


def make_torch(create: bool = True) -> Callable[[], Any]:
    """PyTorch eager's forward of the seed example, from the Python floats (``create``) or on
    0-d tensors made beforehand (the arithmetic alone)."""
    torch = import_library(PYTORCH)
    tensor = torch.tensor
    if create:

        def step() -> Any:
            w = tensor(SEED_W)
            x = tensor(SEED_X)
            return (w + x) * (w + 1)

        return step
    w0, x0 = tensor(SEED_W), tensor(SEED_X)
    return lambda: (w0 + x0) * (w0 + 1)


def make_numpy() -> Callable[[], Any]:
    """The floor: the same forward on 0-d float32 arrays made from the Python floats."""
    array, float32 = np.array, np.float32

    def step() -> Any:
        w = array(SEED_W, float32)
        x = array(SEED_X, float32)
        return (w + x) * (w + 1)

    return step


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """Time ``config.tiny_iters`` runs per repeat of each way, interleaved with PyTorch and
    NumPy computing the same forward."""
    section = Section("static")
    for fed in (False, True):
        label = "Session.run seed (" + ("fed placeholders" if fed else "constants") + ")"
        steps: dict[str, Callable[[], Any]] = {}
        for name in libraries:
            if name == NUMPY:
                steps[name] = make_numpy()
            elif name == PYTORCH:
                steps[name] = make_torch()
            else:
                steps[name] = make_session(fed)
            value = float(steps[name]())
            if value != EXPECTED:
                section.notes.append(f"{label}: {name} computed {value}, expected {EXPECTED}")
        samples = interleaved(steps, config.tiny_iters, config.repeat, config.warmup, config.settle)
        section.rows.append(
            Row(
                label,
                f"{config.tiny_iters} runs",
                "s",
                {lib: median(samples[lib]) if lib in samples else None for lib in LIBRARIES},
                TARGETS,
                samples=samples,
                per="run",
            )
        )
    section.notes.append(
        "PyTorch and NumPy make w and x from the Python floats at each iteration, as the fed "
        "run converts its feeds; the constants run returns the value folded at the first run"
    )
    return section


def profile_target(config: Config) -> Callable[[], None]:
    """``config.tiny_iters`` fed runs, for ``--profile static``."""
    step = make_session(fed=True)
    iters = config.tiny_iters

    def target() -> None:
        for _ in range(iters):
            step()

    return target


def main(argv: list[str] | None = None) -> None:
    """Print per-run times (best of 5 repeats of 20000 calls) and the ratios to PyTorch."""
    del argv
    number = 20_000
    cases = {
        "Session.run, constants": make_session(fed=False),
        "Session.run, fed placeholders": make_session(fed=True),
        "PyTorch eager, tensors from the floats": make_torch(create=True),
        "PyTorch eager, the arithmetic alone": make_torch(create=False),
        "NumPy floor (0-d float32 from the floats)": make_numpy(),
    }
    times = {}
    for name, fn in cases.items():
        fn()
        times[name] = min(timeit.repeat(fn, number=number, repeat=5)) / number
    reference = times["PyTorch eager, tensors from the floats"]
    alone = times["PyTorch eager, the arithmetic alone"]
    width = max(map(len, times))
    print(f"{'':<{width}}  {'per run':>10}  {'/ PyTorch':>9}  {'/ arithmetic alone':>18}")
    for name, t in times.items():
        print(f"{name:<{width}}  {t * 1e6:7.2f} us  {t / reference:8.3f}x  {t / alone:17.3f}x")
    print(f"(target: Session.run <= 0.1x PyTorch eager; {sys.executable})")


if __name__ == "__main__":
    main()
