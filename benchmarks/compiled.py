"""chainrule.compile against eager chainrule, PyTorch eager and the NumPy floor.

Run: ``.venv/bin/python -m benchmarks.compiled`` (``--cpu``: CPU time, see :func:`main`).
Prints per-iteration times and ratios from one run, each case measured in turn in five
rounds (medians: the machine may be shared); no assertions (the issue's targets are printed
next to the ratios). The compiled MLP step compiles the loss (model and cross entropy): its
forward and backward are one generated NumPy function each. The seed's "NumPy by hand" row
is its arithmetic alone on one-element arrays: the floor of any generated NumPy code.
"""

from __future__ import annotations

import statistics
import sys
import time
import timeit
from collections.abc import Callable

import numpy as np

import chainrule
from benchmarks.harness import (
    CHAINRULE,
    LIBRARIES,
    NUMPY,
    PYTORCH,
    Config,
    import_library,
    interleaved,
    median,
)
from benchmarks.mlp import LAYERS, LR, NumpyMLP, init_arrays, make_data
from benchmarks.report import Row, Section, Target


def _seed_step(lib: object, run: Callable[..., object]) -> Callable[[], object]:
    """The seed articles' y = (w + x) * (w + 1), forward and backward."""
    w = lib.tensor([1.0], requires_grad=True)
    x = lib.tensor([2.0], requires_grad=True)

    def step() -> object:
        w.grad = x.grad = None
        y = run(w, x)
        y.backward()
        return w.grad

    return step


def _seed_floor() -> Callable[[], object]:
    """The seed example's arithmetic by hand in NumPy on one-element float32 arrays (the
    forward, the gradient seeded with ones, the chain rule): the floor of any NumPy code."""
    w = np.array([1.0], np.float32)
    x = np.array([2.0], np.float32)

    def step() -> object:
        a = w + x
        b = w + 1
        y = a * b
        g = np.ones_like(y)
        grad_a = g * b
        return grad_a + g * a, grad_a

    return step


def seed(w: object, x: object) -> object:
    """The seed example's graph."""
    a = w + x
    b = w + 1
    return a * b


def mlp_step(model: chainrule.nn.Module, compiled: bool) -> Callable[[], object]:
    """One SGD step of the 784-256-256-10 MLP on a batch of 128: the loss (model and cross
    entropy) compiled as one function when ``compiled``, eager otherwise."""
    x, labels = make_data(128)
    tx, tl = chainrule.tensor(x), chainrule.tensor(labels)
    opt = chainrule.optim.SGD(model.parameters(), lr=LR)
    cross_entropy = chainrule.nn.functional.cross_entropy

    def loss_of(inputs: object, targets: object) -> object:
        return cross_entropy(model(inputs), targets)

    loss_fn = chainrule.compile(loss_of) if compiled else loss_of

    def step() -> object:
        opt.zero_grad()
        loss = loss_fn(tx, tl)
        loss.backward()
        opt.step()
        return loss

    return step


def build_mlp() -> chainrule.nn.Module:
    """The benchmark MLP with benchmarks.mlp's weights."""
    nn = chainrule.nn
    model = nn.Sequential(
        nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    )
    arrays = init_arrays(LAYERS)
    linears = [m for m in model if isinstance(m, nn.Linear)]
    for i, lin in enumerate(linears):
        lin.weight.data = chainrule.tensor(arrays[2 * i].copy())
        lin.bias.data = chainrule.tensor(arrays[2 * i + 1].copy())
    return model


def _rounds(
    cases: dict[str, Callable[[], object]], number: int, rounds: int, timer: Callable[[], float]
) -> dict[str, list]:
    """Per-call times of each case, measured in turn in each round (the cases see the same
    machine load; the machine may be shared)."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()
    for _ in range(rounds):
        for name, fn in cases.items():
            runs = timeit.repeat(fn, number=number, repeat=3, timer=timer)
            times[name].append(min(runs) / number)
    return times


def main(argv: list[str] | None = None) -> None:
    """Measure and print: per case the median per-call time over the rounds and the median
    of the per-round ratios to the reference (PyTorch eager, the NumPy floor). ``--cpu``
    times this process's CPU time instead of the wall clock (less sensitive to other jobs on
    a shared machine; run it with ``OPENBLAS_NUM_THREADS=1``, as BLAS threads' time adds
    up)."""
    import torch

    cpu = "--cpu" in (sys.argv[1:] if argv is None else argv)
    timer = time.process_time if cpu else time.perf_counter

    seed_cases = {
        "seed fwd+bwd: PyTorch eager": _seed_step(torch, seed),
        "seed fwd+bwd: chainrule eager": _seed_step(chainrule, seed),
        "seed fwd+bwd: chainrule.compile (target <= 0.1x PyTorch)": _seed_step(
            chainrule, chainrule.compile(seed)
        ),
        "seed fwd+bwd: NumPy by hand (the arithmetic alone)": _seed_floor(),
    }
    x, labels = make_data(128)
    floor = NumpyMLP(init_arrays(LAYERS), x, labels)
    mlp_cases = {
        "MLP step: NumPy floor": floor.step,
        "MLP step: chainrule eager": mlp_step(build_mlp(), compiled=False),
        "MLP step: chainrule.compile (target <= 1.0x floor)": mlp_step(build_mlp(), compiled=True),
    }
    rows = []
    for cases, number in ((seed_cases, 2000), (mlp_cases, 10)):
        times = _rounds(cases, number, rounds=5, timer=timer)
        reference = times[next(iter(cases))]
        for name, ts in times.items():
            ratios = [t / r for t, r in zip(ts, reference, strict=True)]
            rows.append((name, statistics.median(ts), statistics.median(ratios)))
    width = max(len(r[0]) for r in rows)
    print(f"({'CPU time of this process' if cpu else 'wall clock'})")
    for name, t, ratio in rows:
        print(f"{name:<{width}}  {t * 1e6:10.1f} us  {ratio:6.2f}x")
    c = chainrule.compile(seed)
    c(chainrule.tensor([1.0], requires_grad=True), chainrule.tensor([2.0], requires_grad=True))
    print("\nThe compiled seed example (print(compiled.code)):\n")
    print(c.code)


# -- the suite's rows (``python -m benchmarks``: workload "compiled") ------------------------------

#: The issue's targets (issue 18): the compiled seed example <= 0.1x PyTorch eager, the compiled
#: MLP step <= 1.0x the NumPy floor.
SEED_TARGETS = [Target("pytorch", 0.1)]
MLP_TARGETS = [Target("numpy", 1.0)]


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """The suite's rows: the compiled seed example (forward + backward per iteration) against
    PyTorch eager and the NumPy arithmetic by hand, and the compiled MLP training step against
    the NumPy floor and PyTorch (benchmarks.mlp's steps), interleaved."""
    section = Section("compiled")
    seed_steps: dict[str, Callable[[], object]] = {}
    for name in libraries:
        if name == NUMPY:
            seed_steps[name] = _seed_floor()
        elif name == PYTORCH:
            seed_steps[name] = _seed_step(import_library(PYTORCH), seed)
        else:
            seed_steps[name] = _seed_step(chainrule, chainrule.compile(seed))
        grad = seed_steps[name]()
        grad = grad[0] if name == NUMPY else grad
        if float(np.asarray(grad).reshape(-1)[0]) != 5.0:
            section.notes.append(f"compiled seed: {name} computed dy/dw {grad}, expected 5.0")
    mlp_steps: dict[str, Callable[[], object]] = {}
    first_losses: dict[str, float] = {}
    for name in libraries:
        if name == CHAINRULE:
            mlp_steps[name] = mlp_step(build_mlp(), compiled=True)
        else:
            mlp_steps[name] = build_mlp_step(name)
        loss = mlp_steps[name]()
        first_losses[name] = float(loss.detach() if hasattr(loss, "detach") else loss)
    reference = first_losses.get(NUMPY)
    for name, loss in first_losses.items():
        if reference is not None and abs(loss - reference) > 1e-4 * max(1.0, abs(reference)):
            section.notes.append(
                f"compiled mlp: {name}'s first loss {loss} differs from NumPy's {reference}"
            )
    rows = (
        (
            "compiled seed fwd+bwd",
            f"{config.tiny_iters} iters",
            seed_steps,
            config.tiny_iters,
            SEED_TARGETS,
            "iter",
        ),
        ("compiled mlp", "batch 128", mlp_steps, config.mlp_iters, MLP_TARGETS, "step"),
    )
    for label, size, steps, iters, targets, per in rows:
        samples = interleaved(steps, iters, config.repeat, config.warmup, config.settle)
        values = {lib: median(samples[lib]) if lib in samples else None for lib in LIBRARIES}
        section.rows.append(Row(label, size, "s", values, targets, samples=samples, per=per))
    section.notes.append(
        "chainrule is chainrule.compile here (the seed function; the MLP's loss, model and "
        "cross entropy, as one generated forward and backward); the eager times are the tiny "
        "and mlp rows; python -m benchmarks.compiled prints the generated code"
    )
    return section


def build_mlp_step(name: str) -> Callable[[], object]:
    """benchmarks.mlp's training step of library ``name`` (PyTorch or the NumPy floor) at
    batch 128, the compiled step's batch."""
    from benchmarks.mlp import build

    return build(name, 128).step


def profile_target(config: Config) -> Callable[[], None]:
    """``config.tiny_iters`` compiled seed iterations, for ``--profile compiled``."""
    step = _seed_step(chainrule, chainrule.compile(seed))
    iters = config.tiny_iters

    def target() -> None:
        for _ in range(iters):
            step()

    return target


if __name__ == "__main__":
    main()
