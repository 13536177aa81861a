"""The README's "Function transforms" example: one short example of each transform, each
printed output written under it as a ``# ...`` comment. The block runs as written, prints what
its comments say, and prints the same under PyTorch (``import torch`` in place of chainrule).
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

from .conftest import torch

README = Path(__file__).resolve().parent.parent / "README.md"
TRANSFORMS = (
    "grad(",
    "grad_and_value(",
    "vjp(",
    "jvp(",
    "linearize(",
    "jacrev(",
    "jacfwd(",
    "hessian(",
    "functional_call(",
    "stack_module_state(",
    "vmap(",
    "fwAD.make_dual(",
)


def _block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Function transforms", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None
    return match.group(1)


def _expected(code: str) -> list[str]:
    """The ``# ...`` lines that follow a ``print(`` line (its output, as written)."""
    expected = []
    follows_print = False
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("print("):
            follows_print = True
        elif stripped.startswith("# ") and follows_print:
            expected.append(stripped[2:])
        else:
            follows_print = False
    return expected


def _run(code: str) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})  # noqa: S102
    return out.getvalue().splitlines()


def test_every_transform_has_an_example() -> None:
    code = _block()
    for name in TRANSFORMS:
        assert name in code, name


def test_printed_output_is_what_the_comments_say() -> None:
    code = _block()
    expected = _expected(code)
    assert len(expected) == code.count("print(")
    assert _run(code) == expected


def test_pytorch_prints_the_same() -> None:
    code = _block()
    as_torch = code.replace("import chainrule as torch", "import torch").replace(
        "chainrule.", "torch."
    )
    assert "chainrule" not in as_torch
    assert torch.__name__ == "torch"
    assert _run(as_torch) == _run(code)
