"""deep: a chain of N elementwise ops on a 100-element tensor, then ``.sum().backward()``.

The ops alternate ``y * 1.0001`` and ``y + 0.0001``; the graph is N nodes long, so this measures
the per-node cost of recording, running and freeing a graph, and the memory each node keeps.
Each (library, N) runs in a fresh subprocess: peak RSS is measured from the RSS after imports
and a warm-up, and a chain that is too slow ends in a timeout instead of a hung run.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .harness import (
    CHAINRULE,
    LIBRARIES,
    NUMPY,
    Config,
    current_rss,
    import_library,
    median,
    peak_rss,
    reset_peak_rss,
    run_worker,
)
from .report import Row, Section, Target

__all__ = ["numpy_chain", "profile_target", "run", "torchlike_chain", "worker"]

SIZE = 100
FACTOR, OFFSET = 1.0001, 0.0001
WARMUP_OPS = 100
#: From this many ops on, the deep chain's targets are issue 13's tighter ones.
LONG_CHAIN = 100_000


def torchlike_chain(lib: ModuleType, n: int) -> dict[str, float]:
    """Record N ops, backward through them, free the graph; seconds of each phase."""
    x = lib.ones(SIZE, requires_grad=True)
    start = time.perf_counter()
    y = x
    for _ in range(n // 2):
        y = y * FACTOR
        y = y + OFFSET
    if n % 2:
        y = y * FACTOR
    loss = y.sum()
    forward = time.perf_counter()
    loss.backward()
    backward = time.perf_counter()
    del y, loss                     # the graph goes with the last tensor that holds it
    freed = time.perf_counter()
    _check_grad(x.grad.numpy(), n)
    return {"forward": forward - start, "backward": backward - forward, "free": freed - backward}


def numpy_chain(n: int) -> dict[str, float]:
    """The floor: the same N ops, then one multiply per ``* FACTOR`` going back (no graph)."""
    x = np.ones(SIZE, dtype=np.float32)
    start = time.perf_counter()
    y = x
    for _ in range(n // 2):
        y = y * FACTOR
        y = y + OFFSET
    if n % 2:
        y = y * FACTOR
    y.sum()
    forward = time.perf_counter()
    grad = np.ones_like(y)          # d sum / d y
    for _ in range((n + 1) // 2):   # the adds pass the gradient through unchanged
        grad = grad * FACTOR
    backward = time.perf_counter()
    del y
    freed = time.perf_counter()
    _check_grad(grad, n)
    return {"forward": forward - start, "backward": backward - forward, "free": freed - backward}


def _check_grad(grad: np.ndarray, n: int) -> None:
    expected = np.float32(FACTOR) ** ((n + 1) // 2)
    if not np.allclose(grad, expected, rtol=1e-3):
        raise RuntimeError(f"wrong gradient after {n} ops: {grad[0]} instead of {expected}")


def worker(library: str, n: int, repeat: int) -> dict[str, Any]:
    """Subprocess body: ``repeat`` chains of ``n`` ops; per-phase seconds and peak memory."""
    lib = None if library == NUMPY else import_library(library)

    def chain(ops: int) -> dict[str, float]:
        return numpy_chain(ops) if lib is None else torchlike_chain(lib, ops)

    chain(WARMUP_OPS)
    gc.collect()
    baseline = current_rss()
    reset = reset_peak_rss()
    runs = [chain(n) for _ in range(repeat)]
    peak = peak_rss()
    return {"runs": runs, "baseline_rss": baseline, "peak_rss": peak,
            "peak_bytes": max(0, peak - baseline), "peak_reset": reset}


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """One subprocess per (library, N): time per op and peak memory of the graph."""
    section = Section("deep")
    order = list(libraries)
    for index, n in enumerate(config.deep_sizes):
        repeat = max(1, min(config.repeat, config.deep_max_ops_per_worker // n))
        time_row = Row("deep time", _size(n), "s", dict.fromkeys(LIBRARIES), per="op")
        memory_row = Row("deep memory", _size(n), "bytes", dict.fromkeys(LIBRARIES))
        # Issue 13's targets: at 10^5 ops and more, 0.8x PyTorch's time and 0.6x its memory.
        long_chain = n >= LONG_CHAIN
        time_row.targets = [Target("pytorch", 0.8 if long_chain else 1.0)]
        if n == max(config.deep_sizes):
            time_row.targets.insert(0, Target("completes"))
        memory_row.targets = [Target("pytorch", 0.6 if long_chain else 1.0)]
        shift = index % len(order)
        for library in order[shift:] + order[:shift]:
            result = run_worker("deep", {"library": library, "n": n, "repeat": repeat},
                                config.timeout)
            section.details[f"{library} n={n}"] = result.data or {"error": result.error}
            if result.data is None:
                status = "timeout" if "timeout" in (result.error or "") else "failed"
                time_row.status[library] = memory_row.status[library] = status
                section.notes.append(f"{library} at N={n}: {result.error}")
                continue
            per_op = [sum(run.values()) / n for run in result.data["runs"]]
            time_row.samples[library] = per_op
            time_row.values[library] = median(per_op)
            memory_row.values[library] = float(result.data["peak_bytes"])
        section.rows += [time_row, memory_row]
    section.notes.append(
        "time per op = (forward + backward + freeing the graph) / N; memory = peak RSS above "
        "the RSS after imports; the NumPy floor keeps no graph, so its memory is ~0")
    return section


def _size(n: int) -> str:
    exponent = int(round(np.log10(n))) if n > 0 else 0
    return f"N=10^{exponent}" if 10**exponent == n else f"N={n}"


def profile_target(config: Config) -> Callable[[], None]:
    """One chainrule chain of ``config.profile_deep_size`` ops, for ``--profile deep``."""
    lib = import_library(CHAINRULE)
    n = config.profile_deep_size

    def target() -> None:
        torchlike_chain(lib, n)

    return target

