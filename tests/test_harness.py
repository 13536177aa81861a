"""The harness itself: without the reference PyTorch the suite fails loudly instead of skipping."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HIDE_TORCH = """
import sys
import pytest
sys.modules["torch"] = None  # as if torch were not installed
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "tests/test_threads.py"]))
"""


def test_suite_fails_without_the_reference_torch() -> None:
    done = subprocess.run([sys.executable, "-c", HIDE_TORCH], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0
    assert "need torch==2.13.0" in done.stdout + done.stderr
    assert " passed" not in done.stdout
