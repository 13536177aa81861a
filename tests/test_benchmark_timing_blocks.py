"""benchmarks.harness.interleaved: ``min_block`` makes a fast step's timed block long enough.

A block of two calls of a sub-millisecond step right after the settle pause timed the machine
waking up (jacrev's 0.3 ms read as 0.7 ms). With ``min_block`` the harness runs as many calls
as the warm-up says fill the block. A fake clock makes this exact (no timing assertion).
"""

from __future__ import annotations

import pytest
from benchmarks import harness


class _FakeClock:
    """``perf_counter`` and ``sleep`` of a clock that only the step advances (1 ms a call)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls = 0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def step(self) -> None:
        self.calls += 1
        self.now += 0.001


def _run(monkeypatch, **options):
    clock = _FakeClock()
    monkeypatch.setattr(harness.time, "perf_counter", clock.perf_counter)
    monkeypatch.setattr(harness.time, "sleep", clock.sleep)
    samples = harness.interleaved({"fast": clock.step}, iters=2, repeat=3, warmup=2, **options)
    return clock.calls, samples["fast"]


def test_min_block_fills_the_block(monkeypatch):
    calls, samples = _run(monkeypatch, settle=0.05, min_block=0.05)
    assert calls == 2 + 3 * 50  # (warm-up, then 3 blocks of 50 ms of 1 ms calls)
    assert samples == pytest.approx([0.001] * 3)


def test_without_min_block_iters_is_kept(monkeypatch):
    calls, samples = _run(monkeypatch, settle=0.05)
    assert calls == 2 + 3 * 2
    assert samples == pytest.approx([0.001] * 3)


def test_slow_steps_keep_iters(monkeypatch):
    calls, _ = _run(monkeypatch, settle=0.0, min_block=0.001)
    assert calls == 2 + 3 * 2  # (one call already fills a 1 ms block: iters is the floor)
