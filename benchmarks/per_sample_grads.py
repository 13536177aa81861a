"""Per-sample gradients (issue 15's speed targets), a script apart from the suite.

``python -m benchmarks.per_sample_grads`` times, for a 784-128-10 ReLU MLP with cross-entropy
and a batch of 64 (float32, the same weights and data in both libraries):

* ``vmap(grad(loss))`` over the batch (``torch.func``'s per-sample-gradients recipe), and
* a Python loop of 64 backward passes, one example each (``autograd.grad``),

in chainrule and in PyTorch, and prints chainrule's loop/vmap ratio (the target: at least
5x) and chainrule's vmap time over PyTorch's (the target: at most 2x); also ``jacrev`` of a
100 -> 100 function against 100 separate backward passes (the target: at least 10x). The
libraries take turns within each repeat (``harness.interleaved``); the values are medians.
``--repeat N`` sets the repeats (default 11), ``--quick`` runs 3.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .harness import CHAINRULE, PYTORCH, import_library, interleaved, library_available, median

__all__ = ["main", "mlp_steps", "jacobian_steps"]

LAYERS = (784, 128, 10)
BATCH = 64
JACOBIAN_SIZE = 100


def _arrays(seed: int = 0) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = []
    for fan_in, fan_out in zip(LAYERS[:-1], LAYERS[1:], strict=True):
        bound = 1.0 / np.sqrt(fan_in)
        weights.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    x = rng.random((BATCH, LAYERS[0]), dtype=np.float32)
    labels = rng.integers(0, LAYERS[-1], BATCH).astype(np.int64)
    return weights, x, labels


def mlp_steps(lib: ModuleType) -> dict[str, Callable[[], Any]]:
    """``{"vmap": ..., "loop": ...}``: each call computes the 64 per-sample gradients of every
    parameter, one way or the other."""
    weights, x_np, labels_np = _arrays()
    names = ["w1", "b1", "w2", "b2"]
    params = {n: lib.tensor(a) for n, a in zip(names, weights, strict=True)}
    x, labels = lib.tensor(x_np), lib.tensor(labels_np)
    F = lib.nn.functional

    def loss(params: dict[str, Any], sample: Any, target: Any) -> Any:
        h = F.relu(F.linear(sample.unsqueeze(0), params["w1"], params["b1"]))
        logits = F.linear(h, params["w2"], params["b2"])
        return F.cross_entropy(logits, target.unsqueeze(0))

    per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    leaves = {n: p.detach().requires_grad_() for n, p in params.items()}
    leaf_list = list(leaves.values())

    def loop() -> Any:
        grads = [lib.autograd.grad(loss(leaves, x[i], labels[i]), leaf_list) for i in range(BATCH)]
        return [lib.stack(column) for column in zip(*grads, strict=True)]

    return {"vmap": lambda: per_sample(params, x, labels), "loop": loop}


def jacobian_steps(lib: ModuleType) -> dict[str, Callable[[], Any]]:
    """``{"jacrev": ..., "loop": ...}``: the Jacobian of ``x -> tanh(W x) * x`` (100 -> 100)."""
    rng = np.random.default_rng(1)
    w = lib.tensor(rng.standard_normal((JACOBIAN_SIZE, JACOBIAN_SIZE)).astype(np.float32))
    x = lib.tensor(rng.standard_normal(JACOBIAN_SIZE).astype(np.float32))

    def f(x: Any) -> Any:
        return (w @ x).tanh() * x

    jac = lib.func.jacrev(f)

    def loop() -> Any:
        leaf = x.detach().requires_grad_()
        y = f(leaf)
        eye = lib.eye(JACOBIAN_SIZE)
        rows = [
            lib.autograd.grad(y, leaf, eye[i], retain_graph=True)[0] for i in range(JACOBIAN_SIZE)
        ]
        return lib.stack(rows)

    return {"jacrev": lambda: jac(x), "loop": loop}


def _check(ours: Any, theirs: Any) -> None:
    """The two libraries agree (else the timings compare different things)."""
    pairs = zip(ours, theirs, strict=True) if isinstance(ours, list | tuple) else [(ours, theirs)]
    for a, b in pairs:
        if isinstance(a, dict):
            a, b = list(a.values()), list(b.values())
            _check(a, b)
            continue
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-3, atol=1e-5)


def _measure(
    make: Callable[[ModuleType], dict[str, Callable[[], Any]]],
    libraries: list[str],
    iters: int,
    repeat: int,
) -> dict[str, float]:
    steps: dict[str, Callable[[], Any]] = {}
    for name in libraries:
        for way, step in make(import_library(name)).items():
            steps[f"{name} {way}"] = step
    if len(libraries) == 2:
        for way in make(import_library(CHAINRULE)):
            _check(steps[f"{CHAINRULE} {way}"](), steps[f"{PYTORCH} {way}"]())
    # (blocks of at least 50 ms: the steps take 0.3-30 ms, and a block of two calls right
    # after the settle pause would time the machine waking up; see ``interleaved``)
    samples = interleaved(steps, iters, repeat, warmup=3, settle=0.05, min_block=0.05)
    return {key: median(values) or 0.0 for key, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    """Time both workloads and print the times and ratios."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.per_sample_grads")
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--quick", action="store_true", help="3 repeats")
    options = parser.parse_args(argv)
    repeat = 3 if options.quick else options.repeat
    libraries = [CHAINRULE] + ([PYTORCH] if library_available(PYTORCH) else [])
    mlp = _measure(mlp_steps, libraries, 2, repeat)
    jac = _measure(jacobian_steps, libraries, 2, repeat)
    for key, value in [*mlp.items(), *jac.items()]:
        print(f"{key:>22}: {value * 1e3:9.2f} ms")
    ratio = mlp[f"{CHAINRULE} loop"] / mlp[f"{CHAINRULE} vmap"]
    print(f"per-sample gradients, chainrule loop / vmap(grad): {ratio:.2f}x (target >= 5x)")
    if PYTORCH in libraries:
        versus = mlp[f"{CHAINRULE} vmap"] / mlp[f"{PYTORCH} vmap"]
        print(f"per-sample gradients, chainrule vmap / PyTorch vmap: {versus:.2f}x (target <= 2x)")
    ratio = jac[f"{CHAINRULE} loop"] / jac[f"{CHAINRULE} jacrev"]
    print(f"jacrev 100->100, chainrule loop / jacrev: {ratio:.2f}x (target >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
