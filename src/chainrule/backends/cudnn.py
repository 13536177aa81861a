"""``torch.backends.cudnn``: not available; its flags are kept (and change nothing)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

from ._flags import set_flags

__all__ = ["allow_tf32", "benchmark", "benchmark_limit", "deterministic", "enabled", "flags",
           "is_acceptable", "is_available", "version"]

enabled = True
benchmark = False
benchmark_limit: int | None = None  # (None without cuDNN, as in PyTorch)
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: no cuDNN."""
    return False


def version() -> None:
    """None: no cuDNN."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """False: cuDNN takes no tensor here."""
    return False


def flags(enabled: bool | None = False, benchmark: bool | None = False,
          benchmark_limit: int | None = 10, deterministic: bool | None = False,
          allow_tf32: bool | None = True) -> AbstractContextManager[None]:
    """Set the flags for a block (``with torch.backends.cudnn.flags(enabled=False):``)."""
    return set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                     benchmark_limit=benchmark_limit, deterministic=deterministic,
                     allow_tf32=allow_tf32)


