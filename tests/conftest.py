"""Shared test helpers: converting between chainrule, torch and NumPy, and comparing."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest

import chainrule

torch = pytest.importorskip("torch")

os.environ.setdefault("PYTHONHASHSEED", "0")


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
