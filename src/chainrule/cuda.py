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

from typing import Any, NoReturn

__all__ = [
    "current_device", "device", "device_count", "empty_cache", "get_device_capability",
    "get_device_name", "get_device_properties", "get_rng_state", "init", "ipc_collect",
    "is_available", "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all",
    "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
    "memory_reserved", "seed", "seed_all", "set_rng_state", "synchronize",
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
