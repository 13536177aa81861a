"""``python -m chainrule graph SCRIPT.py --var loss``: draw the backward graph of a variable.

The script runs as ``__main__`` (with ``import chainrule as torch`` it needs no change); then the
variable it left in its globals is drawn. Leaves are named after the script's globals: a tensor
``w`` is labelled ``w``, the parameters of a module ``model`` ``model.fc1.weight``. The kind of
output follows the file name: ``.svg``/``.png``/``.pdf`` (Graphviz), ``.dot``/``.gv`` (source),
``.html`` (the interactive explorer), ``.txt`` or ``-`` (the text tree).

Example:
    python -m chainrule graph train_step.py --var loss --out loss.html -- --script-option 3
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "build_parser", "names_in"]

PROG = "python -m chainrule graph"
RENDERED = {".svg": "svg", ".png": "png", ".pdf": "pdf"}


def build_parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Draw the backward graph of a variable computed by a script."
    )
    parser.add_argument("script", help="the Python script to run (as __main__)")
    parser.add_argument("--var", default="loss", help="the tensor to draw (default: loss)")
    parser.add_argument(
        "--out", default="graph.svg",
        help="output file: .svg .png .pdf .dot .gv .html .txt, or - for the text tree on stdout "
             "(default: graph.svg)",
    )
    parser.add_argument("--show-saved", action="store_true", help="draw saved tensors")
    parser.add_argument("--show-attrs", action="store_true", help="list saved values in boxes")
    parser.add_argument(
        "--collapse", action="store_true", help="fold repeated steps into single boxes"
    )
    return parser


def names_in(namespace: dict[str, Any]) -> dict[str, Any]:
    """Names for the tensors of a script's globals: tensors by name, module parameters dotted."""
    from .. import nn
    from .._tensor import Tensor

    names: dict[str, Any] = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, Tensor):
            names[name] = value
        elif isinstance(value, nn.Module):
            for pname, p in value.named_parameters():
                names[f"{name}.{pname}"] = p
    return names


def main(argv: list[str] | None = None) -> int:
    """Run the script, then write the drawing of ``--var``; print the path written."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # Arguments after `--` are the script's own.
    script_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = build_parser().parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    from .._tensor import Tensor

    script = Path(args.script)
    if not script.is_file():
        print(f"{PROG}: no such script: {script}", file=sys.stderr)
        return 2
    saved_argv = sys.argv
    sys.argv = [str(script), *script_args]
    sys.path.insert(0, str(script.resolve().parent))
    try:
        namespace = runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = saved_argv
        sys.path.pop(0)
    value = namespace.get(args.var)
    if not isinstance(value, Tensor):
        tensors = sorted(k for k, v in namespace.items() if isinstance(v, Tensor))
        found = "no variable" if args.var not in namespace else f"a {type(value).__name__}"
        print(f"{PROG}: {args.var!r} is {found}, not a chainrule tensor; tensors defined by "
              f"{script.name}: {', '.join(tensors) or 'none'}", file=sys.stderr)
        return 2
    params = names_in(namespace)
    params.pop(args.var, None)
    try:
        written = _write(value, args.var, params, args)
    except ValueError as error:  # nothing to draw (the tensor has no graph)
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    if written is not None:
        print(written)
    return 0


def _write(value: Any, var: str, params: dict[str, Any], args: argparse.Namespace) -> str | None:
    from .. import viz

    output = {var: value}
    out = args.out
    suffix = Path(out).suffix.lower()
    if out == "-" or suffix == ".txt":
        text = viz.tree(output, params)
        if out == "-":
            print(text)
            return None
        Path(out).write_text(text + "\n", encoding="utf-8")
        return out
    if suffix == ".html":
        return str(viz.explore(output, out, params, title=f"Backward graph of {var}"))
    dot = viz.make_dot(output, params, show_attrs=args.show_attrs, show_saved=args.show_saved,
                       collapse=True if args.collapse else None)
    if suffix in (".dot", ".gv"):
        return dot.save(out)
    if suffix not in RENDERED:
        raise SystemExit(
            f"{PROG}: unknown output type {suffix!r} (use .svg .png .pdf .dot .html .txt)"
        )
    target = Path(out)
    return dot.render(outfile=str(target), format=RENDERED[suffix], cleanup=True)
