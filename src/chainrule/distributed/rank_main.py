"""What each rank runs under ``python -m chainrule.distributed.run``: set torchrun's
environment variables from MPI's, run the script as ``__main__``, and abort the whole job if it
raises (so that the other ranks fail at once instead of waiting in a collective).

A rank that raises also writes its traceback to ``$CHAINRULE_RUN_ERROR_DIR/rank<N>.txt`` when the
launcher sets that variable: MPI_Abort can end the job before mpiexec has forwarded all of the
rank's standard error, and the launcher prints these files afterwards (as torchrun's error
summary does)."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections.abc import Sequence

__all__ = ["ERROR_DIR_VARIABLE", "error_file", "main", "set_rank_environment"]

# (variable, the launchers' names for it: MPICH's Hydra, Open MPI, Slurm's PMI)
_SOURCES = (
    ("RANK", ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")),
    ("WORLD_SIZE", ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")),
    ("LOCAL_RANK", ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")),
    ("LOCAL_WORLD_SIZE", ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")),
)


def set_rank_environment() -> None:
    """Set ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE`` (as torchrun does)
    from the MPI launcher's variables."""
    for name, sources in _SOURCES:
        for source in sources:
            if source in os.environ:
                os.environ[name] = os.environ[source]
                break
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_RANK", os.environ["RANK"])
    os.environ.setdefault("LOCAL_WORLD_SIZE", os.environ["WORLD_SIZE"])


ERROR_DIR_VARIABLE = "CHAINRULE_RUN_ERROR_DIR"


def error_file(directory: str, rank: str) -> str:
    """Where rank ``rank`` writes its traceback in the launcher's ``directory``."""
    return os.path.join(directory, f"rank{rank}.txt")


def _record(text: str) -> None:
    """Write this rank's traceback where the launcher finds it (whole, or not at all)."""
    directory = os.environ.get(ERROR_DIR_VARIABLE)
    if not directory:
        return
    target = error_file(directory, os.environ.get("RANK", "0"))
    partial = target + ".partial"
    try:
        with open(partial, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(partial, target)
    except OSError:
        pass


def _abort() -> None:
    """End every rank of the job (MPI_Abort when MPI runs; otherwise mpiexec sees this rank
    fail and ends the others)."""
    if "mpi4py.MPI" in sys.modules and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        sys.modules["mpi4py.MPI"].COMM_WORLD.Abort(1)
    sys.exit(1)


def main(argv: Sequence[str] | None = None) -> None:
    """Run ``script args...`` (or ``-m module args...``) as this rank's ``__main__``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m chainrule.distributed.rank_main script.py [args]")
    set_rank_environment()
    try:
        if args[0] == "-m":
            sys.argv = args[1:]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = args
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as done:
        if done.code not in (None, 0):
            _abort()
        raise
    except BaseException:
        text = traceback.format_exc()
        _record(text)
        sys.stderr.write(text)
        sys.stderr.flush()
        _abort()


if __name__ == "__main__":
    main()
