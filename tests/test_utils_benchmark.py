"""utils.benchmark against torch.utils.benchmark: Measurement statistics and repr from the
same raw times (the timing itself differs), the unit helpers, Timer's API and errors."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch.utils.benchmark as theirs_bench

import chainrule.utils.benchmark as ours_bench

from .conftest import torch
from .outcomes import same_outcome

BENCH = (theirs_bench, ours_bench)

RAW_TIMES = [
    [2.5e-3],
    [1.0e-6, 1.1e-6, 0.9e-6, 1.05e-6, 1.2e-6],
    [3.0, 3.1, 2.0, 5.0, 3.3, 3.2],
    [7e-5, 7.1e-5, 7.2e-5, 7.05e-5],
]
SPECS = [
    {"stmt": "x + 1"},
    {"stmt": "f(x)", "setup": "x = 1", "label": "L", "sub_label": "S", "description": "D"},
    {"stmt": "a\nb", "setup": "p\nq", "sub_label": "two"},
    {"stmt": "y", "num_threads": 4},
]


def _repr(measurement: Any) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x?", repr(measurement)).replace("chainrule", "torch")


@pytest.mark.parametrize("raw", RAW_TIMES)
@pytest.mark.parametrize("spec", SPECS)
def test_measurement_matches_torch(raw: list[float], spec: dict[str, Any]) -> None:
    seen = []
    for bench in BENCH:
        task = (
            bench.utils.common.TaskSpec(**{"setup": "pass", **spec})
            if bench is theirs_bench
            else bench.TaskSpec(**{"setup": "pass", **spec})
        )
        m = bench.Measurement(3, raw, task)
        seen.append(
            (
                _repr(m),
                m.times,
                round(m.median, 15),
                round(m.mean, 15),
                round(m.iqr, 15),
                m.has_warnings,
                m.meets_confidence(),
                m.significant_figures,
                m.title,
                m.stmt,
                m.number_per_run,
            )
        )
    assert seen[1] == seen[0]


@pytest.mark.parametrize("t", [3e-10, 2.5e-9, 4e-7, 1e-6, 0.02, 1.0, 7.5, 1234.0])
def test_select_unit_and_trim_sigfig(t: float) -> None:
    assert ours_bench.select_unit(t) == theirs_bench.select_unit(t)
    for n in (1, 2, 4):
        assert ours_bench.trim_sigfig(t, n) == pytest.approx(theirs_bench.trim_sigfig(t, n))


def test_timer_api() -> None:
    for bench in BENCH:
        timer = bench.Timer(stmt="x * 2", setup="x = 3", label="double")
        m = timer.timeit(50)
        assert m.number_per_run == 50 and len(m.times) == 1 and m.times[0] > 0
        assert m.title == "double"
        block = timer.blocked_autorange(min_run_time=0.01)
        assert block.number_per_run >= 1 and sum(block.raw_times) >= 0.01
        g = bench.Timer(stmt="f()", globals={"f": lambda: 1}).timeit(5)
        assert g.stmt == "f()"
    same_outcome(lambda lib: _bench(lib).Timer("pass").repeat())
    same_outcome(lambda lib: _bench(lib).Timer("pass").autorange())
    same_outcome(lambda lib: _bench(lib).Timer(stmt=3))
    same_outcome(lambda lib: _bench(lib).trim_sigfig(1.0, 1.5))


def _bench(lib: Any) -> Any:
    return theirs_bench if lib is torch else ours_bench
