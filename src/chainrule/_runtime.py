"""Process-wide settings PyTorch programs set at their start: threads, determinism, the default
device.

* ``set_num_threads``/``get_num_threads`` are the size of the BLAS thread pool NumPy's matrix
  products run on (through threadpoolctl), the intra-op pool of chainrule.
* chainrule runs one op at a time on the calling thread, so the inter-op setting is recorded
  and reported, and changes nothing.
* chainrule's kernels are deterministic; the deterministic-algorithms flags are recorded and
  reported as PyTorch's, with PyTorch's argument errors.
* The default device can only be the CPU (PyTorch's CUDA error otherwise).
"""

from __future__ import annotations

import os
from typing import Any

from threadpoolctl import threadpool_info, threadpool_limits

from ._size import CPU, DEFAULT_DEVICE, check_available, device
from ._size import device as _device

__all__ = [
    "are_deterministic_algorithms_enabled", "get_default_device", "get_deterministic_debug_mode",
    "get_num_interop_threads", "get_num_threads", "is_deterministic_algorithms_warn_only_enabled",
    "set_default_device", "set_deterministic_debug_mode", "set_num_interop_threads",
    "set_num_threads", "use_deterministic_algorithms",
]

_STATE: dict[str, Any] = {
    "deterministic": False, "warn_only": False, "interop": os.cpu_count() or 1,
}
# (kept alive: threadpoolctl's limits last as long as the object that set them)
_LIMITS: list[Any] = []


def _blas_pools() -> list[dict[str, Any]]:
    return [pool for pool in threadpool_info() if pool.get("user_api") == "blas"]


def get_num_threads() -> int:
    """The number of threads matrix products use (the BLAS pool's size)."""
    pools = _blas_pools()
    return max((int(p["num_threads"]) for p in pools), default=1)


def _check_positive_int(name: str, value: Any) -> None:
    if type(value) is not int:
        raise RuntimeError(f"{name} expects an int, but got {type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Set the number of threads matrix products use (the BLAS pool's size)."""
    _check_positive_int("set_num_threads", int)
    _LIMITS[:] = [threadpool_limits(limits=int, user_api="blas")]


def get_num_interop_threads() -> int:
    """The inter-op thread count (recorded: chainrule runs one op at a time)."""
    return int(_STATE["interop"])


def set_num_interop_threads(int: int) -> None:  # noqa: A002 - PyTorch's parameter name
    """Record the inter-op thread count (chainrule runs one op at a time)."""
    _check_positive_int("set_num_interop_threads", int)
    _STATE["interop"] = int


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms only (chainrule's always are); recorded."""
    if type(mode) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if type(warn_only) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _STATE["deterministic"] = mode
    _STATE["warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` was turned on."""
    return bool(_STATE["deterministic"])


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether deterministic algorithms were asked for with ``warn_only=True``."""
    return bool(_STATE["warn_only"])


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """PyTorch's alternative interface: 0/``"default"``, 1/``"warn"``, 2/``"error"``."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if type(debug_mode) is not int:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode).__name__}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (on), from the deterministic-algorithms flags."""
    if not _STATE["deterministic"]:
        return 0
    return 1 if _STATE["warn_only"] else 2


def get_default_device() -> device:
    """The device new tensors are made on: the CPU unless ``set_default_device`` or
    ``with torch.device(...)`` chose the meta device."""
    return DEFAULT_DEVICE[0] or CPU


def set_default_device(device: Any) -> None:  # noqa: A002 - PyTorch's parameter name
    """Set the default device: the CPU (or None) or the meta device (PyTorch's CUDA error
    for ``"cuda"``, raised here rather than at the next tensor)."""
    check_available(device)
    chosen = None if device is None else _device(device)
    DEFAULT_DEVICE[0] = None if chosen is None or chosen.type == "cpu" else chosen
