"""Shared machinery of the suite: sizes, interleaved timing, subprocess workers and memory.

Nothing here imports chainrule or PyTorch at module level: a worker subprocess loads only the
library it measures, so its memory baseline and import time are its own.
"""

from __future__ import annotations

import gc
import importlib
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "CHAINRULE", "LIBRARIES", "NUMPY", "PYTORCH", "ROOT", "SETTLE_SECONDS", "WORKER_MALLOC_ENV",
    "Config", "ForeignCpu", "Unavailable", "WorkerResult", "current_rss", "import_library",
    "interleaved", "library_available", "median", "peak_rss", "reset_peak_rss", "run_worker",
    "worker_main",
]

CHAINRULE = "chainrule"
PYTORCH = "pytorch"
NUMPY = "numpy"
#: Column order of every table, and the rotation order of interleaved timing.
LIBRARIES: tuple[str, ...] = (CHAINRULE, PYTORCH, NUMPY)

#: The checkout directory that holds the ``benchmarks`` package (the workers' working directory).
ROOT = Path(__file__).resolve().parent.parent

_WORKER_MARKER = "@@benchmark-result@@ "

#: glibc malloc settings of the worker subprocesses. By default glibc raises its mmap threshold
#: after the first large free, so later arrays come from a heap that stays resident after a free
#: and is reused unseen: the peak RSS would depend on allocation history. A fixed threshold makes
#: every array above 64 KiB its own mapping, returned on free, so RSS follows live memory.
#: (Small tensors, as in ``deep``, are far below it and unaffected.)
WORKER_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "1048576"}


#: Pause before each timed block. PyTorch (OpenMP) and NumPy (OpenBLAS) each keep a pool of
#: worker threads that busy-wait for a while after a parallel operation (OpenBLAS up to ~0.1 s);
#: on 2 cores, one library's spinning pool would steal a core from the next library's block.
SETTLE_SECONDS = 0.15


@dataclass(frozen=True)
class Config:
    """Sizes and repetition counts of one run of the suite.

    ``Config()`` is the full ``make bench`` run; :meth:`quick` is the CI-sized run and
    :meth:`smoke` the test-sized one (every code path, tiny sizes, 1-2 iterations).
    """

    repeat: int = 11                # timed repeats per library (medians are over these)
    tiny_iters: int = 10_000        # seed-example iterations per repeat
    mlp_iters: int = 10             # training steps per repeat (short blocks, many samples)
    mlp_batch: int = 128
    deep_sizes: tuple[int, ...] = (10_000, 100_000, 1_000_000)
    deep_max_ops_per_worker: int = 500_000   # repeats inside a deep worker stop at this budget
    conv_iters: int = 5
    conv_batch: int = 64
    memory_batch: int = 1024
    warmup: int = 3                 # untimed iterations per library before timing
    settle: float = SETTLE_SECONDS  # idle seconds before each timed block
    timeout: float = 300.0          # seconds per worker subprocess (a timeout is reported)
    profile_deep_size: int = 100_000
    label: str = "full"

    @classmethod
    def quick(cls) -> Config:
        """Fewer iterations and smaller chains: a CI-sized run (about a minute)."""
        return cls(repeat=3, tiny_iters=1_000, mlp_iters=10, deep_sizes=(1_000, 10_000),
                   deep_max_ops_per_worker=30_000, conv_iters=5, warmup=2, timeout=300.0,
                   profile_deep_size=10_000, label="quick")

    @classmethod
    def smoke(cls) -> Config:
        """Tiny sizes and 1-2 iterations: checks that every workload runs, nothing more."""
        return cls(repeat=2, tiny_iters=2, mlp_iters=1, mlp_batch=8, deep_sizes=(100,),
                   deep_max_ops_per_worker=200, conv_iters=1, conv_batch=2, memory_batch=16,
                   warmup=1, settle=0.0, timeout=180.0, profile_deep_size=100, label="smoke")

    def with_repeat(self, repeat: int) -> Config:
        """This configuration with ``repeat`` timed repeats."""
        if repeat < 1:
            raise ValueError(f"--repeat must be at least 1, got {repeat}")
        return replace(self, repeat=repeat)


# ------------------------------------------------------------------------------------ libraries


class Unavailable(Exception):
    """A workload cannot run under a library yet (e.g. chainrule has no ``conv2d``)."""



def import_library(name: str) -> ModuleType:
    """The module behind a library name: ``chainrule``, ``torch`` or ``numpy``."""
    module = {CHAINRULE: "chainrule", PYTORCH: "torch", NUMPY: "numpy"}[name]
    return importlib.import_module(module)


def library_available(name: str) -> bool:
    """Whether ``name`` can be imported in this environment (PyTorch is optional)."""
    try:
        import_library(name)
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------------------- timing


def median(values: list[float]) -> float | None:
    """The median of ``values``, or ``None`` for no values."""
    return statistics.median(values) if values else None


def interleaved(
    steps: Mapping[str, Callable[[], object]], iters: int, repeat: int, warmup: int,
    settle: float = SETTLE_SECONDS, min_block: float = 0.0,
) -> dict[str, list[float]]:
    """Seconds per call of each step: ``repeat`` samples, each the mean over ``iters`` calls.

    The libraries take turns within each repeat and the order rotates between repeats, so slow
    drift of the machine (other processes, frequency changes) spreads over all of them. Before
    each timed block the cyclic garbage collector is emptied (it stays enabled, as in user
    code) and the thread pools get ``settle`` seconds to go idle (see :data:`SETTLE_SECONDS`).

    With ``min_block``, a step's block runs more than ``iters`` calls when that many would take
    less than ``min_block`` seconds (judged from the timed warm-up calls), as ``timeit``'s
    autorange does: the first calls after the settle pause run on cold caches and a clock that
    has slowed down (measured: a 0.3 ms step takes 1 ms right after a 50 ms pause, and about
    four calls to get back), so a block of two sub-millisecond calls times the wake-up, not
    the step.
    """
    block_iters = {}
    for name, step in steps.items():
        start = time.perf_counter()
        for _ in range(warmup):
            step()
        per_call = (time.perf_counter() - start) / warmup if warmup else 0.0
        needed = math.ceil(min_block / per_call) if min_block and per_call > 0 else iters
        block_iters[name] = max(iters, needed)
    names = list(steps)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeat):
        shift = r % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            step = steps[name]
            count = block_iters[name]
            gc.collect()
            time.sleep(settle)
            start = time.perf_counter()
            for _ in range(count):
                step()
            samples[name].append((time.perf_counter() - start) / count)
    return samples


# --------------------------------------------------------------------------------------- memory


def current_rss() -> int:
    """Resident set size of this process now, in bytes (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            resident_pages = int(f.read().split()[1])
    except OSError:
        return 0
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    """Peak resident set size of this process's memory so far, in bytes.

    Reads the kernel's high-water mark ``VmHWM`` from ``/proc/self/status``: the counter behind
    ``getrusage(RUSAGE_SELF).ru_maxrss``, without the part ``ru_maxrss`` inherits across
    ``exec`` (a worker started by a 300 MB parent would otherwise report a 300 MB peak, and
    :func:`reset_peak_rss` cannot clear that part). Falls back to ``ru_maxrss`` off Linux.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark to the current RSS; ``False`` if not supported.

    Linux resets ``ru_maxrss``/``VmHWM`` on ``echo 5 > /proc/self/clear_refs``: the peak measured
    afterwards then belongs to the measured code, not to imports or set-up.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


class ForeignCpu:
    """How much of the machine's CPU other processes used between construction and :meth:`share`.

    All CPUs' busy time from ``/proc/stat`` (steal included: a VM's host handing the core to
    someone else) minus this process's and its waited-for children's CPU time, over the wall time
    times the core count. 0.0 means the run had the machine to itself; ``None`` off Linux.
    """

    def __init__(self) -> None:
        self._start = (time.perf_counter(), _machine_busy_seconds(), _own_cpu_seconds())

    def share(self) -> float | None:
        """The fraction (0 to 1) of all cores' time that went to other processes so far."""
        wall0, busy0, own0 = self._start
        busy1 = _machine_busy_seconds()
        if busy0 is None or busy1 is None:
            return None
        wall = time.perf_counter() - wall0
        foreign = (busy1 - busy0) - (_own_cpu_seconds() - own0)
        return max(0.0, min(1.0, foreign / (wall * (os.cpu_count() or 1)))) if wall > 0 else None


def _machine_busy_seconds() -> float | None:
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# -------------------------------------------------------------------------------------- workers


@dataclass
class WorkerResult:
    """What a worker subprocess reported: its JSON ``data``, or why there is none."""

    data: dict[str, Any] | None
    error: str | None = None      # "timeout after 900 s", the last line of a traceback, ...
    seconds: float = 0.0          # wall time of the whole subprocess, imports included
    stderr_tail: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the worker finished and reported a result."""
        return self.data is not None


def run_worker(module: str, kwargs: dict[str, Any], timeout: float) -> WorkerResult:
    """Run ``benchmarks.<module>.worker(**kwargs)`` in a fresh Python and return its report.

    The subprocess starts from the checkout directory so that ``benchmarks`` is importable and
    loads only what the worker imports (one library), so its memory numbers are its own.
    """
    cmd = [sys.executable, "-m", "benchmarks.worker", module, json.dumps(kwargs)]
    env = dict(os.environ, **WORKER_MALLOC_ENV)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return WorkerResult(None, f"timeout after {timeout:.0f} s", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    tail = proc.stderr.strip().splitlines()[-5:]
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_WORKER_MARKER):
            return WorkerResult(json.loads(line[len(_WORKER_MARKER):]), None, seconds, tail)
    if proc.returncode < 0:
        error = f"killed by signal {-proc.returncode}"
    else:
        error = tail[-1] if tail else f"exit status {proc.returncode}, no result"
    return WorkerResult(None, error, seconds, tail)


def worker_main(argv: list[str]) -> int:
    """Body of ``python -m benchmarks.worker <module> <json kwargs>`` (see :func:`run_worker`)."""
    if len(argv) != 2:
        print("usage: python -m benchmarks.worker <module> <json kwargs>", file=sys.stderr)
        return 2
    module = importlib.import_module(f"benchmarks.{argv[0]}")
    result = module.worker(**json.loads(argv[1]))
    print(_WORKER_MARKER + json.dumps(result), flush=True)
    return 0
