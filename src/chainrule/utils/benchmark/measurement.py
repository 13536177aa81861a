"""What a benchmark measured (``Measurement``), what was measured (``TaskSpec``), and the
helpers that print times for people (``select_unit``, ``trim_sigfig``), as
``torch.utils.benchmark`` has them."""

from __future__ import annotations

import dataclasses
import math
import textwrap
from typing import Any

import numpy as np

from ..._dtype import REPR_NAMESPACE

__all__ = ["Measurement", "TaskSpec", "select_unit", "trim_sigfig", "unit_to_english"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_MAX_SIGNIFICANT_FIGURES = 4


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``"ns"``, ``"us"``, ``"ms"`` or ``"s"``) that shows ``t`` seconds as a number
    of order 1, and its scale in seconds."""
    exponent = math.floor(math.log10(t) / 3) if t > 0 else -math.inf
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")  # type: ignore[call-overload]
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def unit_to_english(u: str) -> str:
    """``"us"`` -> ``"microsecond"`` (and ns, ms, s)."""
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(np.round(x / scale) * scale)


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """The statement timed and its labels."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (with the sub-label), else the statement."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        """``setup: ...`` for a setup that does something, else the empty string."""
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's lines of a measurement's repr."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASK_FIELDS = tuple(field.name for field in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of ``number_per_run`` executions of a statement (``raw_times``, in seconds), with
    per-run statistics: ``times``, ``median``, ``mean``, ``iqr``."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if name in _TASK_FIELDS:  # the task's fields read through the measurement
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        """Seconds per single execution, one entry per measured block."""
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q: float) -> float:
        return float(np.quantile(np.asarray(sorted(self.times), dtype=np.float64), q))

    @property
    def median(self) -> float:
        """The median time per execution (seconds)."""
        return self._quantile(0.5)

    @property
    def mean(self) -> float:
        """The mean time per execution (seconds)."""
        return float(np.mean(self.times))

    @property
    def iqr(self) -> float:
        """The interquartile range of the times per execution (seconds)."""
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the times supports (at most 4)."""
        n = len(self.times)
        if n <= 1:
            return _MAX_SIGNIFICANT_FIGURES
        inner = [t for t in sorted(self.times) if self._quantile(0.25) <= t <= self._quantile(0.75)]
        std = float(np.std(inner)) if len(inner) > 1 else 0.0
        interval = max(1.645 * std / math.sqrt(len(inner)), _MIN_CONFIDENCE_INTERVAL)
        relative = math.log10(interval / self.median)
        return min(max(int(math.floor(-relative)), 1), _MAX_SIGNIFICANT_FIGURES)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        """Whether the interquartile range is below ``threshold`` times the median."""
        return self.iqr / self.median < threshold

    @property
    def has_warnings(self) -> bool:
        """Whether the spread of the times is large enough to be warned about."""
        return bool(self._warnings())

    def _warnings(self) -> list[str]:
        if len(self.times) < 4 or self.meets_confidence(_IQR_WARN_THRESHOLD):
            return []
        gross = not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD)
        why = (
            "This suggests significant environmental influence."
            if gross
            else "This could indicate system fluctuation."
        )
        share = self.iqr / self.median * 100
        return [
            f"  WARNING: Interquartile range is {share:.1f}% of the median measurement.\n"
            f"           {why}"
        ]

    @property
    def title(self) -> str:
        """The task's title."""
        return self.task_spec.title

    def __repr__(self) -> str:
        n = len(self.times)
        unit, scale = select_unit(self.median)
        head = (
            f"<{REPR_NAMESPACE[0]}.utils.benchmark.utils.common.Measurement object at "
            f"{hex(id(self))}>"
        )
        lines = [head, self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._quantile(0.25) / scale:.2f} to {self._quantile(0.75) / scale:.2f})"
            )
        per = "per measurement," if n > 1 else ","
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {per} {threads}"
        )
        lines.extend(self._warnings())
        return "\n".join(lines).strip()
