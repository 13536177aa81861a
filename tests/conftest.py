"""Shared test helpers: converting between chainrule, torch and NumPy, and comparing."""

from __future__ import annotations

import os
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

import chainrule

REFERENCE_TORCH = "2.13.0"

try:
    import torch
except ImportError as error:  # the suite is differential: without its reference it proves nothing
    raise ImportError(
        f"the tests compare chainrule with PyTorch and need torch=={REFERENCE_TORCH} (CPU build); "
        "`make test` installs it into .venv"
    ) from error
if torch.__version__.split("+")[0] != REFERENCE_TORCH:
    raise ImportError(
        f"the tests compare with PyTorch {REFERENCE_TORCH}, but torch {torch.__version__} is "
        "installed; `make test` installs the pinned version"
    )

os.environ.setdefault("PYTHONHASHSEED", "0")

# Property tests draw the same examples on every run, so a failure seen once is seen again.
settings.register_profile("chainrule", derandomize=True, print_blob=True, deadline=None)
settings.load_profile("chainrule")


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say what the run compares against and how hypothesis draws examples."""
    return [
        f"reference: torch {torch.__version__}, numpy {np.__version__}",
        "hypothesis: profile 'chainrule', derandomized (each test's examples are fixed by its "
        "name; a failure prints the blob to reproduce it)",
    ]


def _system_tool_missing(what: str, install: str) -> None:
    """Skip a test whose system tool is missing; in CI (``CI`` set) fail instead.

    ``make test`` installs Graphviz and Chromium when it can (as root or with sudo): see
    ``scripts/system-packages.sh``. A user without them still gets a green run, with the skip
    saying what to install.
    """
    message = f"{what} is not installed ({install}; `make test` installs it as root or with sudo)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def require_dot() -> None:
    """Skip (fail in CI) unless Graphviz's ``dot`` is on the PATH."""
    if shutil.which("dot") is None:
        _system_tool_missing("Graphviz's dot", "apt-get install graphviz")


def require_chromium() -> str:
    """The Chromium executable; skip (fail in CI) when there is none."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        _system_tool_missing("Chromium", "apt-get install chromium")
    return chromium


@pytest.fixture
def needs_dot() -> None:
    """For tests that render with Graphviz: ``@pytest.mark.usefixtures("needs_dot")``."""
    require_dot()


def to_torch(x: chainrule.Tensor, requires_grad: bool | None = None) -> torch.Tensor:
    """A torch tensor with the same values (and requires_grad) as ``x``."""
    t = torch.from_numpy(np.array(x.detach().numpy(), copy=True))
    rg = x.requires_grad if requires_grad is None else requires_grad
    return t.requires_grad_(rg) if rg else t


def to_chainrule(t: torch.Tensor, requires_grad: bool | None = None) -> chainrule.Tensor:
    """A chainrule tensor with the same values (and requires_grad) as ``t``."""
    x = chainrule.from_numpy(t.detach().numpy().copy())
    rg = t.requires_grad if requires_grad is None else requires_grad
    return x.requires_grad_(rg) if rg else x


def assert_close(ours, theirs, rtol: float = 1e-5, atol: float = 1e-6, what: str = "") -> None:
    """Compare a chainrule result with a torch result: same shape, dtype name and values."""
    if theirs is None or ours is None:
        assert ours is None and theirs is None, f"{what}: one is None ({ours!r}, {theirs!r})"
        return
    a = ours.detach().numpy() if isinstance(ours, chainrule.Tensor) else np.asarray(ours)
    if isinstance(theirs, torch.Tensor):
        b = theirs.detach().numpy(force=True)
    else:
        b = np.asarray(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    if isinstance(ours, chainrule.Tensor) and isinstance(theirs, torch.Tensor):
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (
            f"{what}: dtype {ours.dtype} != {theirs.dtype}"
        )
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def normalise_output(text: str) -> str:
    """Mask object addresses and use chainrule's names, to compare printed output."""
    text = _ADDRESS.sub("0x...", text)
    return text.replace("torch.", "chainrule.")


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Every test starts with default dtype float32 and grad mode on, whatever came before."""
    yield
    chainrule.set_default_dtype(chainrule.float32)
    torch.set_default_dtype(torch.float32)
    chainrule.set_grad_enabled(True)
    torch.set_grad_enabled(True)
    warnings.resetwarnings()
