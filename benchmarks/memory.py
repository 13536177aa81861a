"""memory: what the graph costs: peak memory of an MLP training step over a no-grad forward.

The ``mlp`` model at batch 1024, one fresh subprocess per library. The model and batch are built
and both passes run once as a warm-up (lazy imports, BLAS buffers); then each pass is measured
on its own: the kernel's peak-RSS mark is reset, the pass runs, and its peak above the RSS just
before is read. A training step keeps the saved activations until backward frees them; an engine
that frees them as backward goes and keeps nothing else stays close to PyTorch's ratio.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from .harness import (
    CHAINRULE,
    LIBRARIES,
    Config,
    current_rss,
    peak_rss,
    reset_peak_rss,
    run_worker,
)
from .mlp import build
from .report import Row, Section, Target

__all__ = ["MODES", "profile_target", "run", "worker"]

MODES = ("train", "no_grad")


def _measure(run: Callable[[], object]) -> dict[str, Any]:
    """Peak RSS of one call of ``run`` above the RSS just before it."""
    gc.collect()
    baseline = current_rss()
    reset = reset_peak_rss()
    run()
    peak = peak_rss()
    return {"baseline_rss": baseline, "peak_rss": peak, "peak_bytes": max(0, peak - baseline),
            "peak_reset": reset}


def worker(library: str, batch: int) -> dict[str, Any]:
    """Subprocess body: the peak of a no-grad forward, then of a training step, at ``batch``."""
    model = build(library, batch)
    passes = {"no_grad": model.forward_no_grad, "train": model.step}
    for run in passes.values():
        run()                       # warm-up: lazy imports, BLAS buffers, first-call caches
    return {mode: _measure(run) for mode, run in passes.items()}


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """One subprocess per library: the two peaks (training step, no-grad forward), their ratio."""
    section = Section("memory")
    size = f"batch {config.memory_batch}"
    peaks = {mode: Row(f"memory {mode.replace('_', '-')}", size, "bytes",
                       dict.fromkeys(LIBRARIES)) for mode in MODES}
    for library in libraries:
        result = run_worker("memory", {"library": library, "batch": config.memory_batch},
                            config.timeout)
        section.details[library] = result.data or {"error": result.error}
        for mode in MODES:
            if result.data is None:
                peaks[mode].status[library] = "failed"
            else:
                peaks[mode].values[library] = float(result.data[mode]["peak_bytes"])
        if result.data is None:
            section.notes.append(f"{library}: {result.error}")
        elif not all(result.data[mode]["peak_reset"] for mode in MODES):
            section.notes.append(f"{library}: the peak-RSS mark could not be reset (not Linux?):"
                                 " its peaks include earlier allocations")
    ratio = Row("memory ratio", "train / no-grad", "x", dict.fromkeys(LIBRARIES),
                [Target("pytorch")])
    for library in LIBRARIES:
        train, forward = peaks["train"].values[library], peaks["no_grad"].values[library]
        if train is not None and forward:
            ratio.values[library] = train / forward
        elif forward == 0:
            ratio.status[library] = "0 B no-grad"   # below what RSS resolves (tiny batches)
    section.rows += [peaks["train"], peaks["no_grad"], ratio]
    section.notes.append("peak RSS above the RSS after imports, set-up and a warm-up; the ratio "
                         "is the training step's peak over the no-grad forward's")
    return section


def profile_target(config: Config) -> Callable[[], object]:
    """One chainrule training step at ``config.memory_batch``, for ``--profile memory``."""
    return build(CHAINRULE, config.memory_batch).step
