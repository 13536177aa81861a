"""``torch.accelerator`` on a machine without one, as PyTorch's CPU build has it: programs that
ask (``torch.accelerator.is_available()``, ``current_accelerator()``) learn there is none, and
the calls that need a device raise PyTorch's "Cannot access accelerator device when none is
available."

Example:
    >>> import chainrule as torch
    >>> torch.accelerator.is_available(), torch.accelerator.current_accelerator()
    (False, None)
"""

from __future__ import annotations

import warnings
from typing import Any, NoReturn

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]

_NO_DEVICE = "Cannot access accelerator device when none is available."


def _no_device() -> NoReturn:
    raise RuntimeError(_NO_DEVICE)


def is_available() -> bool:
    """False: chainrule runs on the CPU."""
    return False


def device_count() -> int:
    """0 accelerator devices."""
    return 0


def current_accelerator(check_available: bool = False) -> Any:
    """None: there is no accelerator (the CPU is not one)."""
    return None


def current_device_index() -> int:
    """Raises: there is no accelerator device."""
    _no_device()


def current_device_idx() -> int:
    """Deprecated name of :func:`current_device_index` (warns as PyTorch)."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device: Any, /) -> None:
    """Raises: there is no accelerator device."""
    _no_device()


def set_device_idx(device: Any, /) -> None:
    """Deprecated name of :func:`set_device_index` (warns as PyTorch)."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def current_stream(device: Any = None, /) -> Any:
    """Raises: there is no accelerator device."""
    _no_device()


def set_stream(stream: Any) -> None:
    """Raises: there is no accelerator stream to set."""
    _no_device()


def synchronize(device: Any = None, /) -> None:
    """Raises: there is no accelerator device."""
    _no_device()


def get_device_capability(device: Any = None, /) -> dict[str, Any]:
    """Raises: there is no accelerator device."""
    _no_device()


def empty_cache() -> None:
    """Raises: there is no accelerator cache."""
    _no_device()


def empty_host_cache() -> None:
    """Raises: there is no accelerator cache."""
    _no_device()


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """Raises: there is no accelerator memory."""
    _no_device()


def max_memory_allocated(device_index: Any = None, /) -> int:
    """Raises: there is no accelerator memory."""
    _no_device()


def max_memory_reserved(device_index: Any = None, /) -> int:
    """Raises: there is no accelerator memory."""
    _no_device()


def memory_allocated(device_index: Any = None, /) -> int:
    """Raises: there is no accelerator memory."""
    _no_device()


def memory_reserved(device_index: Any = None, /) -> int:
    """Raises: there is no accelerator memory."""
    _no_device()


def memory_stats(device_index: Any = None, /) -> dict[str, Any]:
    """Raises: there is no accelerator memory."""
    _no_device()


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    """Raises: there is no accelerator memory."""
    _no_device()


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """Raises: there is no accelerator memory."""
    _no_device()
