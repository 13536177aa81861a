"""``python -m chainrule <command>``: demo, train, graph, bench, run.

Each command lives in ``chainrule.cli.<command>`` and has a ``main(argv)`` function.
"""

from __future__ import annotations

import importlib
import sys

from . import __version__

COMMANDS = {
    "demo": "the seed example, its graph, and a short training run",
    "train": "train a small network on scikit-learn's handwritten digits",
    "graph": "draw the backward graph of a variable in a script",
    "bench": "time chainrule against PyTorch and NumPy",
    "run": "run a PyTorch script unchanged, with chainrule as 'import torch'",
}


def _usage() -> str:
    lines = ["usage: python -m chainrule <command> [options]", "", "commands:"]
    lines.extend(f"  {name:<7} {text}" for name, text in COMMANDS.items())
    lines.append("")
    lines.append(
        "Run 'python -m chainrule <command> --help' for a command's options, "
        "'python -m chainrule --version' for the version."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a command's ``main``."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if args[0] in ("-V", "--version"):
        print(f"chainrule {__version__}")
        return 0
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"unknown command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"chainrule.cli.{command}")
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
