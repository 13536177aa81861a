"""The API coverage measurement (issue 16): its rules name real PyTorch names, never one
chainrule has, every PyTorch name is counted once, the command line works, and the README shows
the current table."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from chainrule.tools import api_coverage
from chainrule.tools.api_scope import OUT_OF_SCOPE

from .conftest import torch  # noqa: F401 - the measurement reads the installed PyTorch

RESULTS = {r.label: r for r in api_coverage.coverage()}
README = Path(__file__).resolve().parents[1] / "README.md"


def _names(label: str) -> list[str]:
    path = dict((lab, theirs) for lab, theirs, _ in api_coverage.NAMESPACES)[label]
    return api_coverage.pytorch_names(api_coverage._resolve(path))


@pytest.mark.parametrize("rule", range(len(OUT_OF_SCOPE)))
def test_every_pattern_matches_a_pytorch_name(rule: int) -> None:
    """No stale rule: each pattern sets aside at least one name PyTorch has."""
    label, reason, patterns = OUT_OF_SCOPE[rule]
    names = _names(label)
    for pattern in patterns:
        assert any(fnmatch.fnmatchcase(n, pattern) for n in names), (label, pattern)


def test_no_rule_hides_a_name_chainrule_has() -> None:
    """A name chainrule implements is in scope (a rule matching it is wrong)."""
    for label, result in RESULTS.items():
        ours = api_coverage._resolve(
            dict((lab, o) for lab, _, o in api_coverage.NAMESPACES)[label])
        for names in result.out_of_scope.values():
            assert not [n for n in names if ours is not None and hasattr(ours, n)], label


@pytest.mark.parametrize("label", list(RESULTS))
def test_every_name_counted_once(label: str) -> None:
    result = RESULTS[label]
    excluded = [n for names in result.out_of_scope.values() for n in names]
    counted = result.have + result.missing + excluded
    assert sorted(counted) == _names(label)
    assert len(set(counted)) == result.pytorch


def test_known_names_are_classified() -> None:
    assert "add" in RESULTS["torch"].have
    assert "backward" in RESULTS["Tensor"].have
    assert "cudnn_convolution" in [n for v in RESULTS["torch"].out_of_scope.values() for n in v]
    assert "Optional" not in _names("nn.functional")  # (typing helpers are not API)


def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert api_coverage.main([]) == 0
    table = capsys.readouterr().out
    for label in RESULTS:
        assert f"| {label} |" in table
    assert api_coverage.main(["--missing", "nn.init"]) == 0
    assert capsys.readouterr().out.strip() == "\n".join(RESULTS["nn.init"].missing)
    assert api_coverage.main(["--out-of-scope", "torch"]) == 0
    assert "quantized tensors:" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        api_coverage.main(["--missing", "nope"])


def test_readme_shows_the_current_table() -> None:
    """README's table is the tool's output today (regenerate it with
    ``python -m chainrule.tools.api_coverage`` after adding names)."""
    text = README.read_text()
    match = re.search(r"\| namespace \| PyTorch names .*?\n(?:\|.*\n)+", text)
    assert match, "README has no API coverage table"
    assert match.group(0).strip() == api_coverage.format_table(list(RESULTS.values()))
