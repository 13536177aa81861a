"""``python -m chainrule run script.py [args ...]``: run a PyTorch script on chainrule, unchanged.

The script runs as ``__main__`` with ``sys.argv`` set to ``[script.py, args ...]`` and its
folder first on ``sys.path``, as ``python script.py args ...`` would run it, after
:func:`chainrule.install_as_torch`: its ``import torch`` (and ``torch.nn``,
``torch.utils.data`` ...) gives chainrule's modules. ``python -m chainrule run -m pkg.mod
[args ...]`` runs a module instead, as ``python -m pkg.mod`` would.
"""

from __future__ import annotations

import os
import runpy
import sys
from types import TracebackType

from .. import install_as_torch

USAGE = """usage: python -m chainrule run script.py [args ...]
       python -m chainrule run -m module [args ...]

Run a PyTorch script (or module) unchanged with chainrule answering 'import torch'.
The script sees sys.argv = [script.py, args ...] and runs as __main__."""


def main(argv: list[str]) -> int:
    """Run the script or module named in ``argv`` (the arguments after ``run``)."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install_as_torch()
    if argv[0] == "-m":
        if len(argv) < 2:
            print("python -m chainrule run: -m needs a module name", file=sys.stderr)
            return 2
        sys.argv = [argv[1], *argv[2:]]  # (runpy puts the module's file in sys.argv[0])
        # (sys.path[0] is already the working directory, as for python -m module)
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(
            f"python -m chainrule run: can't open file {os.path.abspath(script)!r}: "
            "[Errno 2] No such file or directory",
            file=sys.stderr,
        )
        return 2
    sys.argv = [script, *argv[1:]]
    # The script's folder replaces the working directory that ``python -m`` put first, as
    # ``python script.py`` has it (chainrule, already imported, finds its own modules anyway).
    path = os.path.abspath(script)
    sys.path[0] = os.path.dirname(path)
    # The script's __file__ (in warnings and tracebacks) is absolute, as Python gives it.
    try:
        runpy.run_path(path, run_name="__main__")
    except Exception as error:  # (SystemExit and KeyboardInterrupt go up as they are)
        trimmed = _from_script(error.__traceback__, path)
        sys.excepthook(type(error), error.with_traceback(trimmed), trimmed)
        return 1
    return 0


def _from_script(tb: TracebackType | None, path: str) -> TracebackType | None:
    """The traceback from the script's first frame on: without this module's and runpy's
    frames, as ``python script.py`` prints it."""
    start = tb
    while start is not None and start.tb_frame.f_code.co_filename != path:
        start = start.tb_next
    return start if start is not None else tb
