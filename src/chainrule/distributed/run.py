"""``python -m chainrule.distributed.run -n 4 train.py [args]``: start ``train.py`` on 4 ranks.

A wrapper of ``mpiexec`` (the one the ``mpich`` wheel puts beside the Python interpreter, else
the first on ``PATH``, or ``--mpiexec``). Each rank runs the script as ``__main__`` with
torchrun's environment variables set (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``), so that ``init_process_group()`` and scripts reading them work
unchanged; a rank that raises aborts the whole job (the others do not wait for it).
The exit status is mpiexec's: 0 when every rank succeeded. When the job fails, the launcher
prints the traceback of every rank that raised after mpiexec ends, under a summary in the spirit
of torchrun's (a rank's own standard error can be cut short when its abort ends the job).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from chainrule.distributed.rank_main import ERROR_DIR_VARIABLE

__all__ = ["failure_summary", "find_mpiexec", "main", "mpiexec_command"]


def find_mpiexec(explicit: str | None = None) -> str:
    """The ``mpiexec`` to use: ``explicit``, ``$CHAINRULE_MPIEXEC``, the one beside this
    Python (the ``mpich`` wheel's), or the first on ``PATH``."""
    for candidate in (explicit, os.environ.get("CHAINRULE_MPIEXEC")):
        if candidate:
            return candidate
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(
            "no mpiexec found: install MPI with pip install 'chainrule[dist]' (the mpich wheel)"
        )
    return found


def mpiexec_command(ranks: int, target: Sequence[str], mpiexec: str | None = None) -> list[str]:
    """The command line starting ``target`` (a script and its arguments, or ``-m module
    ...``) on ``ranks`` processes."""
    entry = [sys.executable, "-m", "chainrule.distributed.rank_main"]
    return [find_mpiexec(mpiexec), "-n", str(ranks), *entry, *target]


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # Open MPI refuses to start as root or to oversubscribe cores without these (MPICH ignores
    # them).
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


_VALUED = ("-n", "--nproc-per-node", "--nproc_per_node", "--mpiexec")


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """The launcher's own options, and the target: ``script args...`` or ``-m module
    args...`` (everything from the first word that is neither an option nor its value)."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-m":
            return argv[:i], argv[i:]
        if word in _VALUED:
            i += 2
            continue
        if word.startswith("-") and word != "-":
            i += 1
            continue
        return argv[:i], argv[i:]
    return argv, []


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run mpiexec, return its exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m chainrule.distributed.run",
        usage="%(prog)s [-n N] [--mpiexec PATH] (script.py | -m module) [args ...]",
        description="Run a training script on several processes (MPI ranks).",
    )
    parser.add_argument(
        "-n",
        "--nproc-per-node",
        "--nproc_per_node",
        dest="ranks",
        type=int,
        default=1,
        help="how many processes (ranks) to start",
    )
    parser.add_argument("--mpiexec", default=None, help="the mpiexec program to use")
    own, target = _split(list(sys.argv[1:] if argv is None else argv))
    options = parser.parse_args(own)
    if options.ranks < 1:
        parser.error("-n must be at least 1")
    if not target or target == ["-m"]:
        parser.error("a script (or -m module) to run is required")
    command = mpiexec_command(options.ranks, target, options.mpiexec)
    with tempfile.TemporaryDirectory(prefix="chainrule-run-") as errors:
        env = _environment()
        env[ERROR_DIR_VARIABLE] = errors
        status = subprocess.call(command, env=env)
        if status != 0:
            summary = failure_summary(target, Path(errors), status)
            if summary:
                sys.stderr.write(summary)
                sys.stderr.flush()
    return status


def failure_summary(target: Sequence[str], errors: Path, status: int) -> str:
    """The text printed after a failed job: each rank's recorded traceback, in rank order
    (empty when no rank recorded one, e.g. a script that called ``sys.exit(1)``)."""
    recorded = sorted(
        errors.glob("rank*.txt"), key=lambda path: int(path.stem.removeprefix("rank"))
    )
    if not recorded:
        return ""
    name = target[1] if target[0] == "-m" else target[0]
    rule = "=" * 60
    lines = [rule, f"{name} FAILED (exit status {status})"]
    for path in recorded:
        lines += ["-" * 60, f"rank {path.stem.removeprefix('rank')} raised:"]
        lines.append(path.read_text(encoding="utf-8").rstrip("\n"))
    lines.append(rule)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
