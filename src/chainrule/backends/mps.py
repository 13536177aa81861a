"""``torch.backends.mps``: Apple's Metal backend, not available."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: no MPS."""
    return False


def is_built() -> bool:
    """False: no MPS."""
    return False
