"""A context manager setting some of a backend module's flags and restoring them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["set_flags"]


@contextlib.contextmanager
def set_flags(module: ModuleType, **flags: Any) -> Iterator[None]:
    """Set ``module``'s flags given (not None) for the block; restore them after."""
    given = {name: value for name, value in flags.items() if value is not None}
    before = {name: getattr(module, name) for name in given}
    for name, value in given.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(module, name, value)
