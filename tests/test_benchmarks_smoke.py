"""Smoke test of the benchmark suite: every workload runs at tiny sizes and reports correctly.

No timing is asserted, ever: the numbers of a 2-iteration run mean nothing. This only checks
that each workload runs under each library, the libraries compute the same thing, and the
report (table, Markdown, JSON) has its structure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.cli import WORKLOADS, main, profile_workload, run_suite
from benchmarks.conv import conv_path
from benchmarks.harness import CHAINRULE, LIBRARIES, PYTORCH, ROOT, Config
from benchmarks.report import Report

import chainrule
from chainrule.cli import bench

pytestmark = pytest.mark.slow

EXPECTED_ROWS = {
    "tiny": ["tiny", "tiny (user style)"],
    "mlp": ["mlp"],
    "deep": ["deep time", "deep memory"] * len(Config.smoke().deep_sizes),
    "conv": ["conv"],
    "memory": ["memory train", "memory no-grad", "memory ratio"],
    "compiled": ["compiled seed fwd+bwd", "compiled mlp"],
    "static": ["Session.run seed (constants)", "Session.run seed (fed placeholders)"],
}
COLUMNS = ["workload", "size", "chainrule", "PyTorch", "NumPy floor", "vs PyTorch", "vs NumPy",
           "target", "met?"]


@pytest.fixture(scope="module")
def report() -> Report:
    """One smoke-sized run of the whole suite (shared by the tests below)."""
    return run_suite(Config.smoke(), list(WORKLOADS), command="smoke test")


def test_every_workload_reports_its_rows(report: Report) -> None:
    assert [s.workload for s in report.sections] == list(WORKLOADS)
    for section in report.sections:
        assert [row.workload for row in section.rows] == EXPECTED_ROWS[section.workload], (
            section.notes)
        failures = [n for n in section.notes
                    if any(word in n for word in ("failed", "differ", "expected", "timeout"))]
        assert not failures, failures


def test_every_library_produced_a_value(report: Report) -> None:
    conv_missing = conv_path(chainrule) is None
    for row in report.rows:
        for lib in LIBRARIES:
            if row.workload == "conv" and lib == CHAINRULE and conv_missing:
                assert row.values[lib] is None and row.status[lib] == "n/a"
                continue
            if row.unit == "bytes":
                # a few-kB peak can round to 0 at smoke sizes; it must still be measured
                assert row.values[lib] is not None and row.values[lib] >= 0, (row, lib)
                continue
            if row.unit == "x":  # memory ratio: peaks of a few kB may read as 0 at smoke sizes
                value = row.values[lib]
                assert (value is not None and value >= 0) or row.status.get(lib) == "0 B no-grad", (
                    row, lib)
                continue
            assert row.values[lib] is not None and row.values[lib] > 0, (row, lib)


def test_ratios_and_targets(report: Report) -> None:
    tiny = report.sections[0].rows[0]
    expected = tiny.values[CHAINRULE] / tiny.values[PYTORCH]  # type: ignore[operator]
    assert tiny.ratio(PYTORCH) == pytest.approx(expected)
    # (the row's own target: 0.25x PyTorch, issue 13's, from benchmarks/tiny.py)
    assert [(t.against, t.limit) for t in tiny.targets] == [("pytorch", 0.25)]
    assert tiny.met() == (expected <= 0.25)
    deep_largest = [r for r in report.rows if r.workload == "deep time"][-1]
    assert any(t.against == "completes" for t in deep_largest.targets)
    for row in report.rows:
        assert len(row.cells()) == len(COLUMNS)


def test_outputs(report: Report, tmp_path: Path) -> None:
    text = report.text()
    for column in COLUMNS:
        assert column in text.splitlines()[0]
    md_path, json_path = report.save(tmp_path)
    markdown = md_path.read_text(encoding="utf-8")
    assert "| " + " | ".join(COLUMNS) + " |" in markdown
    assert "Command: `smoke test`" in markdown
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert {"command", "date", "config", "machine", "rows", "sections"} <= set(data)
    assert {"cpu", "cores", "python", "numpy", "torch", "torch_threads"} <= set(data["machine"])
    assert len(data["rows"]) == len(report.rows)
    row = data["rows"][0]
    assert {"workload", "size", "values", "ratio_vs_pytorch", "ratio_vs_numpy", "targets",
            "met", "samples"} <= set(row)


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_profile(workload: str) -> None:
    text = profile_workload(workload, Config.smoke(), top=5)
    assert "tottime" in text


def test_cli_quick_only_tiny(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["--only", "tiny", "--quick", "--repeat", "1", "--output-dir", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:2] == ["workload", "size"]
    assert "tiny" in out
    assert list(tmp_path.iterdir()) == []  # results are written only when asked
    assert main([*args, "--write-results"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "results.md"]


def test_cli_rejects_unknown_workload() -> None:
    with pytest.raises(SystemExit):
        main(["--only", "tiny,nope"])


def test_chainrule_bench_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert bench.find_suite(tmp_path) is None
    assert bench.main(["--quick"]) == 2
    assert "make bench" in capsys.readouterr().err
    assert bench.find_suite(ROOT) == ROOT


def test_chainrule_bench_runs_the_suite_as_a_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """From a checkout, ``python -m chainrule bench`` runs ``python -m benchmarks`` in a child
    process (its exit status passed on); the package itself never imports the suite."""
    import subprocess
    import sys

    monkeypatch.chdir(ROOT)
    done = subprocess.run([sys.executable, "-m", "chainrule", "bench", "--help"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "--only" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "chainrule", "bench", "--only", "nope"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    sources = Path(chainrule.__file__).parent.rglob("*.py")
    assert not [p for p in sources if "import benchmarks" in p.read_text()
                or "from benchmarks" in p.read_text()]


def test_bare_engine_computes_the_seed_gradients(capsys: pytest.CaptureFixture[str]) -> None:
    # The bare-engine reference (benchmarks/bare_engine.py) must compute what the tiny
    # workload's libraries compute, or its time would mean nothing.
    from benchmarks.bare_engine import main as bare_main
    from benchmarks.bare_engine import make_bare_step
    from benchmarks.tiny import EXPECTED_GRADS

    w, x = make_bare_step()()
    assert (float(w.grad[0]), float(x.grad[0])) == EXPECTED_GRADS
    assert bare_main(["--repeat", "1", "--iters", "2"]) == 0
    out = capsys.readouterr().out
    for name in ("bare engine", "NumPy floor", "chainrule", "PyTorch"):
        assert name in out
