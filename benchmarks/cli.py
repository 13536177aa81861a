"""``python -m benchmarks`` / ``make bench`` / ``python -m chainrule bench``: run the suite.

Runs the chosen workloads and prints the table. With ``--write-results`` it also writes
``results.md`` and ``results.json`` next to this file (or into ``--output-dir``): the tracked
copies change only when asked, so a user's checkout stays clean. ``--profile WORKLOAD`` instead
runs chainrule's part of one workload under cProfile and prints the 25 functions with the most
own time.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import pstats
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from .harness import LIBRARIES, PYTORCH, Config, ForeignCpu, Unavailable, library_available
from .report import Report, Section, command_line, load_average, machine_info

__all__ = ["WORKLOADS", "main", "profile_workload", "run_suite"]

#: Workload name -> what it measures (one module each, run in this order).
WORKLOADS: dict[str, str] = {
    "tiny": "the seed example, create + forward + backward, per iteration",
    "mlp": "784-256-256-10 MLP training step, batch 128",
    "deep": "chain of N elementwise ops then backward: time per op, peak memory",
    "conv": "small CNN training step (conv 3x3, 16 channels, batch 64)",
    "memory": "peak memory of an MLP training step over a no-grad forward",
    "compiled": "chainrule.compile: the seed example fwd+bwd, the MLP training step",
    "static": "chainrule.static Session.run of the seed graph (constants, fed placeholders)",
}

DEFAULT_OUTPUT = Path(__file__).resolve().parent
#: Share of the CPU used by other processes above which the report warns about noise.
BUSY_SHARE = 0.05


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_workload(name: str, config: Config, libraries: tuple[str, ...]) -> Section:
    """Run one workload; an exception becomes a note instead of ending the suite."""
    module = importlib.import_module(f"benchmarks.{name}")
    try:
        section: Section = module.run(config, libraries)
    except Exception as error:
        _log(traceback.format_exc())
        return Section(name, notes=[f"workload failed: {type(error).__name__}: {error}"])
    return section


def run_suite(config: Config, workloads: Sequence[str] = tuple(WORKLOADS),
              command: str = "python -m benchmarks") -> Report:
    """Run ``workloads`` under every available library and collect the report."""
    libraries = tuple(lib for lib in LIBRARIES if lib != PYTORCH or library_available(PYTORCH))
    machine = machine_info()
    start, whole_run = time.perf_counter(), ForeignCpu()
    sections = []
    for name in workloads:
        _log(f"[bench] {name}: {WORKLOADS[name]} ...")
        began, foreign = time.perf_counter(), ForeignCpu()
        section = run_workload(name, config, libraries)
        section.details["seconds"] = round(time.perf_counter() - began, 1)
        section.details["foreign_cpu_share"] = share = foreign.share()
        if share is not None and share > BUSY_SHARE:
            section.notes.append(f"other processes used {share:.0%} of the CPU meanwhile")
        section.notes += filter(None, (row.noise_note(name) for row in section.rows))
        _log(f"[bench] {name}: done in {section.details['seconds']} s")
        sections.append(section)
    report = Report(sections, config, command, machine)
    report.seconds = time.perf_counter() - start
    machine["load_average_end"] = load_average()
    machine["foreign_cpu_share"] = share = whole_run.share()
    if PYTORCH not in libraries:
        report.run_notes.append("PyTorch is not installed: its column is empty")
    if share is not None and share > BUSY_SHARE:
        report.run_notes.append(
            f"other processes used {share:.0%} of the machine's CPU during the run: times are "
            "noisy (multi-threaded BLAS suffers most); see the per-workload notes and the samples "
            "in results.json, and rerun on a quiet machine before trusting a few percent")
    return report


def profile_workload(name: str, config: Config, top: int = 25) -> str:
    """cProfile chainrule's part of workload ``name``: the ``top`` rows by own time."""
    module = importlib.import_module(f"benchmarks.{name}")
    target = module.profile_target(config)
    target()                                   # warm-up outside the profile
    profiler = cProfile.Profile()
    profiler.runcall(target)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats(pstats.SortKey.TIME).print_stats(top)
    return out.getvalue()


def _workload_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown workload(s) {', '.join(unknown) or '(none)'}; choose from "
            f"{', '.join(WORKLOADS)}")
    return names


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Time chainrule against PyTorch eager and a NumPy floor.",
        epilog="workloads: " + "; ".join(f"{k}: {v}" for k, v in WORKLOADS.items()))
    parser.add_argument("--only", type=_workload_list, metavar="W1,W2",
                        help="run only these workloads (comma-separated)")
    parser.add_argument("--quick", action="store_true",
                        help="fewer iterations and shorter chains (CI smoke, about a minute)")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help="timed repeats per library (default 11, 3 with --quick)")
    parser.add_argument("--profile", choices=list(WORKLOADS), metavar="WORKLOAD",
                        help="instead of timing, cProfile chainrule's part of WORKLOAD "
                             "(top 25 functions by own time)")
    parser.add_argument("--write-results", action="store_true",
                        help="also write results.md and results.json (the tracked copies, or "
                             "into --output-dir)")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, metavar="DIR",
                        help="where --write-results writes (default: %(default)s)")
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "python -m benchmarks") -> int:
    """Parse ``argv``, then run the suite (or the profile) and report."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = _parser(prog).parse_args(args_list)
    config = Config.quick() if args.quick else Config()
    if args.repeat is not None:
        try:
            config = config.with_repeat(args.repeat)
        except ValueError as error:
            _parser(prog).error(str(error))
    if args.profile:
        try:
            text = profile_workload(args.profile, config)
        except Unavailable as error:
            print(error, file=sys.stderr)
            return 1
        print(f"cProfile of chainrule in {args.profile} ({config.label} sizes), "
              f"top 25 by own time:\n")
        print(text)
        return 0
    workloads = args.only or list(WORKLOADS)
    report = run_suite(config, workloads, command_line(prog.removeprefix("python "), args_list))
    print(report.text())
    if args.write_results:
        md, js = report.save(args.output_dir)
        print(f"\nwrote {md} and {js}")
    return 0
