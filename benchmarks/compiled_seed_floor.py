"""Where the compiled seed example's time goes, against issue 18's target (<= 0.1x PyTorch).

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.compiled_seed_floor``.

The seed example ``y = (w + x) * (w + 1)`` forward and backward, one step as the benchmark
runs it (``w.grad = x.grad = None``, the compiled call, ``y.backward()``), taken apart:

* ``NumPy arithmetic alone``: the forward and the chain rule by hand on one-element arrays
  (``benchmarks.compiled``'s floor): what any generated NumPy code must at least do;
* ``generated forward + backward``: the two functions ``compiled.code`` shows, called on the
  arrays directly (no tensors, no guards, no autograd);
* ``compiled call``: guards (the arguments' shapes, dtypes, requires_grad, grad mode, the
  globals read) + the generated forward + the output tensor and its autograd node;
* ``call without guards``: the same minus the guards;
* ``backward()``: the engine's one-node path (``_run_alone``): the implicit ones, the checks
  for hooks, anomaly mode and reentrancy, the generated backward, handing both gradients to
  the leaves' ``.grad``;
* Python's own floor: an empty call, wrapping two arrays in tensors, setting two ``.grad``.

Each is timed in CPU time (median of rounds, each the best of three repeats) in one run
with PyTorch eager, so the ratios compare like with like on a shared machine.
"""

from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Callable

import numpy as np

import chainrule
from benchmarks.compiled import _seed_floor, _seed_step, seed
from chainrule._tensor import wrap


def cases() -> dict[str, Callable[[], object]]:
    """The pieces to time, by name (the first is the reference: PyTorch eager)."""
    import torch

    compiled = chainrule.compile(seed)
    step = _seed_step(chainrule, compiled)
    step()
    graph = compiled._last.compiled
    w = chainrule.tensor([1.0], requires_grad=True)
    x = chainrule.tensor([2.0], requires_grad=True)
    one = np.ones((1,), np.float32)
    array = np.array([1.0], np.float32)
    grad = wrap(array.copy())

    def generated() -> object:
        saved = graph.forward.fn(w._data, x._data)
        return graph.backward.fn(*saved[1:], one)

    def call() -> object:
        return compiled(w, x)

    def call_without_guards() -> object:
        return graph.call((w, x), {})

    def backward() -> object:
        w.grad = x.grad = None
        y = graph.call((w, x), {})
        y.backward()
        return w.grad

    def empty() -> None:
        pass

    def two_tensors() -> object:
        return wrap(array), wrap(array)

    def set_grads() -> None:
        w.grad = x.grad = None
        w.grad = grad
        x.grad = grad

    return {
        "PyTorch eager (reference)": _seed_step(torch, seed),
        "chainrule.compile, whole step": step,
        "NumPy arithmetic alone": _seed_floor(),
        "generated forward + backward": generated,
        "compiled call (guards + forward + node)": call,
        "compiled call without guards": call_without_guards,
        "call without guards + backward()": backward,
        "Python: an empty call": empty,
        "Python: two tensors wrapped": two_tensors,
        "Python: two .grad set": set_grads,
    }


def main() -> None:
    """Print each piece's time and its ratio to PyTorch eager."""
    timed = cases()
    times: dict[str, list[float]] = {name: [] for name in timed}
    for _ in range(5):
        for name, fn in timed.items():
            runs = timeit.repeat(fn, number=3000, repeat=3, timer=time.process_time)
            times[name].append(min(runs) / 3000)
    reference = statistics.median(times[next(iter(timed))])
    width = max(map(len, timed))
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"{name:<{width}}  {t * 1e6:7.2f} us  {t / reference:6.3f}x")
    print(f"\nissue 18's target: <= 0.1x = {reference * 0.1 * 1e6:.2f} us")


if __name__ == "__main__":
    main()
