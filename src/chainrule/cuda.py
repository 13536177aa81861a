"""``torch.cuda`` on a machine without CUDA, as PyTorch's CPU build has it: programs that ask
(``torch.cuda.is_available()``) learn there is none, the calls PyTorch makes harmless
(seeding, emptying the cache, memory counters) do nothing, and the rest raise PyTorch's
"Torch not compiled with CUDA enabled".

Example:
    >>> import chainrule as torch
    >>> torch.cuda.is_available(), torch.cuda.device_count()
    (False, 0)
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, NoReturn

from ._dtype import REPR_NAMESPACE

__all__ = [
    "current_device", "device", "device_count", "empty_cache", "get_device_capability",
    "get_device_name", "get_device_properties", "get_rng_state", "init", "ipc_collect",
    "is_available", "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_cached", "max_memory_reserved", "mem_get_info",
    "memory_allocated", "memory_cached", "memory_reserved", "memory_snapshot", "memory_stats",
    "memory_stats_as_nested_dict", "memory_summary", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_memory_stats", "seed",
    "seed_all", "set_device", "set_rng_state", "synchronize",
]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _not_compiled(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError(_NOT_COMPILED)


def is_available() -> bool:
    """False: chainrule runs on the CPU."""
    return False


def device_count() -> int:
    """0 CUDA devices."""
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialised."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False, as on PyTorch's CPU build."""
    return False


def manual_seed(seed: int) -> None:
    """Nothing to seed (PyTorch ignores it without CUDA, too)."""


def manual_seed_all(seed: int) -> None:
    """Nothing to seed (PyTorch ignores it without CUDA, too)."""


def seed() -> None:
    """Nothing to seed (PyTorch ignores it without CUDA, too)."""


def seed_all() -> None:
    """Nothing to seed (PyTorch ignores it without CUDA, too)."""


def empty_cache() -> None:
    """No CUDA cache to empty."""


def memory_allocated(device: Any = None) -> int:
    """0 bytes of CUDA memory."""
    return 0


def max_memory_allocated(device: Any = None) -> int:
    """0 bytes of CUDA memory."""
    return 0


def memory_reserved(device: Any = None) -> int:
    """0 bytes of CUDA memory."""
    return 0


def max_memory_reserved(device: Any = None) -> int:
    """0 bytes of CUDA memory."""
    return 0


def _no_binding(name: str) -> NoReturn:
    """What PyTorch's CPU build raises where a function calls a CUDA binding it lacks."""
    raise AttributeError(f"module '{REPR_NAMESPACE[0]}._C' has no attribute '{name}'")


def _check_cuda(device: Any) -> Any:
    """PyTorch's check of a device argument: a string or device of another type raises; the
    argument (a string parsed as a device)."""
    if isinstance(device, str):
        from ._size import device as device_type  # (the torch.device class)

        device = device_type(device)
    kind = getattr(device, "type", None)
    if kind is not None and kind != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return device


def memory_stats(device: Any = None) -> dict[str, Any]:
    """No statistics: an empty ``OrderedDict``, as PyTorch's CPU build gives."""
    return OrderedDict()


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    """No statistics: ``{}``."""
    return {}


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    """PyTorch's CPU build fails here: its summary reads a statistic there is none of."""
    raise KeyError("allocated_bytes.all.current")


def _renamed(old: str, new: str) -> None:
    """PyTorch's FutureWarning for a renamed memory function, at its caller's line."""
    warnings.warn(
        f"`torch.cuda.{old}` has been renamed to `torch.cuda.{new}`", FutureWarning, stacklevel=3
    )


def memory_cached(device: Any = None) -> int:
    """0 bytes (deprecated: ``memory_reserved``, with PyTorch's FutureWarning)."""
    _renamed("memory_cached", "memory_reserved")
    return memory_reserved(device)


def max_memory_cached(device: Any = None) -> int:
    """0 bytes (deprecated: ``max_memory_reserved``, with PyTorch's FutureWarning)."""
    _renamed("max_memory_cached", "max_memory_reserved")
    return max_memory_reserved(device)


def reset_peak_memory_stats(device: Any = None) -> NoReturn:
    """PyTorch's CPU build: ValueError for another device's type, else the AttributeError of
    its missing binding."""
    _check_cuda(device)
    _no_binding("_cuda_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device: Any = None) -> NoReturn:
    """As :func:`reset_peak_memory_stats` (its binding: ``_cuda_resetAccumulatedMemoryStats``)."""
    _check_cuda(device)
    _no_binding("_cuda_resetAccumulatedMemoryStats")


def _resets_all(name: str) -> None:
    """PyTorch's FutureWarning for the deprecated resets, at their caller's line."""
    warnings.warn(
        f"torch.cuda.{name} now calls torch.cuda.reset_peak_memory_stats, which resets /all/ "
        "peak memory stats.",
        FutureWarning,
        stacklevel=3,
    )


def reset_max_memory_allocated(device: Any = None) -> NoReturn:
    """:func:`reset_peak_memory_stats`, after PyTorch's FutureWarning."""
    _resets_all("reset_max_memory_allocated")
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: Any = None) -> NoReturn:
    """:func:`reset_peak_memory_stats`, after PyTorch's FutureWarning."""
    _resets_all("reset_max_memory_cached")
    reset_peak_memory_stats(device)


def memory_snapshot(mempool_id: Any = None, include_traces: bool = True) -> NoReturn:
    """PyTorch's CPU build: the AttributeError of its missing binding."""
    _no_binding("_cuda_memorySnapshot")


def set_device(device: Any) -> None:
    """Device -1 is no device (nothing to do); a device without an index, or of another
    type, raises PyTorch's ValueError; any other the AttributeError of its missing binding."""
    device = _check_cuda(device)
    if isinstance(device, int) and not isinstance(device, bool):
        index = device
    else:
        index = getattr(device, "index", None)
        if index is None:
            raise ValueError(
                "Expected a torch.device with a specified index or an integer, but got:"
                f"{device}"
            )
    if index >= 0:
        _no_binding("_cuda_setDevice")


def synchronize(device: Any = None) -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def current_device() -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def get_device_name(device: Any = None) -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def get_device_capability(device: Any = None) -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def get_device_properties(device: Any = None) -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def init() -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def ipc_collect() -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def mem_get_info(device: Any = None) -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def get_rng_state(device: Any = "cuda") -> NoReturn:
    """PyTorch's error: no CUDA."""
    _not_compiled()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Nothing to set (PyTorch ignores it without CUDA, too)."""


class device:  # noqa: N801 - PyTorch's name
    """``with torch.cuda.device(i):``: made as PyTorch's CPU build makes it; entering it for a
    device (not -1) raises its error."""

    def __init__(self, device: Any) -> None:  # noqa: A002 - PyTorch's parameter name
        self.idx = device

    def __enter__(self) -> device:
        if self.idx != -1:
            raise RuntimeError("PyTorch was compiled without CUDA support")
        return self

    def __exit__(self, *exc: object) -> None:
        return None
