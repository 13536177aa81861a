"""``python -m chainrule bench [options]``: run the benchmark suite of a chainrule checkout.

The suite (``benchmarks/`` at the top of the repository) is not part of the installed package:
it needs PyTorch and is run from a source checkout. This command runs it when the current
directory holds it, as a script in a child process (``python -m benchmarks``, the same as
``make bench``: the package never imports the suite), and otherwise says how to get it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["find_suite", "main"]

HOW_TO = """\
chainrule's benchmark suite lives in the source checkout (benchmarks/), not in the installed
package, and it compares against PyTorch. To run it, go to the root of a chainrule source
checkout (the directory with the Makefile and benchmarks/) and run

    make bench                        # sets up .venv (with torch==2.13.0, CPU) and runs it

or, in an environment with chainrule and torch installed:

    python -m chainrule bench [--quick] [--only tiny,mlp] [--profile tiny]
    python -m benchmarks [options]    # the same

No 'benchmarks' directory with the suite was found in {cwd}."""


def find_suite(directory: Path) -> Path | None:
    """The checkout root holding chainrule's suite: ``directory`` if its ``benchmarks/`` is it."""
    marker = directory / "benchmarks" / "__init__.py"
    if (directory / "benchmarks" / "cli.py").is_file() and marker.is_file() and (
        'SUITE = "chainrule"' in marker.read_text(encoding="utf-8", errors="replace")
    ):
        return directory
    return None


def main(argv: list[str] | None = None) -> int:
    """Run ``python -m benchmarks`` in the current directory's checkout, or explain."""
    args = list(sys.argv[1:] if argv is None else argv)
    root = find_suite(Path.cwd())
    if root is None:
        print(HOW_TO.format(cwd=Path.cwd()), file=sys.stderr)
        return 2
    command = [sys.executable, "-m", "benchmarks", *args]
    return subprocess.run(command, cwd=root, check=False).returncode
