"""``python -m chainrule.distributed.run -n 4 train.py [args]``: start ``train.py`` on 4 ranks.

A wrapper of ``mpiexec`` (the one the ``mpich`` wheel puts beside the Python interpreter, else
the first on ``PATH``, or ``--mpiexec``). Each rank runs the script as ``__main__`` with
torchrun's environment variables set (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``), so that ``init_process_group()`` and scripts reading them work
unchanged; a rank that raises aborts the whole job (the others do not wait for it).
The exit status is mpiexec's: 0 when every rank succeeded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["find_mpiexec", "main", "mpiexec_command"]


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


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run mpiexec, return its exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m chainrule.distributed.run",
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
    parser.add_argument(
        "-m", dest="module", default=None, help="run a module (as python -m) instead of a script"
    )
    parser.add_argument("script", nargs="?", help="the training script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    if options.ranks < 1:
        parser.error("-n must be at least 1")
    if options.module is not None:
        target = [
            "-m",
            options.module,
            *([options.script] if options.script else []),
            *options.args,
        ]
    elif options.script is not None:
        target = [options.script, *options.args]
    else:
        parser.error("a script (or -m module) to run is required")
    command = mpiexec_command(options.ranks, target, options.mpiexec)
    return subprocess.call(command, env=_environment())


if __name__ == "__main__":
    sys.exit(main())
