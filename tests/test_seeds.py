"""The code examples of the five seed articles print exactly what PyTorch prints.

Each example in ``tests/seed_examples`` runs twice: with the real ``torch`` and with
``chainrule`` installed as ``torch`` (``import torch``, ``from torch import nn``,
``from torch.autograd import Variable`` all resolve to chainrule). Blocks separated by
``# --- block`` run in order in one namespace; an exception ends its block and is printed as
``Type: message``, as an article's reader would see it. Standard output and warnings are
compared after masking object addresses and writing ``torch.`` as ``chainrule.``. Random draws
(``torch.randn``) are replaced in both runs by the same NumPy numbers, since the two libraries'
random streams differ by design.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch

EXAMPLES = sorted((Path(__file__).parent / "seed_examples").glob("*.py"))
_TRIGGERED = re.compile(r" \(Triggered internally at [^)]*\.\)")
_BLOCK = re.compile(r"^# --- block.*$", re.MULTILINE)


def _deterministic_randn(lib: Any) -> Any:
    rng = np.random.default_rng(2024)

    def randn(*size: Any, requires_grad: bool = False, dtype: Any = None, **_: Any) -> Any:
        if len(size) == 1 and isinstance(size[0], tuple | list):
            size = tuple(size[0])
        values = rng.standard_normal(size).astype(np.float32)
        t = lib.from_numpy(values)
        return t.requires_grad_(requires_grad) if requires_grad else t

    return randn


@contextlib.contextmanager
def _as_torch(lib: Any):
    """Make ``import torch`` (and its submodules) resolve to ``lib`` while examples run."""
    names = ("torch", "torch.nn", "torch.autograd", "torch.nn.functional")
    saved = {n: sys.modules.get(n) for n in names}
    original_randn = lib.randn
    lib.randn = _deterministic_randn(lib)
    if lib is chainrule:
        sys.modules["torch"] = chainrule
        sys.modules["torch.nn"] = chainrule.nn
        sys.modules["torch.autograd"] = chainrule.autograd
        sys.modules["torch.nn.functional"] = chainrule.nn.functional
    try:
        yield
    finally:
        lib.randn = original_randn
        for n, module in saved.items():
            if module is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = module


def run_example(path: Path, lib: Any) -> str:
    """Run an example's blocks; return its output and warnings, normalised."""
    blocks = _BLOCK.split(path.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"__name__": "__seed__"}
    out = io.StringIO()
    with _as_torch(lib), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for block in blocks:
            with contextlib.redirect_stdout(out):
                try:
                    exec(compile(block, str(path), "exec"), namespace)  # noqa: S102
                except Exception as error:  # noqa: BLE001 - printed as a reader would see it
                    print(f"{type(error).__name__}: {error}")
    lines = [out.getvalue()]
    for w in caught:
        if w.category is DeprecationWarning:
            continue
        lines.append(f"{w.category.__name__}: {_TRIGGERED.sub('', str(w.message))}")
    return normalise_output("\n".join(lines))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_seed_example_prints_what_pytorch_prints(path: Path) -> None:
    expected = run_example(path, torch)
    got = run_example(path, chainrule)
    assert got == expected


def test_seed_outputs_are_not_trivial() -> None:
    """The comparison above is meaningful: the examples print the values the articles show."""
    text = run_example(EXAMPLES[0], chainrule)
    assert "tensor([5.])" in text
    assert "<AddBackward0 object at 0x...>" in text
    assert "tensor([5.]) tensor([2.]) tensor([2.]) tensor([3.]) tensor([1.])" in text
    details = run_example(next(p for p in EXAMPLES if p.stem.startswith("s003")), chainrule)
    assert "Trying to backward through the graph a second time" in details
    assert "tensor([[3., 5.]])" in details and "tensor([[4., 6.]])" in details
