"""How much of PyTorch's public API chainrule has, namespace by namespace.

Run it where PyTorch is installed (the test environment has it)::

    python -m chainrule.tools.api_coverage             # the table
    python -m chainrule.tools.api_coverage --missing linalg   # what linalg still lacks

For each namespace (``torch``, ``Tensor``, ``nn``, ``nn.functional`` ...) it takes PyTorch's
public names (the module's ``__all__``; else the functions and classes it defines, without the
modules and typing helpers it imports), sets aside those :data:`~.api_scope.OUT_OF_SCOPE`
matches (each group with its reason), and counts how many of the rest chainrule's namespace has
by name. Having a name is not the same as behaving as PyTorch: the differential tests check
that; this measures what is missing.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from .api_scope import OUT_OF_SCOPE

__all__ = ["NAMESPACES", "TARGETS", "Coverage", "coverage", "main", "pytorch_names"]

#: (label, PyTorch's module or class, chainrule's)
NAMESPACES: list[tuple[str, str, str]] = [
    ("torch", "torch", "chainrule"),
    ("Tensor", "torch.Tensor", "chainrule.Tensor"),
    ("nn", "torch.nn", "chainrule.nn"),
    ("nn.functional", "torch.nn.functional", "chainrule.nn.functional"),
    ("nn.init", "torch.nn.init", "chainrule.nn.init"),
    ("nn.utils", "torch.nn.utils", "chainrule.nn.utils"),
    ("linalg", "torch.linalg", "chainrule.linalg"),
    ("special", "torch.special", "chainrule.special"),
    ("fft", "torch.fft", "chainrule.fft"),
    ("optim", "torch.optim", "chainrule.optim"),
    ("optim.lr_scheduler", "torch.optim.lr_scheduler", "chainrule.optim.lr_scheduler"),
    ("utils.data", "torch.utils.data", "chainrule.utils.data"),
    ("distributions", "torch.distributions", "chainrule.distributions"),
    ("testing", "torch.testing", "chainrule.testing"),
    ("autograd", "torch.autograd", "chainrule.autograd"),
    ("func", "torch.func", "chainrule.func"),
]

#: The share of in-scope names each namespace should reach (issue 16): 90%, all of these.
TARGETS: dict[str, float] = {"linalg": 1.0, "fft": 1.0, "optim": 1.0}
DEFAULT_TARGET = 0.9


def _resolve(path: str) -> Any:
    """The module (or class, for ``X.Tensor``) at a dotted path; None if it does not import."""
    module_path, _, last = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        pass
    if not module_path:
        return None
    try:
        return getattr(importlib.import_module(module_path), last, None)
    except ImportError:
        return None


def pytorch_names(namespace: Any) -> list[str]:
    """The public names of one of PyTorch's namespaces: a class's public attributes; a module's
    ``__all__``, or without one the functions, classes and constants it defines (not the modules
    and typing names it imports, nor its doc-string fragments)."""
    if isinstance(namespace, type):
        return sorted(n for n in dir(namespace) if not n.startswith("_"))
    listed = getattr(namespace, "__all__", None)
    if listed is not None:
        return sorted({n for n in listed if not n.startswith("_")})
    here = namespace.__name__
    names = []
    for name, value in vars(namespace).items():
        if name.startswith("_") or isinstance(value, types.ModuleType | str | bool | dict):
            continue  # modules, flags and doc-string fragments
        owner = getattr(value, "__module__", None) or ""
        if (owner.startswith(("typing", "torch._jit_internal"))
                or type(value).__module__.startswith(("typing", "torch._jit_internal"))):
            continue  # typing helpers
        if (inspect.isfunction(value) or inspect.isclass(value)) and not (
            owner == here or owner.startswith(here + ".")
        ):
            continue  # imported from another module (math, torch.overrides ...)
        names.append(name)
    return sorted(names)


@dataclass
class Coverage:
    """One namespace's count."""

    label: str
    pytorch: int
    out_of_scope: dict[str, list[str]] = field(default_factory=dict)  # reason -> names
    have: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def in_scope(self) -> int:
        """PyTorch's names less the out-of-scope ones."""
        return len(self.have) + len(self.missing)

    @property
    def share(self) -> float:
        """The share of in-scope names chainrule has (1 when nothing is in scope)."""
        return len(self.have) / self.in_scope if self.in_scope else 1.0

    @property
    def target(self) -> float:
        """The share aimed at."""
        return TARGETS.get(self.label, DEFAULT_TARGET)


def _excluded(label: str, name: str) -> str | None:
    for namespace, reason, patterns in OUT_OF_SCOPE:
        if namespace == label and any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return reason
    return None


def coverage() -> list[Coverage]:
    """The count of every namespace in :data:`NAMESPACES` (PyTorch must be importable)."""
    results = []
    for label, theirs_path, ours_path in NAMESPACES:
        theirs = _resolve(theirs_path)
        if theirs is None:
            raise ImportError(f"PyTorch's {theirs_path} does not import")
        ours = _resolve(ours_path)
        entry = Coverage(label, 0)
        names = pytorch_names(theirs)
        entry.pytorch = len(names)
        for name in names:
            reason = _excluded(label, name)
            if reason is not None:
                entry.out_of_scope.setdefault(reason, []).append(name)
            elif ours is not None and hasattr(ours, name):
                entry.have.append(name)
            else:
                entry.missing.append(name)
        results.append(entry)
    return results


def format_table(results: list[Coverage]) -> str:
    """The counts as a Markdown table."""
    lines = [
        "| namespace | PyTorch names | out of scope | in scope | chainrule has | share | target |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        excluded = sum(len(v) for v in r.out_of_scope.values())
        met = "met" if r.share >= r.target else "not met"
        lines.append(f"| {r.label} | {r.pytorch} | {excluded} | {r.in_scope} | {len(r.have)} "
                     f"| {r.share:.0%} | {r.target:.0%} ({met}) |")
    total_have = sum(len(r.have) for r in results)
    total = sum(r.in_scope for r in results)
    lines.append(f"| all | {sum(r.pytorch for r in results)} | "
                 f"{sum(sum(len(v) for v in r.out_of_scope.values()) for r in results)} | "
                 f"{total} | {total_have} | {total_have / total:.0%} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line: the table, or one namespace's missing or out-of-scope names."""
    parser = argparse.ArgumentParser(
        prog="python -m chainrule.tools.api_coverage",
        description="Compare chainrule's public names with the installed PyTorch's.")
    parser.add_argument("--missing", metavar="NAMESPACE",
                        help="list the in-scope names NAMESPACE lacks (e.g. linalg, Tensor)")
    parser.add_argument("--out-of-scope", metavar="NAMESPACE",
                        help="list the names set aside in NAMESPACE, by reason")
    args = parser.parse_args(argv)
    try:
        results = coverage()
    except ImportError as error:
        print(f"api_coverage needs PyTorch installed to compare with: {error}", file=sys.stderr)
        return 2
    by_label = {r.label: r for r in results}
    for option in (args.missing, args.out_of_scope):
        if option is not None and option not in by_label:
            parser.error(f"unknown namespace {option!r}; one of: {', '.join(by_label)}")
    if args.missing is not None:
        print("\n".join(by_label[args.missing].missing))
    elif args.out_of_scope is not None:
        for reason, names in by_label[args.out_of_scope].out_of_scope.items():
            print(f"{reason}:\n  " + " ".join(names))
    else:
        print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
