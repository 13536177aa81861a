"""memory: what the graph costs: peak memory of an MLP training step over a no-grad forward.

The ``mlp`` model at batch 1024. Each (library, mode) runs in a fresh subprocess: the model and
batch are built and one warm-up pass runs first (lazy imports, BLAS buffers), then the peak RSS
of a second pass is measured above the RSS at that point. A training step keeps the saved
activations until backward frees them; an engine that frees them as backward goes and keeps
nothing else stays close to PyTorch's ratio.
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


def _runner(library: str, mode: str, batch: int) -> Callable[[], object]:
    model = build(library, batch)
    return model.step if mode == "train" else model.forward_no_grad


def worker(library: str, mode: str, batch: int) -> dict[str, Any]:
    """Subprocess body: peak RSS of one ``mode`` pass at ``batch`` above the set-up RSS."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    measured = _runner(library, mode, batch)
    measured()                      # warm-up: lazy imports, BLAS buffers, first-call caches
    gc.collect()
    baseline = current_rss()
    reset = reset_peak_rss()
    measured()
    peak = peak_rss()
    return {"baseline_rss": baseline, "peak_rss": peak, "peak_bytes": max(0, peak - baseline),
            "peak_reset": reset}


def run(config: Config, libraries: tuple[str, ...] = LIBRARIES) -> Section:
    """Two subprocesses per library (training step, no-grad forward); peaks and their ratio."""
    section = Section("memory")
    size = f"batch {config.memory_batch}"
    peaks = {mode: Row(f"memory {mode.replace('_', '-')}", size, "bytes",
                       dict.fromkeys(LIBRARIES)) for mode in MODES}
    order = list(libraries)
    for index, mode in enumerate(MODES):
        shift = index % len(order)
        for library in order[shift:] + order[:shift]:
            result = run_worker("memory", {"library": library, "mode": mode,
                                           "batch": config.memory_batch}, config.timeout)
            section.details[f"{library} {mode}"] = result.data or {"error": result.error}
            if result.data is None:
                peaks[mode].status[library] = "failed"
                section.notes.append(f"{library} {mode}: {result.error}")
            else:
                peaks[mode].values[library] = float(result.data["peak_bytes"])
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


def profile_target(config: Config) -> Callable[[], None]:
    """One chainrule training step at ``config.memory_batch``, for ``--profile memory``."""
    return _runner(CHAINRULE, "train", config.memory_batch)
