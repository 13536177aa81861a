"""``torch.backends.mkldnn``: oneDNN, which chainrule does not use (NumPy computes); its flag
is kept (and changes nothing)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager

from ._flags import set_flags

__all__ = ["enabled", "flags", "is_available"]

enabled = True


def is_available() -> bool:
    """False: chainrule's kernels are NumPy's, not oneDNN's."""
    return False


def flags(enabled: bool | None = False) -> AbstractContextManager[None]:
    """Set the flag for a block."""
    return set_flags(sys.modules[__name__], enabled=enabled)
