"""``Timer``: time a Python statement as ``torch.utils.benchmark.Timer`` does (a warm-up, then
``timeit(number)``, or blocks of runs until a minimum time has passed)."""

from __future__ import annotations

import statistics
import timeit as _timeit
from collections.abc import Callable
from typing import Any

from .measurement import Measurement, TaskSpec

__all__ = ["Timer", "timer"]

timer = _timeit.default_timer


class Timer:
    """Time ``stmt`` (Python source) after ``setup``, run in a copy of ``globals``.

    Example:
        >>> t = Timer(stmt="x * 2", setup="x = 3")
        >>> t.timeit(100).number_per_run
        100
    """

    def __init__(
        self,
        stmt: str = "pass",
        setup: str = "pass",
        global_setup: str = "",
        timer: Callable[[], float] = timer,
        globals: dict[str, Any] | None = None,  # noqa: A002 - PyTorch's name
        label: str | None = None,
        sub_label: str | None = None,
        description: str | None = None,
        env: str | None = None,
        num_threads: int = 1,
        language: Any = "python",
    ) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if str(language).lower() not in ("python", "py", "language.python"):
            raise ValueError("chainrule's Timer times Python statements only")
        self._globals = dict(globals or {})
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement ``number`` times (after a warm-up of ``number // 100``, at least
        2) and measure them as one block."""
        self._timeit(max(number // 100, 2))
        return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        """Not provided (as in PyTorch): use ``blocked_autorange``."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        """Not provided (as in PyTorch): use ``blocked_autorange``."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        overhead = statistics.median(self._timeit(0) for _ in range(5))
        number = 1
        while True:
            taken = self._timeit(number)
            if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                break
            if taken > min_run_time or number * 10 > 2147483647:
                break
            number *= 10
        return number

    def _measure_blocks(
        self,
        number: int,
        min_run_time: float,
        stop: Callable[[list[float]], bool],
        max_run_time: float | None,
        callback: Callable[[int, float], Any] | None,
    ) -> list[float]:
        times: list[float] = []
        total = 0.0
        can_stop = False
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(
        self, callback: Callable[[int, float], Any] | None = None, min_run_time: float = 0.2
    ) -> Measurement:
        """Blocks of runs, each long enough for the timer's overhead not to matter, until
        ``min_run_time`` seconds have been measured."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure_blocks(number, min_run_time, lambda _: True, None, callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(
        self,
        threshold: float = 0.1,
        *,
        min_run_time: float = 0.01,
        max_run_time: float = 10.0,
        callback: Callable[[int, float], Any] | None = None,
    ) -> Measurement:
        """Blocks of runs until the interquartile range is below ``threshold`` times the
        median (at least ``min_run_time``, at most ``max_run_time`` seconds)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times: list[float]) -> bool:
            if len(times) <= 3:
                return False
            measured = Measurement(number, times, self._task_spec)
            return measured.meets_confidence(threshold=threshold)

        times = self._measure_blocks(number, min_run_time, confident, max_run_time, callback)
        return Measurement(number, times, self._task_spec)
