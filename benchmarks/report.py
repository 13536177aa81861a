"""Results of a run: rows with targets, rendered as a text table, Markdown and JSON.

A :class:`Row` holds one measurement per library (``None`` where it did not run); the ratios are
always chainrule divided by the other library, so below 1 means chainrule is faster or smaller.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .harness import CHAINRULE, LIBRARIES, NUMPY, PYTORCH, ROOT, Config

__all__ = ["Report", "Row", "Section", "Target", "command_line", "load_average", "machine_info"]

Unit = Literal["s", "bytes", "x"]

#: Interquartile range over median above which a row's samples get a note (see Row.noise_note).
NOISY_SPREAD = 0.25

_NAMES = {CHAINRULE: "chainrule", PYTORCH: "PyTorch", NUMPY: "NumPy floor"}
_HEADER = ("workload", "size", "chainrule", "PyTorch", "NumPy floor", "vs PyTorch", "vs NumPy",
           "target", "met?")


@dataclass(frozen=True)
class Target:
    """A goal for chainrule: ``ratio vs <against> <= limit``, or ``completes`` (ran at all)."""

    against: Literal["pytorch", "numpy", "completes"]
    limit: float = 1.0

    def describe(self) -> str:
        """Short text for the table, e.g. ``<=0.2x PyTorch``."""
        if self.against == "completes":
            return "completes"
        return f"≤{self.limit:g}× {_NAMES[self.against].split()[0]}"


@dataclass
class Row:
    """One line of the table: a workload at one size, a value per library, its targets."""

    workload: str
    size: str
    unit: Unit                                   # seconds, bytes, or a plain ratio ("x")
    values: dict[str, float | None]
    targets: list[Target] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)   # why a value is missing: "timeout"
    samples: dict[str, list[float]] = field(default_factory=dict)
    per: str = ""                                # what the value is per: "iter", "step", "op"

    def ratio(self, against: str) -> float | None:
        """chainrule's value divided by ``against``'s, when both exist."""
        mine, theirs = self.values.get(CHAINRULE), self.values.get(against)
        if mine is None or theirs is None or theirs <= 0:
            return None
        return mine / theirs

    def met(self) -> bool | None:
        """Whether every target holds; ``None`` if one cannot be judged (a library missing)."""
        if not self.targets:
            return None
        verdicts: list[bool | None] = []
        for target in self.targets:
            if target.against == "completes":
                verdicts.append(self.values.get(CHAINRULE) is not None)
            else:
                ratio = self.ratio(target.against)
                verdicts.append(None if ratio is None else ratio <= target.limit)
        if False in verdicts:
            return False
        return None if None in verdicts else True

    def cells(self) -> list[str]:
        """The row as table cells (see ``_HEADER``)."""
        values = [self._format(lib) for lib in LIBRARIES]
        ratios = [_format_ratio(self.ratio(lib),
                                [t.limit for t in self.targets if t.against == lib])
                  for lib in (PYTORCH, NUMPY)]
        target = ", ".join(t.describe() for t in self.targets) or "—"
        met = {True: "yes", False: "NO", None: "—" if not self.targets else "n/a"}[self.met()]
        return [self.workload, self.size, *values, *ratios, target, met]

    def _format(self, lib: str) -> str:
        value = self.values.get(lib)
        if value is None:
            return self.status.get(lib, "n/a")
        return self._format_value(value)

    def _format_value(self, value: float) -> str:
        if self.unit == "bytes":
            return f"{value / 2**20:.1f} MiB"
        if self.unit == "x":
            return f"{value:.2f}×"
        text = _format_seconds(value)
        return f"{text}/{self.per}" if self.per else text

    def spread(self, lib: str) -> float | None:
        """Interquartile range of ``lib``'s samples over their median (``None``: < 4 samples)."""
        values = self.samples.get(lib, [])
        if len(values) < 4:
            return None
        q1, q2, q3 = statistics.quantiles(values, n=4)
        return (q3 - q1) / q2 if q2 > 0 else None

    def noise_note(self, section: str = "", threshold: float = NOISY_SPREAD) -> str | None:
        """A note when some library's samples spread widely (a busy machine), else ``None``.

        Gives each library's range: the minimum is the least disturbed sample. ``section`` is
        the workload the note will be filed under (not repeated in the text).
        """
        noisy = [lib for lib in self.samples if (self.spread(lib) or 0) > threshold]
        if not noisy:
            return None
        ranges = ", ".join(
            f"{_NAMES[lib]} {self._format_value(min(v))}–{self._format_value(max(v))}"
            for lib in LIBRARIES if (v := self.samples.get(lib)))
        label = self.size if self.workload == section else f"{self.workload} {self.size}"
        return (f"{label}: samples spread widely ({ranges}); medians of a busy machine, the "
                "minimums show the undisturbed speed")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with the ratios, verdict and sample statistics included."""
        data = asdict(self)
        data["min"] = {lib: min(v) for lib, v in self.samples.items() if v}
        data["spread"] = {lib: self.spread(lib) for lib in self.samples}
        data["ratio_vs_pytorch"] = self.ratio(PYTORCH)
        data["ratio_vs_numpy"] = self.ratio(NUMPY)
        data["met"] = self.met()
        return data


@dataclass
class Section:
    """Everything one workload produced: its rows, notes for the reader, and raw details."""

    workload: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    """A whole run: the sections, the configuration, the command and the machine."""

    sections: list[Section]
    config: Config
    command: str
    machine: dict[str, Any]
    date: str = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"))
    seconds: float = 0.0
    run_notes: list[str] = field(default_factory=list)   # about the run as a whole

    @property
    def rows(self) -> list[Row]:
        """All rows, in workload order."""
        return [row for section in self.sections for row in section.rows]

    def table(self) -> str:
        """The fixed-width text table printed to stdout."""
        lines = [list(_HEADER), *(row.cells() for row in self.rows)]
        widths = [max(len(line[i]) for line in lines) for i in range(len(_HEADER))]
        rule = "  ".join("-" * w for w in widths)
        text = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                for line in lines]
        return "\n".join([text[0], rule, *text[1:]])

    def markdown_table(self) -> str:
        """The table in GitHub Markdown (what the top-level README shows)."""
        lines = ["| " + " | ".join(_HEADER) + " |", "|" + "---|" * len(_HEADER)]
        lines.extend("| " + " | ".join(row.cells()) + " |" for row in self.rows)
        return "\n".join(lines)

    def notes(self) -> list[str]:
        """The run's notes, then every section's, prefixed with the workload."""
        return [f"run: {note}" for note in self.run_notes] + [
            f"{s.workload}: {note}" for s in self.sections for note in s.notes]

    def text(self) -> str:
        """Table plus notes and the machine line, for the terminal."""
        parts = [self.table(), "", self.machine_line(),
                 "ratios are chainrule / other library: below 1 means chainrule is faster."]
        if self.notes():
            parts += ["", "notes:", *(f"  - {note}" for note in self.notes())]
        return "\n".join(parts)

    def machine_line(self) -> str:
        """One line: CPU, cores, threads and versions."""
        m = self.machine
        line = (f"{m['cpu']}, {m['cores']} cores; PyTorch {m.get('torch') or 'absent'} "
                f"({m.get('torch_threads')} threads), NumPy {m['numpy']} "
                f"({m.get('blas') or 'BLAS ?'}), chainrule {m['chainrule']} "
                f"(git {m.get('git_commit')}{', modified' if m.get('git_dirty') else ''}), "
                f"Python {m['python']}; {self.date}")
        share = m.get("foreign_cpu_share")
        return line if share is None else f"{line}; other processes' CPU share {share:.0%}"

    def markdown(self) -> str:
        """``results.md``: how it was made, the table, and the notes."""
        parts = [
            "# chainrule benchmark results", "",
            f"Command: `{self.command}` ({self.config.label} configuration, "
            f"{self.seconds:.0f} s).  ", f"Machine: {self.machine_line()}", "",
            "Times are medians over repeats, run in the same process (subprocesses for `deep` "
            "and `memory`) with the libraries interleaved. Ratios are chainrule / other "
            "library: below 1 means chainrule is faster or smaller.", "",
            self.markdown_table(),
        ]
        if self.notes():
            parts += ["", "Notes:", "", *(f"- {note}" for note in self.notes())]
        return "\n".join(parts) + "\n"

    def to_json(self) -> dict[str, Any]:
        """``results.json``: everything, raw samples included."""
        return {
            "command": self.command,
            "date": self.date,
            "seconds": round(self.seconds, 1),
            "config": asdict(self.config),
            "machine": self.machine,
            "notes": self.notes(),
            "rows": [row.to_json() for row in self.rows],
            "sections": [{"workload": s.workload, "notes": s.notes, "details": s.details}
                         for s in self.sections],
        }

    def save(self, directory: Path) -> tuple[Path, Path]:
        """Write ``results.md`` and ``results.json`` into ``directory``; return their paths."""
        directory.mkdir(parents=True, exist_ok=True)
        md, js = directory / "results.md", directory / "results.json"
        md.write_text(self.markdown(), encoding="utf-8")
        js.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n",
                      encoding="utf-8")
        return md, js


def _format_seconds(seconds: float) -> str:
    for scale, unit in ((1e-6, "µs"), (1e-3, "ms"), (1.0, "s")):
        if seconds < 1000 * scale or unit == "s":
            return f"{_three_digits(seconds / scale)} {unit}"
    raise AssertionError("unreachable")


def _format_ratio(ratio: float | None, limits: list[float]) -> str:
    if ratio is None:
        return "—"
    if any(abs(ratio / limit - 1) < 0.05 for limit in limits):
        return f"{ratio:.3f}×"   # near a target: one more digit, so "met?" is visibly right
    return f"{_three_digits(ratio)}×"


def _three_digits(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if 0 < x < 0.1:
        return f"{x:.3f}"  # (a ratio far below 1: 0.004, not 0.00)
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


# -------------------------------------------------------------------------------------- machine


def machine_info() -> dict[str, Any]:
    """CPU model, cores, library versions and thread counts of this machine."""
    import numpy as np

    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": _memory_gib(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas(),
        "chainrule": _chainrule_version(),
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "threads_env": {k: v for k, v in os.environ.items()
                        if k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "gc": "enabled (as in user code)",
        "load_average": load_average(),
    }
    try:
        import torch
    except ImportError:
        info["torch"] = None
    else:
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        info["torch_interop_threads"] = torch.get_num_interop_threads()
    return info


def load_average() -> list[float] | None:
    """The 1, 5 and 15-minute load averages (how busy the machine was with other work)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(kib / 2**20, 1)


def _blas() -> str | None:
    """NumPy's BLAS and its thread count, e.g. ``openblas 0.3.31, 2 threads``."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            return f"{pool['internal_api']} {pool.get('version')}, {pool['num_threads']} threads"
    return None


def _chainrule_version() -> str:
    import chainrule

    return str(getattr(chainrule, "__version__", "?"))


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "--no-optional-locks", *args], cwd=ROOT,
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def command_line(prefix: str, argv: list[str]) -> str:
    """The command as typed, e.g. ``python -m benchmarks --only tiny``."""
    python = os.path.relpath(sys.executable) if sys.executable.startswith(os.getcwd()) else "python"
    return " ".join([python, prefix, *argv])
