"""``utils.benchmark``: timing Python statements (``Timer``) and printing what was measured
(``Measurement``), as ``torch.utils.benchmark`` does for Python code."""

from __future__ import annotations

from .measurement import Measurement, TaskSpec, select_unit, trim_sigfig, unit_to_english
from .timer import Timer, timer

__all__ = [
    "Measurement",
    "TaskSpec",
    "Timer",
    "select_unit",
    "timer",
    "trim_sigfig",
    "unit_to_english",
]
